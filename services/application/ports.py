"""The ports of the application: what the write side asks of the world besides its event store.

A handler never runs ffprobe, names a database pool or a disk path of its own: it asks its
context's ports. Each port is a protocol here; its adapters live in ``infra/`` (PostgreSQL,
ffmpeg, the local disk or the object store: ``infra.adapters.database_adapters``) and its fakes
beside the in-memory event store (``infra.memory_ports.memory_adapters``). The process's
configuration picks one set at start-up (``bootstrap``), so every command runs on the in-memory
store with fakes in a unit test, and on PostgreSQL with the real adapters in production.

The blocking ports (media, files) are called in a thread by the application (``asyncio.to_thread``):
an adapter may block, never the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol
from uuid import UUID

# A key's row: workspace, environment, API key, operation, key (``idempotency.Claim.scope``).
KeyScope = tuple[UUID, str, UUID, str, str]


class KeyRows(Protocol):
    """The idempotency keys' table (``idempotency_keys``), in the event store's database: an
    append's ``IdempotencyAnswer`` completes a key in the append's transaction, so the table lives
    where the events do. Bodies are given as dicts; an adapter stores them as JSON (ids and
    instants as strings)."""

    async def claim(self, scope: KeyScope, digest: str, owner: UUID, until: datetime, now: datetime) -> bool:
        """Take the key for ``owner`` until ``until``: a new row, or one whose claim lapsed
        (``claimed_until <= now``) and was never done. False when the key is held or done."""

    async def read(self, scope: KeyScope) -> Mapping[str, Any] | None:
        """The key's ``request_hash``, ``state``, ``status`` and ``body``; None when there is none."""

    async def answer(self, scope: KeyScope, placeholder: dict[str, Any], status: int, body: dict[str, Any],
                     now: datetime) -> None:
        """Store the answer over a bound key's ``placeholder`` (nothing when the body is another)."""

    async def complete(self, scope: KeyScope, owner: UUID, status: int, body: dict[str, Any], now: datetime) -> None:
        """Store the answer of the claim ``owner`` holds; nothing when the key is done already or
        the claim lapsed and moved on."""

    async def release(self, scope: KeyScope, owner: UUID) -> None:
        """Delete the claim ``owner`` holds while it is in flight; never raises (a claim left
        behind lapses by itself)."""

    async def purge(self, before: datetime, now: datetime) -> int:
        """Delete the keys first claimed before ``before`` that are done or lapsed; how many."""


class MediaInspector(Protocol):
    """What the upload learns of a media file (blocking calls). Refusals are the domain's:
    ``UnsupportedMedia`` (not media, or not an accepted container) and ``UnreadableMedia``."""

    def probe(self, path: Path) -> Any:
        """The file's container and streams (``demuxer``, ``duration_ms`` as declared, ``width``,
        ``height``, ``frame_rate``, codecs, ``subtitle_tracks``, ``has_video``, ``unnamed_channels``)."""

    def measure(self, path: Path, demuxer: str, limit_ms: int) -> int:
        """How long the file really plays, every packet read (bounded by ``limit_ms``)."""

    def extension(self, demuxer: str) -> str:
        """The file extension the service names a stored file of this container with."""

    def poster(self, path: Path, demuxer: str, duration_ms: int, *, has_video: bool, mix: Any) -> bytes | None:
        """A JPEG picture of the media (a frame, or an audio file's waveform); None when none can be made."""


class FileStore(Protocol):
    """Where uploads and their companions are kept (blocking calls): the local disk or the object
    store in a process, a dict in a unit test."""

    def commit(self, staged: Path, key: str) -> object:
        """Move a staged file to ``key`` (the staged file is gone)."""

    def write_bytes(self, key: str, data: bytes) -> object:
        """Store ``data`` at ``key``."""

    def path(self, key: str) -> Path:
        """A local path of the stored file (an object store's cached copy)."""

    def delete(self, key: str) -> None:
        """Delete the file at ``key`` (nothing when there is none)."""


class CandidateVideos(Protocol):
    """Which video a revival candidate is, as the ``revival_candidates`` read model knows it."""

    async def video_of(self, candidate_id: UUID, workspace_id: UUID, environment: str) -> int | None:
        """The video of a candidate of this workspace and environment; None when it is none."""


class TestSendOutcome(Protocol):
    """What one test send to a webhook's destination gave: the HTTP status (None when no answer
    came), the time it took, why it was not delivered (None when it was), and whether it was (2xx)."""

    @property
    def status_code(self) -> int | None: ...

    @property
    def latency_ms(self) -> float: ...

    @property
    def error(self) -> str | None: ...

    @property
    def delivered(self) -> bool: ...


class WebhookTestSender(Protocol):
    """Sends one signed test message to a webhook's destination now (POST /webhooks/{id}/test): the
    destination checked again (the environment's allowance), the body signed with ``secret`` as
    ``message_id`` at ``signed_at``, the whole send bounded by ``timeout_s``. A refusal or a failure
    is an outcome, never an exception."""

    async def send(self, url: str, environment: str, secret: str, body: bytes, message_id: str, signed_at: int,
                   timeout_s: float) -> TestSendOutcome: ...
