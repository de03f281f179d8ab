"""The article operations: list, detail, rename and attach, scores, graph, the six exports,
translate and its translations, regenerate (docs/articles.md).

Reads come from the read models (``articles``, ``analysis_graphs``, ``article_translations``,
``article_exports``, ``jobs``); commands go through ``services.application.articles``, which finds an
article from its id on the write side. Another workspace's or environment's article answers 404
exactly like a missing one, on every route.

Detail adds ``_links`` (paths with the ``/v1`` prefix) and, as an extension, the article itself:
``content`` (title, introduction, sections, key facts, FAQ, conclusion) and ``markdown``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import unicodedata
from collections import OrderedDict
from datetime import datetime
from typing import Any, Literal
from urllib.parse import quote
from uuid import UUID

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from domain.analysis.scoring import AEO_GOOD, GEO_GOOD, composite, score_article
from domain.articles import INT32_MAX, MAX_CUSTOM_NAME
from domain.export_source import ExportSource, VideoInfo
from domain.exports import EXPORT_FORMATS, FORMATS, ExportFormat, render
from domain.translation import TRANSLATION_LANGUAGES
from domain.videos import WRITING_STYLES
from infra.file_urls import public_base_url, public_link
from infra.media.posters import jpeg_size, poster_key
from infra.storage import Storage, storage_for
from services.api.base import SETTINGS, TELEMETRY, ApiError, Call, Route, integer_id, not_found
from services.api.files import content_type_of
from services.api.models import Language, Name
from services.api.published_urls import PublishedUrls, printable, published_url
from services.application import articles as commands

log = logging.getLogger("vaeo.api.articles")

_ITEM = """a.id, a.title, a.custom_name, a.language, a.writing_style, a.aeo_score, a.geo_score, a.media_id,
           a.video_id, a.created_at, a.origin, a.source_article_id"""
_LIST = f"""SELECT {_ITEM} FROM articles a WHERE a.workspace_id = $1 AND a.environment = $2
             ORDER BY a.id DESC LIMIT $3 OFFSET $4"""
_ONE = f"""SELECT {_ITEM}, a.keywords_primary, a.has_transcript, a.composite_score, a.content, a.markdown,
                  a.source_language, a.rubric_version, coalesce(a.updated_at, a.created_at) AS updated_at,
                  EXISTS (SELECT 1 FROM analysis_graphs g
                           WHERE g.job_id = coalesce(a.graph_job_id, a.job_id)) AS has_content_graph
             FROM articles a WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
_EXISTS = "SELECT 1 FROM articles WHERE id = $1 AND workspace_id = $2 AND environment = $3"
_GRAPH = """SELECT a.video_id, g.graph FROM articles a
              LEFT JOIN analysis_graphs g ON g.job_id = coalesce(a.graph_job_id, a.job_id)
             WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
# What the rubric reads of a graph (the speakers' turns and the media elements are not read).
_SCORES = """SELECT a.aeo_score, a.geo_score, a.content, a.rubric_version, g.job_id IS NOT NULL AS has_graph,
                    jsonb_build_object('claims', g.graph->'claims', 'entities', g.graph->'entities',
                                       'topics', g.graph->'topics', 'searchIntents', g.graph->'searchIntents',
                                       'chapters', g.graph->'chapters',
                                       'speakers', jsonb_build_object('diarised', g.graph->'speakers'->'diarised'))
                      AS graph
               FROM articles a LEFT JOIN analysis_graphs g ON g.job_id = coalesce(a.graph_job_id, a.job_id)
              WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
# What an export is a function of (with the format, the canonical URL and the hour): the article's
# version and its video's (a changed description or name moves it), read first, so that a rendered
# export this process has already made is answered without the article's content.
_EXPORT_VERSION = """SELECT a.version, v.version AS video_version, a.title, a.custom_name,
                            EXISTS (SELECT 1 FROM article_exports e WHERE e.article_id = a.id AND e.format = $4)
                              AS exported
                       FROM articles a LEFT JOIN videos v ON v.id = a.video_id AND v.workspace_id = a.workspace_id
                      WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
_EXPORT = """SELECT a.id, a.version, a.title, a.custom_name, a.language, a.writing_style, a.content, a.keywords_primary,
                    a.aeo_score, a.geo_score, a.composite_score, a.created_at,
                    coalesce(a.updated_at, a.created_at) AS updated_at, a.origin, a.source_article_id, a.video_id,
                    v.name AS video_name, v.description AS video_description, v.duration_ms, v.width, v.height,
                    v.size_bytes, v.created_at AS uploaded_at, v.stream_id AS video_stream_id,
                    v.version AS video_version, a.published_urls
               FROM articles a LEFT JOIN videos v ON v.id = a.video_id AND v.workspace_id = a.workspace_id
              WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
_TRANSLATIONS = """
SELECT t.job_id, t.target_language, t.requested_at, j.status, j.updated_at, j.finished_at, j.error_message,
       a.id AS article_id, coalesce(a.custom_name, a.title) AS title, a.created_at AS article_created_at
  FROM article_translations t
  LEFT JOIN jobs j ON j.id = t.job_id
  LEFT JOIN articles a ON a.job_id = t.job_id AND a.workspace_id = t.workspace_id
 WHERE t.workspace_id = $1 AND t.environment = $2 AND t.source_article_id = $3
 ORDER BY t.requested_at DESC, t.job_id
 LIMIT $4 OFFSET $5"""

# The response header naming the kind of each URL an export shows: page (request, article or export: its
# own address), video and thumbnail (request, article, public_link or none).
URL_KINDS_HEADER = "X-Export-Url-Kinds"
EXPORT_CACHE_BYTES = 32 * 1024 * 1024  # rendered exports kept per API process (a 60-minute video's: 60 KB)
JPEG_HEAD_BYTES = 65_536
# The exports a GET served that the article_exports read model did not know of, in its telemetry
# record: the exports watch records each as ExportReady (a GET writes nothing itself).
FIRST_EXPORTS = "first_exports"


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


class ExportQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    download: int = Field(default=0, ge=0, le=1, description="1: Content-Disposition attachment with a file name")
    url: str | None = published_url("the page the article is published on (canonical link, og:url, JSON-LD "
                                     "url); default: its stored page_url, else this export's own URL")
    video_url: str | None = published_url("the video's file; default: its stored video_url, else a public link")
    embed_url: str | None = published_url("a player page of the video; default: its stored embed_url")
    thumbnail_url: str | None = published_url("the video's thumbnail; default: its stored thumbnail_url, else a "
                                               "public link")


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


class ExportCache:
    """The exports this API process rendered, by what an export is a function of: the workspace,
    the article and its version (a rename, an attachment or new published addresses make a new
    one), its video's version (a new description or name, revoked public links), the format and the
    addresses the request gave (the poster is made once and never changes; an export whose poster
    could not be made is not kept). The article's language and content are in its version. An
    export read again is its stored bytes, ETag and URL kinds, not a second rendering (it shows no
    URL that expires, so it holds until one of those changes). Least recently used out first, at
    most ``max_bytes`` of bodies."""

    def __init__(self, max_bytes: int = EXPORT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, tuple[bytes, str, str]] = OrderedDict()
        self._bytes = 0

    def get(self, key: tuple) -> tuple[bytes, str, str] | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: tuple, body: bytes, etag: str, url_kinds: str = "") -> None:
        if len(body) > self.max_bytes or key in self._items:
            return
        self._items[key] = (body, etag, url_kinds)
        self._bytes += len(body)
        while self._bytes > self.max_bytes:
            _, (old, _, _) = self._items.popitem(last=False)
            self._bytes -= len(old)


EXPORTS = web.AppKey("exports", ExportCache)


def _item(r) -> dict:
    return {"id": r["id"], "title": r["custom_name"] or r["title"], "original_title": r["title"],
            "custom_name": r["custom_name"], "language": r["language"], "writing_style": r["writing_style"],
            "aeo_score": r["aeo_score"], "geo_score": r["geo_score"], "media_id": r["media_id"],
            "video_id": r["video_id"], "created_at": r["created_at"], "origin": r["origin"],
            "source_article_id": r["source_article_id"]}


def _article_id(call: Call) -> int:
    return integer_id(call.path("id"), "article")


def _poster(storage: Storage, key: str) -> tuple[bool, tuple[int, int] | None]:
    """Whether the poster exists, and its size (a poster whose header tells none is still shown).
    It is made on the write side (``infra.media.posters``), never here."""
    if not storage.exists(key):
        return False, None
    return True, jpeg_size(storage.read_range(key, 0, JPEG_HEAD_BYTES))


def _file_name(title: str, article_id: int, export_format: str) -> tuple[str, str]:
    """(ASCII name, UTF-8 name) of a downloaded export: the title's words and the article's id."""
    words = re.sub(r"[^\w]+", "-", title.lower(), flags=re.UNICODE).strip("-")[:60].strip("-") or "article"
    ascii_words = re.sub(r"[^a-z0-9]+", "-", unicodedata.normalize("NFKD", words).encode("ascii", "ignore")
                         .decode()).strip("-") or "article"
    ext = EXPORT_FORMATS[export_format].extension
    return f"{ascii_words}-{article_id}.{ext}", f"{words}-{article_id}.{ext}"


def _export_key(call: Call, article_id: int, row, export_format: str, given: tuple) -> tuple:
    """Everything an export is a function of, as the cache's key (``ExportCache``): ``row`` has the
    article's version (its stored addresses among it) and its video's (its public links' generation
    among it; None without a video), ``given`` the addresses of the request."""
    return (call.workspace_id, article_id, row["version"], row["video_version"], export_format, given)


def _lacks_poster(source: ExportSource, export_format: str) -> bool:
    """An export that shows the poster, of a stored video whose poster could not be made."""
    video = source.video
    return (EXPORT_FORMATS[export_format].shows_poster and video is not None and video.content_url is not None
            and video.thumbnail_url is None)


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = [t.strip() for t in if_none_match.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag for t in tags)


# ------------------------------------------------------------------------------------ handlers


async def list_articles(call: Call) -> dict:
    q: ArticlesQuery = call.query
    async with call.pool.acquire() as conn:
        rows = await conn.fetch(_LIST, call.workspace_id, call.environment, q.limit + 1, q.offset)
    return {"data": [_item(r) for r in rows[:q.limit]],
            "pagination": {"limit": q.limit, "offset": q.offset, "has_more": len(rows) > q.limit}}


async def get_article(call: Call) -> dict:
    article_id = _article_id(call)
    async with call.pool.acquire() as conn:
        r = await conn.fetchrow(_ONE, article_id, call.workspace_id, call.environment)
    if r is None:
        raise not_found("article", article_id)
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
    async with call.pool.acquire() as conn:
        r = await conn.fetchrow(_SCORES, article_id, call.workspace_id, call.environment)
    if r is None:
        raise not_found("article", article_id)
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
    async with call.pool.acquire() as conn:
        r = await conn.fetchrow(_GRAPH, article_id, call.workspace_id, call.environment)
    if r is None:
        raise not_found("article", article_id)
    if r["graph"] is None:
        video = r["video_id"]
        how = (f"run POST /v1/videos/{video}/analyze and wait for the job to complete" if video is not None
               else "analyze its video with POST /v1/videos/{id}/analyze")
        raise ApiError(404, "analysis_not_found", f"article {article_id} has no content graph: {how}",
                       {"id": str(article_id), **({"video_id": video} if video is not None else {})})
    return {"data": r["graph"]}


def _chosen(q: ExportQuery, stored: dict, name: str, query_name: str | None = None) -> tuple[str | None, str]:
    """An address the caller gave for this export (``request``), else the one stored on the article
    (``article``) when the address rule takes it (``published_urls``); (None, "") when neither."""
    given = getattr(q, query_name or name)
    if given:
        return given, "request"
    if printable(stored.get(name)):  # one stored before the rule was what it is is not printed
        return stored[name], "article"
    return None, ""


async def _export_source(call: Call, r, export_format: str, q: ExportQuery) -> tuple[ExportSource, dict[str, str]]:
    """What the export renders, and the kind of each of its URLs (``URL_KINDS``): the article row,
    its page's address, the video it came from with the addresses of its file or player and of its
    poster (given, stored on the article, else the service's public links, which do not expire)."""
    settings = call.app[SETTINGS]
    stored = r["published_urls"] or {}
    page, page_kind = _chosen(q, stored, "page_url", "url")
    kinds = {"page": page_kind or "export"}
    url = page or f"{public_base_url(settings)}/v1/articles/{r['id']}/export/html"
    video = None
    if r["video_id"] is not None and r["video_stream_id"] is not None:
        [stream] = await call.store.fetch_latest(r["video_stream_id"])  # the read model has no storage key
        content_url, kinds["video"] = _chosen(q, stored, "video_url")
        embed_url, embed_kind = _chosen(q, stored, "embed_url")
        thumbnail_url, kinds["thumbnail"] = _chosen(q, stored, "thumbnail_url")
        size = None
        if stream is not None and not (content_url or embed_url):
            content_url, kinds["video"] = public_link(settings, call.workspace_id, stream.storage_key, r["video_id"],
                                                      stream.public_links_generation), "public_link"
        kinds["video"] = kinds["video"] or embed_kind or "none"
        if stream is not None and not thumbnail_url and EXPORT_FORMATS[export_format].shows_poster:
            key = poster_key(call.workspace_id, r["video_id"], stream.thumbnail_key)
            try:
                shown, size = await asyncio.to_thread(_poster, storage_for(settings), key)
            except OSError as exc:  # the export stands without its poster
                log.warning("article %s: no thumbnail for video %s: %s", r["id"], r["video_id"], exc)
                shown = False
            if shown:
                thumbnail_url, kinds["thumbnail"] = public_link(settings, call.workspace_id, key, r["video_id"],
                                                                stream.public_links_generation), "public_link"
        kinds["thumbnail"] = kinds["thumbnail"] or "none"
        video = VideoInfo(video_id=r["video_id"], name=r["video_name"] or "", description=r["video_description"],
                          duration_ms=r["duration_ms"], uploaded_at=r["uploaded_at"], content_url=content_url,
                          content_type=content_type_of(stream.storage_key) if stream else "video/mp4",
                          width=r["width"], height=r["height"], size_bytes=r["size_bytes"],
                          thumbnail_url=thumbnail_url, thumbnail_width=size[0] if size else None,
                          thumbnail_height=size[1] if size else None, embed_url=embed_url)
    return ExportSource(article_id=r["id"], title=r["custom_name"] or r["title"], original_title=r["title"],
                        language=r["language"], writing_style=r["writing_style"], content=r["content"],
                        keywords=list(r["keywords_primary"] or []), created_at=r["created_at"],
                        updated_at=r["updated_at"], url=url,
                        scores={"aeo_score": r["aeo_score"], "geo_score": r["geo_score"],
                                "composite_score": r["composite_score"]},
                        origin=r["origin"], source_article_id=r["source_article_id"], video=video), kinds


def requested_format(name: str) -> ExportFormat:
    """The export format a path names; 400 naming the formats there are."""
    found = EXPORT_FORMATS.get(name)
    if found is None:
        message = f"unknown export format {name[:40]!r}: one of {', '.join(FORMATS)}"
        raise ApiError(400, "validation_error", message,
                       {"fields": [{"field": "path.format", "rule": "literal_error", "message": message}],
                        "allowed": list(FORMATS)})
    return found


async def export_article(call: Call) -> web.Response:
    article_id = _article_id(call)
    export_format = call.path("format")
    fmt = requested_format(export_format)
    q: ExportQuery = call.query
    async with call.pool.acquire() as conn:
        current = await conn.fetchrow(_EXPORT_VERSION, article_id, call.workspace_id, call.environment, export_format)
        if current is None:
            raise not_found("article", article_id)
        given = (q.url, q.video_url, q.embed_url, q.thumbnail_url)
        rendered = call.app[EXPORTS].get(_export_key(call, article_id, current, export_format, given))
        if rendered is None:
            r = await conn.fetchrow(_EXPORT, article_id, call.workspace_id, call.environment)
    if rendered is None:
        source, kinds = await _export_source(call, r, export_format, q)
        body = render(export_format, source)
        rendered = (body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"',
                    ", ".join(f"{name}={kind}" for name, kind in kinds.items()))
        if not _lacks_poster(source, export_format):  # a poster that could not be made is tried again
            # keyed on the versions rendered, which may be newer than the ones read first
            call.app[EXPORTS].put(_export_key(call, article_id, r, export_format, given), *rendered)
    body, etag, url_kinds = rendered
    path = f"/v1/articles/{article_id}/export/{export_format}"
    if call.method == "GET" and not current["exported"]:  # reported, recorded on the write side
        call.request.setdefault(TELEMETRY, {}).setdefault(FIRST_EXPORTS, []).append(
            {"article_id": article_id, "format": export_format, "content_type": fmt.content_type, "etag": etag,
             "bytes": len(body), "path": path, "environment": call.environment})
    ascii_name, utf8_name = _file_name(current["custom_name"] or current["title"], article_id, export_format)
    disposition = "attachment" if q.download else "inline"
    headers = {"ETag": etag, "Cache-Control": "private, no-cache", "X-Content-Type-Options": "nosniff",
               URL_KINDS_HEADER: url_kinds,
               "Content-Disposition": f"{disposition}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(utf8_name)}"}
    if fmt.sandboxed:
        headers["Content-Security-Policy"] = "sandbox"  # a stored page runs no script with the API's origin
    if _matches(call.header("If-None-Match"), etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=body, headers={**headers, "Content-Type": fmt.content_type})


async def record_first_exports(call: Call) -> None:
    """Record now, as ``ExportReady``, the first exports an operation of a write request served (an
    assistant's export inside its POST): the request's own write, tied to it as a GET's would be.
    A GET's are left in its telemetry record for the exports watch (``services.processes.exports_watch``)."""
    for export in call.request.get(TELEMETRY, {}).pop(FIRST_EXPORTS, []):
        await call.context.handle(commands.RecordExport(
            call.workspace_id, export["environment"], article_id=export["article_id"],
            export_format=export["format"], content_type=export["content_type"], etag=export["etag"],
            size=export["bytes"], path=export["path"]))


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
    async with call.pool.acquire() as conn:
        if await conn.fetchval(_EXISTS, article_id, call.workspace_id, call.environment) is None:
            raise not_found("article", article_id)
        rows = await conn.fetch(_TRANSLATIONS, call.workspace_id, call.environment, article_id, q.limit + 1,
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
    Route("GET", "/articles/{id}/export/{format}", export_article, scope="exports:read", tag="Articles",
          query=ExportQuery, errors=(404,),
          summary=f"The article as {', '.join(FORMATS[:-1])} or {FORMATS[-1]}; ETag and "
                  "If-None-Match (304); ?download=1 for an attachment"),
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


def describe_exports(document: dict) -> dict:
    """Describe the export in the generated document: its formats (the path parameter's enum)
    and their content types, the ETag, Content-Disposition and the 304 (the route table knows JSON
    answers only)."""
    op = document.get("paths", {}).get("/articles/{id}/export/{format}", {}).get("get")
    if op is None or "content" in op["responses"]["200"]:  # the document is cached: described once
        return document
    for param in op.get("parameters", []):
        if param["in"] == "path" and param["name"] == "format":
            param["schema"] = {"type": "string", "enum": list(FORMATS)}
            param["description"] = "an unknown format answers 400 naming the formats"
    op.setdefault("parameters", []).append(
        {"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "the ETag of a copy the client has: 304 while the export is the same"})
    headers = {**op["responses"]["200"].get("headers", {}), "ETag": {"schema": {"type": "string"}},
               "Content-Disposition": {"schema": {"type": "string"}}}
    content: dict[str, dict] = {}
    for f in EXPORT_FORMATS.values():  # the text formats are strings; the JSON ones documents
        kind = "string" if f.content_type.startswith("text/") else "object"
        described = content.setdefault(f.content_type, {"schema": {"type": kind, "description": f.described_as}})
        if f.described_as not in described["schema"]["description"]:  # a content type two formats share
            described["schema"]["description"] += f"; {f.described_as}"
    op["responses"]["200"] = {"description": "the export itself (no data envelope)", "headers": headers,
                              "content": content}
    op["responses"]["304"] = {"description": "Not modified: the client's copy (If-None-Match) is current",
                              "headers": {"ETag": {"schema": {"type": "string"}}}}
    return document
