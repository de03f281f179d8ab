"""Revival: the candidates (GET, and PATCH a person's decision) and description completion.

``GET /production/revival/candidates`` reads the candidates read model, best score first;
``PATCH /production/revival/candidates/{id}`` (an extension) moves a candidate to ``eligible``,
``reviewing`` or ``dismissed`` (409 ``invalid_state`` for a move the state machine refuses);
``POST /production/descriptions/complete`` writes per-platform drafts with Stripe's idempotency
semantics on the body's ``idempotency_key``. No route publishes to, or changes anything on, a video
site or any other platform: drafts are returned and recorded, never sent. See docs/revival.md.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from domain import revival
from domain.analysis.text import fold
from domain.platforms import PLATFORM_IDS
from infra.file_urls import signed_url
from projections import revival_candidates_queries as queries
from services.api.base import HEX_ID, SETTINGS, ApiError, Call, Route, not_found
from services.api.errors import found
from services.api.models import NAME_PATTERN, TEXT_PATTERN
from services.application import revival as commands

INT32_MAX = 2_147_483_647
MAX_DURATION_S = 12 * 3600  # the longest media accepted (docs/videos.md)
COMPLETE_OPERATION = "complete_descriptions"  # the idempotency keys' operation
Status = Literal["eligible", "reviewing", "selected", "dismissed", "stale"]
PlatformId = Literal[PLATFORM_IDS]  # type: ignore[valid-type]
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")  # a JSON number

class CandidatesQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    media_id: int | None = Field(default=None, ge=1, le=INT32_MAX, description="only this media's candidates")
    status: Status | None = Field(default=None, description="only candidates in this status")
    min_score: float | None = Field(default=None, ge=0, le=100, description="a score of at least this (0-100)")
    min_duration_seconds: int | None = Field(default=None, ge=0, le=MAX_DURATION_S,
                                             description="videos lasting at least this")
    max_duration_seconds: int | None = Field(default=None, ge=1, le=MAX_DURATION_S,
                                             description="videos lasting at most this")
    query: str | None = Field(default=None, max_length=160, pattern=TEXT_PATTERN,
                              description="words in the title or description, ignoring case and accents")
    limit: int = Field(default=30, ge=1, le=100, description="at most this many candidates, 1 to 100")

    @field_validator("min_score", mode="before")
    @classmethod
    def _decimal(cls, value: object) -> object:
        """A number written as JSON writes one (no ``nan``, ``inf``, ``+5``, ``1_0`` or spaces, which
        a lenient float parser would take)."""
        if isinstance(value, str) and not _NUMBER.fullmatch(value):
            raise PydanticCustomError("float_parsing", "Input should be a number written with ASCII digits")
        return value


class CandidateRecord(BaseModel):
    id: UUID
    media_id: int
    article_id: int
    video_id: int = Field(description="extension: the candidate's video")
    title: str
    description: str
    thumbnail_url: str | None = Field(description="a signed URL of the video's thumbnail (valid 24 h); null when "
                                                  "no picture could be made of the media")
    published_at: datetime
    duration_seconds: int
    score: float = Field(ge=0, le=100)
    status: Status
    eligible: bool
    reasons: list[str]
    updated_at: datetime


class CandidateList(BaseModel):
    data: list[CandidateRecord]


class CandidateResponse(BaseModel):
    data: CandidateRecord


class CandidateUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Status = Field(description="eligible, reviewing or dismissed (a person's moves); selected comes from "
                                       "completing the descriptions and stale from a change of the video: 409")


class CompleteDescriptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    media_id: int = Field(ge=1, le=INT32_MAX)
    article_id: int | None = Field(default=None, ge=1, le=INT32_MAX)
    candidate_id: UUID
    platforms: list[PlatformId] = Field(min_length=1, max_length=10, json_schema_extra={"uniqueItems": True})
    idempotency_key: str = Field(min_length=16, max_length=160, pattern=NAME_PATTERN)

    @field_validator("platforms")
    @classmethod
    def _unique(cls, platforms: list[str]) -> list[str]:
        if len(set(platforms)) != len(platforms):
            raise PydanticCustomError("unique_items", "platforms must be unique")
        return platforms


class Sections(BaseModel):
    description: str
    chapters: str
    geo_summary: str


class Presence(BaseModel):
    description: bool
    chapters: bool
    geo_summary: bool


class Draft(BaseModel):
    platform_id: PlatformId
    display_name: str
    original_description: str
    sections: Sections
    section_presence_before: Presence
    completed_description: str
    measured_length: int
    max_length: int
    length_unit: Literal["utf8_bytes", "characters", "utf16_code_units", "weighted_characters"]
    was_truncated: bool


class CompletionResult(BaseModel):
    request_id: str
    media_id: int
    article_id: int
    candidate_id: UUID
    drafts: list[Draft]
    warnings: list[str]
    videosite_experiment_id: str | None = Field(description="the supervised experiment record comparing the "
                                                            "original with the video-site drafts (status draft, "
                                                            "never run by the service); null without a video-site "
                                                            "platform")
    reused: bool
    created_at: datetime
    credits_charged: int = Field(description="extension: credits charged (0 for sandbox keys and replays are not "
                                             "charged again)")


class CompletionResponse(BaseModel):
    data: CompletionResult


def _record(call: Call, r) -> dict:
    presence = {"description": r["has_prose"], "chapters": r["has_chapters"], "geo_summary": r["has_summary"]}
    facts = revival.AnalysisFacts(r["claims"], r["answered"], r["chapter_problem"])
    eligible, reasons = revival.assess(presence, r["prose_chars"], facts)
    thumbnail = signed_url(call.app[SETTINGS], call.workspace_id, r["thumbnail_key"]) if r["thumbnail_key"] else None
    return {"id": r["candidate_id"], "media_id": r["media_id"], "article_id": r["article_id"],
            "video_id": r["video_id"], "title": r["title"], "description": r["description"],
            "thumbnail_url": thumbnail, "published_at": r["published_at"],
            "duration_seconds": round(r["duration_ms"] / 1000), "score": round(r["score"], 2), "status": r["status"],
            "eligible": eligible, "reasons": reasons, "updated_at": r["updated_at"]}


async def list_revival_candidates(call: Call) -> dict:
    q: CandidatesQuery = call.query
    rows = await queries.page(call.pool, call.workspace_id, call.environment, limit=q.limit, media_id=q.media_id,
                              status=q.status, min_score=q.min_score, min_duration_s=q.min_duration_seconds,
                              max_duration_s=q.max_duration_seconds, text=fold(q.query) if q.query else "")
    return {"data": [_record(call, r) for r in rows]}


def _candidate_id(call: Call) -> UUID:
    try:
        return UUID(call.path("id"))
    except ValueError:
        raise not_found("candidate", call.path("id")) from None


async def _read_candidate(call: Call, candidate: UUID) -> dict:
    row = found(await queries.one(call.pool, candidate, call.workspace_id, call.environment), "candidate", candidate)
    return _record(call, row)


async def update_revival_candidate(call: Call) -> dict:
    body: CandidateUpdate = call.body
    candidate = _candidate_id(call)
    position = await call.context.handle(commands.MoveCandidate(call.workspace_id, call.environment, candidate,
                                                                body.status))
    if position is not None:
        await call.read_your_writes("revival_candidates", position)
    return {"data": await _read_candidate(call, candidate)}


async def complete_descriptions(call: Call) -> dict:
    body: CompleteDescriptions = call.body
    request = body.model_dump(mode="json", exclude={"idempotency_key"})
    written: list[int | None] = []

    async def command(claim):
        outcome, position = await call.context.handle(commands.CompleteDescriptions(
            call.workspace_id, call.environment, candidate_id=body.candidate_id, media_id=body.media_id,
            article_id=body.article_id, platforms=body.platforms, claim=claim))
        written.append(position)
        return outcome

    try:
        outcome = await call.idempotency.run(call.workspace_id, COMPLETE_OPERATION, body.idempotency_key, request,
                                             command, api_key_id=call.principal.key_id,
                                             environment=call.environment)
    except commands.CompletionTimeout as exc:  # the key was released: the same request may be sent again
        raise ApiError(503, "completion_timeout", f"the drafts were not computed within {exc.seconds:g} s; "
                       "nothing was written or charged, retry later", {"timeout_s": exc.seconds}) from None
    if written and written[0] is not None:  # the candidate became selected: the list shows it next
        await call.read_your_writes("revival_candidates", written[0])
    return outcome.body


ROUTES = [
    Route("GET", "/production/revival/candidates", list_revival_candidates, scope="revival:read", tag="Revival",
          query=CandidatesQuery, response=CandidateList,
          summary="Videos whose descriptions can be completed (a media, a completed analysis and an article), "
                  "best score first; filters media_id, status, min_score, durations, query; limit 1-100"),
    Route("PATCH", "/production/revival/candidates/{id}", update_revival_candidate, scope="revival:create",
          tag="Revival", body=CandidateUpdate, response=CandidateResponse, writes=True, errors=(404, 409),
          patterns=(("id", HEX_ID),),
          summary="Extension: a person moves a candidate to eligible, reviewing or dismissed (409 invalid_state "
                  "for a move its state machine refuses)"),
    Route("POST", "/production/descriptions/complete", complete_descriptions, scope="revival:create", tag="Revival",
          body=CompleteDescriptions, response=CompletionResponse, writes=True, errors=(402, 404, 409),
          idempotent=False,  # its key is the body's idempotency_key
          summary="Per-platform completed descriptions (description, chapters, GEO summary) within each "
                  "platform's limit in its own unit; idempotent on idempotency_key; publishes nothing"),
]
