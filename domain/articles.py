"""Article: written from a video's Content Graph, renamed, attached to a media, regenerated, translated.

Ids are integers (spec), allocated from ``article_id_seq``. The stream id is derived from the job
that wrote the article (an analysis, a regeneration or a translation), so a retried job finds its
article instead of writing a second one. The creation event carries the article's structured
content (title, introduction, sections, key facts, FAQ, conclusion) and its Markdown: a few
kilobytes, the product itself.

How an article comes to be (``origin``):

- ``analysis``: the analysis job writes it (``ArticleGenerated``);
- ``regeneration``: rewritten from the same analysis in another style (``ArticleGenerated`` with
  ``source_article_id``): a new article, the previous one stays as it was;
- ``translation``: the structured article translated by the provider (``ArticleTranslated``,
  with ``source_article_id`` and ``source_language``): an article of its own.

Every article keeps ``graph_job_id``, the analysis whose Content Graph it was written from (its
scores and its graph route read that graph), and ``rubric_version``, the scoring rubric its scores
were computed with. Renaming (``ArticleRenamed``) and attaching to a media (``ArticleMediaAttached``)
change nothing else, and a change that changes nothing appends nothing.

``ArticleExport`` is one stream per article and export format: its one event, ``ExportReady``
(the ``export.ready`` webhook), records the first export of the article in that format.
"""

from __future__ import annotations

import re
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.analysis.scoring import RUBRIC_VERSION
from domain.base import Copied, DomainError, aggregate, deterministic_id, schema_change
from domain.exports import FORMATS

ORIGINS = ("analysis", "regeneration", "translation")
TRANSLATE_JOB = "translate_article"
REGENERATE_JOB = "regenerate_article"
MAX_CUSTOM_NAME = 500
# The addresses a person publishes an article and its media at, which its exports then link.
PUBLISHED_URL_FIELDS = ("page_url", "video_url", "embed_url", "thumbnail_url")
INT32_MAX = 2 ** 31 - 1
# Control characters have no place in a display name (the API refuses them first; this is the invariant).
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


# The name an article's stream is found by, from its integer id (``EventStore.named_stream``).
ARTICLE_NAME = "article:{article_id}"


def article_stream_for_job(job_id: UUID) -> UUID:
    return deterministic_id("article-of-job", job_id)


def export_stream(article_id: int, export_format: str) -> UUID:
    return deterministic_id("article-export", article_id, export_format)


schema_change("ArticleGenerated", 1, """Adds `origin` (`analysis` or `regeneration`), `source_article_id` (the
    article a regeneration rewrote), `graph_job_id` (the analysis whose content graph the article was written from)
    and `rubric_version` (the scoring rubric of its scores), when articles could also be regenerated. Every schema 1
    article was written by an analysis, from that analysis' own graph (`job_id`), and scored with the first
    rubric.""", added={"origin": "analysis", "source_article_id": None, "graph_job_id": Copied("job_id"),
                        "rubric_version": 1})


def check_custom_name(custom_name: str | None) -> str | None:
    if custom_name is None:
        return None
    name = custom_name.strip()
    if not name or len(name) > MAX_CUSTOM_NAME or _CONTROL_RE.search(name):
        raise DomainError(f"custom_name must be 1 to {MAX_CUSTOM_NAME} characters without control characters",
                          field="custom_name")
    return name


@aggregate("Article")
class Article(Aggregate):
    class Generated(Aggregate.Created):
        """The article written from a video's content graph (title, scores, structured content, Markdown): by an
        analysis, appended with the job's `JobCompleted` so an article exists exactly when its job completed, or by
        a regeneration of an earlier article (`source_article_id`).

        Read by the `articles` read model (GET /articles, GET /articles/{id}); `revival_candidates` (a video with an
        article is a candidate); the dispatcher (the `article.generated` webhook)."""

        published_as = "ArticleGenerated"
        stream_name = ARTICLE_NAME  # an article is found by its integer id on the write side
        schema_version = 2  # 2: origin, source_article_id, graph_job_id, rubric_version
        article_id: int
        workspace_id: UUID
        environment: str
        job_id: UUID
        video_id: int | None
        media_id: int | None
        title: str
        language: str
        writing_style: str
        aeo_score: int
        geo_score: int
        composite_score: float
        keywords_primary: list[str]
        has_transcript: bool
        content: dict[str, Any]
        markdown: str
        origin: str
        source_article_id: int | None
        graph_job_id: UUID | None
        rubric_version: int

    class Translated(Aggregate.Created):
        """A translation of an article, an article of its own linked to its source (the
        ``article.translated`` webhook). Written by the provider; scored by the rubric.

        Read by the `articles` read model (the translation is listed and read like any article); the
        dispatcher (the `article.translated` webhook)."""

        published_as = "ArticleTranslated"
        stream_name = ARTICLE_NAME
        article_id: int
        workspace_id: UUID
        environment: str
        job_id: UUID
        video_id: int | None
        media_id: int | None
        title: str
        language: str
        writing_style: str
        aeo_score: int
        geo_score: int
        composite_score: float
        keywords_primary: list[str]
        has_transcript: bool
        content: dict[str, Any]
        markdown: str
        source_article_id: int
        source_language: str
        graph_job_id: UUID | None
        rubric_version: int

        def apply(self, aggregate: Article) -> None:
            aggregate.origin = "translation"
            aggregate.source_language = self.source_language

    class Renamed(Aggregate.Event):
        """The display name replacing the generated title was set (or cleared: None), so lists and exports
        show the name a person chose while the generated title stays recorded.

        Read by the `articles` read model (`custom_name`, the listed title)."""

        published_as = "ArticleRenamed"
        custom_name: str | None
        environment: str

    class MediaAttached(Aggregate.Event):
        """The article was attached to a media of its workspace and environment, so an article written from one
        upload can be filed under the media a person manages it with.

        Read by the `articles` read model (`media_id`, the list's media filter)."""

        published_as = "ArticleMediaAttached"
        media_id: int
        environment: str

    class PublishedUrlsSet(Aggregate.Event):
        """Where the article and its media are published (each an https address, or None: the service's own), so
        that its exports link the page, the video (its file or its player) and the thumbnail a person published.

        Read by the `articles` read model (`published_urls`, read by the exports)."""

        published_as = "ArticlePublishedUrlsSet"
        published_urls: dict[str, Any]
        environment: str

    @staticmethod
    def create_id(job_id: UUID) -> UUID:
        return article_stream_for_job(job_id)

    @event(Generated)
    def __init__(self, article_id: int, workspace_id: UUID, environment: str, job_id: UUID, video_id: int | None,
                 media_id: int | None, title: str, language: str, writing_style: str, aeo_score: int,
                 geo_score: int, composite_score: float, keywords_primary: list[str], has_transcript: bool,
                 content: dict[str, Any], markdown: str, origin: str = "analysis", source_article_id: int | None = None,
                 graph_job_id: UUID | None = None, rubric_version: int = RUBRIC_VERSION):
        self.article_id = article_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.job_id = job_id
        self.video_id = video_id
        self.media_id = media_id
        self.title = title
        self.language = language
        self.writing_style = writing_style
        self.aeo_score = aeo_score
        self.geo_score = geo_score
        self.composite_score = composite_score
        self.keywords_primary = keywords_primary
        self.has_transcript = has_transcript
        self.content = content
        self.markdown = markdown
        self.origin = origin
        self.source_article_id = source_article_id
        self.graph_job_id = graph_job_id or job_id
        self.rubric_version = rubric_version
        self.source_language: str | None = None
        self.custom_name: str | None = None

    @classmethod
    def translation(cls, *, source: Article, article_id: int, job_id: UUID, language: str, title: str,
                    content: dict[str, Any], markdown: str, aeo_score: int, geo_score: int, composite_score: float,
                    keywords_primary: list[str]) -> Article:
        """The translated article of ``source``, in ``language``, created by the job ``job_id``."""
        if language == source.language:
            raise DomainError(f"the article is in {language} already", field="target_language")
        return cls._create(cls.Translated, id=article_stream_for_job(job_id), article_id=article_id,
                           workspace_id=source.workspace_id, environment=source.environment, job_id=job_id,
                           video_id=source.video_id, media_id=source.media_id, title=title, language=language,
                           writing_style=source.writing_style, aeo_score=aeo_score, geo_score=geo_score,
                           composite_score=composite_score, keywords_primary=keywords_primary,
                           has_transcript=source.has_transcript, content=content, markdown=markdown,
                           source_article_id=source.article_id, source_language=source.language,
                           graph_job_id=source.graph_job_id, rubric_version=RUBRIC_VERSION)

    def rename(self, custom_name: str | None) -> bool:
        """Set (or clear, with None) the display name; False, and nothing recorded, when unchanged."""
        name = check_custom_name(custom_name)
        if name == self.custom_name:
            return False
        self._renamed(custom_name=name, environment=self.environment)
        return True

    @event(Renamed)
    def _renamed(self, custom_name: str | None, environment: str) -> None:
        self.custom_name = custom_name

    def set_published_urls(self, urls: dict[str, str | None]) -> bool:
        """Replace the published addresses (``PUBLISHED_URL_FIELDS``; a field left out or None: the
        service's own); False, and nothing recorded, when unchanged."""
        unknown = set(urls) - set(PUBLISHED_URL_FIELDS)
        if unknown:
            raise DomainError(f"published_urls has no field {sorted(unknown)[0]!r}", field="published_urls")
        kept = {name: urls[name] for name in PUBLISHED_URL_FIELDS if urls.get(name)}
        if kept == getattr(self, "published_urls", {}):
            return False
        self._published_urls_set(published_urls=kept, environment=self.environment)
        return True

    @event(PublishedUrlsSet)
    def _published_urls_set(self, published_urls: dict[str, Any], environment: str) -> None:
        self.published_urls = published_urls

    def attach_media(self, media_id: int) -> bool:
        """Attach to a media (the caller checked that it is one of the workspace's and environment's);
        False, and nothing recorded, when it is attached to it already."""
        if isinstance(media_id, bool) or not isinstance(media_id, int) or not 1 <= media_id <= INT32_MAX:
            raise DomainError("media_id must be an integer from 1", field="media_id")
        if media_id == self.media_id:
            return False
        self._media_attached(media_id=media_id, environment=self.environment)
        return True

    @event(MediaAttached)
    def _media_attached(self, media_id: int, environment: str) -> None:
        self.media_id = media_id


@aggregate("ArticleExport")
class ArticleExport(Aggregate):
    """The first export of an article in one format (one stream per article and format)."""

    class Ready(Aggregate.Created):
        """The article was exported in ``format`` for the first time (the ``export.ready`` webhook):
        the export is at ``path`` (GET, scope exports:read), ``etag`` and ``bytes`` describe that
        first rendition.

        Read by the `article_exports` read model (a format already exported is not announced again); the
        dispatcher (the `export.ready` webhook)."""

        published_as = "ExportReady"
        article_id: int
        workspace_id: UUID
        environment: str
        format: str
        content_type: str
        etag: str
        bytes: int
        path: str

    @staticmethod
    def create_id(article_id: int, format: str) -> UUID:  # noqa: A002  (the event's field name)
        return export_stream(article_id, format)

    @event(Ready)
    def __init__(self, article_id: int, workspace_id: UUID, environment: str, format: str,  # noqa: A002
                 content_type: str, etag: str, bytes: int, path: str):  # noqa: A002
        self.article_id = article_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.format = format
        self.etag = etag

    @classmethod
    def record(cls, *, article_id: int, workspace_id: UUID, environment: str, export_format: str,
               content_type: str, etag: str, size: int, path: str) -> ArticleExport:
        if export_format not in FORMATS:
            raise DomainError(f"format must be one of {', '.join(FORMATS)}", field="format")
        return cls(article_id=article_id, workspace_id=workspace_id, environment=environment, format=export_format,
                   content_type=content_type, etag=etag, bytes=size, path=path)
