"""What every aggregate module shares: the published-event registry and the domain error family.

Event classes are a contract on Kafka, so each one is published under a stable name (``JobQueued``,
never a Python path) with a schema number. ``infra.codec`` builds its registry from ``PUBLISHED``.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate

# stable event name -> (event class, schema number, aggregate class name)
PUBLISHED: dict[str, tuple[type, int, str]] = {}
# aggregate class name (the stream type) -> aggregate class
AGGREGATES: dict[str, type[Aggregate]] = {}
# (stable event name, schema) -> the pure function turning that schema's data into schema + 1
UPCASTERS: dict[tuple[str, int], Callable[[dict], dict]] = {}

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


def upcaster(name: str, from_schema: int) -> Callable[[Callable[[dict], dict]], Callable[[dict], dict]]:
    """Register the upcaster of ``name``'s schema ``from_schema`` (to ``from_schema + 1``): every
    ``infra.codec.EventRegistry`` applies it to old events when they are read."""

    def register(fn: Callable[[dict], dict]) -> Callable[[dict], dict]:
        UPCASTERS[(name, from_schema)] = fn
        return fn

    return register


def upcast_with_environment(name: str, from_schema: int, value: str | None) -> None:
    """``name``'s schema ``from_schema + 1`` adds ``environment``: older events get ``value`` when
    their type alone tells it, None when only their stream or their job can (a consumer derives
    it from there: the dispatcher from the job's ``JobQueued``)."""

    @upcaster(name, from_schema)
    def upcast(data: dict) -> dict:
        return {**data, "environment": data.get("environment", value)}


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
