"""Where an event comes from: the ``meta`` keys that tie it to what caused it (docs/events.md).

- ``request_id``: the HTTP request that appended the event, when one did (``key_id`` beside it);
- ``correlation_id``: the chain the event belongs to. An API request starts a chain named by its
  request id; a CLI command starts one with a fresh id; a job belongs to the chain of the request
  that queued it, and so does everything its work appends (the refund, the video's results, the
  article, the provider's usage) and every later change to the job (a cancellation);
- ``causation_id``: the direct cause. ``request:<request_id>`` for what a request appends,
  ``cli:<id>`` for what a CLI command appends, ``event:<position>`` for what is appended because of
  an event: every event of a job's work quotes the job's ``JobQueued`` (retries too: they are the
  same job's work, and the queueing is what every attempt answers).

An event's chain is read from its stream's first event (``EventStore.origin``), so it survives
restarts and is the same on every worker.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

from infra.codec import StoredEvent
from infra.consume import caused_by as caused_by  # re-exported: the meta of what is appended because of an event


def request_meta(request_id: str, key_id: UUID | str) -> dict[str, str]:
    """The meta of what an API request appends: the request starts a chain of its own."""
    return {"request_id": request_id, "key_id": str(key_id), "correlation_id": request_id,
            "causation_id": f"request:{request_id}"}


def command_meta(command: str) -> dict[str, str]:
    """The meta of what a CLI command appends (``command`` names it, e.g. ``workspace create``):
    a fresh chain, which the command's run is the cause of."""
    chain = uuid4().hex
    return {"cli": command, "correlation_id": chain, "causation_id": f"cli:{chain}"}


def correlation_of(event: StoredEvent) -> str:
    """The chain ``event`` belongs to. An event appended before events carried a correlation id
    belongs to the request that appended it, else to its own stream."""
    meta = event.meta or {}
    return str(meta.get("correlation_id") or meta.get("request_id") or event.stream_id)


def joining(meta: dict[str, Any] | None, origin: StoredEvent | None) -> dict[str, Any]:
    """A request's ``meta`` for what it appends to a stream that belongs to a chain already (a
    cancelled job and its refund, a resent delivery): the chain stays the stream's, found from
    its first event ``origin``; the request stays the cause."""
    if origin is None:
        return dict(meta or {})
    return {**(meta or {}), "correlation_id": correlation_of(origin)}
