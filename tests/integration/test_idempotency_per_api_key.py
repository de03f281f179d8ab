"""An ``Idempotency-Key`` belongs to the API key that sent it, driven through the aiohttp app
in-process on real PostgreSQL and Kafka (no projector runs: what is checked is the answers and the
keys' table).

Another API key of the same workspace sending the owner's key value and body never gets the
owner's answer (a new wildcard key, a webhook's secret, what the assistant read with a wildcard
key): its own request runs, with its own scopes and checks. A refusal is not stored, so a narrow
key's 403 cannot become the answer the owner gets. A revoked key's keys are deleted with its
revocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from services.api.app import build_app
from services.application.keys import IssueKey
from services.application.workspaces import CreateWorkspace
from tests.helpers import handle


@dataclass
class Api:
    client: TestClient
    pool: Any
    owner: str  # the workspace's wildcard key
    owner_id: Any

    async def post(self, token: str, path: str, body: Any, key: str) -> tuple[int, Any, dict]:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Idempotency-Key": key}
        async with self.client.post(f"/v1{path}", data=orjson.dumps(body), headers=headers) as resp:
            return resp.status, orjson.loads(await resp.read()), dict(resp.headers)

    async def delete(self, token: str, path: str) -> int:
        async with self.client.delete(f"/v1{path}", headers={"Authorization": f"Bearer {token}"}) as resp:
            return resp.status

    async def stored(self, key: str) -> list[dict]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch("SELECT * FROM idempotency_keys WHERE key = $1", key)
        return [dict(r) for r in rows]


@pytest.fixture
async def api(settings, store, pool):
    fast = settings.model_copy(update={"read_your_writes_timeout_s": 0.2, "webhook_test_allow": "127.0.0.0/8"})
    ws, owner = await handle(store, CreateWorkspace(name="keys", plan="pro", credits=100, rate_limit=1000))
    client = TestClient(TestServer(build_app(fast)))
    await client.start_server()
    try:
        yield Api(client, pool, owner.key, owner.key_id), ws
    finally:
        await client.close()


async def narrow(store, ws, *scopes: str):
    return await handle(store, IssueKey(ws, name="narrow", scopes=list(scopes), environment="production"))


async def test_a_keys_admin_key_does_not_get_the_wildcard_key_the_owner_created(api, store):
    api, ws = api
    body = {"name": "deploy", "scopes": ["*"]}
    status, created, _ = await api.post(api.owner, "/keys", body, "create-deploy-key")
    assert status == 201 and created["data"]["scopes"] == ["*"], created
    admin = await narrow(store, ws, "keys:admin")

    status, answer, headers = await api.post(admin.key, "/keys", body, "create-deploy-key")

    # Its own request ran: only a wildcard key creates a wildcard key.
    assert status == 403 and answer["error"]["code"] == "insufficient_scope", answer
    assert "Idempotent-Replayed" not in headers
    assert created["data"]["key"] not in orjson.dumps(answer).decode()
    assert [r["api_key_id"] for r in await api.stored("create-deploy-key")] == [api.owner_id]


async def test_a_webhooks_admin_key_does_not_get_another_keys_webhook_secret(api, store):
    api, ws = api
    body = {"url": "https://127.0.0.20:9/hook"}
    status, first, _ = await api.post(api.owner, "/webhooks", body, "hook-1")
    assert status == 201, first
    admin = await narrow(store, ws, "webhooks:admin")

    status, theirs, headers = await api.post(admin.key, "/webhooks", body, "hook-1")

    assert status == 201 and "Idempotent-Replayed" not in headers, theirs
    assert theirs["data"]["id"] != first["data"]["id"]
    assert theirs["data"]["secret"] != first["data"]["secret"]
    # Each key's retry gets its own answer.
    for token, own in ((api.owner, first), (admin.key, theirs)):
        status, again, headers = await api.post(token, "/webhooks", body, "hook-1")
        assert (status, again, headers.get("Idempotent-Replayed")) == (201, own, "true")


async def test_an_agent_use_key_does_not_get_a_wildcard_keys_assistant_answer(api, store):
    api, ws = api
    body = {"message": "what is my balance?"}
    status, first, _ = await api.post(api.owner, "/agent/chat", body, "ask-1")
    assert status == 200, first
    assistant = await narrow(store, ws, "agent:use")

    status, theirs, headers = await api.post(assistant.key, "/agent/chat", body, "ask-1")

    assert status == 200 and "Idempotent-Replayed" not in headers, theirs
    assert theirs["data"]["conversationId"] != first["data"]["conversationId"]


async def test_a_narrow_keys_refusal_does_not_become_the_owners_answer(api, store):
    api, ws = api
    body = {"name": "deploy", "scopes": ["*"]}
    admin = await narrow(store, ws, "keys:admin")
    status, refused, _ = await api.post(admin.key, "/keys", body, "poisoned")
    assert status == 403, refused

    status, created, headers = await api.post(api.owner, "/keys", body, "poisoned")

    assert status == 201 and created["data"]["key"] and "Idempotent-Replayed" not in headers, created
    assert [r["api_key_id"] for r in await api.stored("poisoned")] == [api.owner_id]  # the refusal: none
    # The narrow key's retry is decided afresh, and refused again.
    status, again, headers = await api.post(admin.key, "/keys", body, "poisoned")
    assert status == 403 and "Idempotent-Replayed" not in headers, again


async def test_a_revoked_keys_answers_are_deleted_with_it(api, store):
    api, ws = api
    deploy = await narrow(store, ws, "webhooks:admin", "keys:admin")
    status, created, _ = await api.post(deploy.key, "/webhooks", {"url": "https://127.0.0.21:9/hook"}, "hook-2")
    assert status == 201, created
    status, _, _ = await api.post(api.owner, "/webhooks", {"url": "https://127.0.0.22:9/hook"}, "hook-3")
    assert status == 201
    assert len(await api.stored("hook-2")) == len(await api.stored("hook-3")) == 1

    assert await api.delete(api.owner, f"/keys/{deploy.key_id}") == 200

    assert await api.stored("hook-2") == []  # the secret it was answered is kept for nobody
    assert len(await api.stored("hook-3")) == 1  # the owner's are untouched
    status, answer, _ = await api.post(deploy.key, "/webhooks", {"url": "https://127.0.0.21:9/hook"}, "hook-2")
    assert status == 401, answer
