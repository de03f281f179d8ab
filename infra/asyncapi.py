"""The AsyncAPI 3.0 document of the service's two Kafka topics, generated from the event registry.

What OpenAPI is to the HTTP side, AsyncAPI is to a topic: the channels, their messages, the key,
the headers and the payload schemas, in a form that generators, catalogues and schema tools read.
The document is built from the same registry as the catalogue (``infra.eventdocs``): one message
per event type and per schema that type was ever written with (the topic keeps events as they were
stored, so a consumer meets every one), each earlier schema described by the change that followed
it (``domain.base.SchemaChange``). It is served at ``GET /v1/asyncapi.json`` and committed as
``docs/asyncapi.json`` (``python -m infra.asyncapi --write`` rewrites it; a unit test fails when the
committed file differs, another validates it with the AsyncAPI project's own CLI).
"""

from __future__ import annotations

import json
from copy import deepcopy
from pathlib import Path
from typing import Any

from domain.base import PUBLISHED
from infra.codec import ENVELOPE_SCHEMA, EventRegistry
from infra.eventdocs import TOPIC, print_or_write, purpose

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "asyncapi.json"
ASYNCAPI_VERSION = "3.0.0"
CONTRACT_VERSION = "1.0.0"  # the topics' names end in v1: a change a consumer must act on gets a v2 topic
TELEMETRY_TOPIC = "vaeo.telemetry.v1"
KAFKA_BINDING = "0.5.0"
TELEMETRY_MESSAGE = "ApiCall"

# The record the API sends to the telemetry topic for each authenticated call (services/api/app.py);
# the exports watch reads its ``first_exports``. The analytics test validates every record on the topic
# against it, so a field added there without being described here fails.
TELEMETRY_RECORD_SCHEMA: dict[str, Any] = {
    "title": "an API call (Kafka value of vaeo.telemetry.v1)",
    "type": "object",
    "properties": {
        "kind": {"const": "api_call"},
        "workspace_id": {"type": "string", "format": "uuid"},
        "environment": {"type": "string", "enum": ["production", "sandbox"]},
        "key_id": {"type": "string", "format": "uuid"},
        "method": {"type": "string"},
        "route": {"type": "string", "description": "the route's template (`/v1/jobs/{id}`), or `unmatched`"},
        "status": {"type": "integer", "description": "the HTTP status answered (499: the client left)"},
        "latency_ms": {"type": "number", "minimum": 0, "description": "to the answer (a stream: to its opening)"},
        "ts": {"type": "integer", "description": "when the call was answered, epoch milliseconds (the API's clock)"},
        "request_id": {"type": "string", "description": "as answered in `X-Request-Id`"},
        "first_exports": {
            "type": "array",
            "description": "exports of an article a GET served that had not been recorded yet: the exports watch "
                           "records each as `ExportReady`",
            "items": {"type": "object", "additionalProperties": False,
                      "required": ["article_id", "format", "content_type", "etag", "bytes", "path", "environment"],
                      "properties": {"article_id": {"type": "integer"}, "format": {"type": "string"},
                                     "content_type": {"type": "string"}, "etag": {"type": "string"},
                                     "bytes": {"type": "integer"}, "path": {"type": "string"},
                                     "environment": {"type": "string", "enum": ["production", "sandbox"]}}},
        },
    },
    "required": ["kind", "workspace_id", "environment", "key_id", "method", "route", "status", "latency_ms", "ts",
                 "request_id"],
    "additionalProperties": False,
}

_EVENT_KEY = {"type": "string", "description": "the event's workspace id (a UUID as text), `-` for an event that "
                                                "belongs to no workspace: one workspace's events stay in one "
                                                "partition, in commit order"}
_DELIVERY = ("Delivery is at least once: the same event (the same `position`) can arrive more than once, and a "
             "consumer drops what it has seen by position, per partition. Positions are global, gap-free and in "
             "commit order. Old schemas are upcast when read, never rewritten: this channel holds every schema an "
             "event was ever written with, each a message of its own here.")


def message_id(name: str, schema: int) -> str:
    return f"{name}.v{schema}"


def _headers(name: str) -> dict[str, Any]:
    return {"type": "object", "required": ["type", "position"], "properties": {
        "type": {"type": "string", "const": name, "description": "the event's type, as in the payload"},
        "position": {"type": "string", "pattern": "^[1-9][0-9]*$",
                     "description": "the event's global position, as decimal text"}}}


def _lift(schema: dict[str, Any], shared: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without ``$schema``, its ``$defs`` moved to the components (a reference inside the
    document resolves from the document's root)."""
    schema = {k: v for k, v in schema.items() if k != "$schema"}
    defs = schema.pop("$defs", {})
    for def_name, definition in defs.items():
        if shared.setdefault(def_name, definition) != definition:
            raise ValueError(f"two different definitions named {def_name}: rename one of the models")
    text = json.dumps(schema).replace('"#/$defs/', '"#/components/schemas/')
    return json.loads(text)


def _description(registry: EventRegistry, name: str, schema: int) -> str:
    current = registry.current_schema(name)
    parts = []
    if schema < current:
        change = registry.schema_change(name, schema + 1)
        parts.append(f"An earlier schema, still in the topic (the current one is {current}). Upcast to schema "
                     f"{schema + 1}: {change.fills()}." + (f" {change.needs}" if change.needs else ""))
    if schema > 1:
        parts.append(f"Changed from schema {schema - 1}: {registry.schema_change(name, schema).description}")
    return "\n\n".join(parts) or "The event's first and only schema."


def _event_message(registry: EventRegistry, name: str, schema: int, shared: dict[str, Any]) -> dict[str, Any]:
    payload = deepcopy(ENVELOPE_SCHEMA)
    del payload["$schema"]
    payload["title"] = f"{name} schema {schema} (Kafka value of {TOPIC})"
    payload["properties"]["type"] = {"const": name}
    payload["properties"]["schema"] = {"const": schema}
    payload["properties"]["stream_type"] = {"const": registry.stream_type_of(name)}
    payload["properties"]["data"] = _lift(registry.json_schema(name, schema), shared)
    return {
        "name": name,
        "title": f"{name} (schema {schema})",
        "summary": purpose(PUBLISHED[name][0]),
        "description": _description(registry, name, schema),
        "contentType": "application/json",
        "headers": _headers(name),
        "payload": payload,
        "correlationId": {"description": "the chain the event belongs to (docs/events.md, `meta`)",
                          "location": "$message.payload#/meta/correlation_id"},
        "bindings": {"kafka": {"key": _EVENT_KEY, "bindingVersion": KAFKA_BINDING}},
    }


def _telemetry_message() -> dict[str, Any]:
    return {
        "name": "api_call",
        "title": "API call",
        "summary": "One authenticated call of the HTTP API: what GET /v1/usage and GET /v1/monitoring count.",
        "description": "Sent after the answer, never awaited by it: when Kafka is slow long enough to fill the "
                       "API's buffer, records are dropped, so counts read from here are a lower bound. A record "
                       "has no position: a consumer deduplicates by partition and offset.",
        "contentType": "application/json",
        "payload": TELEMETRY_RECORD_SCHEMA,
        "bindings": {"kafka": {"key": {"type": "string", "format": "uuid", "description": "the caller's workspace"},
                               "bindingVersion": KAFKA_BINDING}},
    }


def _channel(topic: str, title: str, description: str, ids: list[str]) -> dict[str, Any]:
    return {"address": topic, "title": title, "description": description,
            "messages": {i: {"$ref": f"#/components/messages/{i}"} for i in ids},
            "bindings": {"kafka": {"topic": topic, "bindingVersion": KAFKA_BINDING}}}


def _operation(channel: str, summary: str, ids: list[str]) -> dict[str, Any]:
    return {"action": "send", "channel": {"$ref": f"#/channels/{channel}"}, "summary": summary,
            "messages": [{"$ref": f"#/channels/{channel}/messages/{i}"} for i in ids]}


def document() -> dict[str, Any]:
    """The AsyncAPI document: deterministic (events by name, then by schema)."""
    registry = EventRegistry()
    shared: dict[str, Any] = {}
    messages = {message_id(name, schema): _event_message(registry, name, schema, shared)
                for name in registry.names() for schema in range(1, registry.current_schema(name) + 1)}
    event_ids = list(messages)
    messages[TELEMETRY_MESSAGE] = _telemetry_message()
    components: dict[str, Any] = {"messages": messages}
    if shared:
        components["schemas"] = dict(sorted(shared.items()))
    return {
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": "vaeo event stream",
            "version": CONTRACT_VERSION,
            "description": "The domain events of vaeo (every change of state, as committed) and the telemetry of its "
                           "HTTP API, on Kafka. The events' catalogue, with what each event is for and who reads it, "
                           "is docs/events.md; an example of a consumer with no line of this project is "
                           "docs/analytics.md.",
        },
        "defaultContentType": "application/json",
        "servers": {"local": {
            "host": "127.0.0.1:19092", "protocol": "kafka",
            "description": "the broker `vaeo up` starts; a deployment names its own (VAEO_KAFKA_BOOTSTRAP)"}},
        "channels": {
            "events": _channel(TOPIC, "Domain events", _DELIVERY, event_ids),
            "telemetry": _channel(TELEMETRY_TOPIC, "API call telemetry",
                                  "One record per authenticated API call, keyed by workspace.", [TELEMETRY_MESSAGE]),
        },
        "operations": {
            "publishEvents": _operation("events", "The relay publishes every committed event, in commit order.",
                                        event_ids),
            "publishTelemetry": _operation("telemetry", "Each API process publishes a record per call.",
                                           [TELEMETRY_MESSAGE]),
        },
        "components": components,
    }


def render() -> str:
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return print_or_write(argv, prog="python -m infra.asyncapi", doc=__doc__, render_text=render, path=DOC_PATH)


if __name__ == "__main__":
    raise SystemExit(main())
