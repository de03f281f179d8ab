"""Articles: rename and attach to a media, queue a translation or a regeneration with its charge,
record the first export of a format.

An article is found from the integer id a client sends through the events that create articles
(an index of migration 011), never through the read model: a client may act on an article the
moment the job that wrote it has completed, before the articles read model has applied it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.articles import ARTICLE_NAME, REGENERATE_JOB, TRANSLATE_JOB, Article, ArticleExport
from domain.base import DomainError, NotFound
from domain.media import Media, media_stream_id
from domain.pricing import compute_billing_enabled, regeneration_price, translation_price
from domain.translation import material_words, translation_material
from domain.videos import Video, video_stream_id
from domain.workspaces import Workspace
from infra.eventstore import ConcurrencyError
from services.application.context import Context, with_retries
from services.application.jobs import QueueJob, queue_job
from services.application.results import PricedJob, RegenerationQueued, Updated

# The partial index's own predicate, written out: the planner uses the index only when it sees it.
UNCHANGED = object()  # custom_name not given (None clears it)


class ProviderNotConfigured(DomainError):
    """The operation needs the language model provider, and this deployment has none."""

    code = "provider_not_configured"
    status = 503


def invalid_field(field: str, rule: str, message: str) -> DomainError:
    """A 400 shaped like the API's own validation errors (``details.fields``)."""
    error = DomainError(message, fields=[{"field": field, "rule": rule, "message": message}])
    error.code = "validation_error"
    return error


def provider_needed(what: str) -> ProviderNotConfigured:
    return ProviderNotConfigured(
        f"{what} needs the OpenAI-compatible language model provider, and none is configured "
        "(VAEO_LLM_BASE_URL and VAEO_LLM_MODEL); nothing was queued nor charged",
        dependency="language model provider", settings=["VAEO_LLM_BASE_URL", "VAEO_LLM_MODEL"])


@dataclass(frozen=True)
class UpdateArticle:
    """Rename (``custom_name``; None clears it, ``UNCHANGED`` leaves it) and/or attach to ``media_id``."""

    workspace_id: UUID
    environment: str
    article_id: int
    custom_name: str | None | object = UNCHANGED
    media_id: int | None = None
    published_urls: dict[str, Any] | None = None  # None: unchanged; a dict replaces them all


@dataclass(frozen=True)
class RequestTranslation:
    workspace_id: UUID
    environment: str
    article_id: int
    target_language: str
    webhook_url: str | None = None


@dataclass(frozen=True)
class RequestRegeneration:
    workspace_id: UUID
    environment: str
    article_id: int
    writing_style: str
    language: str | None = None
    webhook_url: str | None = None


@dataclass(frozen=True)
class RecordExport:
    """The first export of an article in a format, stored at ``path``."""

    workspace_id: UUID
    environment: str
    article_id: int
    export_format: str
    content_type: str
    etag: str
    size: int
    path: str


async def load_article(ctx: Context, workspace_id: UUID, environment: str, article_id: int) -> Article:
    """The article ``article_id`` of this workspace and environment; 404 otherwise (another
    workspace's or environment's article answers exactly like a missing one)."""
    stream_id = await ctx.store.named_stream(ARTICLE_NAME.format(article_id=article_id))
    if stream_id is None:
        raise NotFound("article not found", id=str(article_id))
    article: Article = await ctx.load_in(stream_id, Article, workspace_id, environment, "article", article_id)
    return article


async def update_article(command: UpdateArticle, ctx: Context) -> Updated:
    """Rename and/or attach to a media of the workspace and environment (else 404 naming it).
    ``(updated, position)``: nothing is appended, and ``updated`` is False, when the article is
    already so."""
    c = command
    if c.media_id is not None:
        try:
            await ctx.load_in(media_stream_id(c.media_id), Media, c.workspace_id, c.environment, "media", c.media_id)
        except NotFound:
            raise NotFound(f"media {c.media_id} not found", id=str(c.media_id), field="media_id") from None

    async def attempt() -> Updated:
        article = await load_article(ctx, c.workspace_id, c.environment, c.article_id)
        changed = False
        if c.custom_name is not UNCHANGED:
            changed = article.rename(c.custom_name)  # type: ignore[arg-type]
        if c.media_id is not None:
            changed = article.attach_media(c.media_id) or changed
        if c.published_urls is not None:
            changed = article.set_published_urls(c.published_urls) or changed
        if not changed:
            return Updated(False, None)
        return Updated(True, await ctx.save(article, workspace_id=c.workspace_id))

    return await with_retries(attempt)


async def request_translation(command: RequestTranslation, ctx: Context) -> PricedJob:
    """Queue the translation of an article into ``target_language`` and charge it in the same
    append (402 when short). Refused first, with nothing written: a missing article (404), its own
    language (400), no provider configured (503 ``provider_not_configured``: the service never
    pretends to translate). Sandbox keys are never charged. Returns (job, price, position)."""
    workspace_id, environment, article_id = command.workspace_id, command.environment, command.article_id
    target_language = command.target_language
    article = await load_article(ctx, workspace_id, environment, article_id)
    if target_language == article.language:
        raise invalid_field("body.target_language", "not_the_article_language",
                            f"the article is in {article.language} already; translate it into another language")
    if not ctx.app.provider_configured:
        raise provider_needed("translating an article")
    words = material_words(translation_material(article.content, article.keywords_primary))
    price = 0 if environment == "sandbox" else translation_price(words)
    params = {"article_id": article_id, "article_stream_id": str(article.id), "target_language": target_language,
              "source_language": article.language, "words": words}
    job, position = await queue_job(QueueJob(
        workspace_id, TRANSLATE_JOB, environment=environment, params=params, credits=price,
        webhook_url=command.webhook_url,
        charge_reason=f"translation of article {article_id} into {target_language}"), ctx)
    return PricedJob(job, price, position)


@dataclass(frozen=True)
class ComputeBilling:
    enabled: bool
    estimated_credits: int


async def request_regeneration(command: RequestRegeneration, ctx: Context) -> RegenerationQueued:
    """Queue the regeneration of an article in ``writing_style`` and, when compute billing is
    enabled for the workspace's plan and the key's environment, charge it in the same append (402
    when short, and then nothing is written).

    The engine is the article's: the offline engine, which writes in the transcript's language (a
    ``language`` other than the article's is a 400: that is a translation), or the provider for a
    provider-written article (premium or translated), which needs it configured (503). Returns
    (job, billing, position)."""
    workspace_id, environment, article_id = command.workspace_id, command.environment, command.article_id
    writing_style = command.writing_style
    article = await load_article(ctx, workspace_id, environment, article_id)
    engine = "provider" if (article.content or {}).get("engine") == "provider" else "offline"
    language = command.language or article.language
    if engine == "offline" and language != article.language:
        raise invalid_field("body.language", "offline_engine_language",
                            f"the offline engine writes in the language of the transcript ({article.language}); to "
                            f"have this article in {language}, translate it (POST /v1/articles/{article_id}/translate)")
    if engine == "provider" and not ctx.app.provider_configured:
        raise provider_needed("regenerating a provider-written article")
    if article.video_id is None:
        raise NotFound("the article's video is not found", id=str(article_id))
    video = await ctx.load_owned(video_stream_id(article.video_id), Video, workspace_id, "video", article.video_id)
    workspace = await ctx.load_owned(workspace_id, Workspace, workspace_id, "workspace")
    enabled = compute_billing_enabled(workspace.plan, environment)
    price = regeneration_price(video.duration_ms, engine) if enabled else 0
    params = {"article_id": article_id, "article_stream_id": str(article.id), "writing_style": writing_style,
              "language": language, "engine": engine}
    job, position = await queue_job(QueueJob(
        workspace_id, REGENERATE_JOB, environment=environment, params=params, credits=price,
        webhook_url=command.webhook_url, charge_reason=f"regeneration of article {article_id} ({writing_style})"),
        ctx)
    return RegenerationQueued(job, ComputeBilling(enabled, price), position)


async def record_export(command: RecordExport, ctx: Context) -> bool:
    """Record the first export of an article in a format (``ExportReady``); False when it was
    recorded already (its stream exists: a concurrent first export, or a read model behind)."""
    c = command
    export = ArticleExport.record(article_id=c.article_id, workspace_id=c.workspace_id, environment=c.environment,
                                  export_format=c.export_format, content_type=c.content_type, etag=c.etag,
                                  size=c.size, path=c.path)
    try:
        await ctx.save(export, workspace_id=c.workspace_id)
    except ConcurrencyError:
        return False
    return True
