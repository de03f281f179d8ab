"""What the commands answer: one typed, immutable result per kind of command.

A handler returns one of these, or a single value when that is all it decides (a position, whether
something was recorded, an issued key). They are named tuples: a caller reads fields
(``result.job``, ``result.position``), and a caller that unpacks the result positionally reads the
same values in the same order. ``position`` is that of the command's append, None when nothing was
appended (the state was so already, or an identical earlier request's job was found).
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, TypeVar
from uuid import UUID

from domain.jobs import Job
from domain.videos import Video
from domain.webhooks import Webhook
from domain.workspaces import JobSecretVersions
from services.application.idempotency import Outcome

A = TypeVar("A")


class Saved(NamedTuple, Generic[A]):
    """An aggregate as saved (created or changed) and the append's position."""

    aggregate: A
    position: int | None


class Updated(NamedTuple):
    """Whether anything changed (nothing is appended when not)."""

    updated: bool
    position: int | None


class JobResult(NamedTuple):
    """A job queued or changed (``QueueJob``, ``CancelJob``)."""

    job: Job
    position: int | None


class PricedJob(NamedTuple):
    """A job queued and charged ``price`` in the same append (a clip, a translation)."""

    job: Job
    price: int
    position: int | None


class PricedJobOnce(NamedTuple):
    """A job queued and charged, or the identical earlier request's job (``reused``: nothing written)."""

    job: Job
    reused: bool
    price: int
    position: int | None


class AnalysisQueued(NamedTuple):
    """An analysis job, the video it analyses and its price."""

    job: Job
    video: Video
    price: int
    position: int | None


class RegenerationQueued(NamedTuple):
    """A regeneration job and its compute billing (``articles.ComputeBilling``)."""

    job: Job
    billing: Any  # ``articles.ComputeBilling``
    position: int | None


class LinksRevoked(NamedTuple):
    """The public links' new generation."""

    generation: int
    position: int


class WebhookRegistered(NamedTuple):
    """A new webhook and its secret, shown this once (the events hold it encrypted)."""

    webhook: Webhook
    secret: str
    position: int


class WebhookTested(NamedTuple):
    """What a test send did: its message id, whether the destination took it (2xx), the status,
    the time it took and why it failed, and the position of its ``WebhookTestSent``."""

    message_id: UUID
    delivered: bool
    status_code: int | None
    latency_ms: float
    error: str | None
    position: int


class NewWorkspace(NamedTuple):
    """A new workspace and its first key (``keys.IssuedKey``)."""

    workspace_id: UUID
    issued: Any  # ``keys.IssuedKey``


class SecretRotated(NamedTuple):
    """The job-notification secret's versions after a rotation."""

    versions: JobSecretVersions
    position: int


class Completion(NamedTuple):
    """A description completion's answer (``idempotency.Outcome``) and the position of
    ``CandidateSelected`` (None when the candidate was selected already)."""

    outcome: Outcome
    position: int | None
