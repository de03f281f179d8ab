"""What every aggregate module shares: the published-event registry and the domain error family.

Event classes are a contract on Kafka, so each one is published under a stable name (``JobQueued``,
never a Python path) with a schema number. ``infra.codec`` builds its registry from ``PUBLISHED``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate

# stable event name -> (event class, schema number, aggregate class name)
PUBLISHED: dict[str, tuple[type, int, str]] = {}
# aggregate class name (the stream type) -> aggregate class
AGGREGATES: dict[str, type[Aggregate]] = {}
# (stable event name, schema) -> what schema + 1 changed, and how that schema's data is upcast to it
SCHEMA_CHANGES: dict[tuple[str, int], SchemaChange] = {}

NAMESPACE = UUID("6f1f8a52-3b0e-4c55-9a57-5c1d9c7f2a10")


def deterministic_id(*parts: object) -> UUID:
    """uuid5 of the parts: the same request or natural key always names the same stream."""
    return uuid5(NAMESPACE, "/".join(str(p) for p in parts))


def aggregate(stream_type: str) -> Callable[[type[Aggregate]], type[Aggregate]]:
    """Register an aggregate class under a stable stream type and publish its nested events.

    Every nested event class declared by the aggregate carries ``published_as = "Name"`` (and
    may carry ``schema_version``, default 1). The library's own generated ``Event``/``Created``
    bases have no name and are not published; an event of ours without one could never be
    stored, which ``infra.codec`` reports when it is encoded.
    """

    def register(cls: type[Aggregate]) -> type[Aggregate]:
        AGGREGATES[stream_type] = cls
        cls.stream_type = stream_type  # type: ignore[attr-defined]
        for attr in vars(cls).values():
            if isinstance(attr, type) and issubclass(attr, Aggregate.Event):
                name = getattr(attr, "published_as", None)
                if not name:
                    continue
                if name in PUBLISHED and PUBLISHED[name][0] is not attr:
                    raise TypeError(f"event name {name} published twice")
                PUBLISHED[name] = (attr, getattr(attr, "schema_version", 1), stream_type)
        return cls

    return register


@dataclass(frozen=True)
class Copied:
    """An added field that an older event fills with the value of another of its own fields."""

    field: str


@dataclass(frozen=True)
class SchemaChange:
    """What schema ``from_schema + 1`` of a published event changed, and how older data is upcast.

    One row per change, declared beside its event with ``schema_change``: the codec upcasts with it,
    and the event catalogue (docs/events.md) and the AsyncAPI document read it, so an earlier schema
    is described from the code that upcasts it (its JSON Schema is the next one's without the fields
    this change added). A change of another kind than adding fields (a rename, a new type) needs this
    row to say so before it can be declared.
    """

    name: str
    from_schema: int
    description: str  # what the change added and why, in a consumer's words
    # Each field the change added -> what an older event gets: a JSON value, or Copied(other field).
    added: Mapping[str, Any]
    # What the upcast cannot tell from the event itself, and which other event a consumer reads it from.
    needs: str | None = None

    def fill(self, data: dict[str, Any], field_name: str) -> Any:
        value = self.added[field_name]
        return data.get(value.field) if isinstance(value, Copied) else value

    def upcast(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` of ``from_schema`` as the next schema: each added field it lacks, filled."""
        return {**data, **{k: self.fill(data, k) for k in self.added if k not in data}}

    def fills(self) -> str:
        """How an event of ``from_schema`` is upcast, in words: what each added field gets."""
        parts = [f"`{k}` = the value of `{v.field}`" if isinstance(v, Copied) else f"`{k}` = `{json.dumps(v)}`"
                 for k, v in self.added.items()]
        return ", ".join(parts)


def schema_change(name: str, from_schema: int, description: str, *, added: Mapping[str, Any],
                  needs: str | None = None) -> SchemaChange:
    """Declare what ``name``'s schema ``from_schema + 1`` changed: every ``infra.codec.EventRegistry``
    upcasts old events with it, and the catalogue and the AsyncAPI document describe it."""
    if not added or not description.strip():
        raise TypeError(f"{name} schema {from_schema + 1}: a change names its added fields and describes them")
    if (name, from_schema) in SCHEMA_CHANGES:
        raise TypeError(f"{name} schema {from_schema + 1} declared twice")
    change = SchemaChange(name, from_schema, " ".join(description.split()), dict(added),
                          " ".join(needs.split()) if needs else None)
    SCHEMA_CHANGES[(name, from_schema)] = change
    return change


class DomainError(Exception):
    """A command refused by an invariant. The API maps ``code`` and ``status`` to the envelope."""

    code = "invalid_request"
    status = 400

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(DomainError):
    code = "not_found"
    status = 404


class InvalidTransition(DomainError):
    code = "invalid_state"
    status = 409


class InsufficientCredits(DomainError):
    code = "insufficient_credits"
    status = 402
