"""Fixtures shared by the integration tests (the servers themselves come from tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from services.api.app import build_app
from services.application.keys import IssueKey
from tests.helpers import handle
from tests.media_factory import make_sound
from tests.support.api_harness import Api
from tests.support.seeded_article import seeded


@pytest.fixture
def fast(settings):
    """Settings for worker tests: short leases, quick retries and polling."""
    return settings.model_copy(update={"worker_lease_s": 1.5, "job_retry_backoff_s": 0.1,
                                       "worker_poll_interval_s": 0.05})


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    return make_sound(tmp_path_factory.mktemp("media"), "tone.mp4", "sine=frequency=220:sample_rate=8000", 2.0)


# A translation is refused without a language model provider: configured for it, never called (no
# worker runs here). The assistant would call it: it plans offline without one.
PROVIDER = {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "never-called"}


@pytest.fixture
async def api(request, settings, store, pool, tmp_path, sound):
    """The API in process over a seeded workspace, with a key of every scope (a test parametrized by
    ``operation`` on ``translate_article`` gets a language model provider configured)."""
    operation = request.node.callspec.params.get("operation") if hasattr(request.node, "callspec") else None
    fast = settings.model_copy(update={"read_your_writes_timeout_s": 0.2, "webhook_test_allow": "127.0.0.0/8",
                                       **(PROVIDER if operation == "translate_article" else {})})
    ws, _, _, _ = await seeded(fast, store, tmp_path)
    issued = await handle(store, IssueKey(ws, name="all", scopes=["*"], environment="production"))
    client = TestClient(TestServer(build_app(fast)))
    await client.start_server()
    try:
        yield Api(client, issued.key, store, pool, ws, sound)
    finally:
        await client.close()
