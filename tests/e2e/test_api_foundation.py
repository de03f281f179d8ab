"""The foundation endpoints over HTTP: shapes, keys, medias, jobs, sandbox, workspace isolation."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

from domain.api_keys import SCOPES
from services.application.jobs import QueueJob
from services.application.keys import IssueKey
from tests.helpers import handle, wait_projected


async def _queue_job(service, ws, environment: str = "production") -> uuid.UUID:
    """A job queued as the engines will (no HTTP route creates one yet); no worker runs this type."""
    job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle", environment=environment))
    await wait_projected(service.settings, service.pool, ["jobs"])
    return job.id


async def _finish_job(service, ws, job_id: uuid.UUID) -> None:
    job = await service.store.fetch_for_writing(job_id)
    job.start(1, "e2e")
    job.complete({"ok": True}, article_id=7)
    await service.store.save(events=service.store.registry.to_new_events(job.collect_events(), workspace_id=ws.id))
    await wait_projected(service.settings, service.pool, ["jobs"])


# ------------------------------------------------------------------------------------ /me


async def test_me_answers_at_once_with_a_brand_new_workspace_key(service):
    ws = await service.workspace(name="acme", plan="pro", credits=250, rate_limit=1234)
    r = await ws.client.get("/me")
    assert r.status == 200, r.body
    assert r.data["workspace"] == {"id": str(ws.id), "name": "acme", "plan": "pro", "creditsTotal": 250,
                                   "creditsUsed": 0, "rateLimitPerMin": 1234}
    assert r.data["apiKey"]["scopes"] == ["*"]
    assert r.data["apiKey"]["environment"] == "production"
    assert r.headers["X-RateLimit-Limit"] == "1234"


async def test_me_needs_the_wildcard_scope(service):
    ws = await service.workspace()
    key = await service.key(ws, sorted(SCOPES - {"*"}))
    r = await service.client(key).get("/me")
    assert r.status == 403
    assert r.error["code"] == "insufficient_scope"
    assert r.error["details"]["required"] == "*"


# ---------------------------------------------------------------------------- credits, usage


async def test_credits_balance_is_total_minus_used(service):
    ws = await service.workspace(credits=500)
    workspace = await service.store.fetch_for_writing(ws.id)
    workspace.charge(120, "e2e")
    await service.store.save(workspace, workspace_id=ws.id)
    await wait_projected(service.settings, service.pool, ["workspaces"])
    r = await ws.client.get("/credits")
    assert r.status == 200
    assert r.data == {"balance": 380, "total": 500, "used": 120, "plan": "pro"}


async def test_usage_counts_every_call_with_its_latency_from_the_telemetry_topic(service):
    ws = await service.workspace()
    for i in range(5):
        assert (await service.client(ws.key, api=i % 2).get("/credits")).status == 200
    assert (await ws.client.get("/jobs/nope")).status == 404  # errors are calls too
    deadline = time.monotonic() + 30
    while True:  # telemetry is asynchronous by design: wait on the read model, bounded
        r = await ws.client.get("/usage")
        assert r.status == 200
        if r.data["totalApiCalls"] >= 6 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert r.data["totalApiCalls"] >= 6
    assert r.data["averageResponseMs"] > 0
    assert r.data["totalCreditsConsumed"] == 0
    assert r.data["plan"] == "pro"
    async with service.pool.acquire() as conn:
        errors = await conn.fetchval("SELECT errors FROM api_usage WHERE workspace_id = $1", ws.id)
    assert errors >= 1


# ------------------------------------------------------------------------------------ keys


async def test_key_lifecycle_create_use_list_revoke_then_401_on_the_next_request(service):
    ws = await service.workspace()
    r = await ws.client.post("/keys", {"name": "ci", "scopes": ["jobs:read", "usage:read"]})
    assert r.status == 201, r.body
    assert r.body["_warning"]
    new = r.data
    assert new["key"].startswith("service_live_") and len(new["key"]) >= len("service_live_") + 43  # 256 bits
    assert new["name"] == "ci" and new["scopes"] == ["jobs:read", "usage:read"]
    assert new["environment"] == "production" and new["expiresAt"] is None
    assert new["key"].startswith(new["keyPrefix"])

    used = service.client(new["key"], api=1)
    assert (await used.get("/jobs")).status == 200
    listed = await ws.client.get("/keys")  # read-your-writes: the list shows it at once
    assert listed.status == 200
    item = next(k for k in listed.data if k["id"] == new["id"])
    assert item == {"id": new["id"], "name": "ci", "keyPrefix": new["keyPrefix"], "scopes": ["jobs:read", "usage:read"],
                    "environment": "production", "active": True, "createdAt": item["createdAt"], "expiresAt": None}
    assert new["key"] not in str(listed.body)

    revoked = await ws.client.delete(f"/keys/{new['id']}")
    assert revoked.status == 200
    assert revoked.data == {"id": new["id"], "active": False}
    after = await used.get("/jobs")  # the other API process, the very next request
    assert after.status == 401
    assert after.error["code"] == "invalid_key"
    listed = await ws.client.get("/keys")
    assert next(k for k in listed.data if k["id"] == new["id"])["active"] is False
    again = await ws.client.delete(f"/keys/{new['id']}")
    assert again.status == 409 and again.error["code"] == "invalid_state"


async def test_a_keys_admin_only_key_cannot_revoke_the_wildcard_bootstrap_key(service):
    ws = await service.workspace()
    await wait_projected(service.settings, service.pool, ["api_keys"])
    listed = await ws.client.get("/keys")
    [bootstrap] = [k for k in listed.data if k["scopes"] == ["*"]]
    admin = service.client(await service.key(ws, ["keys:admin"]))
    wider = await ws.client.post("/keys", {"name": "hooks", "scopes": ["webhooks:admin"]})

    refused = await admin.delete(f"/keys/{bootstrap['id']}")
    assert refused.status == 403, refused.body
    assert refused.error["code"] == "insufficient_scope"
    beyond = await admin.delete(f"/keys/{wider.data['id']}")
    assert beyond.status == 403 and beyond.error["details"]["not_granted"] == ["webhooks:admin"]
    assert (await ws.client.get("/me")).status == 200  # the owner's key still works
    listed = await ws.client.get("/keys")
    assert all(k["active"] for k in listed.data if k["id"] in (bootstrap["id"], wider.data["id"]))

    lesser = await ws.client.post("/keys", {"name": "lesser", "scopes": ["keys:admin"]})
    assert (await admin.delete(f"/keys/{lesser.data['id']}")).status == 200  # within its own scopes
    assert (await ws.client.delete(f"/keys/{wider.data['id']}")).status == 200  # a wildcard key revokes any


async def test_post_keys_validation_names_each_field_and_rule(service):
    ws = await service.workspace()
    cases = [
        ({"scopes": ["jobs:read"]}, "body.name", "missing"),
        ({"name": "x", "scopes": []}, "body.scopes", "too_short"),
        ({"name": "x", "scopes": ["jobs:read", "jobs:read"]}, "body.scopes", "unique_items"),
        ({"name": "x", "scopes": ["jobs:fly"]}, "body.scopes.0", "literal_error"),
        ({"name": "x", "scopes": ["jobs:read"], "color": "red"}, "body.color", "extra_forbidden"),
        ({"name": "x", "scopes": ["jobs:read"], "environment": "staging"}, "body.environment", "literal_error"),
        ({"name": "x", "scopes": ["jobs:read"], "expiresInDays": 0}, "body.expiresInDays", "greater_than_equal"),
        ({"name": "x", "scopes": ["jobs:read"], "expiresInDays": "soon"}, "body.expiresInDays", "int_type"),
    ]
    for body, field, rule in cases:
        r = await ws.client.post("/keys", body)
        assert r.status == 400, (body, r.body)
        assert r.error["code"] == "validation_error"
        assert {"field": field, "rule": rule} in [{k: f[k] for k in ("field", "rule")}
                                                  for f in r.error["details"]["fields"]], (body, r.error)


async def test_new_key_scopes_must_be_a_subset_and_only_a_wildcard_key_creates_a_wildcard_key(service):
    ws = await service.workspace()
    admin = service.client(await service.key(ws, ["keys:admin", "jobs:read"]))
    ok = await admin.post("/keys", {"name": "sub", "scopes": ["jobs:read"]})
    assert ok.status == 201
    wider = await admin.post("/keys", {"name": "wider", "scopes": ["jobs:read", "jobs:write"]})
    assert wider.status == 403 and wider.error["code"] == "insufficient_scope"
    assert wider.error["details"]["not_granted"] == ["jobs:write"]
    wildcard = await admin.post("/keys", {"name": "wild", "scopes": ["*"]})
    assert wildcard.status == 403 and wildcard.error["code"] == "insufficient_scope"
    assert (await ws.client.post("/keys", {"name": "wild", "scopes": ["*"]})).status == 201


async def test_an_expired_key_is_refused(service):
    ws = await service.workspace()
    past = await handle(service.store, IssueKey(ws.id, name="old", scopes=["jobs:read"], environment="production",
        expires_at=datetime.now(UTC) - timedelta(seconds=1), issuer_scopes=None, issued_by=None))
    r = await service.client(past.key).get("/jobs")
    assert r.status == 401 and r.error["code"] == "invalid_key"
    assert "expired" in r.error["message"]
    fresh = await ws.client.post("/keys", {"name": "soon", "scopes": ["jobs:read"], "expiresInDays": 1})
    assert fresh.status == 201
    assert datetime.fromisoformat(fresh.data["expiresAt"]) > datetime.now(UTC) + timedelta(hours=23)
    assert (await service.client(fresh.data["key"]).get("/jobs")).status == 200


async def test_no_table_of_the_database_holds_a_full_key(service):
    ws = await service.workspace()
    keys = [ws.key]
    for i in range(3):
        r = await ws.client.post("/keys", {"name": f"k{i}", "scopes": ["jobs:read"],
                                           "environment": "sandbox" if i else "production"})
        keys.append(r.data["key"])
    await wait_projected(service.settings, service.pool, ["api_keys", "workspaces"])
    async with service.pool.acquire() as conn:
        tables = [r["t"] for r in await conn.fetch(
            "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS t FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'")]
        assert "public.events" in tables and "public.api_keys" in tables
        dump = "\n".join([str(await conn.fetchval(f"SELECT coalesce(string_agg(x::text, ' '), '') FROM {t} x"))
                          for t in tables])
    for key in keys:
        assert key not in dump
        assert key[len("service_live_"):] not in dump  # not even the random part


# ---------------------------------------------------------------------------------- medias


async def test_post_medias_then_get_medias_reads_the_write(service):
    ws = await service.workspace()
    created = await ws.client.post("/medias", {"name": "Launch video"})
    assert created.status == 200, created.body
    assert set(created.data) == {"id", "name"} and created.data["name"] == "Launch video"
    assert created.headers["X-Read-Your-Writes"] == "applied"  # the medias read model has it already
    assert isinstance(created.data["id"], int)
    listed = await service.client(ws.key, api=1).get("/medias")
    assert listed.status == 200
    assert [m["id"] for m in listed.data] == [created.data["id"]]
    item = listed.data[0]
    assert item["name"] == "Launch video" and item["description"] is None and item["category"] is None
    assert item["language"] == "fr"
    datetime.fromisoformat(item["createdAt"])


async def test_post_medias_without_a_name_is_400(service):
    ws = await service.workspace()
    for body in ({}, {"name": ""}, {"name": "   "}, {"name": 12}):
        r = await ws.client.post("/medias", body)
        assert r.status == 400, (body, r.body)
        assert r.error["details"]["fields"][0]["field"] == "body.name"
    r = await ws.client.post("/medias")  # no body at all
    assert r.status == 400 and r.error["details"]["fields"][0]["rule"] == "missing"


# ------------------------------------------------------------------------------------ jobs


async def test_jobs_list_is_camel_case_with_epoch_ms_and_limits(service):
    ws = await service.workspace()
    ids = [await _queue_job(service, ws) for _ in range(3)]
    r = await ws.client.get("/jobs")
    assert r.status == 200
    assert [j["id"] for j in r.data] == [str(i) for i in reversed(ids)]  # newest first
    item = r.data[0]
    assert set(item) >= {"id", "status", "progress", "step", "articleId", "createdAt"}
    assert item["status"] == "pending" and item["progress"] == 0 and item["articleId"] is None
    assert isinstance(item["createdAt"], int) and abs(item["createdAt"] / 1000 - time.time()) < 120
    assert len((await ws.client.get("/jobs", params={"limit": "1"})).data) == 1
    assert [j["id"] for j in (await ws.client.get("/jobs", params={"limit": "1", "offset": "2"})).data] == [str(ids[0])]
    assert len((await ws.client.get("/jobs", params={"limit": "100"})).data) == 3


async def test_jobs_query_out_of_range_is_400_never_clamped(service):
    ws = await service.workspace()
    for params, field in [({"limit": "101"}, "query.limit"), ({"limit": "-1"}, "query.limit"),
                          ({"limit": "0"}, "query.limit"), ({"limit": "abc"}, "query.limit"),
                          ({"limit": "2.5"}, "query.limit"), ({"offset": "-1"}, "query.offset"),
                          ({"page": "2"}, "query.page")]:
        r = await ws.client.get("/jobs", params=params)
        assert r.status == 400, (params, r.body)
        assert r.error["code"] == "validation_error"
        assert r.error["details"]["fields"][0]["field"] == field


async def test_job_detail_is_snake_case_and_missing_is_404(service):
    ws = await service.workspace()
    job_id = await _queue_job(service, ws)
    r = await ws.client.get(f"/jobs/{job_id}")
    assert r.status == 200
    assert set(r.data) == {"id", "type", "status", "progress", "step", "article_id", "error_message", "created_at",
                           "result"}  # result: an extension, null until the job completes
    assert r.data["type"] == "e2e_idle" and r.data["status"] == "pending" and r.data["error_message"] is None
    assert r.data["result"] is None
    datetime.fromisoformat(r.data["created_at"])
    for missing in (uuid.uuid4(), "not-a-uuid"):
        r = await ws.client.get(f"/jobs/{missing}")
        assert r.status == 404 and r.error["code"] == "not_found"


async def test_cancel_a_pending_job_then_cancel_or_finish_answers_409(service):
    ws = await service.workspace()
    job_id = await _queue_job(service, ws)
    r = await ws.client.delete(f"/jobs/{job_id}")
    assert r.status == 200, r.body
    assert r.data["status"] == "cancelled" and r.data["step"] == "cancelled" and r.data["id"] == str(job_id)
    assert (await service.client(ws.key, api=1).get(f"/jobs/{job_id}")).data["status"] == "cancelled"
    again = await ws.client.delete(f"/jobs/{job_id}")
    assert again.status == 409 and again.error["code"] == "invalid_state"
    assert again.error["details"]["status"] == "cancelled"

    done = await _queue_job(service, ws)
    await _finish_job(service, ws, done)
    finished = await ws.client.get(f"/jobs/{done}")
    assert finished.data["status"] == "completed" and finished.data["progress"] == 100
    assert finished.data["article_id"] == 7
    r = await ws.client.delete(f"/jobs/{done}")
    assert r.status == 409 and r.error["details"]["status"] == "completed"
    assert (await ws.client.get(f"/jobs/{done}")).data["status"] == "completed"


# ------------------------------------------------------------------------- isolation, sandbox


async def test_another_workspaces_resources_answer_404_exactly_like_missing_ones(service):
    a = await service.workspace(name="a")
    b = await service.workspace(name="b")
    job_id = await _queue_job(service, a)
    key = (await a.client.post("/keys", {"name": "a-key", "scopes": ["jobs:read"]})).data
    media = (await a.client.post("/medias", {"name": "a-media"})).data
    for method, path in (("GET", f"/jobs/{job_id}"), ("DELETE", f"/jobs/{job_id}"), ("DELETE", f"/keys/{key['id']}")):
        theirs = await b.client.call(method, path)
        missing = await b.client.call(method, path.rsplit("/", 1)[0] + f"/{uuid.uuid4()}")
        assert theirs.status == missing.status == 404, (method, path)
        assert theirs.error["code"] == missing.error["code"]
        assert set(theirs.error["details"]) == set(missing.error["details"])
    assert job_id not in {j["id"] for j in (await b.client.get("/jobs")).data}
    assert key["id"] not in {k["id"] for k in (await b.client.get("/keys")).data}
    assert media["id"] not in {m["id"] for m in (await b.client.get("/medias")).data}
    assert (await a.client.get(f"/jobs/{job_id}")).data["status"] == "pending"  # untouched by b
    assert (await service.client(key["key"]).get("/jobs")).status == 200


async def test_sandbox_keys_have_their_own_data_space_and_consume_no_credits(service):
    ws = await service.workspace(credits=300)
    created = await ws.client.post("/keys", {"name": "sandbox", "scopes": ["*"], "environment": "sandbox"})
    assert created.status == 201 and created.data["key"].startswith("service_test_")
    sandbox = service.client(created.data["key"])
    me = await sandbox.get("/me")
    assert me.data["apiKey"]["environment"] == "sandbox"

    live_media = (await ws.client.post("/medias", {"name": "live"})).data
    test_media = (await sandbox.post("/medias", {"name": "test"})).data
    assert [m["id"] for m in (await sandbox.get("/medias")).data] == [test_media["id"]]
    assert [m["id"] for m in (await ws.client.get("/medias")).data] == [live_media["id"]]

    live_job = await _queue_job(service, ws)
    test_job = await _queue_job(service, ws, environment="sandbox")
    assert [j["id"] for j in (await sandbox.get("/jobs")).data] == [str(test_job)]
    assert (await sandbox.get(f"/jobs/{live_job}")).status == 404
    assert (await sandbox.delete(f"/jobs/{live_job}")).status == 404
    assert (await ws.client.get(f"/jobs/{test_job}")).status == 404
    assert (await sandbox.delete(f"/jobs/{test_job}")).data["status"] == "cancelled"

    # Keys: a sandbox key manages sandbox keys only, so it can never mint a production key.
    refused = await sandbox.post("/keys", {"name": "escalate", "scopes": ["jobs:read"]})
    assert refused.status == 403 and refused.error["code"] == "sandbox_only"
    own = await sandbox.post("/keys", {"name": "t2", "scopes": ["jobs:read"], "environment": "sandbox"})
    assert own.status == 201
    assert {k["environment"] for k in (await sandbox.get("/keys")).data} == {"sandbox"}
    assert {k["environment"] for k in (await ws.client.get("/keys")).data} == {"production", "sandbox"}
    assert (await sandbox.delete(f"/keys/{me.data['apiKey']['id']}")).status == 200  # its own: fine
    ws_key_id = (await ws.client.get("/me")).data["apiKey"]["id"]
    other = await ws.client.post("/keys", {"name": "s3", "scopes": ["keys:admin"], "environment": "sandbox"})
    assert (await service.client(other.data["key"]).delete(f"/keys/{ws_key_id}")).status == 404

    credits = (await ws.client.get("/credits")).data
    assert credits["used"] == 0 and credits["balance"] == 300
    assert (await service.client(other.data["key"]).get("/usage")).status == 403
