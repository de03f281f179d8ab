"""GET /articles and GET /articles/{id}: the articles the analysis job wrote (the other article
routes, scores, graph, export, translate, regenerate, belong to another issue).

Detail adds ``_links`` (paths with the ``/v1`` prefix) and, as an extension, the article itself:
``content`` (title, introduction, sections, key facts, FAQ, conclusion) and ``markdown``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.api.base import Call, Route, integer_id, not_found

_ITEM = """id, title, custom_name, language, writing_style, aeo_score, geo_score, media_id, video_id, created_at"""
_LIST = f"""SELECT {_ITEM} FROM articles WHERE workspace_id = $1 AND environment = $2
             ORDER BY id DESC LIMIT $3 OFFSET $4"""
_ONE = f"""SELECT {_ITEM}, keywords_primary, has_transcript, composite_score, content, markdown,
                  EXISTS (SELECT 1 FROM content_graphs g JOIN videos v ON v.stream_id = g.video_stream_id
                           WHERE v.id = articles.video_id) AS has_content_graph
             FROM articles WHERE id = $1 AND workspace_id = $2 AND environment = $3"""


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


class ArticleDetail(ArticleItem):
    keywords_primary: list[str]
    has_content_graph: bool
    has_transcript_intelligence: bool
    has_transcript: bool
    composite_score: float
    content: dict[str, Any]
    markdown: str


class ArticleResponse(BaseModel):
    data: ArticleDetail
    links: Links = Field(alias="_links")


def _item(r) -> dict:
    return {"id": r["id"], "title": r["custom_name"] or r["title"], "original_title": r["title"],
            "custom_name": r["custom_name"], "language": r["language"], "writing_style": r["writing_style"],
            "aeo_score": r["aeo_score"], "geo_score": r["geo_score"], "media_id": r["media_id"],
            "video_id": r["video_id"], "created_at": r["created_at"]}


def _article_id(call: Call) -> int:
    return integer_id(call.path("id"), "article")


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
                     "content": r["content"], "markdown": r["markdown"]},
            "_links": {"scores": f"{base}/scores", "graph": f"{base}/graph", "export_html": f"{base}/export/html"}}


ROUTES = [
    Route("GET", "/articles", list_articles, scope="articles:read", tag="Articles", query=ArticlesQuery,
          response=ArticleList, summary="The caller's environment's articles, newest first (limit 1-100, offset)"),
    Route("GET", "/articles/{id}", get_article, scope="articles:read", tag="Articles", response=ArticleResponse,
          errors=(404,), summary="One article with _links (scores, graph, export_html) and its content"),
]
