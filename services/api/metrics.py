"""GET /metrics: the Prometheus text format, outside /v1 and without a workspace key.

Two parts, concatenated:

- this API process's own series (a registry per app, never the global one): requests and their
  latency per method, route (the route template, never the raw path) and status (a stream's
  latency is the time to open it), the Server-Sent Events streams open now, and telemetry
  records dropped;
- the pipeline, read at scrape time from PostgreSQL and the topics' end offsets (so every API
  process answers the same, whichever the scraper reaches): events appended (the log head), the
  relay checkpoint and lag, each projection's position, lag and messages consumed (its events/s
  is ``rate(vaeo_projection_messages_consumed_total[1m])``), the job queue by type and state, job
  durations per type and outcome (a histogram kept by the ``monitoring_events`` read model),
  webhook attempts by outcome (from the ``event_counts`` read model) and process heartbeats.

Protection: the API binds ``VAEO_API_HOST`` (127.0.0.1 by default), so only the host reaches it;
when the API listens wider, set ``VAEO_METRICS_TOKEN`` and scrape with
``Authorization: Bearer <token>`` (anything else is 401), or keep /metrics off the public proxy.
"""

from __future__ import annotations

import hmac
import logging

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from projections import event_counts_queries, monitoring_queries
from projections.monitoring import DURATION_BUCKETS
from services.api.base import POOL, SETTINGS
from services.lib.status import pipeline_state

log = logging.getLogger("vaeo.api.metrics")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class ApiMetrics:
    """This process's series."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("vaeo_http_requests", "HTTP requests answered, per method, route and status",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("vaeo_http_request_duration_seconds",
                                 "Time to answer, per method, route and status", ["method", "route", "status"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.open_streams = Gauge("vaeo_http_open_streams",
                                  "Server-Sent Events streams this process is sending (0 once every client left)",
                                  registry=self.registry)
        ProcessCollector(registry=self.registry)
        self._children: dict[tuple[str, str, int], tuple] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        # The labelled children, looked up once per (method, route template, status): a handful
        # of combinations, and ``labels()`` validates and locks on every call.
        children = self._children.get((method, route, status))
        if children is None:
            labels = (method, route, str(status))
            children = self._children[(method, route, status)] = (self.requests.labels(*labels),
                                                                   self.latency.labels(*labels))
        children[0].inc()
        children[1].observe(seconds)


METRICS = web.AppKey("metrics", ApiMetrics)


class _Snapshot:
    """A collector over one pipeline snapshot (prometheus_client collects synchronously)."""

    def __init__(self, families: list) -> None:
        self.families = families

    def collect(self):
        return self.families


async def pipeline_families(request: web.Request) -> list:
    from services.api.monitoring import END_OFFSETS

    try:
        ends = await request.app[END_OFFSETS].get()
    except Exception as exc:
        log.warning("end offsets unknown: %s: %s", type(exc).__name__, exc)
        ends = None
    pool = request.app[POOL]
    state = await pipeline_state(pool, ends, request.app[SETTINGS].now())  # each statement on a connection of the pool
    durations, totals = await monitoring_queries.job_durations(pool)
    attempts = await event_counts_queries.of_types(pool, _ATTEMPT_OUTCOMES)
    return [*_log_families(state), *_projection_families(state["projections"]), _queue_family(state["queue"]),
            _duration_family(durations, totals), *_webhook_families(attempts, state["webhooks"]),
            _heartbeat_family(state["processes"])]


def _log_families(state: dict) -> list:
    appended = CounterMetricFamily("vaeo_events_appended", "Events appended to the log (its head position)")
    appended.add_metric([], state["head"])
    checkpoint = GaugeMetricFamily("vaeo_relay_checkpoint_position", "Last position Kafka acknowledged to the relay")
    checkpoint.add_metric([], state["relay_checkpoint"])
    relay_lag = GaugeMetricFamily("vaeo_relay_lag_events", "Events appended but not yet in Kafka")
    relay_lag.add_metric([], state["relay_lag"])
    return [appended, checkpoint, relay_lag]


def _projection_families(projections: list[dict]) -> list:
    position = GaugeMetricFamily("vaeo_projection_position", "Highest position (or telemetry offset) applied",
                                 labels=["projection"])
    lag = GaugeMetricFamily("vaeo_projection_lag_messages", "Messages of the topic not applied yet",
                            labels=["projection"])
    consumed = CounterMetricFamily("vaeo_projection_messages_consumed",
                                   "Messages consumed (rate() of it is the projection's events/s)",
                                   labels=["projection"])
    live = GaugeMetricFamily("vaeo_projection_live", "1 when the projection is live, 0 when stopped or rebuilding",
                             labels=["projection", "status"])
    for p in projections:
        position.add_metric([p["name"]], p["position"])
        consumed.add_metric([p["name"]], p["consumed"])
        live.add_metric([p["name"], p["status"]], 1 if p["status"] == "live" else 0)
        if p["lag"] is not None:
            lag.add_metric([p["name"]], p["lag"])
    return [position, lag, consumed, live]


def _queue_family(queue: list[dict]) -> GaugeMetricFamily:
    depth = GaugeMetricFamily("vaeo_job_queue_depth", "Jobs queued or running, per type and state",
                              labels=["job_type", "state"])
    for q in queue:
        depth.add_metric([q["job_type"], q["state"]], q["count"])
    return depth


def _duration_family(durations: list, totals: list) -> HistogramMetricFamily:
    hist = HistogramMetricFamily("vaeo_job_duration_seconds", "First start to end of finished jobs",
                                 labels=["job_type", "outcome"])
    per: dict[tuple[str, str], list] = {}
    for r in durations:
        per.setdefault((r["job_type"], r["outcome"]), []).append((r["bucket_le"], r["count"]))
    for t in totals:
        key = (t["job_type"], t["outcome"])
        cumulative, running = [], 0
        counts = dict(per.get(key, []))
        for le in DURATION_BUCKETS:
            running += counts.get(le, 0)
            cumulative.append(("+Inf" if le == float("inf") else repr(float(le)), running))
        hist.add_metric(list(key), cumulative, t["sum_s"])
    return hist


def _webhook_families(attempts: list, deliveries: dict | None) -> list:
    webhook = CounterMetricFamily("vaeo_webhook_attempts", "Webhook delivery attempts by outcome",
                                  labels=["outcome"])
    got = {r["type"]: r["n"] for r in attempts}
    for event_type, outcome in _ATTEMPT_OUTCOMES.items():
        webhook.add_metric([outcome], got.get(event_type, 0))
    if deliveries is None:
        return [webhook]
    pending = GaugeMetricFamily("vaeo_webhook_deliveries_pending", "Deliveries waiting, by kind", labels=["kind"])
    for kind in ("retrying", "first_attempt_due", "sending"):
        pending.add_metric([kind], deliveries[kind])
    return [webhook, pending]


def _heartbeat_family(processes: list[dict]) -> GaugeMetricFamily:
    beat = GaugeMetricFamily("vaeo_process_heartbeat_age_seconds", "Seconds since each process's last heartbeat",
                             labels=["kind", "process"])
    for p in processes:
        if p["stopped_at"] is None:
            beat.add_metric([p["kind"], p["process_id"]], p["beat_age_s"])
    return beat


_ATTEMPT_OUTCOMES = {"WebhookDelivered": "delivered", "WebhookDeliveryFailed": "failed"}


async def get_metrics(request: web.Request) -> web.Response:
    token = request.app[SETTINGS].metrics_token
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return web.Response(status=401, text="metrics need the metrics token\n",
                                headers={"WWW-Authenticate": "Bearer"})
    own = generate_latest(request.app[METRICS].registry)
    pipeline = CollectorRegistry(auto_describe=False)
    try:
        pipeline.register(_Snapshot(await pipeline_families(request)))
        shared = generate_latest(pipeline)
    except Exception as exc:  # the database is down: this process's own series still answer
        log.warning("pipeline metrics unavailable: %s: %s", type(exc).__name__, exc)
        shared = b""
    return web.Response(body=own + shared, headers={"Content-Type": CONTENT_TYPE})
