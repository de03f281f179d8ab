"""Article: written from a video's Content Graph by the analysis job (``ArticleGenerated``).

Ids are integers (spec), allocated from ``article_id_seq``. The stream id is derived from the job
that wrote it, so a retried job finds its article instead of writing a second one. The event
carries the article's structured content (title, introduction, sections, key facts, FAQ,
conclusion) and its Markdown: a few kilobytes, the product itself.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import aggregate, deterministic_id


def article_stream_for_job(job_id: UUID) -> UUID:
    return deterministic_id("article-of-job", job_id)


@aggregate("Article")
class Article(Aggregate):
    class Generated(Aggregate.Created):
        """The article an analysis wrote from a video's content graph (title, scores, structured content, Markdown),
        appended with the job's `JobCompleted`, so an article exists exactly when its job completed.

        Read by the `articles` read model (GET /articles, GET /articles/{id}); the dispatcher (the `article.generated`
        webhook)."""

        published_as = "ArticleGenerated"
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
        content: dict
        markdown: str

    @staticmethod
    def create_id(job_id: UUID) -> UUID:
        return article_stream_for_job(job_id)

    @event(Generated)
    def __init__(self, article_id: int, workspace_id: UUID, environment: str, job_id: UUID, video_id: int | None,
                 media_id: int | None, title: str, language: str, writing_style: str, aeo_score: int,
                 geo_score: int, composite_score: float, keywords_primary: list[str], has_transcript: bool,
                 content: dict, markdown: str):
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
