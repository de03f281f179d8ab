"""What a read model declares: its name, its tables, its teardown and a pure ``apply``.

``apply(event) -> statements`` is pure (event in, SQL out); ``projections/plan.py`` orders a
batch's statements and the runner (``services/processes/projector/runner.py``) executes them and the
tracking update in one transaction.
Events a projection does not handle produce no statement and only advance tracking. Every
statement must be replay-safe: ``INSERT ... ON CONFLICT`` for creations, ``UPDATE`` guarded by
the stream version for changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from infra.codec import StoredEvent

Statement = tuple[str, tuple[Any, ...]]
Handler = Callable[[StoredEvent], list[Statement]]


@dataclass(frozen=True)
class Accumulate:
    """How two executions of one counter upsert fold into one (``commutative`` projections).

    Two statements with this SQL and equal arguments at ``key`` become one whose arguments at
    ``add`` are summed and at ``keep_max`` are the greater; every other argument must be equal
    or the two are kept apart. The SQL must add its counts from ``excluded`` (``calls = t.calls
    + excluded.calls``), not constants, so that the folded statement writes what the two would.
    Folding a batch's increments per row is most of what a counter projection costs otherwise:
    one row update per call instead of one per call *and* row.
    """

    key: tuple[int, ...]
    add: tuple[int, ...] = ()
    keep_max: tuple[int, ...] = ()

    def fold(self, first: tuple[Any, ...], second: tuple[Any, ...]) -> tuple[Any, ...] | None:
        out = list(first)
        for i, (a, b) in enumerate(zip(first, second, strict=True)):
            if i in self.add:
                out[i] = a + b
            elif i in self.keep_max:
                out[i] = max(a, b)
            elif a != b:
                return None
        return tuple(out)


@dataclass
class Projection:
    name: str
    ddl: list[str]
    tables: list[str]
    handlers: dict[str, Handler] = field(default_factory=dict)
    # "events": domain events (StoredEvent, handlers keyed by event type, deduplicated by position).
    # "telemetry": API call records (dicts, handlers keyed by their "kind", deduplicated by offset).
    source: str = "events"
    # Handler for every event without a handler of its own (a catch-all read model).
    default: Handler | None = None
    # How the runner may order a batch's statements (see projections.plan.execution_plan):
    # "strict": as produced; "per_stream": every statement of an event touches only rows owned by
    # the event's stream, so streams may interleave; "commutative": any order gives the same state.
    ordering: str = "strict"
    # With "per_stream": combine two consecutive statements of one stream into one (or None to
    # keep both). Must give the state the two would give in sequence.
    merge: Callable[[Statement, Statement], Statement | None] | None = None
    # With "commutative": counter upserts (by SQL) whose executions in one batch fold into one
    # per row (see Accumulate).
    accumulate: dict[str, Accumulate] = field(default_factory=dict)

    def handles(self, *event_types: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            for t in event_types:
                self.handlers[t] = fn
            return fn

        return register

    def apply(self, event: StoredEvent | dict) -> list[Statement]:
        kind = event.type if isinstance(event, StoredEvent) else event.get("kind", "")
        handler = self.handlers.get(kind, self.default)
        return handler(event) if handler else []

    def handles_type(self, kind: str) -> bool:
        return self.default is not None or kind in self.handlers

    @property
    def teardown(self) -> list[str]:
        """Statements that empty the read model before a rebuild."""
        return [f"TRUNCATE {', '.join(self.tables)}"] if self.tables else []
