"""GET /v1/openapi.json: the OpenAPI 3.1 document, generated from the route table and the models.

Never written by hand: every operation of ``ROUTES`` appears with its scope as a security
requirement (``bearerAuth: [scope]``), its query and body schemas from the pydantic models, its
success schema (``text/event-stream`` for a streaming operation), and the error envelope on
every error status it can answer.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from services.api.base import Route
from services.api.models import ErrorEnvelope
from services.api.once import HEADER_PARAMETER

SPEC_VERSION = "1.1.0"
_PATH_PARAM = re.compile(r"{(\w+)}")

_ERROR_MEANING = {
    400: "Invalid request: `details.fields` names each field and the rule it broke",
    401: "Missing key (`missing_key`) or invalid, unknown, expired or revoked key (`invalid_key`)",
    403: "Insufficient scope (`insufficient_scope`, `details.required` names the scope)",
    404: "Not found (another workspace's resource answers exactly like a missing one)",
    409: "Conflict: the resource's state forbids it (`invalid_state`), it kept changing (`conflict`), or the "
         "Idempotency-Key is in use (`idempotency_key_in_use`) or was sent with another request "
         "(`idempotency_key_mismatch`)",
    413: "Body over the limit (`payload_too_large`, `details.limit_bytes`)",
    415: "Body that is not JSON (`unsupported_media_type`)",
    416: "Range selecting no byte of the file (`range_not_satisfiable`); see Content-Range",
    429: "Rate limit of the workspace reached (`rate_limited`); see Retry-After",
    500: "Internal error (`internal_error`): no traceback, `details.request_id` to quote",
    502: "The assistant's language model provider failed mid-turn (`provider_error`); what was done is in details",
    503: "PostgreSQL, Kafka or the object store unreachable (`unavailable`); nothing was written",
}

_HEADERS = {
    "X-Request-Id": {"description": "id of this request (quote it in support requests)",
                     "schema": {"type": "string"}},
    "X-RateLimit-Limit": {"description": "requests per minute allowed to the workspace",
                          "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "requests left in the current one-minute window",
                              "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "seconds until the current window ends",
                          "schema": {"type": "integer"}},
    "Idempotent-Replayed": {"description": "`true` when this answer is the stored first answer to the request's "
                                           "Idempotency-Key, replayed: nothing ran", "schema": {"type": "string",
                                                                                              "enum": ["true"]}},
}


class OpenApiDocument(BaseModel):
    """The answer of GET /openapi.json: an OpenAPI 3.1 document (its members as that specification
    defines them)."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
    components: dict[str, Any]


# Keywords after which a schema is no longer one plain type that ``type: [X, "null"]`` can widen.
_NOT_ONE_TYPE = ("$ref", "anyOf", "oneOf", "allOf", "not", "enum", "const")


def admits_null(schema: dict[str, Any]) -> bool:
    """Whether ``null`` can be valid against ``schema`` (a referenced model never is)."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in schema or "const" in schema:
        return None in schema.get("enum", [schema.get("const", ...)])
    if kind is None and not any(k in schema for k in _NOT_ONE_TYPE):
        return True  # any value
    return any(admits_null(branch) for branch in schema.get("anyOf", []) + schema.get("oneOf", []))


class OpenApiSchema(GenerateJsonSchema):
    """pydantic's JSON Schema, as the OpenAPI 3.1 document states it.

    - A field that may be null is nullable in the 3.1 way: ``type: [X, "null"]`` for a plain type
      (``anyOf`` with ``{"type": "null"}`` when the value is a reference, an enum or a union).
    - A default must be a valid value of its schema: ``Field(default=None)`` on a type that refuses
      null (a field one may omit but never send as null, such as the ``media_id`` of an article's
      update) publishes no default rather than ``default: null``, which validators refuse.
    """

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if isinstance(inner.get("type"), str) and inner["type"] != "null" \
                and not any(k in inner for k in _NOT_ONE_TYPE):
            return {**inner, "type": [inner["type"], "null"]}
        if inner == {"type": "null"}:
            return inner
        return self.get_union_of_schemas([inner, {"type": "null"}])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = super().default_schema(schema)
        if "default" in json_schema and json_schema["default"] is None and not admits_null(json_schema):
            del json_schema["default"]
        return json_schema


def _error_statuses(route: Route) -> list[int]:
    statuses = {500, 503}
    if route.scope is not None:
        statuses |= {401, 403, 429}
    if route.body is not None:
        statuses |= {400, 413, 415}
    if route.query is not None:
        statuses.add(400)
    if route.takes_idempotency_key:  # 400 for a malformed key, 409 for a key in use or bound to another request
        statuses |= {400, 409}
    statuses |= set(route.errors)
    return sorted(statuses)


def _header_refs(route: Route) -> dict[str, Any]:
    names = ["X-Request-Id"] + (["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]
                                if route.scope is not None else [])
    return {n: {"$ref": f"#/components/headers/{n}"} for n in names}


def _event_schema(route: Route, data_ref: dict | None) -> dict[str, Any]:
    """One event of a stream, as OpenAPI describes the items of ``text/event-stream`` (the fields
    an ``EventSource`` reads; ``data`` is a JSON text). The ``error`` event that ends a stream
    failing after its start has no ``id`` and the error envelope as data."""
    data: dict[str, Any] = {"type": "string", "contentMediaType": "application/json"}
    if data_ref is not None:
        data["contentSchema"] = data_ref
    event: dict[str, Any] = {"type": "string"}
    if route.events:
        event["enum"] = [*route.events, "error"]
    return {"type": "object", "required": ["event", "data"],
            "properties": {"id": {"type": "string"}, "event": event, "data": data}}


def build_document(routes: list[Route]) -> dict[str, Any]:
    models: list[tuple[type[BaseModel], str]] = [(ErrorEnvelope, "serialization")]
    for r in routes:
        if r.body is not None:
            models.append((r.body, "validation"))
        if r.response is not None:
            models.append((r.response, "serialization"))
    refs, defs = models_json_schema(list(dict.fromkeys(models)), by_alias=True,
                                    ref_template="#/components/schemas/{model}",
                                    schema_generator=OpenApiSchema)
    schemas = defs.get("$defs", {})
    error_ref = refs[(ErrorEnvelope, "serialization")]

    paths: dict[str, dict[str, Any]] = {}
    for r in routes:
        op: dict[str, Any] = {"operationId": r.operation_id, "summary": r.summary, "tags": [r.tag]}
        patterns = dict(r.patterns)
        params = [{"name": name, "in": "path", "required": True,
                   "schema": {"type": "string", **({"pattern": f"^{patterns[name]}$"} if name in patterns else {})}}
                  for name in _PATH_PARAM.findall(r.path)]
        if r.query is not None:
            qs = r.query.model_json_schema(schema_generator=OpenApiSchema)
            required = set(qs.get("required", []))
            for name, prop in qs.get("properties", {}).items():
                prop = {k: v for k, v in prop.items() if k not in ("title", "description")}
                params.append({"name": name, "in": "query", "required": name in required, "schema": prop,
                               "description": qs["properties"][name].get("description", "")})
        if r.takes_idempotency_key:
            params.append(HEADER_PARAMETER)
        if params:
            op["parameters"] = params
        if r.body is not None:
            op["requestBody"] = {"required": True,
                                 "content": {"application/json": {"schema": refs[(r.body, "validation")]}}}
        ok: dict[str, Any] = {"description": "success", "headers": _header_refs(r)}
        if r.takes_idempotency_key and not r.stream:
            ok["headers"]["Idempotent-Replayed"] = {"$ref": "#/components/headers/Idempotent-Replayed"}
        if r.stream:
            ok["description"] = ("a stream of Server-Sent Events: blocks of `id:`, `event:` and `data:` (one line "
                                 "of JSON) lines, and `: keep-alive` comment lines while nothing happens")
            ok["content"] = {"text/event-stream": {"schema": _event_schema(
                r, refs[(r.response, "serialization")] if r.response is not None else None)}}
        elif r.response is not None:
            ok["content"] = {"application/json": {"schema": refs[(r.response, "serialization")]}}
        responses: dict[str, Any] = {str(r.status): ok}
        for status in _error_statuses(r):
            responses[str(status)] = {"description": _ERROR_MEANING.get(status, "error"),
                                      "headers": _header_refs(r),
                                      "content": {"application/json": {"schema": error_ref}}}
        op["responses"] = responses
        op["security"] = [{"bearerAuth": [r.scope]}] if r.scope is not None else []
        paths.setdefault(r.path, {})[r.method.lower()] = op

    return {
        "openapi": "3.1.0",
        "info": {"title": "vaeo: video AEO/GEO service", "version": SPEC_VERSION,
                 "description": "Generated from the route table; see docs/api.md. Every non-2xx answer is "
                                "the error envelope."},
        "servers": [{"url": "/v1"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "headers": _HEADERS,
            "securitySchemes": {"bearerAuth": {
                "type": "http", "scheme": "bearer",
                "description": "service_live_... (production) or service_test_... (sandbox). The array of each "
                               "operation's requirement names the scope it needs; `*` grants every scope."}},
        },
        "security": [{"bearerAuth": []}],
    }


@cache
def document_for(routes: tuple[Route, ...]) -> dict[str, Any]:
    return build_document(list(routes))
