"""The fault test on the scaled-out set, under the real load.

``vaeo up`` with two of every kind (2 API processes on one port, 2 workers, 2 projectors, 2
dispatchers, an active and a standby relay). At once, in three workspaces: uploads of a real
captioned talk (ffmpeg and espeak-ng, made once per module), an analysis of each, template
renders of clips from the first article (the media on the object store, the test stack's
SeaweedFS: ``storage_env``), and every webhook event delivered to an HTTPS receiver
on loopback that records each delivery with its ``webhook-id`` and answers 500 now and then to
force retries. During the load one process of each kind is killed -9, each at its own moment:
an API process (once uploads are acknowledged), a projector (once renders are asked), the worker
in the middle of a render (a clip made, more to come), the dispatcher holding a delivery on the
wire, then the active relay.

Then: nothing acknowledged lost (each 2xx's resource stored once, every event on Kafka at its
position), every read model equal to its rebuild, every job ended once (one completion, one
charge, no refund, each clip rendered once), webhooks at least once but never twice beyond the
documented rule (a ``webhook-id`` again only for an attempt sent before the dispatcher's kill;
never two ids for one event and endpoint), and the standby relay in charge within the bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import orjson
import pytest

from domain.videos import video_stream_id
from infra.consume import position_of
from infra.settings import Settings
from projections import ALL
from services.processes.projector.rebuild import rebuild
from tests.helpers import end_offsets, kafka_messages, snapshot, until, wait_projected, wait_relayed
from tests.media_factory import make_interview
from tests.support.api_videos import upload
from tests.support.cli import _free_port
from tests.support.scale import SCALE, _healthy, _said, relay_roles
from tests.support.stack import BUILD_TIMEOUT, ROOT, env_for, s3_env, s3_settings
from tests.support.webhooks import Receiver, TestCA

pytestmark = pytest.mark.slow

WORKSPACES, UPLOADS, RENDERS, CLIPS = 3, 2, 2, 3  # per workspace: uploads (each analysed), renders of CLIPS clips
ALLOW, RECEIVER = "127.0.0.56/30", "127.0.0.57"
DEADLINE_S = 150  # the whole test, on a loaded machine; it takes about a minute
DISPATCHER_CONCURRENCY = 50
TERMINAL = ("JobCompleted", "JobFailed", "JobCancelled")
EMITTED_BY = {"video.uploaded": "VideoUploaded", "video.analyzed": "VideoAnalyzed",
              "article.generated": "ArticleGenerated", "clip.generated": "ClipRendered",
              "job.completed": "JobCompleted"}
# Which webhook event names which object: one webhook-id per (endpoint, event, object).
OBJECT_OF = {"video.uploaded": lambda d: d["id"], "video.analyzed": lambda d: d["job_id"],
             "article.generated": lambda d: d["id"], "clip.generated": lambda d: (d["job_id"], d["clip_id"]),
             "job.completed": lambda d: d["id"], "job.failed": lambda d: d["id"]}


def storage_env(store: Settings, root: Path) -> dict[str, str]:
    """Where the processes keep media: the test stack's SeaweedFS, the S3 backend several machines
    share, with this machine's read cache under ``root``. ``VAEO_STORAGE_DIR`` is named too, so the
    test can show that no media went to a local disk instead."""
    cached = s3_settings(store, root / "media-cache")
    return {**s3_env(cached), "VAEO_MEDIA_CACHE_DIR": str(root / "media-cache"),
            "VAEO_STORAGE_DIR": str(root / "storage")}


@pytest.fixture(scope="module")
def talk(tmp_path_factory) -> dict:
    """A short interview with WebVTT captions (two espeak-ng voices), made once for the module."""
    return make_interview(tmp_path_factory.mktemp("talk"))


@dataclass
class Acked:
    """What the API acknowledged (2xx), and what it refused or dropped around the kills."""

    videos: list[int] = field(default_factory=list)
    jobs: dict[str, str] = field(default_factory=dict)  # job id -> analysis | render
    clips: dict[str, list[str]] = field(default_factory=dict)  # render job id -> its clip ids
    failed: Counter = field(default_factory=Counter)


async def _call(http: aiohttp.ClientSession, method: str, url: str, key: str, acked: Acked, expected=(), **kw):
    """One request; (status, body), or None when the connection broke (an API process killed).
    A status of 300 or more is counted as a failure unless ``expected``."""
    try:
        async with http.request(method, url, headers={"Authorization": f"Bearer {key}"}, **kw) as resp:
            raw = await resp.read()
            body = orjson.loads(raw) if raw else None
            if resp.status >= 300 and resp.status not in expected:
                acked.failed[str(resp.status)] += 1
            return resp.status, body
    except (TimeoutError, aiohttp.ClientError) as exc:
        acked.failed[type(exc).__name__] += 1
        await asyncio.sleep(0.1)
        return None


async def _retrying(deadline: float, attempt):
    """``attempt()`` until it gives an answer (not None) that is not a 503, within the deadline."""
    while time.monotonic() < deadline:
        got = await attempt()
        if got is not None and got[0] != 503:
            return got
        await asyncio.sleep(0.1)
    raise AssertionError("no answer from the API before the deadline")


async def _workspace_load(http, base: str, key: str, talk: dict, acked: Acked, deadline: float, w: int) -> None:
    """UPLOADS captioned uploads, each analysed; then RENDERS template renders from the first article."""
    analyses = []
    client = SimpleNamespace(http=http, base=base + "/v1", key=key)  # what tests.e2e.test_videos.upload takes

    async def one_upload():
        try:
            return await upload(client, talk["video"], captions=talk["vtt"], language="fr")
        except (TimeoutError, aiohttp.ClientError) as exc:
            acked.failed[type(exc).__name__] += 1
            return None

    for _ in range(UPLOADS):
        status, body = await _retrying(deadline, one_upload)
        assert status == 201, body
        acked.videos.append(body["data"]["id"])
        status, body = await _retrying(deadline, lambda v=body["data"]["id"]: _call(
            http, "POST", f"{base}/v1/videos/{v}/analyze", key, acked, json={}))
        assert status == 202, body
        acked.jobs[body["data"]["job_id"]] = "analysis"
        analyses.append(body["data"]["job_id"])
    article_id = None
    while article_id is None:
        # A 404 while the job's partition waits for a killed projector's session to expire (the 202
        # answered after the read-your-writes bound): the read model has not seen the job yet.
        got = await _retrying(deadline, lambda: _call(http, "GET", f"{base}/v1/jobs/{analyses[0]}", key, acked,
                                                      expected=(404,)))
        assert got[0] in (200, 404) and (got[0] == 404 or got[1]["data"]["status"] in (
            "pending", "running", "completed")), got
        done = got[0] == 200 and got[1]["data"]["status"] == "completed"
        article_id = got[1]["data"].get("article_id") if done else None
        await asyncio.sleep(0.2)
    for r in range(RENDERS):
        clips = [{"id": f"w{w}r{r}c{c}", "title": f"Clip {c}", "start_ms": 6000 + 3000 * c,
                  "end_ms": 8000 + 3000 * c, "duration_ms": 2000} for c in range(CLIPS)]
        status, body = await _retrying(deadline, lambda cl=clips: _call(
            http, "POST", f"{base}/v1/production/clips/render", key, acked,
            json={"article_id": article_id, "template_id": 1, "clips": cl}))
        assert status == 202, body
        acked.jobs[body["data"]["job_id"]] = "render"
        acked.clips[body["data"]["job_id"]] = [c["id"] for c in clips]


def _pid_of(owner: str | None) -> int | None:
    """The pid in a lease owner, ``host:pid:tag``."""
    return int(owner.split(":")[1]) if owner else None


async def _kill_plan(pool, children: dict[str, int], logs: Path, acked: Acked, active: str, standby: str) -> dict:
    """One of each kind, killed -9 at its own moment of the load; when each died (monotonic)."""
    killed: dict[str, float] = {}

    def kill(name: str, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        killed[name] = time.monotonic()

    await until(lambda: len(acked.videos) >= 2, 60, "two uploads acknowledged")
    kill("api", children["api"])
    await until(lambda: len(acked.clips) >= 1, 90, "a render acknowledged")
    kill("projector", children["projector"])
    workers = {children["worker"], children["worker-2"]}
    since = time.monotonic()

    async def rendering():  # a render with a clip made and more to come; after 15 s, any render running
        async with pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT q.lease_owner, (SELECT count(*) FROM events e WHERE e.type = 'ClipRendered' "
                "AND e.data->>'job_id' = q.job_id::text) AS made FROM job_queue q "
                "WHERE q.state = 'running' AND q.job_type = 'clip_render'")
        patient = time.monotonic() - since < 15
        return next((pid for r in rows if (pid := _pid_of(r["lease_owner"])) in workers
                     and (r["made"] >= 1 or not patient)), None)

    kill("worker", await until(rendering, 90, "a render running on a worker"))
    await asyncio.sleep(1.0)
    dispatchers = {children["dispatcher"], children["dispatcher-2"]}

    async def sending():
        async with pool.acquire() as conn:
            owners = await conn.fetch("SELECT lease_owner FROM webhook_deliveries WHERE status = 'sending'")
        return next((p for p in map(_pid_of, (r["lease_owner"] for r in owners)) if p in dispatchers), None)

    kill("dispatcher", await until(sending, 60, "a delivery on the wire"))
    await asyncio.sleep(1.0)
    kill("relay", children[active])
    await until(lambda: _said(logs / f"{standby}.log", "started at checkpoint"), 20, "the standby relay")
    killed["takeover_s"] = time.monotonic() - killed["relay"]
    return killed


async def _start_up(env: dict, port: int) -> tuple[asyncio.subprocess.Process, dict[str, int]]:
    up = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", "up", "--port", str(port), *SCALE, env=env, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    while not (lines and lines[-1].startswith("Ctrl-C")):
        line = (await asyncio.wait_for(up.stdout.readline(), 120)).decode()
        assert line, "vaeo up exited early:\n" + "".join(lines)
        lines.append(line)
    return up, {name: int(pid) for name, pid in re.findall(r"([\w-]+) \(pid (\d+)\)", "".join(lines))}


async def _cli(env: dict, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "services.cli", *args, env=env, cwd=ROOT,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def _print_logs(logs: Path) -> None:
    for log in sorted(logs.glob("*.log")):
        lines = [line for line in log.read_text(errors="replace").splitlines() if '"level":"debug"' not in line]
        print(f"--- {log.name}: the last of {len(lines)} lines above debug", *lines[-30:], sep="\n")


@BUILD_TIMEOUT  # SeaweedFS is built the first time on a machine; the test itself keeps to DEADLINE_S
async def test_the_scaled_out_set_under_real_load_survives_kill_minus_nine_of_each_kind(settings, pool, tmp_path,
                                                                                         talk, object_store):
    started = time.monotonic()
    ca = TestCA(tmp_path)
    env = dict(env_for(settings), VAEO_STACK_DIR=str(tmp_path), VAEO_RELAY_POLL_INTERVAL_S="0.2",
               VAEO_WEBHOOK_TEST_ALLOW=ALLOW, VAEO_WEBHOOK_EXTRA_CA_FILE=str(ca.ca_file),
               VAEO_WEBHOOK_RETRY_SCHEDULE_S="[0, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]", VAEO_WEBHOOK_RETRY_FLOOR_S="0.2",
               VAEO_DISPATCHER_GROUP=settings.consumer_group_prefix + "dispatcher",
               VAEO_DISPATCHER_POLL_INTERVAL_S="0.05", VAEO_DISPATCHER_LEASE_S="3",
               VAEO_DISPATCHER_CONCURRENCY=str(DISPATCHER_CONCURRENCY),
               VAEO_WORKER_LEASE_S="4", VAEO_JOB_RETRY_BACKOFF_S="0.3", **storage_env(object_store, tmp_path))
    logs = tmp_path / settings.stack_instance / "logs"
    # Every seventh request answered 500: retries of the same webhook-id, which are not duplicates.
    receiver = await Receiver(ca, RECEIVER, answer=lambda n: 500 if n % 7 == 3 else 200, delay_s=0.1).start()
    port = _free_port()
    up, children = await _start_up(env, port)
    try:
        deadline = started + DEADLINE_S
        await _run_and_check(env, pool, settings, logs, children, receiver, talk, port, deadline)
        print(f"scale-faults: {time.monotonic() - started:.1f} s in all")
    except BaseException:
        _print_logs(logs)
        raise
    finally:
        if up.returncode is None:
            up.send_signal(signal.SIGTERM)
            await asyncio.wait_for(up.wait(), 60)
        await receiver.stop()  # also checks every body against its event's schema
    assert up.returncode == 0
    local = [p for p in (tmp_path / "storage").rglob("*") if p.is_file()]
    assert local == [], f"media written to a local disk instead of the object store: {local[:3]}"
    assert any((tmp_path / "media-cache").rglob("*")), "the workers never read media through the cache"


async def _run_and_check(env, pool, settings, logs: Path, children, receiver: Receiver, talk, port, deadline) -> None:
    base = f"http://127.0.0.1:{port}"

    active, standby = await relay_roles(logs)
    keys = []
    for w in range(WORKSPACES):
        key = json.loads(await _cli(env, "workspace", "create", "--name", f"load{w}", "--credits", "100000",
                                    "--rate-limit", "100000", "--json"))["key"]
        keys.append(key)
    acked = Acked()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        await until(lambda: _healthy(http, base), 60, "the API")
        for w, key in enumerate(keys):
            got = await _call(http, "POST", f"{base}/v1/webhooks", key, acked,
                              json={"url": receiver.url(f"/hook/{w}")})
            assert got is not None and got[0] == 201, got
        load_started = time.monotonic()

        async def load() -> float:
            await asyncio.gather(*(_workspace_load(http, base, key, talk, acked, deadline, w)
                                   for w, key in enumerate(keys)))
            return time.monotonic() - load_started

        killed, load_s = await asyncio.gather(_kill_plan(pool, children, logs, acked, active, standby), load())
    print(f"\nscale-faults: requests {load_s:.1f} s; kills at "
          f"{ {n: round(t - load_started, 2) for n, t in killed.items() if n != 'takeover_s'} } s; standby relay "
          f"in charge {killed['takeover_s']:.2f} s after kill -9; {len(acked.videos)} uploads, {len(acked.jobs)} jobs "
          f"acknowledged; failed requests {dict(acked.failed)}")
    assert set(acked.failed) <= {"503", "ClientOSError", "ServerDisconnectedError", "ClientConnectorError",
                                 "ClientPayloadError", "TimeoutError"}, acked.failed
    assert killed["takeover_s"] < 5, "the standby relay took longer than documented to take over"
    await until(lambda: _all_jobs_ended(pool), max(5.0, deadline - time.monotonic()), "every job ended")
    head = await until(lambda: _settled(settings, pool), max(5.0, deadline - time.monotonic()),
                        "every delivery made and nothing more appended", step=0.2)
    await wait_projected(settings, pool, list(ALL), timeout=max(5.0, deadline - time.monotonic()))
    await _assert_acknowledged_once(settings, pool, acked, head)
    await _assert_jobs_once(pool, acked)
    _assert_webhooks_at_least_once(receiver, killed["dispatcher"], await _expected_webhooks(pool))
    await _assert_read_models_equal_rebuild(settings, pool)


async def _all_jobs_ended(pool) -> bool:
    async with pool.acquire() as conn:
        return await conn.fetchval(
            "SELECT count(*) FILTER (WHERE type = 'JobQueued') = count(*) FILTER (WHERE type = ANY($1)) "
            "FROM events WHERE stream_type = 'Job'", list(TERMINAL))


async def _settled(settings, pool) -> int | None:
    """The log's head once the dispatcher's intake has read the whole topic, every delivery has
    succeeded and nothing was appended meanwhile (the last delivery recorded); else None."""
    head = await wait_relayed(pool, timeout=60)
    ends = await end_offsets(settings)
    async with pool.acquire() as conn:
        taken = dict(await conn.fetch("SELECT partition, next_offset FROM projection_offsets "
                                      "WHERE projection = 'dispatcher'"))
        undone = await conn.fetchval("SELECT count(*) FROM webhook_deliveries WHERE status <> 'succeeded'")
        still = await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
    caught_up = all(taken.get(p, 0) >= end for p, end in ends.items() if end > 0)
    return head if caught_up and undone == 0 and still == head else None


async def _assert_acknowledged_once(settings, pool, acked: Acked, head: int) -> None:
    """Each acknowledged upload and job once in the store; every event on Kafka at its position."""
    async with pool.acquire() as conn:
        uploaded = Counter(r["stream_id"] for r in await conn.fetch(
            "SELECT stream_id FROM events WHERE type = 'VideoUploaded' AND stream_id = ANY($1::uuid[])",
            [video_stream_id(v) for v in acked.videos]))
        queued = Counter(str(r["stream_id"]) for r in await conn.fetch(
            "SELECT stream_id FROM events WHERE type = 'JobQueued' AND stream_id::text = ANY($1)", list(acked.jobs)))
        # And each is there to read: the rows GET /v1/videos/{id} and GET /v1/jobs/{id} answer from.
        videos = await conn.fetchval("SELECT count(*) FROM videos WHERE id = ANY($1)", acked.videos)
        jobs = await conn.fetchval("SELECT count(*) FROM jobs WHERE id::text = ANY($1)", list(acked.jobs))
    assert all(uploaded[video_stream_id(v)] == 1 for v in acked.videos), "an acknowledged upload lost or doubled"
    assert all(queued[j] == 1 for j in acked.jobs), "an acknowledged job lost or queued twice"
    assert (videos, jobs) == (len(set(acked.videos)), len(acked.jobs)), "an acknowledged resource not readable"
    by_position: dict[int, set[bytes]] = {}
    messages = [m for msgs in (await kafka_messages(settings)).values() for m in msgs]
    for m in messages:
        by_position.setdefault(position_of(m), set()).add(m.value)
    assert set(by_position) == set(range(1, head + 1)), "an event never reached Kafka"
    assert all(len(values) == 1 for values in by_position.values()), "two different events at one position"
    print(f"kafka: {len(messages)} messages for {head} events ({len(messages) - head} sent again by a relay)")


async def _assert_jobs_once(pool, acked: Acked) -> None:
    """Every job of the store (acknowledged or not) ended once, completed; one charge each, no
    refund; each analysis recorded once, each requested clip rendered once."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT type, stream_id, coalesce(data->>'job_id', stream_id::text) AS job, data->>'clip_id' AS clip "
            "FROM events WHERE type = ANY($1)",
            ["JobQueued", *TERMINAL, "CreditsCharged", "CreditsRefunded", "ClipRendered", "VideoAnalyzed",
             "JobStarted"])
    jobs = {str(r["stream_id"]) for r in rows if r["type"] == "JobQueued"}
    per = Counter((r["type"], r["job"]) for r in rows)
    assert set(acked.jobs) <= jobs
    assert all(per[("JobCompleted", j)] == 1 and per[("JobFailed", j)] + per[("JobCancelled", j)] == 0
               for j in jobs), {j: [(t, n) for (t, jj), n in per.items() if jj == j] for j in jobs}
    assert all(per[("CreditsCharged", j)] == 1 and per[("CreditsRefunded", j)] == 0 for j in jobs)
    analyses = {j for j, kind in acked.jobs.items() if kind == "analysis"}
    assert all(per[("VideoAnalyzed", j)] == 1 for j in analyses)
    rendered = Counter((r["job"], r["clip"]) for r in rows if r["type"] == "ClipRendered")
    wanted = Counter((j, c) for j, clips in acked.clips.items() for c in clips)
    assert rendered == wanted, "a clip rendered twice, or not at all"
    retried = sorted(n for (t, _), n in per.items() if t == "JobStarted" and n > 1)
    print(f"jobs: {len(jobs)} ended once each; {len(retried)} started again after a kill")


async def _expected_webhooks(pool) -> set[tuple]:
    """(endpoint, event, object) of every delivery the dispatcher made; as many of each event as
    the log has domain events that emit it (docs/webhooks.md: one endpoint per workspace here)."""
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT d.url, d.event, d.payload FROM webhook_deliveries d")
        emitted = dict(await conn.fetch("SELECT type, count(*) FROM events WHERE type = ANY($1) GROUP BY type",
                                        list(EMITTED_BY.values())))
    expected = {(r["url"].rsplit("/", 1)[1], r["event"], _object(r["event"], json.loads(r["payload"])
                                                                  if isinstance(r["payload"], str) else r["payload"]))
                for r in rows}
    per_event = Counter(event for _, event, _ in expected)
    assert {e: per_event[e] for e in EMITTED_BY} == {e: emitted.get(t, 0) for e, t in EMITTED_BY.items()}
    return expected


def _object(event: str, payload: dict):
    data = payload.get("data", payload)
    return OBJECT_OF[event](data) if event in OBJECT_OF else json.dumps(data, sort_keys=True)


def _assert_webhooks_at_least_once(receiver: Receiver, dispatcher_killed_at: float, expected: set[tuple]) -> None:
    """Every delivery arrived; one webhook-id per (endpoint, event, object); a webhook-id answered
    2xx and then sent again only for an attempt that was on the wire (or not yet recorded) when
    the dispatcher was killed."""
    ids: dict[tuple, set[str]] = {}
    accepted: dict[str, list[float]] = {}
    for n, hit in enumerate(receiver.hits):
        body = orjson.loads(hit.body)
        key = (hit.path.rsplit("/", 1)[1], body["type"], _object(body["type"], body))
        ids.setdefault(key, set()).add(hit.headers["webhook-id"])
        if receiver.answer(n) == 200:
            accepted.setdefault(hit.headers["webhook-id"], []).append(hit.at)
    assert set(ids) == expected, "a delivery missing, or one nobody expected"
    assert all(len(v) == 1 for v in ids.values()), [k for k, v in ids.items() if len(v) > 1]
    again = {wid: times for wid, times in accepted.items() if len(times) > 1}
    assert all(times[0] <= dispatcher_killed_at < times[1] and len(times) == 2 for times in again.values()), again
    assert len(again) <= 2 * DISPATCHER_CONCURRENCY
    kinds = Counter(k[1] for k in ids)
    print(f"webhooks: {len(receiver.hits)} requests for {len(ids)} deliveries {dict(kinds)}; "
          f"{len(again)} sent again after the dispatcher's kill")


async def _assert_read_models_equal_rebuild(settings, pool) -> None:
    """Every read model the load wrote to equals its rebuild from the topic: no row applied twice
    or lost on a projector's kill and its partitions' reassignment. (``job_queue`` is also the
    workers' lease table, changed outside the log: it is checked by the jobs' events instead.)"""
    names = ["jobs", "event_counts", "workspaces", "api_keys", "webhooks", "videos", "content_graphs", "articles",
             "monitoring_events", "clip_jobs", "analysis_graphs"]
    started = time.monotonic()
    tables = {n: ALL[n].tables for n in names}

    def exact(row: dict) -> str:
        # A sum of float seconds (monitoring's job durations) depends on the order the partitions
        # were applied in, live and rebuilt, by a few units in the last place: compared to 1 us.
        return repr({k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()})

    async def everything():
        return {t: sorted(map(exact, await snapshot(pool, t, "1"))) for n in names for t in tables[n]}

    live = await everything()
    for name in names:
        await rebuild(settings, name)
    rebuilt = await everything()
    differ = {t: (sorted(set(live[t]) - set(rebuilt[t]))[:3], sorted(set(rebuilt[t]) - set(live[t]))[:3])
              for t in live if live[t] != rebuilt[t]}
    assert differ == {}, f"a read model differs from its rebuild (live, rebuilt): {differ}"
    print(f"read models: {len(live)} tables, {sum(map(len, live.values()))} rows, equal to their rebuild "
          f"({time.monotonic() - started:.1f} s)")
