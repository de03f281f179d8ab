"""The event codec: stable names, JSON Schemas, orjson encoding and upcasting.

A stored event (and the Kafka value) is this envelope (docs/events.md)::

    {position, stream_id, stream_type, version, workspace_id, type, schema, data, meta, recorded_at}

``data`` holds the event's own fields (the eventsourcing bookkeeping fields ``originator_id``,
``originator_version``, ``timestamp`` and ``originator_topic`` live in the envelope or are
derived). Old schemas are upcast when read, never rewritten: an upcaster is registered for
``(type, schema)`` and turns that schema's ``data`` into schema + 1. The domain's upcasters are its
``SchemaChange`` rows (``domain.base.schema_change``), which also say what each schema looked like:
``json_schema(name, schema)`` describes every schema an event was ever written with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import cache
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic
from pydantic import TypeAdapter

import domain  # noqa: F401  (registers every published event)
from domain.base import AGGREGATES, PUBLISHED, SCHEMA_CHANGES, SchemaChange

ENVELOPE_FIELDS = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event about to be appended."""

    stream_id: UUID
    stream_type: str
    version: int
    workspace_id: UUID | None
    type: str
    schema: int
    data: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    # The name its stream is found by (``article:123``), from the event class's ``stream_name``
    # (a format string over the event's data); recorded with the append, looked up by ``named_stream``.
    name: str | None = None


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as committed: what the events table holds and Kafka carries."""

    position: int
    stream_id: UUID
    stream_type: str
    version: int
    workspace_id: UUID | None
    type: str
    schema: int
    data: dict[str, Any]
    meta: dict[str, Any]
    recorded_at: datetime

    def envelope(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "stream_id": self.stream_id,
            "stream_type": self.stream_type,
            "version": self.version,
            "workspace_id": self.workspace_id,
            "type": self.type,
            "schema": self.schema,
            "data": self.data,
            "meta": self.meta,
            "recorded_at": self.recorded_at,
        }

    def to_json(self) -> bytes:
        return orjson.dumps(self.envelope(), default=str)  # default: asyncpg's UUID subclass

    @classmethod
    def from_json(cls, raw: bytes) -> StoredEvent:
        d = orjson.loads(raw)
        return cls(
            position=d["position"],
            stream_id=_fast_uuid(d["stream_id"]),
            stream_type=d["stream_type"],
            version=d["version"],
            workspace_id=_fast_uuid(d["workspace_id"]) if d.get("workspace_id") else None,
            type=d["type"],
            schema=d["schema"],
            data=d["data"],
            meta=d.get("meta") or {},
            recorded_at=datetime.fromisoformat(d["recorded_at"]),
        )


try:  # asyncpg's C implementation: a uuid.UUID subclass, ten times faster to parse (rebuilds)
    from asyncpg.pgproto.pgproto import UUID as _fast_uuid
except ImportError:  # pragma: no cover
    _fast_uuid = UUID


class UnknownEventType(LookupError):
    pass


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class EventRegistry:
    """Stable name <-> event class, current schema number, JSON Schema and upcasters."""

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[type, int, str]] = dict(PUBLISHED)
        self._by_class: dict[type, str] = {cls: name for name, (cls, _, _) in self._by_name.items()}
        self._changes: dict[tuple[str, int], SchemaChange] = dict(SCHEMA_CHANGES)  # the domain's (schema_change)
        self._upcasters: dict[tuple[str, int], Upcaster] = {key: c.upcast for key, c in self._changes.items()}

    # ---- names and schemas

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def name_of(self, event_cls: type) -> str:
        try:
            return self._by_class[event_cls]
        except KeyError:
            raise UnknownEventType(f"{event_cls.__qualname__} is not a published event") from None

    def current_schema(self, name: str) -> int:
        return self._lookup(name)[1]

    def knows(self, name: str) -> bool:
        return name in self._by_name

    def stream_type_of(self, name: str) -> str:
        return self._lookup(name)[2]

    def _lookup(self, name: str) -> tuple[type, int, str]:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownEventType(name) from None

    def json_schema(self, name: str, schema: int | None = None) -> dict[str, Any]:
        """The JSON Schema of ``name``'s data at ``schema`` (default: the current one). An earlier schema is
        the next one without the fields its change added (``SchemaChange``), down from the event class."""
        cls, current, stream_type = self._lookup(name)
        out = _data_schema(cls, name, current, stream_type)
        if schema is None or schema == current:
            return out
        if not 1 <= schema < current:
            raise UnknownEventType(f"{name} has no schema {schema}")
        for earlier in range(current - 1, schema - 1, -1):
            change = self.schema_change(name, earlier + 1)
            missing = [f for f in change.added if f not in out["properties"]]
            if missing:
                raise UnknownEventType(f"{name} schema {earlier + 1} adds {missing}, which its data does not have")
            for f in change.added:
                del out["properties"][f]
                out["required"].remove(f)
        change = self.schema_change(name, schema + 1)
        out["description"] = " ".join([f"data of {name} (stream type {stream_type}), schema {schema}; upcast to "
                                       f"schema {schema + 1}: {change.fills()}.", change.needs or ""]).strip()
        return out

    def schema_change(self, name: str, schema: int) -> SchemaChange:
        """What ``name``'s ``schema`` changed from the one before it (schema 2 and later)."""
        try:
            return self._changes[(name, schema - 1)]
        except KeyError:
            raise UnknownEventType(f"no description of {name} schema {schema}") from None

    # ---- upcasting

    def register_upcaster(self, name: str, from_schema: int, fn: Upcaster) -> None:
        self._upcasters[(name, from_schema)] = fn

    def upcast(self, name: str, schema: int, data: dict[str, Any]) -> dict[str, Any]:
        current = self.current_schema(name)
        if schema == current:
            return data
        while schema < current:
            upcaster = self._upcasters.get((name, schema))
            if upcaster is None:
                raise UnknownEventType(f"no upcaster for {name} schema {schema}")
            data = upcaster(data)
            schema += 1
        return data

    # ---- domain events <-> stored form

    def to_new_events(self, pending: Iterable[Aggregate.Event], *, workspace_id: UUID | None,
                      meta: dict[str, Any] | None = None) -> list[NewEvent]:
        out = []
        for ev in pending:
            name = self.name_of(type(ev))
            _, schema, stream_type = self._by_name[name]
            data = {name: getattr(ev, name) for name in _data_fields(type(ev))}
            naming = getattr(type(ev), "stream_name", None)
            # Round-trip through JSON so that what is stored is exactly what readers will see.
            out.append(NewEvent(
                stream_id=ev.originator_id, stream_type=stream_type, version=ev.originator_version,
                workspace_id=workspace_id, type=name, schema=schema, data=orjson.loads(orjson.dumps(data)),
                meta=dict(meta or {}), name=naming.format(**data) if naming else None,
            ))
        return out

    def to_domain_event(self, stored: StoredEvent) -> Aggregate.Event:
        cls, _, stream_type = self._lookup(stored.type)
        data = self.upcast(stored.type, stored.schema, stored.data)
        values = dict(data, originator_id=stored.stream_id, originator_version=stored.version,
                      timestamp=stored.recorded_at)
        if issubclass(cls, Aggregate.Created):
            values["originator_topic"] = get_topic(AGGREGATES[stream_type])
        return _adapter(cls).validate_python(values)

    def reconstruct(self, stored: Iterable[StoredEvent], start: Aggregate | None = None) -> Aggregate | None:
        """The aggregate the events make, from nothing or from ``start`` (a state at an earlier version)."""
        aggregate = start
        for ev in stored:
            aggregate = self.to_domain_event(ev).mutate(aggregate)
        return aggregate


@cache
def _data_fields(cls: type) -> tuple[str, ...]:
    """An event class's own fields (``dataclasses.fields`` is slow enough to matter per event)."""
    return tuple(f.name for f in fields(cls) if f.name not in ENVELOPE_FIELDS)


@cache
def _adapter(cls: type) -> TypeAdapter:
    return TypeAdapter(cls)


def _data_schema(cls: type, name: str, schema: int, stream_type: str) -> dict[str, Any]:
    full = _adapter(cls).json_schema()
    props = {k: v for k, v in full.get("properties", {}).items() if k not in ENVELOPE_FIELDS}
    for v in props.values():
        v.pop("title", None)
    required = [k for k in full.get("required", []) if k not in ENVELOPE_FIELDS]
    out: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": name,
        "description": f"data of {name} (stream type {stream_type}), schema {schema}",
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }
    if "$defs" in full:
        out["$defs"] = full["$defs"]
    return out


ENVELOPE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "vaeo event envelope (Kafka value of vaeo.events.v1)",
    "type": "object",
    "properties": {
        "position": {"type": "integer", "minimum": 1, "description": "global, gap-free, commit order"},
        "stream_id": {"type": "string", "format": "uuid"},
        "stream_type": {"type": "string"},
        "version": {"type": "integer", "minimum": 1},
        "workspace_id": {"type": ["string", "null"], "format": "uuid"},
        "type": {"type": "string"},
        "schema": {"type": "integer", "minimum": 1},
        "data": {"type": "object"},
        "meta": {"type": "object"},
        "recorded_at": {"type": "string", "format": "date-time"},
    },
    "required": ["position", "stream_id", "stream_type", "version", "workspace_id", "type", "schema", "data",
                 "meta", "recorded_at"],
    "additionalProperties": False,
}
