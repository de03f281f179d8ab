"""The PostgreSQL event store's statements: the append (``vaeo_append``, alone, with the
calls of typed effects in its own statement, or with its NOTIFY), the loads, and how each typed
effect (``infra.effects``) is applied in the append's transaction and how a refusal is read back.

Kept apart from the store's class (``infra.eventstore_postgres``), which decides when to run them
(alone, or a group of appends sharing one commit).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import orjson

from infra.codec import NewEvent, StoredEvent
from infra.effects import (
    SANDBOX_BOUNDS,
    ClaimLapsed,
    DigestTaken,
    Effect,
    IdempotencyAnswer,
    KeyAnswersDropped,
    KeyDigest,
    RefundClaim,
    RefundClaimed,
    SandboxClaim,
)
from infra.eventstore import ConcurrencyError

NOTIFY_CHANNEL = "vaeo_events"
# The NOTIFY payload's mark of an unhurried append ("~1234"; a hurried one is "1234"): nobody waits
# for its events to reach the read models, so the relay may hold them a moment to send them with
# others (``Relay``).
UNHURRIED = "~"
CONFLICT_SQLSTATE = "VA001"
LAPSED_SQLSTATE = "VA002"

# A PostgreSQL-only effect: a step run on the append's connection, in its transaction. For the
# store's own tests and for infrastructure; commands give typed effects (``infra.effects``).
PgEffect = Callable[[asyncpg.Connection], Awaitable[None]]


@dataclass(frozen=True)
class Call:
    """A side effect that is one call of a PostgreSQL function (``SELECT function(args)``: always
    one row, whatever it returns; the function raises to refuse the append). Unlike any other side
    effect it rides in the append's own statement, so an append with calls only is one round trip
    instead of four (begin, the effect, the append, commit). ``types`` are the arguments' SQL types
    (a cast chain such as ``text::jsonb`` passes JSON already serialised).
    ``on_commit``, when given, is called once the append it rode in has committed."""

    function: str
    types: tuple[str, ...]
    args: tuple
    on_commit: Callable[[], None] | None = None

    def sql(self, offset: int = 0) -> str:
        return f"{self.function}(" + ", ".join(f"${offset + i}::{t}" for i, t in enumerate(self.types, 1)) + ")"

    async def __call__(self, conn: asyncpg.Connection) -> None:
        await conn.execute(f"SELECT {self.sql()}", *self.args)


_COMPLETE_TYPES = ("uuid", "text", "uuid", "text", "text", "uuid", "integer", "text::jsonb", "timestamptz")
_SANDBOX_CLAIM = (
    "INSERT INTO sandbox_job_quota AS q (workspace_id, day, jobs, quota, clip_ms, clip_ms_quota, decoded_ms, "
    "decoded_ms_quota) VALUES ($1, $2, 1, $3, $4, $5, $6, $7) "
    "ON CONFLICT (workspace_id, day) DO UPDATE SET jobs = q.jobs + 1, quota = EXCLUDED.quota, "
    "clip_ms = q.clip_ms + EXCLUDED.clip_ms, clip_ms_quota = EXCLUDED.clip_ms_quota, "
    "decoded_ms = q.decoded_ms + EXCLUDED.decoded_ms, decoded_ms_quota = EXCLUDED.decoded_ms_quota")


def _statement(sql: str, *args) -> PgEffect:
    async def run(conn: asyncpg.Connection) -> None:
        await conn.execute(sql, *args)

    return run


def pg_step(effect) -> Call | PgEffect:
    """How PostgreSQL applies an effect in the append transaction. The sandbox quota is a row per
    workspace and day whose CHECK constraints refuse a claim past any bound; a refund claim and a
    key's digest are rows under a primary key; an idempotency answer completes the key's claim
    (``vaeo_idempotency_complete``, which raises ``VA002`` when the claim lapsed) and rides in the
    append's own statement; a revoked API key's idempotency keys are deleted."""
    if isinstance(effect, IdempotencyAnswer):
        body = orjson.dumps(effect.body, default=str).decode()
        return Call("vaeo_idempotency_complete", _COMPLETE_TYPES,
                    (effect.workspace_id, effect.environment, effect.api_key_id, effect.operation, effect.key,
                     effect.owner, effect.status, body, effect.at))
    if isinstance(effect, KeyAnswersDropped):
        return _statement("DELETE FROM idempotency_keys WHERE workspace_id = $1 AND environment = $2 "
                          "AND api_key_id = $3", effect.workspace_id, effect.environment, effect.api_key_id)
    if isinstance(effect, SandboxClaim):
        a, w = effect.allowance, effect.work
        return _statement(_SANDBOX_CLAIM, effect.workspace_id, a.day, a.jobs, w.clip_ms, a.clip_ms, w.decoded_ms,
                          a.decoded_ms)
    if isinstance(effect, RefundClaim):
        return _statement("INSERT INTO credit_refunds (job_id, workspace_id, amount) VALUES ($1, $2, $3)",
                          effect.job_id, effect.workspace_id, effect.amount)
    if isinstance(effect, KeyDigest):
        return _statement("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ($1, $2, $3)",
                          effect.digest, effect.key_id, effect.workspace_id)
    if callable(effect):  # a ``Call`` or a ``PgEffect``
        return effect
    raise TypeError(f"not an effect this store applies: {effect!r}")


def pg_steps(effects: Sequence[Effect | Call | PgEffect]) -> list:
    return [pg_step(e) for e in effects]


def _with_calls(calls: Sequence[Call], events: Sequence[NewEvent], at: datetime,
                announce: str | None = None) -> tuple[str, tuple]:
    """One statement: each call in a CTE (a volatile function's CTE is evaluated, once, and not
    inlined), the append over their one-row cross join, so after every call has succeeded; with
    ``announce``, the NOTIFY too (``_announced``)."""
    parts, args = [], []
    for n, call in enumerate(calls):
        parts.append(f"c{n} AS (SELECT {call.sql(len(args))})")
        args.extend(call.args)
    append = f"SELECT {append_call(len(args))} AS last FROM {', '.join(f'c{n}' for n in range(len(calls)))}"
    args.extend(append_args(events, at))
    if announce is None:
        return f"WITH {', '.join(parts)} {append}", tuple(args)
    return _announced(append, parts, args, announce)


def _announced(append: str, ctes: Sequence[str], args: list, mark: str) -> tuple[str, tuple]:
    """The append (a ``SELECT ... AS last``) and its NOTIFY (payload ``mark`` and the last
    position) in one statement: PostgreSQL delivers the notification when the statement's
    transaction commits, and never if it does not."""
    n = len(args)
    sql = (f"WITH {''.join(c + ', ' for c in ctes)}appended AS ({append}), "
           f"announced AS (SELECT pg_notify(${n + 1}, ${n + 2} || last::text) FROM appended) "
           "SELECT last FROM appended, announced")
    return sql, (*args, NOTIFY_CHANNEL, mark)


def append_args(events: Sequence[NewEvent], at: datetime) -> tuple:
    """The append's arguments: the events' columns, and ``at``, their ``recorded_at`` (the
    service's clock when the append is sent: every time a reader compares, a job's due time with
    a worker's claim for one, is then on one clock)."""
    return (
        [e.stream_id for e in events], [e.stream_type for e in events], [e.version for e in events],
        [e.workspace_id for e in events], [e.type for e in events], [e.schema for e in events],
        [e.data for e in events], [e.meta for e in events], [e.name for e in events], at,
    )


def connection_lost(exc: asyncpg.PostgresError) -> bool:
    """The connection or the server is gone (classes 08 and 57): not this append's own failure."""
    return (exc.sqlstate or "")[:2] in ("08", "57")


async def append_on(conn: asyncpg.Connection, events: Sequence[NewEvent], before: Sequence[Call | PgEffect],
                     at: datetime, announce: str | None = None) -> int:
    """The side effects and the append in one transaction; without side effects, or with calls
    only (``Call``), one statement (its own transaction, one round trip). With ``announce`` (a
    NOTIFY payload's mark), the NOTIFY of the last position rides in the same statement, delivered
    at commit. Returns the last position."""
    if not before:
        if announce is None:
            return await conn.fetchval(APPEND, *append_args(events, at))
        sql, args = _announced(f"SELECT {append_call()} AS last", (), list(append_args(events, at)), announce)
        return await conn.fetchval(sql, *args)
    if all(isinstance(effect, Call) for effect in before):
        sql, args = _with_calls(before, events, at, announce)
        return await conn.fetchval(sql, *args)
    async with conn.transaction():
        for effect in before:
            await effect(conn)
        last = await conn.fetchval(APPEND, *append_args(events, at))
        if announce is not None:
            await conn.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL, f"{announce}{last}")
        return last


def refusal(exc: asyncpg.PostgresError, effects: Sequence = ()) -> Exception:
    """What a failed append means to its caller: a conflict (``ConcurrencyError``), the refusal of
    one of its typed effects (``infra.effects``), else the database's own error."""
    constraint = getattr(exc, "constraint_name", "") or ""
    if exc.sqlstate == CONFLICT_SQLSTATE or (isinstance(exc, asyncpg.UniqueViolationError) and
                                             constraint == "events_stream_id_version_key"):
        return ConcurrencyError(str(exc))
    if exc.sqlstate == LAPSED_SQLSTATE and any(isinstance(e, IdempotencyAnswer) for e in effects):
        return ClaimLapsed(str(exc))
    if isinstance(exc, asyncpg.CheckViolationError) and constraint in SANDBOX_BOUNDS:
        claim = next((e for e in effects if isinstance(e, SandboxClaim)), None)
        if claim is not None:
            return claim.refusal(constraint)
    if isinstance(exc, asyncpg.UniqueViolationError):
        if constraint == "credit_refunds_pkey" and any(isinstance(e, RefundClaim) for e in effects):
            return RefundClaimed(str(exc))
        if constraint == "api_key_digests_pkey" and any(isinstance(e, KeyDigest) for e in effects):
            return DigestTaken(str(exc))
    return exc


def append_call(offset: int = 0) -> str:
    types = ("uuid[]", "text[]", "int[]", "uuid[]", "text[]", "int[]", "jsonb[]", "jsonb[]", "text[]", "timestamptz")
    return "vaeo_append(" + ", ".join(f"${offset + i}::{t}" for i, t in enumerate(types, 1)) + ")"


APPEND = f"SELECT {append_call()}"
_COLUMNS = "position, stream_id, stream_type, version, workspace_id, type, schema, data, meta, recorded_at"
LOAD = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version"
LOAD_AFTER = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 AND version > $2 ORDER BY version"
LOAD_MANY_AFTER = (f"SELECT {', '.join('e.' + c for c in _COLUMNS.split(', '))} "
                    "FROM unnest($1::uuid[], $2::int[]) AS k(stream_id, after) CROSS JOIN LATERAL "
                    "(SELECT * FROM events WHERE stream_id = k.stream_id AND version > k.after ORDER BY version) e")
LOAD_FIRST = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version LIMIT $2"
SELECT_FROM = f"SELECT {_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2"


def row_to_stored(r: asyncpg.Record) -> StoredEvent:
    return StoredEvent(
        position=r["position"], stream_id=r["stream_id"], stream_type=r["stream_type"], version=r["version"],
        workspace_id=r["workspace_id"], type=r["type"], schema=r["schema"], data=r["data"], meta=r["meta"],
        recorded_at=r["recorded_at"],
    )
