"""``vaeo jobs history JOB_ID``: what happened to a job, read from the event log (Kafka).

A job's history is its chain (docs/events.md, "Correlation and causation"): the events of the
job's stream and every event of its workspace whose ``correlation_id`` is the job's, from its
``JobQueued`` on: the charge, the attempts and their progress, the results (the video's graph
and analysis, the article, the provider's usage), the end, the refund, the webhook deliveries.
It is read through ``services.cli.tail`` like any reader of the log, never from the events table, in
position order, as a table or as JSON lines (the envelope).

Why "from its ``JobQueued`` on": a job's chain is named by the request that queued it, and a
client may send the same ``X-Request-Id`` on several requests; what earlier requests with that
id appended is not this job's doing. And why "of its workspace": request ids come from clients,
so another workspace's chain may bear the same id. All of a workspace's events are in one
partition, in commit order, so the job's ``JobQueued`` is met before anything it caused.
"""

from __future__ import annotations

import io
import re
from datetime import UTC
from typing import Any, TextIO
from uuid import UUID

from aiokafka import ConsumerRecord

from domain.base import NotFound
from infra.codec import StoredEvent
from infra.settings import Settings
from services.application.meta import correlation_of
from services.cli.tail import tail

# What the table's summary shows of each type: its telling fields, in this order. A type not
# listed shows its scalar fields; fields that are ids of the row's own stream, secrets' digests
# or ciphertexts are never shown.
SUMMARY_FIELDS: dict[str, tuple[str, ...]] = {
    "JobQueued": ("job_type", "environment", "max_attempts"),
    "JobStarted": ("attempt", "worker"),
    "JobProgressed": ("progress", "step"),
    "JobAttemptFailed": ("attempt", "error_message", "retry_at"),
    "JobCompleted": ("article_id",),
    "JobFailed": ("attempts", "error_message"),
    "JobCancelled": ("reason",),
    "CreditsCharged": ("amount", "reason"),
    "CreditsRefunded": ("amount", "reason"),
    "VideoGraphRecorded": ("job_id",),
    "VideoAnalyzed": ("analysis_mode", "article_id", "geo_readiness_score"),
    "ArticleGenerated": ("article_id", "title", "composite_score"),
    "LlmUsageRecorded": ("operation", "prompt_tokens", "completion_tokens"),
    "WebhookDeliveryScheduled": ("event_name", "url"),
}
NEVER_SHOWN = frozenset({"workspace_id", "key_digest", "secret_encrypted"})
SUMMARY_MAX = 100  # characters of a summary: one table row stays one line
VALUE_MAX = 60  # characters of one value within it (an error message, a title)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


class JobChain:
    """The ``keep`` predicate of ``tail`` that selects a job's chain, learning it as it reads.

    Until the job's ``JobQueued`` comes by, only it can be kept; from then on, an event of the
    job's workspace is kept when it is on the job's stream or its chain is the job's. Messages
    that do not even hold the job id or the chain's id as bytes are passed over undecoded, so
    reading a long log costs a byte search per message.
    """

    def __init__(self, job_id: UUID) -> None:
        self.job_id = str(job_id)
        self.queued: StoredEvent | None = None
        self.correlation_id: str | None = None
        self._workspace_key: bytes | None = None
        self._markers: tuple[bytes, ...] = (self.job_id.encode(),)

    def __call__(self, msg: ConsumerRecord) -> bool:
        if self.queued is not None and msg.key != self._workspace_key:
            return False
        if not any(marker in msg.value for marker in self._markers):
            return False
        event = StoredEvent.from_json(msg.value)
        if self.queued is None:
            if str(event.stream_id) != self.job_id or event.type != "JobQueued":
                return False
            self.queued, self.correlation_id, self._workspace_key = event, correlation_of(event), msg.key
            self._markers = (*self._markers, self.correlation_id.encode())
            return True
        return str(event.stream_id) == self.job_id or correlation_of(event) == self.correlation_id


async def job_history(settings: Settings, job_id: UUID, out: TextIO, *, as_json: bool = False) -> int:
    """Print the job's chain to ``out`` (a table, or the envelopes as JSON lines); returns how many
    events. ``NotFound`` when the log holds no ``JobQueued`` of that id."""
    chain = JobChain(job_id)
    lines = out if as_json else io.StringIO()
    count = await tail(settings, lines, keep=chain)
    if chain.queued is None:
        raise NotFound(f"job {job_id} is not in the event log", id=str(job_id))
    if not as_json:
        events = [StoredEvent.from_json(line.encode()) for line in lines.getvalue().splitlines()]
        out.write(render_table(events))
    return count


def render_table(events: list[StoredEvent]) -> str:
    """POSITION, TIME (UTC), TYPE, STREAM (its type and the id's first 8 characters), SUMMARY."""
    rows = [(str(e.position), e.recorded_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"), e.type,
             f"{e.stream_type} {str(e.stream_id)[:8]}", summary(e)) for e in events]
    header = ("POSITION", "TIME (UTC)", "TYPE", "STREAM", "SUMMARY")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].rjust(widths[0]), *(cell.ljust(w) for cell, w in zip(row[1:4], widths[1:], strict=True))]
        lines.append("  ".join([*cells, row[4]]).rstrip())
    return "\n".join(lines) + "\n"


def summary(event: StoredEvent) -> str:
    """A short line of what the event says, bounded (data comes from clients: titles, messages)."""
    data = event.data
    names = SUMMARY_FIELDS.get(event.type) or [k for k, v in data.items() if _scalar(v)]
    parts = [f"{name}={_shown(data[name])}" for name in names if name in data and name not in NEVER_SHOWN
             and data[name] != str(event.stream_id)]
    text = " ".join(parts)
    return text if len(text) <= SUMMARY_MAX else text[:SUMMARY_MAX - 3] + "..."


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _shown(value: Any) -> str:
    if not _scalar(value):
        return f"<{type(value).__name__}>"
    text = _CONTROL.sub(" ", str(value))
    if len(text) > VALUE_MAX:
        text = text[:VALUE_MAX - 3] + "..."
    return f'"{text}"' if isinstance(value, str) and (" " in text or not text) else text
