"""docs/analytics.md run as it is written, against the real processes with real traffic, and the
event stream's AsyncAPI document checked against what the topics carry.

The page's shell blocks, SQL and Python are taken from the file itself, so the page cannot change
without this test. The log it reads holds what an analytics consumer meets: events of earlier
schemas (a history appended as an earlier build wrote it, before the processes start: the relay
publishes events as they were stored), real uploads and analyses in production and sandbox, a
cancelled job and its refund, deliveries to a webhook receiver that answers and to one that fails,
and messages sent twice (as a relay resending after a crash would). Its figures must equal what
the API reports for the same workspace, through both doors (kcat and ``vaeo events tail``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import duckdb
import orjson
import pytest
from aiokafka import AIOKafkaProducer
from jsonschema import Draft202012Validator

from domain.videos import Video
from infra import provision
from infra.asyncapi import DOC_PATH as ASYNCAPI_DOC
from infra.asyncapi import message_id
from infra.codec import EventRegistry, NewEvent
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from services.application.jobs import QueueJob
from services.application.keys import IssueKey
from services.application.workspaces import CreateWorkspace
from tests.asyncapi_cli import INSTALL_TIMEOUT_S, validate
from tests.helpers import handle, kafka_messages, wait_projected
from tests.media_factory import make_interview, run
from tests.support.api_videos import upload
from tests.support.service import Client, Service, running_service
from tests.support.stack import ROOT, env_for
from tests.support.webhooks import Receiver, TestCA, wait_dispatched

pytestmark = [pytest.mark.slow, pytest.mark.timeout(INSTALL_TIMEOUT_S + 900)]  # the CLI's first install

DOC = ROOT / "docs" / "analytics.md"
ALLOW = "127.0.0.44/30"
RETRIES = "[0, 0.3, 0.3]"
# What the failing receiver accepts: everything else gets a 500 until its deliveries are given up.
ACCEPTED_BY_THE_FAILING_RECEIVER = b'"type":"video.uploaded"'
RESENT_TYPES = {"JobQueued", "JobCompleted", "JobFailed", "VideoUploaded", "VideoAnalyzed", "CreditsCharged",
                "CreditsRefunded", "WebhookDeliveryScheduled", "WebhookDelivered", "WebhookDeliveryFailed"}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)


@dataclass
class Stack:
    service: Service
    workspace: UUID
    production: Client
    sandbox: Client
    ca: TestCA
    receivers: dict[str, Receiver] = field(default_factory=dict)  # webhook id -> its receiver
    old: dict[str, int] = field(default_factory=dict)  # event type and schema -> events written so
    api: dict = field(default_factory=dict)

    @property
    def settings(self) -> Settings:
        return self.service.settings


def written_as(registry: EventRegistry, event: NewEvent, schema: int) -> NewEvent:
    """``event`` as a build of ``schema`` wrote it: without the fields of every later change, and
    checked against that schema as the catalogue documents it."""
    data = dict(event.data)
    for later in range(event.schema, schema, -1):
        for name in registry.schema_change(event.type, later).added:
            del data[name]
    Draft202012Validator(registry.json_schema(event.type, schema)).validate(data)
    return replace(event, schema=schema, data=data)


async def write_old_history(pool, registry: EventRegistry, workspace: UUID) -> Counter:
    """Two videos uploaded (schemas 1 and 2) and analysed (schema 1) by jobs that completed (schema 1),
    and a sandbox job that failed (schema 1), minutes ago: the log of an earlier build. Returns how
    many events of each earlier schema (``"JobCompleted/1"``) it wrote."""
    now = datetime.now(UTC)
    written: Counter = Counter()

    async def save(seconds_ago: float, events: list[NewEvent], schemas: dict[str, int]) -> None:
        old = [written_as(registry, e, schemas[e.type]) if e.type in schemas else e for e in events]
        await PostgresEventStore(pool, registry, clock=lambda: now - timedelta(seconds=seconds_ago)).save(events=old)
        written.update(f"{e.type}/{e.schema}" for e in old if e.schema < registry.current_schema(e.type))

    for n, (upload_schema, upload_ago, analysis_ago) in enumerate(((1, 300, 240), (2, 200, 110))):
        store = PostgresEventStore(pool, registry, clock=lambda ago=upload_ago: now - timedelta(seconds=ago - 5))
        video = Video.upload(video_id=await store.next_id("video_id_seq"), workspace_id=workspace,
                             environment="production", name=f"old {n}", storage_key=f"old/{n}", size_bytes=1000,
                             duration_ms=30_000, demuxer="mov,mp4,m4a")
        await save(upload_ago, registry.to_new_events(video.collect_events(), workspace_id=workspace),
                   {"VideoUploaded": upload_schema})
        job, _ = await handle(store, QueueJob(workspace, job_type="analyze_video", credits=1))
        job.start(1, "old-worker")
        video.record_analysis(job_id=job.id, graph={}, analysis_mode="standard", article_id=None)
        job.complete({"video_id": video.video_id}, article_id=None)
        await save(analysis_ago, registry.to_new_events([*video.collect_events(), *job.collect_events()],
                                                        workspace_id=workspace),
                   {"VideoAnalyzed": 1, "JobCompleted": 1})
    job, _ = await handle(store, QueueJob(workspace, job_type="analyze_video", environment="sandbox"))
    job.start(1, "old-worker")
    job.fail("the file was unreadable")
    await save(90, registry.to_new_events(job.collect_events(), workspace_id=workspace), {"JobFailed": 1})
    return written


@pytest.fixture(scope="module")
async def stack(stack_settings: Settings, template_db: str, tmp_path_factory) -> AsyncIterator[Stack]:
    provision.ensure("kcat")
    ca = TestCA(tmp_path_factory.mktemp("ca"))
    before: dict = {}

    async def earlier_build(settings: Settings, store: PostgresEventStore) -> None:
        workspace, issued = await handle(store, CreateWorkspace(name="analytics", plan="pro", credits=1000,
                                                                 rate_limit=100_000))
        sandbox = await handle(store, IssueKey(workspace, name="sandbox", scopes=["*"], environment="sandbox"))
        old = await write_old_history(store.pool, store.registry, workspace)
        before.update(workspace=workspace, keys=(issued.key, sandbox.key), old=dict(old))

    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"),
                               processes=("relay", "projector", "dispatcher", "worker"), apis=1,
                               prepare=earlier_build, VAEO_WEBHOOK_TEST_ALLOW=ALLOW,
                               VAEO_WEBHOOK_EXTRA_CA_FILE=str(ca.ca_file), VAEO_WEBHOOK_RETRY_SCHEDULE_S=RETRIES,
                               VAEO_WEBHOOK_RETRY_FLOOR_S="0.2", VAEO_DISPATCHER_POLL_INTERVAL_S="0.05") as svc:
        production, sandbox = before["keys"]
        stack = Stack(svc, before["workspace"], svc.client(production), svc.client(sandbox), ca, old=before["old"])
        yield stack
        for receiver in stack.receivers.values():
            await receiver.stop()


async def _job_ends(client: Client, job_id: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = (await client.get(f"/jobs/{job_id}")).data
        if job["status"] in ("completed", "failed", "cancelled"):
            return job
        assert time.monotonic() < deadline, job
        await asyncio.sleep(0.2)


async def _analysed(client: Client, path: Path, captions: Path) -> dict:
    status, body = await upload(client, path, captions=captions, language="fr")
    assert status == 201, body
    queued = await client.post(f"/videos/{body['data']['id']}/analyze", {"outputs": {"article": True}})
    assert queued.status == 202, queued.body
    return await _job_ends(client, queued.data["job_id"])


async def _deliveries_settled(stack: Stack, timeout: float = 120) -> dict[str, list[dict]]:
    """Every delivery of both webhooks given up or done; returns them per webhook."""
    await wait_dispatched(stack.settings, stack.service.pool, timeout)
    deadline = time.monotonic() + timeout
    while True:
        listed = {hook: (await stack.production.get(f"/webhooks/{hook}/deliveries")).data for hook in stack.receivers}
        if all(d["status"] in ("succeeded", "exhausted") for ds in listed.values() for d in ds):
            return listed
        assert time.monotonic() < deadline, listed
        await asyncio.sleep(0.2)


async def _resend_as_a_relay_would(settings: Settings, workspace: UUID) -> int:
    """Send the workspace's messages of ``RESENT_TYPES`` again, as they were (key, value, headers,
    partition): what a relay that crashed before its checkpoint sends. Returns how many."""
    producer = AIOKafkaProducer(bootstrap_servers=settings.resolved_kafka_bootstrap())
    await producer.start()
    sent = 0
    try:
        for partition, messages in (await kafka_messages(settings)).items():
            for m in messages:
                if m.key == str(workspace).encode() and dict(m.headers)["type"].decode() in RESENT_TYPES:
                    await producer.send_and_wait(settings.events_topic, m.value, key=m.key, headers=list(m.headers),
                                                 partition=partition)
                    sent += 1
    finally:
        await producer.stop()
    return sent


@pytest.fixture(scope="module")
async def traffic(stack: Stack, tmp_path_factory) -> Stack:
    """Webhooks, uploads and analyses in both environments, a cancelled job; everything settled and
    the API's figures read; then duplicates on the topic."""
    media = make_interview(tmp_path_factory.mktemp("media"))
    long_video = media["video"].parent / "long.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=160x120:r=10:d=600", "-f", "lavfi", "-i",
         "sine=frequency=300:sample_rate=16000:duration=600", "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(long_video)])
    working = await Receiver(stack.ca, "127.0.0.45").start()
    failing = await Receiver(stack.ca, "127.0.0.46", answer=lambda n: 200 if ACCEPTED_BY_THE_FAILING_RECEIVER in
                             failing.hits[n].body else 500).start()
    for receiver in (working, failing):
        r = await stack.production.post("/webhooks", {"url": receiver.url()})
        assert r.status == 201, r.body
        stack.receivers[r.data["id"]] = receiver

    for client in (stack.production, stack.production, stack.sandbox):
        job = await _analysed(client, media["video"], media["vtt"])
        assert job["status"] == "completed", job
    status, body = await upload(stack.production, long_video)
    assert status == 201, body
    queued = await stack.production.post(f"/videos/{body['data']['id']}/analyze", {})
    assert queued.status == 202, queued.body
    assert (await stack.production.delete(f"/jobs/{queued.data['job_id']}")).status == 200
    assert (await _job_ends(stack.production, queued.data["job_id"]))["status"] == "cancelled"

    deliveries = await _deliveries_settled(stack)
    from projections import ALL

    await wait_projected(stack.settings, stack.service.pool, list(ALL))
    for key, client in (("production", stack.production), ("sandbox", stack.sandbox)):
        stack.api[key] = {"monitoring": (await client.get("/monitoring")).data,
                          "usage": (await client.get("/usage")).data,
                          "jobs": (await client.get("/jobs", params={"limit": "100"})).data,
                          "videos": (await client.get("/videos", params={"limit": "100"})).data}
    stack.api["deliveries"] = deliveries
    stack.api["resent"] = await _resend_as_a_relay_would(stack.settings, stack.workspace)
    return stack


def run_the_page(folder: Path, door: str, env: dict[str, str]) -> Path:
    """The page's door (its first shell block: kcat, or its second: ``vaeo events tail``), then its
    SQL saved as analytics.sql and its Python run; returns the DuckDB file it made."""
    kcat, tail = blocks("sh")
    assert "kcat " in kcat and tail.strip() == "vaeo events tail > events.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["bash", "-euo", "pipefail", "-c", kcat if door == "kcat" else tail], cwd=folder, env=env,
                   check=True, timeout=300)
    (folder / "analytics.sql").write_text("\n".join(blocks("sql")), encoding="utf-8")
    [python] = blocks("python")
    (folder / "run.py").write_text(python, encoding="utf-8")
    shown = subprocess.run([sys.executable, "run.py"], cwd=folder, env=env, check=True, timeout=300,
                           capture_output=True, text=True)
    print(f"---- docs/analytics.md through {door}\n{shown.stdout}")
    return folder / "analytics.duckdb"


def figures(db: Path, workspace: UUID) -> dict:
    """The page's figures for one workspace, read from the DuckDB file it made."""
    with duckdb.connect(str(db), read_only=True) as con:
        def rows(sql: str) -> list[tuple]:
            return con.execute(sql, [workspace]).fetchall()

        return {
            "jobs": {(env, kind): tuple(int(n) for n in counts) for env, kind, *counts in rows(
                "SELECT environment, job_type, sum(queued), sum(completed), sum(failed), sum(cancelled) "
                "FROM jobs_per_day WHERE workspace_id = ? GROUP BY ALL")},
            "delays": {env: (n, median, p95) for env, n, median, p95 in rows(
                "SELECT environment, videos, median_s, p95_s FROM upload_to_analysis WHERE workspace_id = ?")},
            "credits": rows("SELECT charged, refunded, consumed FROM credits_per_workspace WHERE workspace_id = ?"),
            "webhooks": {hook: (n, ok, failing, rate) for hook, n, ok, failing, rate in rows(
                "SELECT webhook_id, deliveries, delivered, failing, success_rate FROM webhook_success "
                "WHERE workspace_id = ?")},
            "messages": rows("SELECT count(*), count(DISTINCT position) FROM messages WHERE workspace_id = ?")[0],
            "schemas": Counter({f"{t}/{s}": n for t, s, n in rows(
                "SELECT type, schema, count(*) FROM events WHERE workspace_id = ? GROUP BY ALL")}),
        }


@pytest.fixture(scope="module")
def through_kcat(traffic: Stack, tmp_path_factory) -> dict:
    env = dict(os.environ, KAFKA=traffic.settings.resolved_kafka_bootstrap(), TOPIC=traffic.settings.events_topic)
    return figures(run_the_page(tmp_path_factory.mktemp("kcat"), "kcat", env), traffic.workspace)


def _seconds(video: dict) -> float:
    return (datetime.fromisoformat(video["analyzed_at"]) - datetime.fromisoformat(video["created_at"])).total_seconds()


def _api_delays(videos: list[dict]) -> tuple[int, float, float]:
    seconds = sorted(_seconds(v) for v in videos if v["analyzed_at"])
    p95 = statistics.quantiles(seconds, n=20, method="inclusive")[18] if len(seconds) > 1 else seconds[0]
    return len(seconds), round(statistics.median(seconds), 3), round(p95, 3)


def test_the_pages_figures_equal_what_the_api_reports(traffic: Stack, through_kcat: dict):
    mine, api = through_kcat, traffic.api
    # The log held what the page must cope with: duplicates, and events of every earlier schema.
    assert traffic.api["resent"] > 0 and mine["messages"][0] == mine["messages"][1] + traffic.api["resent"]
    assert {k: mine["schemas"][k] for k in traffic.old} == traffic.old
    assert {"VideoUploaded/3", "VideoAnalyzed/2", "JobCompleted/2", "JobFailed/1"} <= set(mine["schemas"])

    report = []
    for env in ("production", "sandbox"):
        monitoring = api[env]["monitoring"]["jobs"]
        queued, completed, failed, cancelled = (sum(c[i] for (e, _), c in mine["jobs"].items() if e == env)
                                                for i in range(4))
        assert (completed, failed) == (monitoring["completed24h"], monitoring["failed24h"]), (env, mine["jobs"])
        assert queued == monitoring["pending"] + monitoring["running"] + completed + failed + cancelled
        assert {kind: c[0] for (e, kind), c in mine["jobs"].items() if e == env} == Counter(
            j["type"] for j in api[env]["jobs"])
        assert mine["delays"][env] == _api_delays(api[env]["videos"]), env
        report.append(f"{env}: jobs queued {queued}, completed {completed} (monitoring {monitoring['completed24h']}),"
                      f" failed {failed} (monitoring {monitoring['failed24h']}), cancelled {cancelled}; upload to "
                      f"analysis (videos, median s, p95 s) {mine['delays'][env]} "
                      f"(API {_api_delays(api[env]['videos'])})")
    [(charged, refunded, consumed)] = mine["credits"]
    assert refunded > 0 and consumed == charged - refunded
    assert consumed == api["production"]["usage"]["totalCreditsConsumed"] == \
        api["production"]["monitoring"]["last24h"]["creditsConsumed"]
    assert api["sandbox"]["usage"]["totalCreditsConsumed"] == 0
    report.append(f"credits: charged {charged}, refunded {refunded}, consumed {consumed} (usage "
                  f"{api['production']['usage']['totalCreditsConsumed']}, monitoring "
                  f"{api['production']['monitoring']['last24h']['creditsConsumed']})")

    alerts = {a.get("webhookId"): a for a in api["production"]["monitoring"]["alerts"]
              if a["type"] == "webhook_failing"}
    assert set(mine["webhooks"]) == set(traffic.receivers)
    for hook, (deliveries, delivered, failing, rate) in mine["webhooks"].items():
        listed = api["deliveries"][hook]
        assert deliveries == len(listed) > 0
        assert delivered == sum(d["status"] == "succeeded" for d in listed)
        assert rate == round(delivered / deliveries, 4)
        if failing >= 3 and failing / deliveries >= 0.5:
            assert alerts[hook]["value"] == round(failing / deliveries, 4)
        else:
            assert hook not in alerts
        report.append(f"webhook {hook}: {deliveries} deliveries, success rate {rate} (deliveries listed: "
                      f"{delivered}/{len(listed)} succeeded); failing {failing} (monitoring alert value: "
                      f"{alerts[hook]['value'] if hook in alerts else 'no alert'})")
    rates = sorted(w[3] for w in mine["webhooks"].values())
    assert rates[-1] == 1.0 and 0 < rates[0] < 0.5  # the receiver that answers, and the one that mostly fails
    assert not [a for a in api["production"]["monitoring"]["alerts"] if a["type"] == "projection_lag"]
    print("\n".join(["---- the page's figures beside the API's", *report]))


def test_vaeo_events_tail_is_the_same_door(traffic: Stack, through_kcat: dict, tmp_path: Path):
    env = dict(env_for(traffic.settings), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    through_tail = figures(run_the_page(tmp_path / "tail", "tail", env), traffic.workspace)

    for name in ("jobs", "delays", "credits", "webhooks"):
        assert through_tail[name] == through_kcat[name], name
    printed, distinct = through_tail["messages"]
    assert printed == distinct  # no duplicate printed ...
    assert set(through_tail["schemas"]) == {f"{t.split('/')[0]}/{EventRegistry().current_schema(t.split('/')[0])}"
                                            for t in through_tail["schemas"]}  # ... and every event upcast


async def test_the_served_asyncapi_document_is_the_committed_one_and_the_cli_validates_it(stack: Stack, tmp_path):
    async with stack.production.http.get(stack.production.base + "/asyncapi.json") as resp:
        assert resp.status == 200 and resp.content_type == "application/json"
        assert "X-RateLimit-Limit" not in resp.headers  # public, before any workspace is known
        served = await resp.read()
    assert orjson.loads(served) == json.loads(ASYNCAPI_DOC.read_text(encoding="utf-8"))
    (tmp_path / "asyncapi.json").write_bytes(served)
    checked = await asyncio.to_thread(validate, tmp_path / "asyncapi.json")
    print(f"---- asyncapi validate (exit {checked.returncode})\n{checked.stdout}{checked.stderr}")
    assert checked.returncode == 0 and "is valid" in checked.stdout, checked.stdout + checked.stderr
    broken = orjson.loads(served)
    broken["components"]["messages"][message_id("JobQueued", 1)]["payload"]["properties"]["data"]["type"] = "objekt"
    (tmp_path / "broken.json").write_bytes(orjson.dumps(broken))
    assert (await asyncio.to_thread(validate, tmp_path / "broken.json")).returncode != 0  # the check can fail


async def test_every_message_on_both_topics_fits_its_message_in_the_served_document(traffic: Stack):
    async with traffic.production.http.get(traffic.production.base + "/asyncapi.json") as resp:
        document = await resp.json()
    messages = document["components"]["messages"]
    seen: Counter = Counter()
    for topic in (traffic.settings.events_topic, traffic.settings.telemetry_topic):
        for records in (await kafka_messages(traffic.settings, topic)).values():
            for m in records:
                value = orjson.loads(m.value)
                if topic == traffic.settings.events_topic:
                    message = messages[message_id(value["type"], value["schema"])]
                    headers = {k: v.decode() for k, v in m.headers}
                    Draft202012Validator(message["headers"]).validate(headers)
                    assert m.key.decode() == (value["workspace_id"] or "-")
                else:
                    message = messages["ApiCall"]
                    assert m.key.decode() == value["workspace_id"]
                Draft202012Validator(message["payload"]).validate(value)
                seen[topic] += 1
    assert seen[traffic.settings.events_topic] > 100 and seen[traffic.settings.telemetry_topic] > 10, seen
