"""Schemathesis against GET /v1/openapi.json, with two workspaces' keys as peers.

Every operation of the document, positive and negative data, every phase (examples, coverage,
fuzzing, stateful) and every check but those whose premise the spec contradicts (``EXCLUDED``).
The two wildcard keys are given as WFC identities and declared ``peers``: that turns on
``object_level_authorization``, which replays each identity's successful reads as the other one
and fails when a workspace can read the other's objects. Pass: no 5xx, every response
conforming to its declared status, content type, headers and schema, negative data rejected.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from services.application.jobs import QueueJob
from services.application.media import CreateMedia
from tests.helpers import handle, wait_projected

ST = str(Path(sys.executable).with_name("st"))

# use_after_free: DELETE /jobs/{id} cancels (the job stays readable, now cancelled) and DELETE
# /keys/{id} revokes (the key stays listed, inactive): neither deletes, by the spec's design.
EXCLUDED = ["use_after_free"]

# POST /webhooks resolves the destination's host at registration and refuses what does not
# resolve to a public address (400 destination_refused), and so does every operation taking a
# per-job webhook_url (POST /videos/{id}/analyze, POST /articles/{id}/translate and regenerate). Any
# schema-valid host name the generator
# invents fails that here, where DNS reaches nothing: for these operations a 400 is an
# acceptable answer to schema-valid data. So it is for an upload: a schema cannot say that the
# `file` part must be real audio or video in an accepted container, nor that captions must be
# WebVTT or SRT that fits the media (400 and 415 are its answers to a file that is not). A
# regeneration refuses a language other than the transcript's for the offline engine (400), and a
# translation and a premium analysis need a language model provider, which this test's service has
# not (503).
# One `include-name` per entry: schemathesis ORs the include filters of an entry, so
# `include-path` with `include-method` would select every POST operation.
WEBHOOK_REGISTRATION = """
[[operations]]
include-name = "POST /webhooks"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 403, 404, 409, 429]

[[operations]]
include-name = "POST /videos"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 403, 404, 409, 413, 415, 429]

[[operations]]
include-name = "POST /videos/{id}/analyze"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 402, 403, 404, 409, 429, 503]

[[operations]]
include-name = "POST /articles/{id}/translate"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 402, 403, 404, 409, 429, 503]

[[operations]]
include-name = "POST /articles/{id}/regenerate"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 402, 403, 404, 409, 429, 503]
"""
# Clips: what a schema cannot say about the video a request names (a range past its end, an end
# before the start, mp3 of a silent video, a render clip whose duration_ms disagrees) is a 400,
# and a request naming no article of the caller's is a 404.
CLIPS = """
[[operations]]
include-name = "POST /videos/{id}/clips"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 402, 403, 404, 409, 429]

[[operations]]
include-name = "POST /production/clips/detect"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 402, 403, 404, 409, 429]

[[operations]]
include-name = "POST /production/clips/render"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 402, 403, 404, 409, 429]
"""


@pytest.mark.skipif(not Path(ST).exists(), reason="schemathesis is not installed (test extra)")
async def test_schemathesis_two_workspaces_no_server_error_every_response_conforms(service, tmp_path):
    peers = {}
    for name in ("workspace-a", "workspace-b"):
        ws = await service.workspace(name=name)
        for i in range(3):  # something to read, list and cancel
            await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
            await handle(service.store, CreateMedia(ws.id, environment="production", name=f"{name} {i}"))
        peers[name] = ws
    await wait_projected(service.settings, service.pool, ["jobs", "medias"])
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"auth": [
        {"name": name, "fixedHeaders": [{"name": "Authorization", "value": f"Bearer {ws.key}"}]}
        for name, ws in peers.items()]}))
    config = tmp_path / "schemathesis.toml"
    config.write_text(f'[auth.wfc]\npath = "{auth}"\npeers = ["workspace-a", "workspace-b"]\n' + WEBHOOK_REGISTRATION
                      + CLIPS)
    proc = await asyncio.create_subprocess_exec(
        ST, "--config-file", str(config), "run", service.base + "/openapi.json", "--url", service.base,
        "--checks", "all", "--exclude-checks", ",".join(EXCLUDED), "--max-examples", "40", "--seed", "7",
        # One worker: Python 3.11's ast.parse is not thread-safe, and hypothesis calls it to describe
        # strategies ("AST constructor recursion depth mismatch" with several workers).
        "--workers", "1", "--request-timeout", "10", "--max-time", "25",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=tmp_path)
    out, _ = await asyncio.wait_for(proc.communicate(), 300)
    text = out.decode(errors="replace")
    open(tmp_path / "schemathesis.txt", "w").write(text)  # the whole report, failures first
    print(text[-6000:])
    assert proc.returncode == 0, text[-8000:]
    assert "object_level_authorization" not in text or "will not run" not in text
