"""The execution planner: a batch's events -> a projection's statements, ordered into executemany groups.

Pure (events in, ``(sql, [args, ...])`` groups out); the runner sends each group as one
``executemany`` in the transaction that also stores the projection's tracking
(``services/processes/projector/runner.py``), and a rebuild does the same batch after batch.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping

from infra.codec import StoredEvent
from projections.base import Accumulate, Projection, Statement

Plan = list[tuple[str, list[tuple]]]  # (sql, [args, ...]) in execution order


def plan_for(projection: Projection, events: Iterable[StoredEvent | dict]) -> Plan:
    """The statements of ``projection`` for ``events`` (in order), planned by its ``ordering``."""
    keyed: list[tuple[Hashable, Statement]] = []
    by_stream = projection.source == "events"
    for event in events:
        key = event.stream_id if by_stream else None
        for statement in projection.apply(event):
            keyed.append((key, statement))
    return execution_plan(keyed, projection.ordering, projection.merge, projection.accumulate)


def execution_plan(keyed: list[tuple[Hashable, Statement]], ordering: str,
                   merge: Callable[[Statement, Statement], Statement | None] | None = None,
                   accumulate: Mapping[str, Accumulate] | None = None) -> Plan:
    """Order a batch's statements into (sql, [args, ...]) groups, each sent as one executemany.

    ``strict`` keeps the produced order and only merges consecutive runs of the same SQL.
    ``per_stream`` puts the k-th statement of each stream in layer k: within a layer every
    statement touches another stream's rows, so a layer may be grouped by SQL freely while each
    stream keeps its order; with the projection's ``merge``, two consecutive statements of one
    stream may become one (five events of a job in a batch: two writes, not five; a turn of a
    conversation, its message, actions and reply: one insert, not an insert and updates).
    ``commutative`` groups the whole batch by SQL, and folds the executions of an ``accumulate``
    SQL that update the same row into one.
    """
    if ordering == "strict":
        groups: Plan = []
        for _, (sql, args) in keyed:
            if groups and groups[-1][0] == sql:
                groups[-1][1].append(args)
            else:
                groups.append((sql, [args]))
        return groups
    if ordering == "commutative":
        layers = [_accumulated(keyed, accumulate)] if accumulate else [keyed]
    elif ordering == "per_stream":
        per_stream: dict[Hashable, list[Statement]] = {}
        for key, statement in keyed:
            mine = per_stream.setdefault(key, [])
            if merge is not None and mine:
                merged = merge(mine[-1], statement)
                if merged is not None:
                    mine[-1] = merged
                    continue
            mine.append(statement)
        layers = []
        for key, statements in per_stream.items():
            for d, statement in enumerate(statements):
                if d == len(layers):
                    layers.append([])
                layers[d].append((key, statement))
    else:
        raise ValueError(f"unknown ordering {ordering!r}")
    plan: Plan = []
    for layer in layers:
        by_sql: dict[str, list[tuple]] = {}
        for _, (sql, args) in layer:
            by_sql.setdefault(sql, []).append(args)
        plan.extend(by_sql.items())
    return plan


def _accumulated(keyed: list[tuple[Hashable, Statement]],
                 accumulate: Mapping[str, Accumulate]) -> list[tuple[Hashable, Statement]]:
    out: list[tuple[Hashable, Statement]] = []
    last_of_row: dict[tuple, int] = {}  # (sql, key arguments) -> index in out of that row's statement
    for key, (sql, args) in keyed:
        rule = accumulate.get(sql)
        if rule is not None:
            row = (sql, *(args[i] for i in rule.key))
            at = last_of_row.get(row)
            if at is not None:
                folded = rule.fold(out[at][1][1], args)
                if folded is not None:
                    out[at] = (out[at][0], (sql, folded))
                    continue
            last_of_row[row] = len(out)
        out.append((key, (sql, args)))
    return out
