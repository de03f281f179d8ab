"""The article operations: list, detail, rename and attach, scores, graph, translate and its
translations, regenerate (docs/articles.md); the exports are ``services.api.article_exports``.

Reads come from the read models (``articles``, ``analysis_graphs``, ``article_translations``,
``article_exports``, ``jobs``); commands go through ``services.application.articles``, which finds an
article from its id on the write side. Another workspace's or environment's article answers 404
exactly like a missing one, on every route.

Detail adds ``_links`` (paths with the ``/v1`` prefix) and, as an extension, the article itself:
``content`` (title, introduction, sections, key facts, FAQ, conclusion) and ``markdown``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from domain.analysis.scoring import AEO_GOOD, GEO_GOOD, composite, score_article
from domain.articles import INT32_MAX, MAX_CUSTOM_NAME
from domain.translation import TRANSLATION_LANGUAGES
from domain.videos import WRITING_STYLES
from projections import articles_queries as queries
from services.api import article_exports
from services.api.base import ApiError, Call, Route, integer_id
from services.api.errors import found
from services.api.models import Language, Name
from services.api.published_urls import PublishedUrls
from services.application import articles as commands

# ------------------------------------------------------------------------------------ models


class ArticlesQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100, description="page size, 1 to 100")
    offset: int = Field(default=0, ge=0, le=1_000_000_000, description="articles to skip, newest first")


class ArticleItem(BaseModel):
    id: int
    title: str
    original_title: str
    custom_name: str | None
    language: str
    writing_style: str
    aeo_score: int
    geo_score: int
    media_id: int | None
    video_id: int | None
    created_at: datetime
    origin: str = Field(description="extension: analysis, regeneration or translation")
    source_article_id: int | None = Field(description="extension: the article regenerated or translated from")


class Pagination(BaseModel):
    limit: int
    offset: int
    has_more: bool


class ArticleList(BaseModel):
    data: list[ArticleItem]
    pagination: Pagination


class Links(BaseModel):
    scores: str
    graph: str
    export_html: str
    translations: str


class ArticleDetail(ArticleItem):
    keywords_primary: list[str]
    has_content_graph: bool
    has_transcript_intelligence: bool
    has_transcript: bool
    composite_score: float
    content: dict[str, Any]
    markdown: str
    source_language: str | None = Field(description="extension: a translation's source language")
    rubric_version: int = Field(description="extension: the scoring rubric the scores were computed with")
    updated_at: datetime = Field(description="extension: the last rename or attachment (else created_at)")


class ArticleResponse(BaseModel):
    data: ArticleDetail
    links: Links = Field(alias="_links")


class UpdateArticle(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    custom_name: Name(MAX_CUSTOM_NAME) | None = Field(
        default=None, description="the display name replacing the generated title; null removes it")
    media_id: int = Field(default=None, ge=1, le=INT32_MAX, description="a media of the caller's environment")
    published_urls: PublishedUrls | None = Field(
        default=None, description="where the article and its media are published, which its exports link (the "
                                  "fields given replace every stored one; null removes them all: the service's "
                                  "own addresses)")


class Updated(BaseModel):
    id: int
    updated: bool


class UpdatedResponse(BaseModel):
    data: Updated


class GeoSummary(BaseModel):
    main_entities: list[str]
    main_topics: list[str]
    user_intents_answered: list[str]
    key_facts: list[str]


class Verdicts(BaseModel):
    geo_well_structured_for_citation: bool = Field(description=f"geo_score >= {GEO_GOOD}")
    aeo_answers_common_queries_directly: bool = Field(description=f"aeo_score >= {AEO_GOOD}")


class Scores(BaseModel):
    article_id: int
    aeo_score: float
    geo_score: float
    composite_score: float = Field(description="0.7 * geo_score + 0.3 * aeo_score, one decimal")
    geo_summary: GeoSummary
    verdicts: Verdicts
    rubric: dict[str, Any] | None = Field(description=(
        "extension: every criterion with its weight, value, points and evidence, computed now from the stored "
        "article and its graph by the current rubric; null when the article's graph is not stored"))


class ScoresResponse(BaseModel):
    data: Scores


class GraphResponse(BaseModel):
    data: dict[str, Any]


class TranslateArticle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_language: Literal[TRANSLATION_LANGUAGES] = Field(  # type: ignore[valid-type]
        description="two-letter code: " + ", ".join(TRANSLATION_LANGUAGES) + "; not the article's own language")
    webhook_url: str | None = Field(default=None, min_length=8, max_length=2048, pattern=r"^https://[^\s\u0000]+$")


class TranslateResult(BaseModel):
    job_id: UUID
    status: str
    type: str
    target_language: str
    credits_charged: int = Field(description="extension: credits charged for this translation (0 for sandbox keys)")


class TranslateResponse(BaseModel):
    data: TranslateResult


class TranslationsQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100, description="page size, 1 to 100")
    offset: int = Field(default=0, ge=0, le=1_000_000_000, description="translations to skip, newest first")


class Translation(BaseModel):
    article_id: int | None = Field(description="the translated article, once the job has completed")
    language: str
    status: str = Field(description="pending, running, completed, failed or cancelled (the job's)")
    job_id: UUID
    title: str | None = Field(description="the translated article's title, once written")
    error_message: str | None
    requested_at: datetime
    updated_at: datetime | None
    completed_at: datetime | None = Field(description="when the translated article was written")


class TranslationList(BaseModel):
    data: list[Translation]
    pagination: Pagination


class RegenerateArticle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    writing_style: Literal[WRITING_STYLES] = "auto"  # type: ignore[valid-type]
    language: Language(description="default: the article's language") | None = None
    webhook_url: str | None = Field(default=None, min_length=8, max_length=2048, pattern=r"^https://[^\s\u0000]+$")


class ComputeBilling(BaseModel):
    enabled: bool = Field(description="production keys on plans without included compute; never sandbox keys")
    estimated_credits: int = Field(description="the credits charged for this regeneration (0 when not enabled)")


class RegenerateResult(BaseModel):
    job_id: UUID
    status: str
    type: str
    compute_billing: ComputeBilling


class RegenerateResponse(BaseModel):
    data: RegenerateResult


# ------------------------------------------------------------------------------------ helpers


def _item(r) -> dict:
    return {"id": r["id"], "title": r["custom_name"] or r["title"], "original_title": r["title"],
            "custom_name": r["custom_name"], "language": r["language"], "writing_style": r["writing_style"],
            "aeo_score": r["aeo_score"], "geo_score": r["geo_score"], "media_id": r["media_id"],
            "video_id": r["video_id"], "created_at": r["created_at"], "origin": r["origin"],
            "source_article_id": r["source_article_id"]}


def _article_id(call: Call) -> int:
    return integer_id(call.path("id"), "article")


# ------------------------------------------------------------------------------------ handlers


async def list_articles(call: Call) -> dict:
    q: ArticlesQuery = call.query
    rows = await queries.page(call.pool, call.workspace_id, call.environment, q.limit + 1, q.offset)
    return {"data": [_item(r) for r in rows[:q.limit]],
            "pagination": {"limit": q.limit, "offset": q.offset, "has_more": len(rows) > q.limit}}


async def get_article(call: Call) -> dict:
    article_id = _article_id(call)
    r = found(await queries.one(call.pool, article_id, call.workspace_id, call.environment), "article", article_id)
    base = f"/v1/articles/{article_id}"
    return {"data": {**_item(r), "keywords_primary": r["keywords_primary"],
                     "has_content_graph": r["has_content_graph"],
                     "has_transcript_intelligence": r["has_content_graph"] and r["has_transcript"],
                     "has_transcript": r["has_transcript"], "composite_score": r["composite_score"],
                     "content": r["content"], "markdown": r["markdown"], "source_language": r["source_language"],
                     "rubric_version": r["rubric_version"], "updated_at": r["updated_at"]},
            "_links": {"scores": f"{base}/scores", "graph": f"{base}/graph", "export_html": f"{base}/export/html",
                       "translations": f"{base}/translations"}}


async def update_article(call: Call) -> dict:
    body: UpdateArticle = call.body
    article_id = _article_id(call)
    given = body.model_fields_set
    if not given:
        raise ApiError(400, "validation_error", "give custom_name, media_id, published_urls or several",
                       {"fields": [{"field": "body", "rule": "missing", "message": "at least one of custom_name, "
                                    "media_id and published_urls is required"}]})
    published = None
    if "published_urls" in given:
        published = body.published_urls.model_dump(exclude_none=True) if body.published_urls else {}
    updated, position = await call.context.handle(commands.UpdateArticle(
        call.workspace_id, call.environment, article_id,
        custom_name=body.custom_name if "custom_name" in given else commands.UNCHANGED,
        media_id=body.media_id if "media_id" in given else None, published_urls=published))
    if position is not None:
        await call.read_your_writes("articles", position)
    return {"data": {"id": article_id, "updated": updated}}


async def get_article_scores(call: Call) -> dict:
    article_id = _article_id(call)
    r = found(await queries.scores(call.pool, article_id, call.workspace_id, call.environment), "article",
              article_id)
    graph = {k: v for k, v in (r["graph"] or {}).items() if v is not None} if r["has_graph"] else {}
    current = await asyncio.to_thread(score_article, r["content"], graph)  # tens of ms for an hour's article
    geo, aeo = r["geo_score"], r["aeo_score"]
    rubric = None
    if r["has_graph"]:
        rubric = {**current.to_dict()["rubric"], "geo_score": current.geo_score, "aeo_score": current.aeo_score,
                  "composite_score": current.composite_score, "scored_with_version": r["rubric_version"],
                  "matches_recorded": (current.geo_score, current.aeo_score) == (geo, aeo)}
    return {"data": {"article_id": article_id, "aeo_score": aeo, "geo_score": geo,
                     "composite_score": composite(geo, aeo), "geo_summary": current.geo_summary,
                     "verdicts": {"geo_well_structured_for_citation": geo >= GEO_GOOD,
                                  "aeo_answers_common_queries_directly": aeo >= AEO_GOOD},
                     "rubric": rubric}}


async def get_article_graph(call: Call) -> dict:
    article_id = _article_id(call)
    r = found(await queries.graph(call.pool, article_id, call.workspace_id, call.environment), "article",
              article_id)
    if r["graph"] is None:
        video = r["video_id"]
        how = (f"run POST /v1/videos/{video}/analyze and wait for the job to complete" if video is not None
               else "analyze its video with POST /v1/videos/{id}/analyze")
        raise ApiError(404, "analysis_not_found", f"article {article_id} has no content graph: {how}",
                       {"id": str(article_id), **({"video_id": video} if video is not None else {})})
    return {"data": r["graph"]}


async def translate_article(call: Call) -> dict:
    body: TranslateArticle = call.body
    job, price, position = await call.context.handle(commands.RequestTranslation(
        call.workspace_id, call.environment, _article_id(call), target_language=body.target_language,
        webhook_url=body.webhook_url))
    await call.read_your_writes("jobs", position)
    await call.read_your_writes("article_translations", position)
    return {"data": {"job_id": job.id, "status": job.status, "type": job.job_type,
                     "target_language": body.target_language, "credits_charged": price}}


async def list_article_translations(call: Call) -> dict:
    article_id = _article_id(call)
    q: TranslationsQuery = call.query
    found(await queries.exists(call.pool, article_id, call.workspace_id, call.environment), "article", article_id)
    rows = await queries.translations(call.pool, call.workspace_id, call.environment, article_id, q.limit + 1,
                                      q.offset)
    return {"data": [{"article_id": r["article_id"], "language": r["target_language"],
                      "status": r["status"] or "pending", "job_id": r["job_id"], "title": r["title"],
                      "error_message": r["error_message"], "requested_at": r["requested_at"],
                      "updated_at": r["updated_at"], "completed_at": r["article_created_at"]}
                     for r in rows[:q.limit]],
            "pagination": {"limit": q.limit, "offset": q.offset, "has_more": len(rows) > q.limit}}


async def regenerate_article(call: Call) -> dict:
    body: RegenerateArticle = call.body
    job, billing, position = await call.context.handle(commands.RequestRegeneration(
        call.workspace_id, call.environment, _article_id(call), writing_style=body.writing_style,
        language=body.language, webhook_url=body.webhook_url))
    await call.read_your_writes("jobs", position)
    return {"data": {"job_id": job.id, "status": job.status, "type": job.job_type,
                     "compute_billing": {"enabled": billing.enabled, "estimated_credits": billing.estimated_credits}}}


ROUTES = [
    Route("GET", "/articles", list_articles, scope="articles:read", tag="Articles", query=ArticlesQuery,
          response=ArticleList, summary="The caller's environment's articles, newest first (limit 1-100, offset)"),
    Route("GET", "/articles/{id}", get_article, scope="articles:read", tag="Articles", response=ArticleResponse,
          errors=(404,), summary="One article with _links (scores, graph, export_html) and its content"),
    Route("PUT", "/articles/{id}", update_article, scope="articles:create", tag="Articles", body=UpdateArticle,
          response=UpdatedResponse, writes=True, errors=(404,),
          summary="Rename (custom_name; null removes it) and/or attach to a media (media_id); updated is false, "
                  "and nothing is recorded, when nothing changes"),
    Route("GET", "/articles/{id}/scores", get_article_scores, scope="articles:read", tag="Articles",
          response=ScoresResponse, errors=(404,),
          summary="AEO, GEO and composite scores, the GEO summary, the two verdicts and the rubric with its evidence"),
    Route("GET", "/articles/{id}/graph", get_article_graph, scope="articles:read", tag="Articles",
          response=GraphResponse, errors=(404,),
          summary="The Content Graph of the analysis the article was written from; 404 analysis_not_found without one"),
    *article_exports.ROUTES,
    Route("POST", "/articles/{id}/translate", translate_article, scope="articles:create", tag="Articles", status=202,
          body=TranslateArticle, response=TranslateResponse, writes=True, errors=(402, 404, 429, 503),
          summary="Queue the translation by the language model provider (503 provider_not_configured without "
                  "one); credits charged at once (402)"),
    Route("GET", "/articles/{id}/translations", list_article_translations, scope="articles:read", tag="Articles",
          query=TranslationsQuery, response=TranslationList, errors=(404,),
          summary="The translations asked of the article, newest first, with their job's status"),
    Route("POST", "/articles/{id}/regenerate", regenerate_article, scope="articles:create", tag="Articles",
          status=202, body=RegenerateArticle, response=RegenerateResponse, writes=True, errors=(402, 404, 429, 503),
          summary="Queue a new article written from the same analysis in another style; compute billing charged "
                  "at once when enabled (402 insufficient_credits)"),
]
