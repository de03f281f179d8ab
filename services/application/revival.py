"""Revival: move a candidate (a person's decision) and complete its descriptions.

A candidate is found through the read model (its id is derived from its video; the read model
knows which video), then everything is decided on the write side: the video's stream (its
description, its latest analysis and article, the workspace and environment it belongs to), the
candidate's own stream (its decisions), the article's stream (its content). Another workspace's
or environment's candidate, or one whose video is no candidate (no media, no article), is 404 like
a missing one.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain import revival, revival_completion
from domain.articles import Article, article_stream_for_job
from domain.base import NotFound
from domain.pricing import description_price
from domain.revival import Candidate, DescriptionCompletion, VideositeExperiment
from domain.videos import Video, video_stream_id
from services.application.context import CHARGE_RETRIES, CONFLICT_RETRIES, Context, with_retries
from services.application.idempotency import Claim, Outcome
from services.application.results import Completion


class CompletionTimeout(Exception):
    """The drafts were not computed within the time bound; nothing was written."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the drafts took longer than {seconds:g} s")
        self.seconds = seconds


async def _drafts(ctx: Context, timeout_s: float, *args: Any) -> revival_completion.Completion:
    """``revival_completion.complete_descriptions(*args)`` in a drafting thread, within ``timeout_s``.

    The drafts are computed in threads of their own (the application's ``drafting``, two at most
    per process, ``bootstrap``): a completion is pure CPU work (about 2 ms for a 60-minute video;
    every step linear in its texts), but the description is the client's text, and no text may hold
    the event loop, which answers every other request of every workspace. A completion over its time
    bound is answered at once; its thread cannot be stopped and finishes on its own, and with two
    threads such leftovers cannot take the process's CPU, while completions waiting for a thread
    past their bound are dropped before they start. The price: at high concurrency the loop waits a
    little for the GIL back from a drafting thread (it ran on the loop for that reason,
    docs/benchmarks.md), paid so that no client's text can stall the API."""
    complete = revival_completion.complete_descriptions
    running = asyncio.get_running_loop().run_in_executor(ctx.app.drafting, complete, *args)
    try:
        return await asyncio.wait_for(running, timeout_s)
    except TimeoutError:
        raise CompletionTimeout(timeout_s) from None


# A candidate's id is derived from its video's (``revival.candidate_id``), so the video it names
# never changes: once the read model has said which (the ``candidates`` port), it is kept in the
# application's memory and the next request skips that query. Ownership and eligibility are still
# decided on the video's stream each time.
VIDEO_OF_CANDIDATE = "revival.video_of_candidate"
KEPT_CANDIDATE_VIDEOS = 100_000  # about 10 MB; the whole map is dropped when it is full
# The article stream each video named when last read here: a completion reads it in the same query
# as the video and the candidate, and reads it again on its own only when the video has moved to
# another article since (a new analysis).
ARTICLE_OF_VIDEO = "revival.article_of_video"


def _remember(kept: dict[Any, Any], key: Any, value: Any) -> None:
    """``kept[key] = value`` in a bounded map: the whole map is dropped when it is full."""
    if len(kept) >= KEPT_CANDIDATE_VIDEOS:
        kept.clear()
    kept[key] = value


def _missing(candidate_id: UUID) -> NotFound:
    return NotFound("candidate not found", id=str(candidate_id))


@dataclass
class CandidateState:
    """A candidate as the write side sees it: its video, its decisions so far (None: no decision
    yet, so no stream) and the basis a new decision is made on."""

    video: Video
    candidate: Candidate | None
    article: Article | None = None  # the video's article, when asked for

    @property
    def basis(self) -> revival.Basis:
        return (self.video.last_analysis_job_id, self.video.description_revision)

    def stream(self) -> Candidate:
        """The candidate's aggregate, opened with this decision when it has no stream yet."""
        if self.candidate is None:
            assert self.video.media_id is not None  # load_candidate keeps only a video of a media
            self.candidate = Candidate.open(video_id=self.video.video_id, workspace_id=self.video.workspace_id,
                                            environment=self.video.environment, media_id=self.video.media_id)
        return self.candidate


@dataclass(frozen=True)
class MoveCandidate:
    """A person's move of a candidate to ``status``."""

    workspace_id: UUID
    environment: str
    candidate_id: UUID
    status: str


@dataclass(frozen=True)
class CompleteDescriptions:
    """Complete a candidate's descriptions for ``platforms`` and select it; ``claim`` is the
    idempotency key's hold (the answer is stored with the events)."""

    workspace_id: UUID
    environment: str
    candidate_id: UUID
    media_id: int
    article_id: int | None
    platforms: Sequence[str]
    claim: Claim


async def load_candidate(ctx: Context, workspace_id: UUID, environment: str, candidate_id: UUID,
                         *, with_article: bool = False) -> CandidateState:
    """The candidate, its video and, ``with_article``, the video's article (``CandidateState.article``)."""
    store = ctx.store
    video_of_candidate = ctx.app.kept.setdefault(VIDEO_OF_CANDIDATE, {})
    article_of_video = ctx.app.kept.setdefault(ARTICLE_OF_VIDEO, {})
    video_id = video_of_candidate.get(candidate_id)
    if video_id is None:
        assert ctx.app.candidates is not None, "a revival command needs the candidates' port"
        video_id = await ctx.app.candidates.video_of(candidate_id, workspace_id, environment)
        if video_id is None:
            raise _missing(candidate_id)
        _remember(video_of_candidate, candidate_id, video_id)
    # In one query. The video and the article are only read (the graph and the article are large
    # and the same on every completion): shared read-only views, not copies. The candidate is
    # decided on: this command's own copy.
    article_guess = article_of_video.get(video_id) if with_article else None
    video, candidate, *guessed = await store.fetch_latest(
        video_stream_id(video_id), candidate_id, *([article_guess] if article_guess else []))
    if (not isinstance(video, Video) or video.workspace_id != workspace_id or video.environment != environment
            or video.media_id is None or video.article_job_id is None or video.graph is None):
        raise _missing(candidate_id)
    state = CandidateState(video, copy.deepcopy(candidate) if isinstance(candidate, Candidate) else None)
    if with_article:
        article_stream = article_stream_for_job(video.article_job_id)
        if article_stream == article_guess:
            article = guessed[0]
        else:
            [article] = await store.fetch_latest(article_stream)
            _remember(article_of_video, video_id, article_stream)
        if not isinstance(article, Article):
            raise _missing(candidate_id)
        state.article = article
    return state


async def move_candidate(command: MoveCandidate, ctx: Context) -> int | None:
    """A person's move (``Candidate.move``); the position of ``CandidateStatusChanged``, or None
    when the candidate has that status already (nothing is recorded). 409 for an illegal move."""
    c = command

    async def attempt() -> int | None:
        state = await load_candidate(ctx, c.workspace_id, c.environment, c.candidate_id)
        candidate = state.stream()
        if not candidate.move(c.status, state.basis):
            return None
        return await ctx.save(candidate, workspace_id=c.workspace_id)

    return await with_retries(attempt)


async def complete_descriptions(command: CompleteDescriptions, ctx: Context) -> Completion:
    """Complete the candidate's descriptions for ``platforms`` and select it, in one append:
    ``DescriptionsCompleted`` (the drafts), ``CandidateSelected``, the video-site experiment record
    when a video-site platform is asked for, the charge (none for sandbox keys) and the idempotency
    key's answer (``claim``). The candidate must match ``media_id`` (and ``article_id`` when given),
    else 404; a dismissed candidate is 409. The position returned is that of ``CandidateSelected``
    (what the candidates read model shows), None when the candidate was selected already. Drafts
    not computed within the application's ``completion_timeout_s`` raise ``CompletionTimeout`` before
    anything is appended."""
    workspace_id, environment, candidate_id = command.workspace_id, command.environment, command.candidate_id
    media_id, article_id, platforms, claim = command.media_id, command.article_id, command.platforms, command.claim
    timeout_s, now = ctx.app.completion_timeout_s, ctx.now()
    price = 0 if environment == "sandbox" else description_price(len(platforms))

    async def attempt() -> Completion:
        state = await load_candidate(ctx, workspace_id, environment, candidate_id, with_article=True)
        video, article = state.video, state.article
        # with its article, load_candidate keeps only a video whose article (id and job) is known
        assert article is not None and video.article_id is not None
        if video.media_id != media_id or (article_id is not None and article_id != video.article_id):
            raise _missing(candidate_id)
        completion_id = ctx.new_id()
        candidate = state.stream()
        selected = candidate.select(completion_id, platforms, state.basis)
        completion = await _drafts(ctx, timeout_s, video.description, video.graph, article.content,
                                   article.language, platforms)
        experiment = VideositeExperiment.draft(completion_id=completion_id, workspace_id=workspace_id,
                                               environment=environment, candidate=candidate_id,
                                               video_id=video.video_id, platforms=platforms)
        experiment_id = experiment.id if experiment is not None else None
        record = DescriptionCompletion(
            completion_id=completion_id, workspace_id=workspace_id, environment=environment,
            candidate_id=candidate_id, video_id=video.video_id, media_id=media_id, article_id=video.article_id,
            platforms=list(platforms), drafts=completion.drafts, warnings=completion.warnings,
            videosite_experiment_id=experiment_id, credits=price, analysis_job_id=state.basis[0],
            description_revision=state.basis[1])
        result = {"request_id": str(completion_id), "media_id": media_id, "article_id": video.article_id,
                  "candidate_id": str(candidate_id), "drafts": completion.drafts, "warnings": completion.warnings,
                  "videosite_experiment_id": str(experiment_id) if experiment_id else None, "reused": False,
                  "created_at": now.isoformat(), "credits_charged": price}
        outcome = Outcome(200, {"data": result})
        aggregates: list[Any] = [candidate, record, *([experiment] if experiment is not None else [])]
        if not price:
            position = await ctx.save(*aggregates, workspace_id=workspace_id, effects=[claim.records(outcome)])
        else:
            reason = f"descriptions of candidate {candidate_id} ({len(platforms)} platforms)"
            position = await ctx.save_charged(workspace_id, price, reason, *aggregates,
                                              effects=[claim.records(outcome)])
        return Completion(outcome, position if selected else None)

    return await with_retries(attempt, attempts=CHARGE_RETRIES if price else CONFLICT_RETRIES)
