"""An article's export: ``GET /articles/{id}/export/{format}`` in each format of ``domain/exports.py``
(docs/articles.md), the process's cache of rendered exports, and how a first export is recorded.

The route reads the ``articles`` read model and the video it came from (``projections.articles_queries``),
renders the export (pure, ``domain.exports.render``) and answers with its ETag. A GET writes nothing:
the first export of a format is reported in the call's telemetry record and recorded as
``ExportReady`` by the exports watch (docs/architecture.md, "A GET writes nothing").
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import quote

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from domain.export_source import ExportSource, VideoInfo
from domain.exports import EXPORT_FORMATS, FORMATS, ExportFormat, render
from infra.file_urls import public_base_url, public_link
from infra.media.posters import jpeg_size, poster_key
from infra.storage import Storage, storage_for
from projections import articles_queries as queries
from services.api.base import SETTINGS, TELEMETRY, ApiError, Call, Route, integer_id
from services.api.errors import found
from services.api.files import content_type_of
from services.api.published_urls import printable, published_url
from services.application import articles as commands

log = logging.getLogger("vaeo.api.articles")

# The response header naming the kind of each URL an export shows: page (request, article or export: its
# own address), video and thumbnail (request, article, public_link or none).
URL_KINDS_HEADER = "X-Export-Url-Kinds"
EXPORT_CACHE_BYTES = 32 * 1024 * 1024  # rendered exports kept per API process (a 60-minute video's: 60 KB)
JPEG_HEAD_BYTES = 65_536
# The exports a GET served that the article_exports read model did not know of, in its telemetry
# record: the exports watch records each as ExportReady (a GET writes nothing itself).
FIRST_EXPORTS = "first_exports"


class ExportQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    download: int = Field(default=0, ge=0, le=1, description="1: Content-Disposition attachment with a file name")
    url: str | None = published_url("the page the article is published on (canonical link, og:url, JSON-LD "
                                     "url); default: its stored page_url, else this export's own URL")
    video_url: str | None = published_url("the video's file; default: its stored video_url, else a public link")
    embed_url: str | None = published_url("a player page of the video; default: its stored embed_url")
    thumbnail_url: str | None = published_url("the video's thumbnail; default: its stored thumbnail_url, else a "
                                               "public link")


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


def _article_id(call: Call) -> int:
    return integer_id(call.path("id"), "article")


def _chosen(q: ExportQuery, stored: dict, name: str, query_name: str | None = None) -> tuple[str | None, str]:
    """An address the caller gave for this export (``request``), else the one stored on the article
    (``article``) when the address rule takes it (``published_urls``); (None, "") when neither."""
    given = getattr(q, query_name or name)
    if given:
        return given, "request"
    if printable(stored.get(name)):  # one stored before the rule was what it is is not printed
        return stored[name], "article"
    return None, ""


@dataclass(frozen=True)
class _VideoFiles:
    """Where a video's files are stored and its public links' generation."""

    storage_key: str
    thumbnail_key: str | None
    public_links_generation: int


async def _video_files(call: Call, r) -> _VideoFiles | None:
    """The article's video's files, from the videos read model; from the video's stream for a row
    written before the read model had them (``projections.videos``), until it is rebuilt."""
    if r["video_storage_key"] is not None:
        return _VideoFiles(r["video_storage_key"], r["video_thumbnail_key"], r["video_links_generation"])
    [stream] = await call.store.fetch_latest(r["video_stream_id"])  # read only
    if stream is None:
        return None
    return _VideoFiles(stream.storage_key, stream.thumbnail_key, stream.public_links_generation)


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
        stream = await _video_files(call, r)
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
    current = found(await queries.export_version(call.pool, article_id, call.workspace_id, call.environment,
                                                 export_format), "article", article_id)
    given = (q.url, q.video_url, q.embed_url, q.thumbnail_url)
    rendered = call.app[EXPORTS].get(_export_key(call, article_id, current, export_format, given))
    if rendered is None:
        r = found(await queries.export_source(call.pool, article_id, call.workspace_id, call.environment),
                  "article", article_id)
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


# The export route, spliced into the article routes (``services.api.articles.ROUTES``) at its place.
ROUTES = [
    Route("GET", "/articles/{id}/export/{format}", export_article, scope="exports:read", tag="Articles",
          query=ExportQuery, errors=(404,),
          summary=f"The article as {', '.join(FORMATS[:-1])} or {FORMATS[-1]}; ETag and "
                  "If-None-Match (304); ?download=1 for an attachment"),
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
