"""Several processes of every kind on one machine, started by ``vaeo up``, under load, with one of
each kind killed -9 in the middle: nothing acknowledged is lost, nothing is applied twice, the
standby relay takes over, and both API processes on the one port answer."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import timedelta

import aiohttp
import pytest

from domain.media import media_stream_id
from infra.consume import position_of
from projections import ALL
from services.processes.projector.rebuild import rebuild
from tests.helpers import eventually, kafka_messages, snapshot, until, wait_projected, wait_relayed
from tests.support.cli import _free_port
from tests.support.scale import SCALE, _healthy, _said, relay_roles
from tests.support.stack import ROOT, env_for

LOAD_S = 10.0
KILL_AT_S = 4.0


def _kill9(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


async def _writer(http: aiohttp.ClientSession, base: str, key: str, stop: asyncio.Event, acked: list[int],
                  acked_at: list[float], failed: list[str]) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    i = 0
    while not stop.is_set():
        i += 1
        try:
            async with http.post(f"{base}/v1/medias", json={"name": f"m{i}"}, headers=headers) as resp:
                body = await resp.json()
                if resp.status == 200:
                    acked.append(body["data"]["id"])
                    acked_at.append(time.monotonic())
                else:
                    failed.append(f"{resp.status} {body}")
        except (TimeoutError, aiohttp.ClientError) as exc:  # an API process killed under it
            failed.append(type(exc).__name__)
            await asyncio.sleep(0.05)


async def _health_pids(base: str, stop: asyncio.Event, pids: Counter) -> None:
    """A new connection per request, so that the kernel picks a listener each time."""
    while not stop.is_set():
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http, \
                    http.get(f"{base}/healthz") as resp:
                if resp.status == 200:
                    pids[(await resp.json())["data"]["pid"]] += 1
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.02)


@pytest.mark.slow
async def test_a_scaled_out_set_survives_kill_minus_nine_of_one_process_of_each_kind(settings, pool, tmp_path):
    port = _free_port()
    # A stack folder of its own: the logs of this test's processes, apart from other tests'.
    env = dict(env_for(settings), VAEO_STACK_DIR=str(tmp_path), VAEO_RELAY_POLL_INTERVAL_S="0.2")
    logs = tmp_path / settings.stack_instance / "logs"
    up = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", "up", "--port", str(port), *SCALE, env=env, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    try:
        while not (lines and lines[-1].startswith("Ctrl-C")):
            line = (await asyncio.wait_for(up.stdout.readline(), 120)).decode()
            assert line, "vaeo up exited early:\n" + "".join(lines)
            lines.append(line)
        text = "".join(lines)
        children = {name: int(pid) for name, pid in re.findall(r"([\w-]+) \(pid (\d+)\)", text)}
        assert sorted(children) == sorted(["api", "api-2", "relay", "relay-2", "projector", "projector-2", "worker",
                                           "worker-2", "dispatcher", "dispatcher-2", "credits-watch"])
        assert "bootstrap workspace key (shown once)" in text
        # A workspace whose rate limit the load stays under (the bootstrap one allows 600 a minute).
        made = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.cli", "workspace", "create", "--name", "load", "--rate-limit", "100000",
            "--json", env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await asyncio.wait_for(made.communicate(), 60)
        assert made.returncode == 0, err.decode()
        key = json.loads(out)["key"]
        base = f"http://127.0.0.1:{port}"

        # One relay holds the lock, the other stands by.
        active, standby = await relay_roles(logs)
        async with aiohttp.ClientSession() as http:
            await until(lambda: _healthy(http, base), 60, "the API")

            stop, acked, acked_at, failed, pids = asyncio.Event(), [], [], [], Counter()
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as load:
                tasks = [asyncio.create_task(_writer(load, base, key, stop, acked, acked_at, failed)) for _ in range(6)]
                tasks.append(asyncio.create_task(_health_pids(base, stop, pids)))
                await asyncio.sleep(KILL_AT_S)
                before_kill = len(acked)
                for name in ("api", active, "projector", "worker", "dispatcher"):
                    _kill9(children[name])
                killed_at = time.monotonic()
                standby_log = logs / f"{standby}.log"
                await until(lambda: _said(standby_log, "started at checkpoint"), 20, "the standby relay")
                takeover_s = time.monotonic() - killed_at
                await asyncio.sleep(max(0.0, LOAD_S - KILL_AT_S - takeover_s))
                stop.set()
                await asyncio.gather(*tasks)

        after = sorted(t for t in acked_at if t >= killed_at)
        slowest = max((b - a for a, b in zip([killed_at, *after], after, strict=False)), default=0.0)
        print(f"\nscale-out: longest wait for an acknowledged write after the kills {slowest:.2f}s; "
              f"{len(acked)} media created through the API ({before_kill} before the kills), "
              f"{len(failed)} requests failed around the kills; standby relay took over {takeover_s:.2f}s after "
              f"kill -9; /healthz answers per API pid: {dict(pids)}; failures: {Counter(failed).most_common(3)}")
        assert before_kill > 0 and len(acked) > before_kill, "the load did not go on after the kills"
        assert len(set(acked)) == len(acked)
        assert "the lock is free; taking over" in standby_log.read_text()
        assert takeover_s < 5
        assert {children["api"], children["api-2"]} <= set(pids), "both API processes answered on the one port"
        assert all(not f[0].isdigit() or f.startswith("503") for f in failed), failed[:5]

        head = await wait_relayed(pool, timeout=60)
        await wait_projected(settings, pool, list(ALL), timeout=60)
        await _assert_each_write_once(settings, pool, acked, head)
        # The restarts of the killed processes beat a moment after `vaeo up` starts them again: later on a busy machine.
        await eventually(lambda: _assert_status_lists_every_instance(env, children, standby), timeout=60)
    finally:
        if up.returncode is None:
            up.send_signal(signal.SIGTERM)
            await asyncio.wait_for(up.wait(), 60)
    assert up.returncode == 0


async def _assert_each_write_once(settings, pool, acked: list[int], head: int) -> None:
    """Every acknowledged write once in the table, at least once on Kafka (a relay killed between a
    send and its checkpoint sends again: the copy is identical and readers skip it), and every read
    model equal to its rebuild."""
    streams = [media_stream_id(m) for m in acked]
    async with pool.acquire() as conn:
        created = Counter(r["stream_id"] for r in await conn.fetch(
            "SELECT stream_id FROM events WHERE stream_id = ANY($1::uuid[]) AND version = 1", streams))
        rows = await conn.fetchval("SELECT count(*) FROM medias")
        events = await conn.fetchval("SELECT count(*) FROM events WHERE stream_type = $1",
                                     await conn.fetchval("SELECT stream_type FROM events WHERE stream_id = $1",
                                                         streams[0]))
    assert all(created[s] == 1 for s in streams), "an acknowledged write is missing or stored twice"
    assert rows == events, "the medias read model has a row too many or too few"
    messages = [m for msgs in (await kafka_messages(settings)).values() for m in msgs]
    by_position: dict[int, set[bytes]] = {}
    for m in messages:
        by_position.setdefault(position_of(m), set()).add(m.value)
    assert set(by_position) == set(range(1, head + 1)), "an event never reached Kafka"
    assert all(len(values) == 1 for values in by_position.values()), "two different events at one position"
    on_kafka = Counter(json.loads(m.value)["stream_id"] for m in messages)
    assert all(on_kafka[str(s)] >= 1 for s in streams)
    print(f"kafka: {len(messages)} messages for {head} events ({len(messages) - head} resent by the relay)")
    tables = {"medias": ("medias", "id"), "event_counts": ("event_counts", "1, 2"), "jobs": ("jobs", "id")}
    live = {name: await snapshot(pool, t, order) for name, (t, order) in tables.items()}
    for name in tables:
        await rebuild(settings, name)
    assert {name: await snapshot(pool, t, order) for name, (t, order) in tables.items()} == live


async def _assert_status_lists_every_instance(env: dict, children: dict[str, int], standby: str) -> None:
    """``vaeo status`` lists each instance as its own process (host and pid), the killed ones and
    their restarts included, and the relay that took over as the active one."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "services.cli", "status", "--json", env=env,
                                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    processes = json.loads(out)["processes"]
    listed = {(p["kind"], p["pid"]) for p in processes}
    roles = {p["pid"]: p.get("role") for p in processes if p["kind"] == "relay" and p["stopped_at"] is None}
    assert roles.pop(children[standby]) == "active", roles
    assert set(roles.values()) == {"standby"}, roles  # the killed relay's row, and its restart standing by
    for name, pid in children.items():
        kind = name.rsplit("-", 1)[0] if name[-1].isdigit() else name
        assert (kind, pid) in listed, f"{name} (pid {pid}) is not in vaeo status"
    per_kind = Counter(kind for kind, _ in listed)
    # Two of each scaled kind, and the restart of the one killed (vaeo up starts it again).
    assert all(per_kind[k] >= 3 for k in ("api", "relay", "projector", "worker", "dispatcher")), per_kind


async def test_two_dispatchers_claiming_at_once_never_take_the_same_attempt(settings, pool, store):
    """The sender's claim (``FOR UPDATE SKIP LOCKED`` and a lease) with two dispatchers racing for
    the same due rows, many claims each: every row is claimed by exactly one of them, once."""
    from services.processes.dispatcher.sender import Sender

    workspace, due = uuid.uuid4(), settings.now() - timedelta(seconds=1)
    ids = [uuid.uuid4() for _ in range(400)]
    async with pool.acquire() as conn:
        await conn.executemany(
            "INSERT INTO webhook_deliveries (id, workspace_id, environment, webhook_id, url, event, source_position, "
            "payload, status, next_attempt_at) VALUES ($1, $2, 'production', NULL, 'https://example.com/hook', "
            "'job.completed', $3, '{}'::jsonb, 'pending', $4)",
            [(d, workspace, i + 1, due) for i, d in enumerate(ids)])
    senders = [Sender(settings, pool, store, owner=name) for name in ("one", "two")]
    claimed: dict[str, list] = {"one": [], "two": []}

    async def claim_all(sender: Sender) -> None:
        while rows := await sender._claim(7):
            claimed[sender.owner].extend(rows)
            await asyncio.sleep(0)

    # Each one's first claim at once (both then surely take part, however the loop schedules them on
    # a loaded machine), then both claiming until nothing is due, two loops each.
    for sender, rows in zip(senders, await asyncio.gather(*(s._claim(7) for s in senders)), strict=True):
        claimed[sender.owner].extend(rows)
    await asyncio.gather(*(claim_all(s) for s in senders), *(claim_all(s) for s in senders))
    together = [r.id for rows in claimed.values() for r in rows]
    assert sorted(together) == sorted(ids), "a row claimed twice, or never"
    assert claimed["one"] and claimed["two"], "both dispatchers took part"
    async with pool.acquire() as conn:
        owners = dict(await conn.fetch("SELECT id, lease_owner FROM webhook_deliveries WHERE status = 'sending' "
                                       "AND attempts = 1"))
    assert {d: owner for owner, rows in claimed.items() for d in (r.id for r in rows)} == owners


