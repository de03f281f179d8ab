"""The ``Idempotency-Key`` header on every POST that creates something or charges, driven through
the aiohttp app in-process on real PostgreSQL and Kafka (no projector runs: the write side is what
is checked, in the events table and the workspace's balance).

For each route: the first request with a key runs; the same request with the key again gets the
first answer (same status, same body, ``Idempotent-Replayed: true``) and writes and charges
nothing; the key with another request is 409 ``idempotency_key_mismatch`` and writes nothing. A
charging route's first request is sent 20 times at once with the key: it charges once and queues
one job, and each other answer is that first answer or 409 ``idempotency_key_in_use``. The
assistant's stream is not replayed: its key answers 409 ``idempotency_key_streamed`` naming the
conversation.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from tests.support.api_harness import Api

RENDER = {"article_id": 3, "template_id": 1,
          "clips": [{"id": "a", "title": "Le début", "start_ms": 0, "end_ms": 20_000, "duration_ms": 20_000}]}


@dataclass(frozen=True)
class Case:
    path: str
    body: Any  # JSON, or a dict of form fields for the upload (``UPLOAD``)
    other: Any = None  # another request under the same key; None: the route has no parameter to vary
    other_path: str | None = None
    charges: bool = False


UPLOAD = "upload"
CASES = {
    "upload_video": Case("/videos", {"name": "talk"}, {"name": "another talk"}),
    "analyze_video": Case("/videos/7/analyze", {}, {"analysis_mode": "behavioral"}, charges=True),
    "create_video_clip": Case("/videos/7/clips", {"start_ms": 0, "end_ms": 5000}, {"start_ms": 0, "end_ms": 6000},
                              charges=True),
    "detect_clips": Case("/production/clips/detect", {"article_id": 3, "template_id": 1},
                         {"article_id": 3, "template_id": 1, "requested_clip_count": 2}, charges=True),
    "render_clips": Case("/production/clips/render", RENDER,
                         {**RENDER, "clips": [{**RENDER["clips"][0], "end_ms": 15_000, "duration_ms": 15_000}]},
                         charges=True),
    "translate_article": Case("/articles/3/translate", {"target_language": "en"}, {"target_language": "de"},
                              charges=True),
    "regenerate_article": Case("/articles/3/regenerate", {"writing_style": "tutorial"},
                               {"writing_style": "narrative"}, charges=True),
    "create_key": Case("/keys", {"name": "reader", "scopes": ["videos:read"]},
                       {"name": "reader", "scopes": ["jobs:read"]}),
    "create_webhook": Case("/webhooks", {"url": "https://127.0.0.20:9/hook"}, {"url": "https://127.0.0.21:9/hook"}),
    "create_media": Case("/medias", {"name": "Season 1"}, {"name": "Season 2"}),
    "agent_chat": Case("/agent/chat", {"message": "what is my balance?"}, {"message": "list my jobs"}),
    "rotate_job_secret": Case("/webhooks/job-secret/rotate", None),
}


@pytest.mark.parametrize("operation", list(CASES))
async def test_a_retry_with_the_key_gets_the_first_answer_and_nothing_is_done_twice(api: Api, operation: str):
    """A charging route is first sent 20 times at once with the key: one job, one charge."""
    case = CASES[operation]
    key = "retry-" + operation
    before, credits = await api.written(), await api.balance()

    answers = await asyncio.gather(*(api.post(case.path, case.body, key) for _ in range(20 if case.charges else 1)))

    done = [(status, body) for status, body, _ in answers if status != 409]
    assert done and all(answer == done[0] for answer in done), answers
    status, first = done[0]
    assert status in (200, 201, 202), first
    busy = [body for status, body, _ in answers if status == 409]
    assert all(body["error"]["code"] == "idempotency_key_in_use" for body in busy), busy
    after_first, credits_after_first = await api.written(), await api.balance()
    assert sum(after_first.values()) > sum(before.values())  # it wrote something
    if case.charges:
        assert after_first.get("JobQueued", 0) == before.get("JobQueued", 0) + 1
        assert after_first.get("CreditsCharged", 0) == before.get("CreditsCharged", 0) + 1
        charged = credits - credits_after_first
        assert charged > 0 and charged == first["data"].get("credits_charged", charged)

    again_status, again, headers = await api.post(case.path, case.body, key)
    assert (again_status, again) == (status, first)
    assert headers.get("Idempotent-Replayed") == "true"
    assert await api.written() == after_first and await api.balance() == credits_after_first

    if case.other is not None:
        refused_status, refused, _ = await api.post(case.other_path or case.path, case.other, key)
        assert refused_status == 409 and refused["error"]["code"] == "idempotency_key_mismatch", refused
        assert await api.written() == after_first and await api.balance() == credits_after_first

    # Another key is another request: it runs (for the routes that do not reuse identical requests).
    if operation not in ("detect_clips", "render_clips"):
        fresh_status, fresh, _ = await api.post(case.path, case.body, "another-" + operation)
        assert fresh_status == status and fresh != first
        assert sum((await api.written()).values()) > sum(after_first.values())


async def test_the_streamed_assistant_is_not_replayed_and_names_its_conversation(api: Api):
    body = {"message": "what is my balance?"}
    status, stream, headers = await api.post("/agent/stream", body, "stream-key-1")
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream"), stream
    assert "event: done" in stream
    opened = orjson.loads(stream.split("event: conversation\ndata: ", 1)[1].split("\n", 1)[0])
    written = await api.written()

    status, again, _ = await api.post("/agent/stream", body, "stream-key-1")
    assert status == 409 and again["error"]["code"] == "idempotency_key_streamed", again
    assert again["error"]["details"] == {"conversationId": opened["conversationId"]}
    status, other, _ = await api.post("/agent/stream", {"message": "list my jobs"}, "stream-key-1")
    assert status == 409 and other["error"]["code"] == "idempotency_key_mismatch", other
    assert await api.written() == written


async def test_a_malformed_key_is_refused_and_writes_nothing(api: Api):
    before = await api.written()
    for key in ("", "with space", "x" * 256, "é-accent"):
        headers = {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json",
                   "Idempotency-Key": key}
        async with api.client.post("/v1/medias", data=b'{"name": "m"}', headers=headers) as resp:
            answer = orjson.loads(await resp.read())
            assert resp.status == 400 and answer["error"]["code"] == "validation_error", (key, answer)
    assert await api.written() == before


async def test_every_post_declares_the_header_in_the_openapi_document(api: Api):
    async with api.client.get("/v1/openapi.json") as resp:
        document = orjson.loads(await resp.read())
    posts = {op["operationId"]: op for path in document["paths"].values() for method, op in path.items()
             if method == "post"}
    keyed = {name for name, op in posts.items()
             if any(p["in"] == "header" and p["name"] == "Idempotency-Key" for p in op.get("parameters", []))}
    # The description completion has its own key in its body (docs/revival.md).
    assert keyed == set(posts) - {"complete_descriptions"}
    assert set(CASES) | {"agent_stream"} <= keyed
    assert all("409" in posts[name]["responses"] for name in keyed)
    replayable = keyed - {"agent_stream"}
    assert all("Idempotent-Replayed" in next(a for code, a in posts[name]["responses"].items()
                                             if code.startswith("2"))["headers"] for name in replayable)
