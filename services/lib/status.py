"""The operator's view of the pipeline: ``vaeo status``, the pipeline part of ``/metrics``, the
``projection_lag`` alert, and the heartbeats every process of ours writes.

One function, ``pipeline_state``, reads everything from PostgreSQL and the end offsets of the two
topics from Kafka: the log head and the relay checkpoint, every tracked reader's status,
position, lag (messages of its topic not applied yet), messages consumed and, when it stopped on
a failing event, that event and the error (the projections, and apart from them the consumers
with effects: the dispatcher's intake and the credits watch), the job queue by type and state,
pending webhook deliveries (when the dispatcher's table exists) and the processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import asyncpg

from infra.db import connect
from infra.eventlog import make_consumer, start_or_stop, topic_partitions
from infra.settings import Settings
from projections import ALL
from services.lib.common import sleep_until_stopped
from services.lib.readers import EFFECT_READERS

log = logging.getLogger("vaeo.status")

PROCESS_KINDS = ("api", "relay", "projector", "worker", "dispatcher", "credits-watch")

RELAY_LOCK = 0x72656C61  # "rela": the session advisory lock of the active relay
_RELAY_HOLDER = "vaeo-relay@"


def relay_lock_holder_name() -> str:
    """The ``application_name`` of a relay's lock session: which process it is (host:pid)."""
    return f"{_RELAY_HOLDER}{socket.gethostname()}:{os.getpid()}"


async def active_relay(conn: asyncpg.Connection) -> str | None:
    """``host:pid`` of the relay whose session holds the lock in this database, if any."""
    name = await conn.fetchval(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1 "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())", RELAY_LOCK)
    return name[len(_RELAY_HOLDER):] if name and name.startswith(_RELAY_HOLDER) else None


# ------------------------------------------------------------------------------- end offsets


class EndOffsets:
    """End offsets of the events and telemetry topics through one lazily started consumer.

    Answers are cached ``ttl_s`` (a scrape or a burst of /monitoring reads costs one request to
    Kafka); an error drops the consumer and the next call starts a new one.
    """

    def __init__(self, settings: Settings, ttl_s: float = 1.0) -> None:
        self.settings = settings
        self.ttl_s = ttl_s
        self._consumer = None
        self._cache: tuple[float, dict[str, dict[int, int]]] | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> dict[str, dict[int, int]]:
        """{"events": {partition: end}, "telemetry": {...}}."""
        async with self._lock:
            if self._cache and time.monotonic() - self._cache[0] < self.ttl_s:
                return self._cache[1]
            try:
                if self._consumer is None:
                    consumer = make_consumer(self.settings, group_id=None)
                    await asyncio.wait_for(start_or_stop(consumer), 10)
                    self._consumer = consumer
                out = {}
                for source, topic in (("events", self.settings.events_topic),
                                      ("telemetry", self.settings.telemetry_topic)):
                    tps = await topic_partitions(self._consumer, topic)
                    ends = await asyncio.wait_for(self._consumer.end_offsets(tps), 10) if tps else {}
                    out[source] = {tp.partition: off for tp, off in ends.items()}
            except Exception:
                await self.close()
                raise
            self._cache = (time.monotonic(), out)
            return out

    async def close(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            with contextlib.suppress(Exception):
                await consumer.stop()


# ------------------------------------------------------------------------------- the state


async def has_table(conn: asyncpg.Connection, name: str) -> bool:
    return await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", name)


def _projections() -> dict[str, str]:
    return {name: p.source for name, p in ALL.items()}


def _effect_readers() -> dict[str, str]:
    """The readers whose effect is beyond a read model (services/processes/consuming.py runs them too)."""
    return dict(EFFECT_READERS)


async def reader_states(conn: asyncpg.Connection, ends: dict[str, dict[int, int]] | None,
                        readers: dict[str, str]) -> list[dict]:
    """Every named reader (name -> source topic): status, position (highest applied; telemetry:
    messages consumed), consumed messages, lag (messages of its topic not applied yet) and, for
    one stopped on a failing event, that event's position and the error.

    ``lag`` is None when the end offsets are unknown (Kafka unreachable); a reader that never
    ran is ``new``.
    """
    names = list(readers)
    states = {r["projection"]: r for r in await conn.fetch(
        "SELECT projection, status, error, error_position FROM projection_state WHERE projection = ANY($1::text[])",
        names)}
    offsets: dict[str, dict[int, asyncpg.Record]] = {}
    for r in await conn.fetch("SELECT projection, partition, next_offset, max_position FROM projection_offsets "
                              "WHERE projection = ANY($1::text[])", names):
        offsets.setdefault(r["projection"], {})[r["partition"]] = r
    out = []
    for name, source in readers.items():
        stored = offsets.get(name, {})
        consumed = sum(r["next_offset"] for r in stored.values())
        lag = None
        if ends is not None:
            end = ends.get(source, {})
            lag = sum(max(0, off - (stored[p]["next_offset"] if p in stored else 0)) for p, off in end.items())
        position = max((r["max_position"] for r in stored.values()), default=0) if source == "events" else consumed
        state = states.get(name)
        out.append({"name": name, "source": source, "status": state["status"] if state else "new",
                    "position": position, "consumed": consumed, "lag": lag,
                    "error": state["error"] if state else None,
                    "error_position": state["error_position"] if state else None})
    return out


async def projection_states(conn: asyncpg.Connection, ends: dict[str, dict[int, int]] | None) -> list[dict]:
    """Every read model (``reader_states``)."""
    return await reader_states(conn, ends, _projections())


async def consumer_states(conn: asyncpg.Connection, ends: dict[str, dict[int, int]] | None) -> list[dict]:
    """The dispatcher's intake, the credits watch and the exports watch (``reader_states``)."""
    return await reader_states(conn, ends, _effect_readers())


async def pipeline_state(conn: asyncpg.Connection, ends: dict[str, dict[int, int]] | None,
                         now: datetime) -> dict[str, Any]:
    head = await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
    checkpoint = await conn.fetchval("SELECT coalesce(max(position), 0) FROM relay_checkpoint")
    queue = [dict(r) for r in await conn.fetch(
        "SELECT job_type, state, count(*) AS count FROM job_queue WHERE state IN ('queued', 'running') "
        "GROUP BY job_type, state ORDER BY job_type, state")]
    webhooks = None
    if await has_table(conn, "webhook_deliveries"):
        row = await conn.fetchrow(
            "SELECT count(*) FILTER (WHERE status = 'pending' AND attempts > 0) AS retrying, "
            "count(*) FILTER (WHERE status = 'pending' AND attempts = 0) AS first_attempt_due, "
            "count(*) FILTER (WHERE status = 'sending') AS sending, "
            "min(next_attempt_at) FILTER (WHERE status = 'pending') AS next_due "
            "FROM webhook_deliveries WHERE status IN ('pending', 'sending')")
        webhooks = dict(row)
    processes = []
    if await has_table(conn, "process_heartbeats"):
        processes = [dict(r) for r in await conn.fetch(
            "SELECT process_id, kind, host, pid, started_at, beat_at, stopped_at, "
            "extract(epoch FROM $1::timestamptz - beat_at)::float8 AS beat_age_s, "
            "extract(epoch FROM $1::timestamptz - stopped_at)::float8 AS stopped_age_s FROM process_heartbeats "
            "ORDER BY kind, process_id", now)]
    holder = await active_relay(conn)
    for p in processes:  # which relay is active and which stand by
        if p["kind"] == "relay" and p["stopped_at"] is None:
            p["role"] = "active" if holder == f"{p['host']}:{p['pid']}" else "standby"
    return {"head": head, "relay_checkpoint": checkpoint, "relay_lag": head - checkpoint,
            "projections": await projection_states(conn, ends), "consumers": await consumer_states(conn, ends),
            "queue": queue, "webhooks": webhooks,
            "processes": processes}


async def collect(settings: Settings) -> dict[str, Any]:
    """The whole state, for the command line (its own connection and consumer)."""
    probe = EndOffsets(settings)
    conn = await connect(settings.resolved_database_url())
    try:
        try:
            ends = await probe.get()
        except Exception as exc:
            log.warning("kafka unreachable, lags unknown: %s", exc)
            ends = None
        state = await pipeline_state(conn, ends, settings.now())
        state["kafka"] = ends is not None
        return state
    finally:
        await conn.close()
        await probe.close()


STOPPED_SHOWN_S = 3600  # a clean stop, or a heartbeat, older than this is history: counted, not listed


def render(state: dict[str, Any], heartbeat_interval_s: float) -> str:
    """One screen of text."""
    lines = []
    alive_after = 3 * heartbeat_interval_s
    lines.append("PROCESSES")
    if not state["processes"]:
        lines.append("  (no heartbeat recorded)")
    # A process killed without a clean stop (kill -9, a machine gone) stays silent: listed for an
    # hour, a warning worth seeing; after that it is history, like an old stop.
    shown = [p for p in state["processes"]
             if ((p.get("stopped_age_s") or 0) if p["stopped_at"] is not None else p["beat_age_s"]) <= STOPPED_SHOWN_S]
    for p in shown:
        if p["stopped_at"] is not None:
            health = "stopped"
        elif p["beat_age_s"] > alive_after:
            health = f"silent {p['beat_age_s']:.0f}s"
        else:
            health = "up"
        if p.get("role") and health != "stopped":
            health = f"{health} {p['role']}"
        since = f"{p['stopped_at'] if p['stopped_at'] is not None else p['started_at']:%Y-%m-%d %H:%M:%S}"
        lines.append(f"  {p['kind']:<14}{p['host']}:{p['pid']:<8} {health:<14} since {since}")
    if len(shown) < len(state["processes"]):
        lines.append(f"  ({len(state['processes']) - len(shown)} stopped or silent for more than an hour not listed; "
                     "--json lists them)")
    lines.append("")
    lines.append("LOG")
    lines.append(f"  head position     {state['head']:>12,}")
    lines.append(f"  relay checkpoint  {state['relay_checkpoint']:>12,}   (lag {state['relay_lag']:,})")
    if not state.get("kafka", True):
        lines.append("  kafka             unreachable: lags unknown")
    lines.append("")
    lines.append("PROJECTIONS")
    lines.extend(_reader_lines(state["projections"]))
    lines.append("")
    lines.append("CONSUMERS WITH EFFECTS")
    lines.extend(_reader_lines(state.get("consumers", [])))
    lines.append("")
    lines.append("QUEUE")
    if not state["queue"]:
        lines.append("  empty")
    width = max([20, *(len(q["job_type"]) + 2 for q in state["queue"])])
    for q in state["queue"]:
        lines.append(f"  {q['job_type']:<{width}}{q['state']:<10}{q['count']:>8}")
    lines.append("")
    lines.append("WEBHOOKS")
    w = state["webhooks"]
    if w is None:
        lines.append("  (no deliveries table)")
    else:
        nxt = f", next due {w['next_due']:%H:%M:%S}" if w["next_due"] else ""
        lines.append(f"  pending retries {w['retrying']}, first attempts due {w['first_attempt_due']}, "
                     f"sending {w['sending']}{nxt}")
    return "\n".join(lines)


def _reader_lines(rows: list[dict]) -> list[str]:
    width = max([20, *(len(r["name"]) + 2 for r in rows)])  # a long name never runs into its source
    lines = [f"  {'NAME':<{width}}{'SOURCE':<11}{'STATUS':<12}{'POSITION':>12}{'LAG':>10}"]
    for r in rows:
        lag = "?" if r["lag"] is None else f"{r['lag']:,}"
        err = f"  stopped at {r['error_position']}: {r['error']}" if r["error"] else ""
        lines.append(f"  {r['name']:<{width}}{r['source']:<11}{r['status']:<12}{r['position']:>12,}{lag:>10}{err}")
    return lines


# ------------------------------------------------------------------------------- heartbeats


HEARTBEAT_RETENTION_DAYS = 7


def process_id(kind: str) -> str:
    """One id per heartbeat, not per OS process: two apps in one process (tests, an embedding
    host) must not mark each other stopped when one of them shuts down."""
    return f"{kind}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def heartbeat(settings: Settings, kind: str, stop: asyncio.Event) -> None:
    """Upsert this process's row every interval until ``stop``; mark it stopped on the way out.

    Never fails the process: an outage only delays the next beat.
    """
    pid = process_id(kind)
    conn: asyncpg.Connection | None = None
    try:
        while not stop.is_set():
            try:
                if conn is None or conn.is_closed():
                    conn = await connect(settings.resolved_database_url())
                    # History has an end: a process stopped, or silent, for longer than the
                    # retention is forgotten (each restart leaves a row).
                    await conn.execute("DELETE FROM process_heartbeats WHERE coalesce(stopped_at, beat_at) "
                                       "< $2::timestamptz - make_interval(days => $1)", HEARTBEAT_RETENTION_DAYS,
                                       settings.now())
                await conn.execute(
                    "INSERT INTO process_heartbeats (process_id, kind, host, pid, started_at, beat_at) "
                    "VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (process_id) DO UPDATE "
                    "SET beat_at = $5, stopped_at = NULL",
                    pid, kind, socket.gethostname(), os.getpid(), settings.now())
            except Exception as exc:
                log.debug("heartbeat of %s not written: %s", pid, exc)
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()
                conn = None
            await sleep_until_stopped(stop, settings.heartbeat_interval_s)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.execute("UPDATE process_heartbeats SET stopped_at = $2 WHERE process_id = $1", pid,
                                   settings.now())
    finally:
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()


def with_heartbeat(settings: Settings, kind: str,
                   main: Callable[[asyncio.Event], Awaitable[None]]) -> Callable[[asyncio.Event], Awaitable[None]]:
    """``main(stop)`` with this process's heartbeat beside it (for ``run_until_signalled``)."""

    async def run(stop: asyncio.Event) -> None:
        beat_stop = asyncio.Event()
        beat = asyncio.create_task(heartbeat(settings, kind, beat_stop))
        try:
            await main(stop)
        finally:
            beat_stop.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(beat, 5)

    return run
