"""The ``Idempotency-Key`` header: one rule for every operation that creates something or charges.

A route declares whether it takes the header (``Route.takes_idempotency_key``: every POST unless it
says otherwise). When a request carries one, ``answer_once`` runs the route's handler through the
application's idempotency keys (``services/application/idempotency.py``), scoped to the API key
that sent it (and so to its workspace and environment) and the operation, and bound to the
request's path, query and body:

- the first request claims the key; the claim is bound, in the transaction of the first append
  the handler's command makes (``Context.save``, through the ambient claim), to what it writes,
  and the answer (status and body) is stored once the handler has built it;
- the same API key with the same key and request gets that answer again (header
  ``Idempotent-Replayed: true``), nothing run, nothing charged; the same key with another request
  is 409 ``idempotency_key_mismatch``; while the first runs, 409 ``idempotency_key_in_use``;
- another API key sending the same key value has a key of its own: its request runs with its own
  scopes and checks, and never receives the first key's answer (which may hold a new API key, a
  webhook secret or what the assistant read with a wildcard key);
- a refusal before anything was written (a 4xx: a scope the subset rule refuses, a short balance;
  or a 5xx: a missing provider, an outage) is not the key's answer: the key is free again and the
  same request is decided afresh when sent again; any failure once the request's events are
  committed is the key's answer (the work was done);
- a stream (Server-Sent Events) is not replayed: its key's answer is 409
  ``idempotency_key_streamed``, naming the conversation the first request opened.

Stored answers are sealed with the service's secret key (a created API key or webhook secret is
in some of them), bound to the key's whole scope: the table holds no secret in plaintext. A revoked
API key's keys are deleted with its revocation.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from aiohttp import web

from domain.base import DomainError
from services.api.base import APPLICATION, REQUEST_ID, Call, Route, json_body, json_default
from services.api.errors import ApiError, to_api_error
from services.application.idempotency import AMBIENT, Outcome, ReplayedRefusal

HEADER = "Idempotency-Key"
KEY_PATTERN = re.compile(r"[\x21-\x7e]{1,255}")  # printable ASCII, no space; Stripe's length
SEALED = "sealed"
STREAMED = "idempotency_key_streamed"

HEADER_PARAMETER = {
    "name": HEADER, "in": "header", "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x21-\\x7e]+$"},
    "description": "Send the same key again to retry safely: the same request gets the first answer again (same "
                   "status and body, header Idempotent-Replayed: true), nothing runs or is charged twice; another "
                   "request with the key is 409 idempotency_key_mismatch, and 409 idempotency_key_in_use while the "
                   "first runs. Scoped to the API key that sends it and this operation (another API key with the "
                   "same value runs its own request); a refusal is not kept; kept 24 hours (docs/api.md, "
                   "Idempotent requests).",
}


def idempotency_key(request: web.Request) -> str | None:
    """The request's key, or None; 400 for a malformed or repeated header."""
    values = request.headers.getall(HEADER, ())
    if not values:
        return None
    if len(values) > 1 or not KEY_PATTERN.fullmatch(values[0]):
        raise ApiError(400, "validation_error", f"the {HEADER} header must be one value of 1 to 255 printable ASCII "
                       "characters without spaces", {"fields": [{"field": f"header.{HEADER}", "rule": "pattern",
                                                                 "message": "1 to 255 printable ASCII characters"}]})
    return values[0]


def _dump(model: Any) -> Any:
    return None if model is None else model.model_dump(mode="json")


async def answer_once(call: Call, route: Route, key: str) -> web.StreamResponse | Any:
    """The route's answer under ``key``: run once, replayed after (see the module's text). Returns
    the handler's result for the first request (the endpoint answers it as usual), a response for a
    replay."""
    request = {"path": dict(call.request.match_info), "query": _dump(call.query), "body": _dump(call.body)}
    if route.fingerprint is not None:
        request["content"] = await route.fingerprint(call)
    application = call.app[APPLICATION]
    api_key_id = call.principal.key_id
    box, scope = application.box, f"{call.workspace_id}:{call.environment}:{api_key_id}:{route.operation_id}:{key}"
    first: list[Any] = []

    async def command(claim) -> Outcome:
        token = AMBIENT.set(claim)
        try:
            result = await route.handler(call)
        except DomainError:
            raise  # the key's answer once the work committed, else the key is freed (``IdempotencyKeys.run``)
        except Exception as exc:
            # Any failure once the request's events are committed is the key's answer (the work is
            # done: running it again would do it twice). Anything else wrote nothing, a refusal of
            # the API's own (4xx) included, and the key is released.
            if not claim.bound:
                raise
            error = to_api_error(exc, call.request, call.request[REQUEST_ID])  # logs an unexpected one
            raise ReplayedRefusal(error.status, error.code, error.message, error.details) from None
        finally:
            AMBIENT.reset(token)
        first.append(result)
        if route.stream:
            conversation = getattr(result, "first", None)
            return Outcome(409, {"error": {
                "code": STREAMED, "message": "this key's request was answered as a stream, which is not replayed; "
                "read what it did with GET /v1/agent/conversations/{id}, or send another key",
                "details": dict(getattr(conversation, "data", None) or {})}})
        body = orjson.dumps(result, default=json_default).decode()
        return Outcome(route.status, {SEALED: box.encrypt(body, scope)})

    outcome = await application.idempotency.run(call.workspace_id, route.operation_id, key, request, command,
                                                api_key_id=api_key_id, environment=call.environment)
    if first:
        return first[0]
    body = orjson.loads(box.decrypt(outcome.body[SEALED], scope))
    return json_body(body, outcome.status, headers={"Idempotent-Replayed": "true"})
