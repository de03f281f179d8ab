"""Command handlers: load, decide through the aggregate, append the collected events.

Each takes its ports (the event store, a clock where needed) as parameters. A conflict on
append (another command moved the stream) is retried a bounded number of times by
``with_retries``; the caller turns the final ``ConcurrencyError`` into a 409.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar
from uuid import UUID, uuid4

import asyncpg

from domain.api_keys import ApiKey
from domain.base import DomainError, NotFound
from domain.jobs import Job
from domain.media import Media
from domain.workspaces import Workspace
from infra import crypto
from infra.eventstore import ConcurrencyError, EventStore, SideEffect

T = TypeVar("T")
CONFLICT_RETRIES = 5
CHARGE_RETRIES = 10  # a workspace's charges race across API processes: more, short, jittered attempts


async def with_retries(command: Callable[[], Awaitable[T]], attempts: int = CONFLICT_RETRIES) -> T:
    """Run ``command`` again after a conflict, ``attempts`` times at most. Between attempts a short
    random pause (a few milliseconds, growing) lets the commands that collided go one after the
    other instead of colliding again at once."""
    for attempt in range(attempts):
        try:
            return await command()
        except ConcurrencyError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
    raise AssertionError("unreachable")


class SandboxQuotaExceeded(DomainError):
    code = "sandbox_quota_exceeded"
    status = 429


def _count_sandbox_job(workspace_id: UUID, quota: int, day):
    """The sandbox job's claim on its workspace's daily quota, in the append's transaction."""

    async def claim(conn: asyncpg.Connection) -> None:
        await conn.execute(
            "INSERT INTO sandbox_job_quota AS q (workspace_id, day, jobs, quota) VALUES ($1, $2, 1, $3) "
            "ON CONFLICT (workspace_id, day) DO UPDATE SET jobs = q.jobs + 1, quota = EXCLUDED.quota",
            workspace_id, day, quota)

    return claim


@dataclass(frozen=True)
class IssuedKey:
    key_id: UUID
    key: str  # shown once, never stored
    position: int


def _index_key_digest(digest: str, key_id: UUID, workspace_id: UUID):
    async def effect(conn: asyncpg.Connection) -> None:
        await conn.execute("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ($1, $2, $3)",
                           digest, key_id, workspace_id)

    return effect


def _new_key(workspace_id: UUID, *, name: str, scopes: list[str], environment: str, expires_at: datetime | None,
             issuer_scopes: list[str] | None, issued_by: UUID | None) -> tuple[ApiKey, str]:
    key = crypto.new_api_key(environment)
    api_key = ApiKey.issue(
        key_id=uuid4(), workspace_id=workspace_id, name=name, scopes=scopes, environment=environment,
        key_prefix=crypto.key_display_prefix(key), key_digest=crypto.key_digest(key), expires_at=expires_at,
        issuer_scopes=issuer_scopes, issued_by=issued_by)
    return api_key, key


async def create_workspace(store: EventStore, *, name: str, plan: str, credits: int, rate_limit: int,
                           key_name: str = "bootstrap") -> tuple[UUID, IssuedKey]:
    """A new workspace and its first key: wildcard scope, production."""
    workspace = Workspace.open(uuid4(), name, plan, credits, rate_limit)
    api_key, key = _new_key(workspace.id, name=key_name, scopes=["*"], environment="production", expires_at=None,
                            issuer_scopes=None, issued_by=None)
    events = store.registry.to_new_events([*workspace.collect_events(), *api_key.collect_events()],
                                          workspace_id=workspace.id)
    position = await store.append(events, before=[_index_key_digest(api_key.key_digest, api_key.id, workspace.id)])
    return workspace.id, IssuedKey(api_key.id, key, position)


async def issue_key(store: EventStore, workspace_id: UUID, *, name: str, scopes: list[str], environment: str,
                    expires_at: datetime | None, issuer_scopes: list[str] | None,
                    issued_by: UUID | None, meta: dict | None = None) -> IssuedKey:
    api_key, key = _new_key(workspace_id, name=name, scopes=scopes, environment=environment, expires_at=expires_at,
                            issuer_scopes=issuer_scopes, issued_by=issued_by)
    events = store.registry.to_new_events(api_key.collect_events(), workspace_id=workspace_id, meta=meta)
    position = await store.append(events, before=[_index_key_digest(api_key.key_digest, api_key.id, workspace_id)])
    return IssuedKey(api_key.id, key, position)


async def _load(store: EventStore, stream_id: UUID, cls: type, workspace_id: UUID, what: str, shown_id=None):
    """The aggregate if it exists in this workspace; another workspace's answers exactly like none.

    The 404 names ``shown_id``, the id the client sent, when the stream id is derived from it."""
    agg = await store.load_aggregate(stream_id)
    if agg is None or not isinstance(agg, cls) or agg.workspace_id != workspace_id:
        raise _missing(what, stream_id, shown_id)
    return agg


def _missing(what: str, stream_id: UUID, shown_id) -> NotFound:
    return NotFound(f"{what} not found", id=str(stream_id if shown_id is None else shown_id))


async def revoke_key(store: EventStore, workspace_id: UUID, key_id: UUID, meta: dict | None = None) -> int:
    async def attempt() -> int:
        api_key = await _load(store, key_id, ApiKey, workspace_id, "key")
        api_key.revoke()
        return await store.append(store.registry.to_new_events(api_key.collect_events(), workspace_id=workspace_id,
                                                               meta=meta))

    return await with_retries(attempt)


async def add_credits(store: EventStore, workspace_id: UUID, amount: int) -> int:
    async def attempt() -> int:
        workspace = await _load(store, workspace_id, Workspace, workspace_id, "workspace")
        workspace.add_credits(amount)
        return await store.append(store.registry.to_new_events(workspace.collect_events(), workspace_id=workspace_id))

    return await with_retries(attempt)


async def create_media(store: EventStore, workspace_id: UUID, *, environment: str, name: str,
                       description: str | None = None, category: str | None = None, language: str = "fr",
                       meta: dict | None = None) -> tuple[Media, int]:
    media_id = await store.next_id("media_id_seq")
    media = Media.create(media_id=media_id, workspace_id=workspace_id, environment=environment, name=name,
                         description=description, category=category, language=language)
    position = await store.append(store.registry.to_new_events(media.collect_events(), workspace_id=workspace_id,
                                                               meta=meta))
    return media, position


async def queue_job(store: EventStore, workspace_id: UUID, *, job_type: str, params: dict | None = None,
                    environment: str = "production", max_attempts: int = 3, webhook_url: str | None = None,
                    job_id: UUID | None = None, credits: int | None = None, charge_reason: str | None = None,
                    sandbox_quota: int | None = None, today=None, meta: dict | None = None,
                    before: Sequence[SideEffect] = (), reuse_existing: bool = False) -> tuple[Job, int | None]:
    """Queue a job. ``credits`` (kept as ``params.credits``) are charged in the same append: 402 when
    the balance is short, and ``append_job`` refunds them if the job ends failed or cancelled.

    ``before`` are side effects of the caller committed with the job (an idempotency key's answer).
    With ``reuse_existing``, ``job_id`` names an identical earlier request (``services.idempotency``):
    when that job's stream exists already, it is returned with position None and nothing is written
    nor charged.

    A sandbox job (free) counts against ``sandbox_quota`` jobs per workspace and UTC day
    (``today``): 429 ``sandbox_quota_exceeded`` beyond it, and nothing is written.

    Charges of one workspace are decided one after the other inside this process (the workspace
    stream's lock of the event store): concurrent analyses of different videos then queue up for
    a few milliseconds instead of failing on each other's charge, and retries settle what other
    processes interleave.
    """
    job_id = job_id or uuid4()
    if credits is not None:
        params = {**(params or {}), "credits": credits}
    quota = []
    if environment == "sandbox" and sandbox_quota is not None:
        quota = [_count_sandbox_job(workspace_id, sandbox_quota, today)]

    async def attempt() -> tuple[Job, int | None]:
        if reuse_existing and isinstance(earlier := await store.load_aggregate(job_id), Job):
            return earlier, None
        job = Job.queue(job_id=job_id, workspace_id=workspace_id, job_type=job_type, params=params,
                        environment=environment, max_attempts=max_attempts, webhook_url=webhook_url)
        pending = list(job.collect_events())
        if credits:
            workspace = await _load(store, workspace_id, Workspace, workspace_id, "workspace")
            workspace.charge(credits, charge_reason or f"{job_type} job", job_id=job_id)
            pending += workspace.collect_events()
        try:
            position = await store.append(store.registry.to_new_events(pending, workspace_id=workspace_id,
                                                                       meta=meta), before=[*quota, *before])
        except asyncpg.CheckViolationError as exc:
            if exc.constraint_name != "sandbox_job_quota_within":
                raise
            raise SandboxQuotaExceeded(f"the sandbox quota of {sandbox_quota} jobs per day is used up; it resets at "
                                       "midnight UTC (use a production key for more)", quota=sandbox_quota) from None
        return job, position

    if not credits:
        return await with_retries(attempt)
    async with store.stream_lock(workspace_id):
        return await with_retries(attempt, attempts=CHARGE_RETRIES)


def _claim_refund(job: Job):
    """The at-most-once guard of a job's refund: a second claim is a unique violation, so the
    append that carries it is refused whole (in group commit too: it is a PostgreSQL error)."""

    async def claim(conn: asyncpg.Connection) -> None:
        await conn.execute("INSERT INTO credit_refunds (job_id, workspace_id, amount) VALUES ($1, $2, $3)",
                           job.id, job.workspace_id, job.credits_charged)

    return claim


async def append_job(store: EventStore, job: Job, *, also: Sequence = (), meta: dict | None = None) -> int:
    """Append the job's pending events, and ``also`` (other aggregates' events that commit with them).

    When those events end the job ``failed`` or ``cancelled`` and it was charged at queue time,
    ``CreditsRefunded`` goes into the same append, with its claim in ``credit_refunds``: the end
    and the refund commit together or not at all, and a job is refunded at most once whoever ends
    it (the cancel command, a worker, a worker taking over an expired lease). A claim that exists
    already (refunded before this rule, by the analysis handler itself) ends the job without a
    second refund. ``ConcurrencyError`` when the job or the workspace moved: reload and decide again.
    """
    pending = [*job.collect_events(), *also]
    if job.refund_due:
        workspace = await store.load_aggregate(job.workspace_id)
        refund = []
        if isinstance(workspace, Workspace):
            # str() first: a reloaded job's id is asyncpg's UUID type, which the codec does not encode
            workspace.refund(job.credits_charged, f"{job.job_type} job {job.status}", job_id=UUID(str(job.id)))
            refund = list(workspace.collect_events())
        if refund:
            try:
                return await store.append(store.registry.to_new_events(
                    [*pending, *refund], workspace_id=job.workspace_id, meta=meta), before=[_claim_refund(job)])
            except asyncpg.UniqueViolationError as exc:
                if exc.constraint_name != "credit_refunds_pkey":
                    raise
    return await store.append(store.registry.to_new_events(pending, workspace_id=job.workspace_id, meta=meta))


async def cancel_job(store: EventStore, workspace_id: UUID, job_id: UUID, meta: dict | None = None) -> tuple[Job, int]:
    """Cancel a pending or running job of the workspace (any environment); see ``cancel_job_in``."""
    return await cancel_job_in(store, workspace_id, job_id, environment=None, meta=meta)


# ---- the HTTP API's commands: a key acts inside its workspace and its environment's data space


async def _load_in(store: EventStore, stream_id: UUID, cls: type, workspace_id: UUID, environment: str | None,
                   what: str, shown_id=None):
    """Like ``_load``, and another environment's aggregate (sandbox vs production) is missing too."""
    agg = await _load(store, stream_id, cls, workspace_id, what, shown_id)
    if environment is not None and agg.environment != environment:
        raise _missing(what, stream_id, shown_id)
    return agg


async def revoke_key_in(store: EventStore, workspace_id: UUID, key_id: UUID, *, environment: str | None,
                        revoker_scopes: list[str] | None = None, meta: dict | None = None) -> tuple[ApiKey, int]:
    """Revoke a key of the workspace; ``environment`` limits it to that environment's keys (None: any),
    ``revoker_scopes`` binds it by the creating rule (``ApiKey.revoke``)."""

    async def attempt() -> tuple[ApiKey, int]:
        api_key = await _load_in(store, key_id, ApiKey, workspace_id, environment, "key")
        api_key.revoke(revoker_scopes=revoker_scopes)
        position = await store.append(store.registry.to_new_events(api_key.collect_events(),
                                                                   workspace_id=workspace_id, meta=meta))
        return api_key, position

    return await with_retries(attempt)


async def cancel_job_in(store: EventStore, workspace_id: UUID, job_id: UUID, *, environment: str | None,
                        meta: dict | None = None) -> tuple[Job, int]:
    """Cancel a pending or running job of this workspace and environment (None: any); finished:
    InvalidTransition. What the job was charged is refunded in the same append (``append_job``),
    whether or not a worker had claimed it."""

    async def attempt() -> tuple[Job, int]:
        job = await _load_in(store, job_id, Job, workspace_id, environment, "job")
        job.cancel()
        return job, await append_job(store, job, meta=meta)

    return await with_retries(attempt)


# ---- videos and their analysis


def _media_refusal(exc: Exception):
    """What ffprobe's refusal means to a client: not media at all, or not in an accepted container
    (415), or media it cannot read (400). The text is ``infra.media``'s, which holds no path."""
    from domain.videos import UnreadableMedia, UnsupportedMedia
    from infra.media import UnsupportedContainer

    text = str(exc)
    if isinstance(exc, UnsupportedContainer):
        found = {"format": exc.format_name} if exc.format_name else {}
        return UnsupportedMedia("the file is not in one of the accepted audio and video containers (MP4, MOV, "
                                "Matroska, WebM, AVI, FLV, MPEG-TS, MPEG-PS, ASF, MP3, WAV, Ogg, FLAC, AAC, AIFF)",
                                reason=text[-300:], **found)
    if "Invalid data found" in text or "not a media file" in text or "no audio or video stream" in text:
        return UnsupportedMedia("the file is not an audio or video file ffprobe can read", reason=text[-300:])
    return UnreadableMedia(f"the media file could not be read: {text[-300:]}", reason=text[-300:])


async def ingest_video(store: EventStore, storage, workspace_id: UUID, staged, *, environment: str, filename: str,
                       name: str | None = None, description: str | None = None, language: str = "fr",
                       media_id: int | None = None, captions: bytes | None = None,
                       meta: dict | None = None, max_duration_ms: int | None = None):
    """Probe a staged upload, measure it, move it (and its captions) into storage, append ``VideoUploaded``.

    The probe accepts only the whitelisted containers (``infra.media``); a declared duration over
    ``max_duration_ms`` is refused before the file is read further; then every packet is read
    (bounded by the maximum) to measure how long it really plays, which is the duration recorded,
    priced and analysed (``billable_duration_ms``). The stored file is named by the service, with
    the accepted container's extension; the client's file name only gives the default name.

    Every refusal (not media or not an accepted container: 415; unreadable, damaged, too long: 400;
    bad captions or media id: 400) and every failure after the files were moved deletes them:
    nothing half-stored remains. The staged file is gone when this returns or raises. Captions are
    parsed in a thread, and must fit the media's measured duration (``domain.captions``).
    """
    import asyncio
    from pathlib import Path, PurePosixPath

    from domain.base import DomainError
    from domain.captions import check_captions_fit
    from domain.media import media_stream_id
    from domain.videos import MAX_DURATION_MS, Video, billable_duration_ms, check_duration
    from infra import media as mediatools
    from infra.captions import CaptionError, read_caption_upload

    staged = Path(staged)
    stored_keys: list[str] = []
    try:
        limit_ms = max_duration_ms or MAX_DURATION_MS
        try:
            info = await asyncio.to_thread(mediatools.probe, staged)
            check_duration(info.duration_ms, limit_ms)  # a declared 400 h is refused unread
            measured_ms = await asyncio.to_thread(mediatools.measure_duration, staged, info.demuxer, limit_ms)
        except mediatools.MediaError as exc:
            raise _media_refusal(exc) from None
        duration_ms = billable_duration_ms(info.duration_ms, measured_ms)
        cues = 0
        captions_ext = None
        if captions is not None:
            try:  # parsing 5 MiB of captions takes seconds: never on the event loop
                segments, captions_ext = await asyncio.to_thread(read_caption_upload, captions)
            except CaptionError as exc:
                raise DomainError(f"the captions file is not WebVTT or SRT: {exc}", field="captions") from None
            if not segments:
                raise DomainError("the captions file holds no caption", field="captions")
            check_captions_fit(segments, duration_ms)  # the measured duration: a header can lie
            cues = len(segments)
        if media_id is not None:
            await _load_in(store, media_stream_id(media_id), Media, workspace_id, environment, "media", media_id)
        video_id = await store.next_id("video_id_seq")
        suffix = mediatools.CONTAINERS[info.demuxer]  # never the client's extension
        folder = f"videos/{workspace_id}/{video_id}"
        source_key = f"{folder}/source{suffix}"
        captions_key = f"{folder}/captions{captions_ext}" if captions_ext else None
        size = staged.stat().st_size
        await asyncio.to_thread(storage.commit, staged, source_key)
        stored_keys.append(source_key)
        if captions_key:
            await asyncio.to_thread(storage.write_bytes, captions_key, captions)
            stored_keys.append(captions_key)
        video = Video.upload(
            video_id=video_id, workspace_id=workspace_id, environment=environment,
            name=name or PurePosixPath(filename or "").stem or f"video {video_id}", storage_key=source_key,
            size_bytes=size, duration_ms=duration_ms, media_id=media_id, description=description,
            language=language, captions_key=captions_key, width=info.width, height=info.height,
            frame_rate=info.frame_rate, video_codec=info.video_codec, audio_codec=info.audio_codec,
            subtitle_tracks=sum(1 for t in info.subtitle_tracks if t.text_based), caption_cues=cues,
            demuxer=info.demuxer, max_duration_ms=limit_ms)
        position = await store.append(store.registry.to_new_events(video.collect_events(), workspace_id=workspace_id,
                                                                   meta=meta))
        stored_keys.clear()
        return video, position
    finally:
        staged.unlink(missing_ok=True)
        for key in stored_keys:
            storage.delete(key)


async def request_analysis(store: EventStore, workspace_id: UUID, video_id: int, *, environment: str,
                           options: dict, webhook_url: str | None = None, max_attempts: int = 3,
                           sandbox_quota: int | None = None, today=None, meta: dict | None = None):
    """Queue the analysis job of a video and charge its price in the same append (402 when short).

    Sandbox keys are never charged (``credits`` 0 in the job's params): their work is free and
    their failures refund nothing.
    """
    from domain.videos import ANALYZE_JOB, Video, analysis_price, video_stream_id

    video = await _load_in(store, video_stream_id(video_id), Video, workspace_id, environment, "video", video_id)
    price = 0 if environment == "sandbox" else analysis_price(video.duration_ms, options["quality_profile"])
    job, position = await queue_job(store, workspace_id, job_type=ANALYZE_JOB, environment=environment,
                                    params={**options, "video_id": video_id}, credits=price,
                                    charge_reason=f"analysis of video {video_id}", max_attempts=max_attempts,
                                    webhook_url=webhook_url, sandbox_quota=sandbox_quota, today=today, meta=meta)
    return job, video, price, position
