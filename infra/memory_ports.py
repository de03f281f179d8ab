"""The application's ports in memory, beside the in-memory event store (``infra.memory_store``):
the idempotency keys' rows over a ``MemoryDatabase``, the candidates' videos found on its streams,
a media inspector that reads a small declared description instead of running ffprobe, and file
storage in a dict. ``memory_adapters`` gives the set a unit test's application is built with
(``services.application.bootstrap``), as ``infra.adapters.database_adapters`` gives production's.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson

from domain.revival import candidate_id as candidate_of
from domain.videos import UnreadableMedia, UnsupportedMedia, video_stream_id
from infra.adapters import Adapters
from infra.idempotency_rows import answer_json
from infra.media.ffmpeg import CONTAINERS
from infra.memory_store import MemoryDatabase
from infra.webhook_http import Outcome

Scope = tuple[UUID, str, UUID, str, str]


def _stored(body: dict[str, Any]) -> dict[str, Any]:
    """The body as PostgreSQL keeps it (``jsonb`` of ``answer_json``: ids and instants as strings)."""
    stored: dict[str, Any] = orjson.loads(answer_json(body))
    return stored


class MemoryKeyRows:
    """The idempotency keys beside an in-memory store's tables (``MemoryDatabase.idempotency_keys``),
    where the store's ``IdempotencyAnswer`` completes them: the statements of
    ``infra.idempotency_rows``, as dict operations, each in one step of the event loop."""

    def __init__(self, database: MemoryDatabase) -> None:
        self.keys = database.idempotency_keys

    async def claim(self, scope: Scope, digest: str, owner: UUID, until: datetime, now: datetime) -> bool:
        await asyncio.sleep(0)
        row = self.keys.get(scope)
        if row is None or (row["state"] == "in_flight" and row["claimed_until"] <= now):
            self.keys[scope] = {"request_hash": digest, "state": "in_flight", "owner": owner, "claimed_until": until,
                                "status": None, "body": None, "created_at": now, "completed_at": None}
            return True
        return False

    async def read(self, scope: Scope) -> Mapping[str, Any] | None:
        return self.keys.get(scope)

    async def answer(self, scope: Scope, placeholder: dict[str, Any], status: int, body: dict[str, Any],
                     now: datetime) -> None:
        row = self.keys.get(scope)
        if row is not None and row["state"] == "done" and row["body"] == _stored(placeholder):
            row.update(status=status, body=_stored(body), completed_at=now)

    async def complete(self, scope: Scope, owner: UUID, status: int, body: dict[str, Any], now: datetime) -> None:
        row = self.keys.get(scope)
        if row is None or row["state"] == "done" or row["owner"] != owner:
            return
        row.update(state="done", owner=None, claimed_until=None, status=status, body=_stored(body), completed_at=now)

    async def release(self, scope: Scope, owner: UUID) -> None:
        row = self.keys.get(scope)
        if row is not None and row["state"] == "in_flight" and row["owner"] == owner:
            del self.keys[scope]

    async def purge(self, before: datetime, now: datetime) -> int:
        expired = [scope for scope, row in self.keys.items()
                   if row["created_at"] < before and (row["state"] == "done" or row["claimed_until"] <= now)]
        for scope in expired:
            del self.keys[scope]
        return len(expired)


class MemoryCandidateVideos:
    """A candidate's video found on the database's video streams (a candidate's id is derived from
    its video's, ``domain.revival.candidate_id``), where the PostgreSQL adapter asks the read model.
    Whether the video is a candidate is the handler's to decide, on the video's stream."""

    def __init__(self, database: MemoryDatabase) -> None:
        self.database = database

    async def video_of(self, candidate_id: UUID, workspace_id: UUID, environment: str) -> int | None:
        for video_id in range(1, self.database.sequences.get("video_id_seq", 0) + 1):
            stream = self.database.streams.get(video_stream_id(video_id))
            if candidate_of(video_id) == candidate_id and stream and stream[0].workspace_id == workspace_id:
                return video_id
        return None


FAKE_MEDIA = b"vaeo-fake-media "


def fake_media(demuxer: str = "mov", duration_ms: int = 30_000, **info: Any) -> bytes:
    """The bytes of a media file ``FakeMedia`` reads: a marker and its description (``measured_ms``,
    ``width``, ``height``, ``frame_rate``, ``video_codec``, ``audio_codec``, ``poster`` False for a
    media of which no picture can be made, ``unreadable`` for one whose packets cannot be read)."""
    return FAKE_MEDIA + orjson.dumps({"demuxer": demuxer, "duration_ms": duration_ms, **info})


@dataclass(frozen=True)
class FakeMediaInfo:
    """What ``FakeMedia.probe`` finds: the attributes of ``infra.media.probe.MediaInfo`` an upload reads."""

    demuxer: str
    duration_ms: int
    width: int | None = 1280
    height: int | None = 720
    frame_rate: float | None = 25.0
    video_codec: str | None = "h264"
    audio_codec: str | None = "aac"
    subtitle_tracks: tuple[Any, ...] = ()
    measured_ms: int | None = None
    poster: bool = True
    unreadable: bool = False

    @property
    def has_video(self) -> bool:
        return self.video_codec is not None

    @property
    def unnamed_channels(self) -> int | None:
        return None


class FakeMedia:
    """The media inspection port without ffmpeg: a file is media when it holds ``fake_media``'s
    bytes, and is what they declare; anything else is refused as ffprobe refuses what is not media."""

    def probe(self, path: Path) -> FakeMediaInfo:
        data = Path(path).read_bytes()
        if not data.startswith(FAKE_MEDIA):
            raise UnsupportedMedia("the file is not an audio or video file ffprobe can read",
                                   reason="Invalid data found when processing input")
        info = FakeMediaInfo(**orjson.loads(data[len(FAKE_MEDIA):]))
        if info.demuxer not in CONTAINERS:
            raise UnsupportedMedia("the file is not in one of the accepted audio and video containers",
                                   reason=f"format {info.demuxer} refused", format=info.demuxer)
        return info

    def measure(self, path: Path, demuxer: str, limit_ms: int) -> int:
        info = self.probe(path)
        if info.unreadable:
            raise UnreadableMedia("the media file could not be read: damaged packets", reason="damaged packets")
        return min(info.duration_ms if info.measured_ms is None else info.measured_ms, limit_ms)

    def extension(self, demuxer: str) -> str:
        return CONTAINERS[demuxer]

    def poster(self, path: Path, demuxer: str, duration_ms: int, *, has_video: bool, mix: Any) -> bytes | None:
        return b"\xff\xd8\xff\xe0fake-jpeg" if self.probe(path).poster else None


@dataclass
class MemoryFiles:
    """File storage in a dict (``files``: key -> bytes); ``path`` writes a copy into ``copies`` (a
    temporary directory when None), as the object store's adapter keeps a cached copy."""

    files: dict[str, bytes] = field(default_factory=dict)
    copies: Path | None = None

    def commit(self, staged: Path, key: str) -> str:
        self.files[key] = Path(staged).read_bytes()
        Path(staged).unlink()
        return key

    def write_bytes(self, key: str, data: bytes) -> str:
        self.files[key] = bytes(data)
        return key

    def path(self, key: str) -> Path:
        if self.copies is None:
            self.copies = Path(tempfile.mkdtemp(prefix="vaeo-memory-files-"))
        self.copies.mkdir(parents=True, exist_ok=True)
        copy = self.copies / key.replace("/", "_")
        copy.write_bytes(self.files[key])
        return copy

    def delete(self, key: str) -> None:
        self.files.pop(key, None)


@dataclass
class RecordingWebhookTests:
    """A webhook test sender that sends nothing: it keeps each send (``sent``: url, environment,
    secret, body, message id, signing time, bound) and answers ``answer`` (a 204 unless told)."""

    answer: Outcome = field(default_factory=lambda: Outcome(204, 1.0))
    sent: list[tuple[str, str, str, bytes, str, int, float]] = field(default_factory=list)

    async def send(self, url: str, environment: str, secret: str, body: bytes, message_id: str, signed_at: int,
                   timeout_s: float) -> Outcome:
        self.sent.append((url, environment, secret, body, message_id, signed_at, timeout_s))
        return self.answer


def memory_adapters(database: MemoryDatabase, *, files: Any = None, media: Any = None) -> Adapters:
    """The ports of an application over an in-memory store's ``database``: its keys' rows and
    candidates, ``FakeMedia``, ``MemoryFiles`` and ``RecordingWebhookTests`` unless others are given."""
    return Adapters(key_rows=MemoryKeyRows(database), media=media or FakeMedia(), files=files or MemoryFiles(),
                    candidates=MemoryCandidateVideos(database), webhook_tests=RecordingWebhookTests())
