"""Error paths, the rate limit, the scope matrix from the route table, and the OpenAPI document."""

from __future__ import annotations

import asyncio
import gzip
import re
import uuid

import pytest

from domain.api_keys import SCOPES
from services.api.routes import ROUTES

SCOPED = [r for r in ROUTES if r.scope is not None]


def _path(route) -> str:
    return re.sub(r"{\w+}", str(uuid.uuid4()), route.path)


def _assert_envelope(r, status: int, code: str | None = None) -> None:
    assert r.status == status, r.body
    assert set(r.body) == {"error"}
    assert set(r.error) == {"code", "message", "details"}
    assert isinstance(r.error["message"], str) and isinstance(r.error["details"], dict)
    if code:
        assert r.error["code"] == code
    assert r.headers.get("X-Request-Id")


# ------------------------------------------------------------------------------ auth errors


async def test_missing_malformed_unknown_keys_are_401(service):
    anon = service.client()
    r = await anon.get("/me")
    _assert_envelope(r, 401, "missing_key")
    for header in ("Basic abc", "Bearer", "Bearer service_live_", "service_live_abc", "Bearer sk_live_123",
                   "Bearer service_live_" + "x" * 43):
        r = await anon.get("/me", headers={"Authorization": header})
        _assert_envelope(r, 401, "invalid_key")
    assert "X-RateLimit-Limit" not in r.headers  # no workspace known: nothing counted


async def test_unknown_route_and_wrong_method(service):
    ws = await service.workspace()
    r = await ws.client.get("/nope")
    _assert_envelope(r, 404, "not_found")
    r = await ws.client.get("/jobs/")
    _assert_envelope(r, 404, "not_found")
    r = await service.client().get("/nope")  # no key on an unknown route: the key is checked first
    _assert_envelope(r, 401, "missing_key")
    r = await ws.client.call("PUT", "/medias", {"name": "x"})
    _assert_envelope(r, 405, "method_not_allowed")
    assert set(r.headers["Allow"].split(", ")) == {"GET", "HEAD", "POST"}
    assert r.headers["X-RateLimit-Limit"]
    # HEAD answers as GET does, without the body (it was a 405).
    got, head = await ws.client.get("/me"), await ws.client.call("HEAD", "/me")
    assert (head.status, head.body) == (200, None) and got.status == 200
    assert head.headers["Content-Type"] == got.headers["Content-Type"] and head.headers["X-RateLimit-Limit"]
    assert (await service.client().call("HEAD", "/me")).status == 401


async def test_body_errors_413_415_and_invalid_json(service):
    ws = await service.workspace()
    big = b'{"name": "' + b"x" * (service.settings.api_max_body_bytes + 10) + b'"}'
    r = await ws.client.post("/medias", data=big, headers={"Content-Type": "application/json"})
    _assert_envelope(r, 413, "payload_too_large")
    assert r.error["details"]["limit_bytes"] == service.settings.api_max_body_bytes
    r = await ws.client.post("/medias", data=b"name=x", headers={"Content-Type": "application/x-www-form-urlencoded"})
    _assert_envelope(r, 415, "unsupported_media_type")
    r = await ws.client.post("/medias", data=b"name: x", headers={"Content-Type": "text/plain"})
    _assert_envelope(r, 415, "unsupported_media_type")
    r = await ws.client.post("/medias", data=b'{"name": ', headers={"Content-Type": "application/json"})
    _assert_envelope(r, 400, "invalid_json")
    r = await ws.client.post("/medias", data=b'["name"]', headers={"Content-Type": "application/json"})
    _assert_envelope(r, 400, "validation_error")
    # A Content-Encoding that lies is the client's error (it was a 500), and a real one is decoded.
    r = await ws.client.post("/medias", data=b'{"name": "x"}',
                             headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    _assert_envelope(r, 400, "invalid_body")
    assert "content-encoding" in r.error["message"].lower()
    r = await ws.client.post("/medias", data=gzip.compress(b'{"name": "zipped"}'),
                             headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert r.status == 200 and r.data["name"] == "zipped", r.body
    r = await ws.client.post("/medias", data=b'{"name": "x"}',
                             headers={"Content-Type": "application/json", "Content-Encoding": "compress"})
    _assert_envelope(r, 415, "unsupported_media_type")  # passed through undecoded before
    assert r.error["details"]["content_encoding"] == "compress"
    async with service.pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM events WHERE type = 'MediaCreated' AND workspace_id = $1",
                                   ws.id) == 1


async def test_every_response_carries_a_request_id_and_an_incoming_one_is_kept(service):
    ws = await service.workspace()
    ids = set()
    for r in [await ws.client.get("/me"), await ws.client.get("/nope"), await service.client().get("/me"),
              await service.client().get("/openapi.json")]:
        ids.add(r.headers["X-Request-Id"])
    assert len(ids) == 4
    r = await ws.client.get("/me", headers={"X-Request-Id": "trace-1234abcd"})
    assert r.headers["X-Request-Id"] == "trace-1234abcd"
    r = await ws.client.get("/me", headers={"X-Request-Id": "bad id\u00e9"})
    assert r.headers["X-Request-Id"] != "bad id\u00e9"


# ------------------------------------------------------------------------------ rate limit


async def _fresh_window(client) -> None:
    """Start the test early in a one-minute window, so that no boundary passes during it."""
    r = await client.get("/credits")
    reset = int(r.headers["X-RateLimit-Reset"])
    if reset < 15:
        await asyncio.sleep(reset + 0.5)
        await client.get("/credits")  # the call above counted in the old window: spend one in this one


async def test_rate_limit_holds_across_api_processes_and_spares_other_workspaces(service):
    limited = await service.workspace(rate_limit=6)
    other = await service.workspace(rate_limit=6)
    await _fresh_window(service.client(limited.key))  # one call of the six
    seen = []
    for i in range(5):  # alternate the two API processes: one shared counter
        r = await service.client(limited.key, api=i % 2).get("/credits")
        assert r.status == 200, r.body
        seen.append(int(r.headers["X-RateLimit-Remaining"]))
        assert r.headers["X-RateLimit-Limit"] == "6"
    assert seen == [4, 3, 2, 1, 0]
    for api in (0, 1):
        r = await service.client(limited.key, api=api).get("/credits")
        _assert_envelope(r, 429, "rate_limited")
        assert 1 <= int(r.headers["Retry-After"]) <= 60
        assert r.headers["X-RateLimit-Remaining"] == "0" and r.headers["X-RateLimit-Limit"] == "6"
        assert int(r.headers["X-RateLimit-Reset"]) == int(r.headers["Retry-After"])
    r = await other.client.get("/credits")
    assert r.status == 200 and r.headers["X-RateLimit-Remaining"] == "5"


# ---------------------------------------------------------------------------- scope matrix


@pytest.mark.parametrize("route", SCOPED, ids=lambda r: f"{r.method} {r.path}")
async def test_scope_matrix_from_the_route_table(service, route):
    ws = await service.workspace()
    everything_else = sorted(SCOPES - {route.scope, "*"})
    denied = await service.client(await service.key(ws, everything_else)).call(
        route.method, _path(route), {} if route.body else None)
    _assert_envelope(denied, 403, "insufficient_scope")
    assert denied.error["details"]["required"] == route.scope
    assert route.scope in denied.error["message"]

    allowed = await service.client(await service.key(ws, [route.scope])).call(
        route.method, _path(route), {} if route.body else None)
    assert allowed.status not in (401, 403), (route, allowed.body)


def test_every_route_declares_a_known_scope_and_a_unique_operation():
    assert all(r.scope in SCOPES for r in SCOPED)
    assert len({(r.method, r.path) for r in ROUTES}) == len(ROUTES)
    assert len({r.operation_id for r in ROUTES}) == len(ROUTES)


# ---------------------------------------------------------------------------------- OpenAPI


async def test_openapi_document_is_generated_from_the_route_table(service):
    r = await service.client().get("/openapi.json")
    assert r.status == 200
    doc = r.body
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    ops = {(m.upper(), p): op for p, item in doc["paths"].items() for m, op in item.items()}
    assert set(ops) == {(r.method, r.path) for r in ROUTES}
    for route in ROUTES:
        op = ops[(route.method, route.path)]
        if route.scope is not None:
            assert op["security"] == [{"bearerAuth": [route.scope]}]
        errors = {s: resp for s, resp in op["responses"].items() if s[0] in "45"}  # a 304 has no body
        assert errors and "500" in errors and "503" in errors
        for resp in errors.values():
            assert resp["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorEnvelope"}
    jobs = ops[("GET", "/jobs")]
    limit = next(p for p in jobs["parameters"] if p["name"] == "limit")
    assert limit["schema"]["maximum"] == 100 and limit["schema"]["minimum"] == 1
    create_key = doc["components"]["schemas"]["CreateKey"]
    assert create_key["additionalProperties"] is False
    assert create_key["properties"]["scopes"]["uniqueItems"] is True


def test_docs_api_md_lists_every_route_with_its_scope():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    for route in ROUTES:
        scope = f"`{route.scope}`" if route.scope else "none"
        assert f"| {route.method} | /v1{route.path} | {scope} | {route.status} |" in doc, route


# ------------------------------------------------------------------------------ hostile bodies

BIG_NUMBERS = [b"1e30", b"18446744073709551616", b"-1e300"]  # integers beyond 64 bits, written both ways


@pytest.mark.parametrize("number", BIG_NUMBERS)
async def test_a_number_beyond_64_bits_is_400_naming_its_field(service, number):
    ws = await service.workspace()
    cases = [  # three routes; the number in an integer field and in a string field
        ("/videos/1/clips", b'{"start_ms": 0, "end_ms": ' + number + b"}", "body.end_ms"),
        ("/production/descriptions/complete", b'{"media_id": ' + number + b', "candidate_id": "'
         + str(uuid.uuid4()).encode() + b'", "platforms": ["blog_embed"], "idempotency_key": "big-number-key-0001"}',
         "body.media_id"),
        ("/medias", b'{"name": ' + number + b"}", "body.name"),
    ]
    for path, body, field in cases:
        r = await ws.client.post(path, data=body, headers={"Content-Type": "application/json"})
        _assert_envelope(r, 400, "validation_error")
        assert [f["field"] for f in r.error["details"]["fields"]] == [field], (path, r.body)


async def test_a_body_that_is_not_the_gzip_it_claims_is_400_and_logged_as_the_clients_error(service):
    ws = await service.workspace()
    sizes = {p: p.stat().st_size for p in service.logs.glob("api*.log")}
    lying = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    answers = [await ws.client.post("/medias", data=b'{"name": "x"}', headers=lying),  # a key, a JSON route
               await service.client().get("/files/abc", data=b"not gzip at all", headers=lying)]  # no key needed
    for r in answers:
        _assert_envelope(r, 400, "invalid_body")
        assert "content-encoding" in r.error["message"].lower()
    await asyncio.sleep(0.2)  # the log lines are written
    new = "".join(p.read_bytes()[sizes.get(p, 0):].decode() for p in service.logs.glob("api*.log"))
    for r in answers:
        lines = [line for line in new.splitlines() if r.headers["X-Request-Id"] in line]
        assert len(lines) == 1, lines  # one line, at info level: a client's mistake, not our failure
        assert '"level":"info"' in lines[0], lines
    assert "Traceback" not in new and '"level":"error"' not in new, new[-3000:]
