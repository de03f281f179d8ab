"""The article jobs: ``translate_article`` and ``regenerate_article``; their results as events.

``translate_article`` (progress 10, 30, 80, 95): the source article's structured content is sent
to the OpenAI-compatible provider (``infra.llm``; prompt and answer checks in
``domain.translation``), the answer is held to the source's shape, scored by the rubric against
the graph of the source's analysis, and appended as an article of its own (``ArticleTranslated``)
with ``JobCompleted``. Without a configured provider the job fails at once, saying so (the API
refuses such a request before queueing it; this guards a worker configured otherwise).

``regenerate_article`` (progress 10, 40, 70, 95): the graph of the source's analysis is rebuilt
from the transcript (read again, as the analysis read it) and the media facts that graph recorded
(``domain.regeneration``), in a process of its own with the analysis' CPU-time limit; the article
is written again in the requested style by the engine of the source (offline, or the provider for
a provider-written article) and appended as a new article (``ArticleGenerated`` with
``source_article_id``) with ``JobCompleted``. The source article is not changed.

Every provider call that was answered records ``LlmUsageRecorded`` at once (``article.translate``,
``article.regenerate``), whatever happens to the job next. A provider failure (after the client's
bounded retries), an answer that is refused, or a missing input fails the job with a message
naming the cause (``PermanentJobError``); nothing of it is stored, and the append that ends the
job failed or cancelled refunds its charge (``application.jobs.append_job``).
"""

from __future__ import annotations

from uuid import UUID

from domain.analysis import analyse, write_article
from domain.analysis.premium import PremiumWriter
from domain.analysis.scoring import score_article
from domain.articles import Article
from domain.export_source import ExportSource
from domain.exports import to_markdown
from domain.llm_usage import LlmUsage
from domain.regeneration import differences, facts_from_graph
from domain.translation import (
    InvalidTranslation,
    answer_tokens,
    translated_content,
    translation_messages,
    translation_schema,
)
from domain.videos import Video, video_stream_id
from infra.captions import CaptionError
from infra.eventstore import ConcurrencyError
from infra.llm import ChatProvider, ProviderError
from infra.media.ffmpeg import MediaError, scrub
from infra.settings import Settings
from infra.storage import Storage, storage_for
from services.jobs.context import JobContext
from services.jobs.errors import PermanentJobError
from services.jobs.premium import write_premium
from services.jobs.transcripts import read_transcript
from services.lib.cpu_limit import CpuLimitExceeded, run_with_cpu_limit

TRANSLATE_OPERATION = "article.translate"  # LlmUsageRecorded.operation (GET /usage/llm)
REGENERATE_OPERATION = "article.regenerate"
TRANSLATION_UNAVAILABLE = ("translating an article needs an OpenAI-compatible provider, and none is configured; "
                           "no translation was stored")
REGENERATION_UNAVAILABLE = ("regenerating a provider-written article needs an OpenAI-compatible provider, and none "
                            "is configured; no article was stored")


async def _source_article(ctx: JobContext) -> Article:
    article = await ctx.store.fetch_for_writing(UUID(ctx.params["article_stream_id"]))
    if not isinstance(article, Article) or article.workspace_id != ctx.workspace_id:
        raise PermanentJobError(f"article {ctx.params['article_id']} not found")
    return article


async def _analysis(ctx: JobContext, article: Article) -> tuple[Video, dict]:
    """The video and the stored Content Graph of the analysis the article was written from."""
    if article.video_id is None:
        raise PermanentJobError(f"article {article.article_id} has no video to come from")
    events = await ctx.store.read_stream(video_stream_id(article.video_id))
    video = ctx.store.registry.reconstruct(events)
    graph_job = str(article.graph_job_id)
    graph = next((ev.data["graph"] for ev in events
                  if ev.type == "VideoGraphRecorded" and str(ev.data.get("job_id")) == graph_job), None)
    if not isinstance(video, Video) or graph is None:
        raise PermanentJobError(f"the content graph article {article.article_id} was written from is not stored; "
                                f"analyze the video again (POST /v1/videos/{article.video_id}/analyze)")
    return video, graph


async def _complete(ctx: JobContext, provider: ChatProvider, messages: list[dict], operation: str,
                    what: str, nothing: str, schema: tuple[str, dict]) -> str:
    """The provider's answer to ``messages``; its usage recorded once per call and attempt."""
    try:
        completion = await provider.complete(messages, schema=schema, max_tokens=answer_tokens(messages))
    except ProviderError as exc:
        raise PermanentJobError(f"the {what} provider failed: {exc}; {nothing}") from None
    usage = LlmUsage.record(call_key=f"{ctx.job_id}:{operation}:attempt-{ctx.attempt}", workspace_id=ctx.workspace_id,
                            environment=ctx.environment, operation=operation, prompt_tokens=completion.prompt_tokens,
                            completion_tokens=completion.completion_tokens, job_id=ctx.job_id)
    try:
        await ctx.save_now(usage)
    except ConcurrencyError:
        pass  # this call is recorded already
    if completion.finish_reason == "length":
        raise PermanentJobError(f"the {what} provider's answer was cut at its length limit (finish_reason "
                                f"length); {nothing}")
    return completion.content


def _markdown(article_id: int, title: str, language: str, style: str, content: dict, now) -> str:
    """The stored Markdown of a translated article: the markdown export without the video's links."""
    return to_markdown(ExportSource(article_id=article_id, title=title, original_title=title, language=language,
                                    writing_style=style, content=content, keywords=[], created_at=now,
                                    updated_at=now, url=""))


async def run_translation(ctx: JobContext, provider: ChatProvider | None) -> dict:
    if provider is None:
        raise PermanentJobError(TRANSLATION_UNAVAILABLE)
    target = ctx.params["target_language"]
    nothing = "no translation was stored"
    await ctx.progress(10, "reading the article")
    source = await _source_article(ctx)
    _, graph = await _analysis(ctx, source)
    try:
        messages = translation_messages(source.content, source.keywords_primary, source.language, target)
        schema = ("translation", translation_schema(source.content, source.keywords_primary))
    except InvalidTranslation as exc:
        raise PermanentJobError(f"{exc}; {nothing}") from None
    await ctx.checkpoint()

    await ctx.progress(30, f"translating into {target} (provider)")
    answer = await _complete(ctx, provider, messages, TRANSLATE_OPERATION, "translation", nothing, schema)
    await ctx.checkpoint()

    await ctx.progress(80, "checking and scoring the translation")
    try:
        content, keywords = translated_content(answer, source.content, source.keywords_primary, target)
    except InvalidTranslation as exc:
        raise PermanentJobError(f"the translation provider's answer was refused: {exc}; {nothing}") from None
    scores = await ctx.run_blocking(score_article, content, graph)
    article_id = await ctx.next_id("article_id_seq")
    markdown = _markdown(article_id, content["title"], target, source.writing_style, content, ctx.now())

    await ctx.progress(95, "recording the translation")
    translated = Article.translation(source=source, article_id=article_id, job_id=ctx.job_id, language=target,
                                     title=content["title"], content=content, markdown=markdown,
                                     aeo_score=scores.aeo_score, geo_score=scores.geo_score,
                                     composite_score=scores.composite_score, keywords_primary=keywords)
    ctx.record_with_completion(list(translated.collect_events()))
    return {"article_id": article_id, "source_article_id": source.article_id, "target_language": target,
            "source_language": source.language}


def _write(rebuilt, style: str, language: str, writer: PremiumWriter | None) -> tuple:
    if writer is None:
        article = write_article(rebuilt, style, language)
        return article, {**article.to_dict(), "engine": "offline"}, article.to_markdown()
    article = writer.article()
    return article, writer.content(article), article.to_markdown()


async def run_regeneration(ctx: JobContext, settings: Settings, storage: Storage,
                           provider: ChatProvider | None) -> dict:
    p = ctx.params
    engine, style, language = p["engine"], p["writing_style"], p["language"]
    if engine == "provider" and provider is None:
        raise PermanentJobError(REGENERATION_UNAVAILABLE)
    nothing = "no article was stored"
    source = await _source_article(ctx)
    video, graph = await _analysis(ctx, source)
    if video.workspace_id != ctx.workspace_id or not storage.exists(video.storage_key):
        raise PermanentJobError(f"the media file of video {video.video_id} is missing from storage; {nothing}")

    await ctx.progress(10, "reading the transcript")
    try:
        segments, _ = await ctx.run_blocking(read_transcript, storage, video,
                                             settings.media_timeout(video.duration_ms))
    except (CaptionError, MediaError) as exc:
        raise PermanentJobError(f"reading the transcript: {scrub(str(exc))}; {nothing}") from None
    if not any(s.text.strip() for s in segments):
        raise PermanentJobError(f"the video has no transcript to write from; {nothing}")
    await ctx.checkpoint()

    await ctx.progress(40, "rebuilding the content graph")
    try:
        rebuilt = await run_with_cpu_limit(analyse, segments, facts_from_graph(graph),
                                           language=graph.get("language") or source.language, mode="standard",
                                           cpu_seconds=settings.analysis_cpu_limit_s)
    except CpuLimitExceeded as exc:
        raise PermanentJobError(f"rebuilding the content graph was stopped at its CPU-time limit of "
                                f"{exc.cpu_seconds} s; {nothing}") from None
    departs = differences(rebuilt.to_dict(), graph)
    await ctx.checkpoint()

    writer = None
    if engine == "provider":
        writer = await write_premium(ctx, provider, rebuilt, style, language, source.environment, nothing,
                                     operations={"article.write": REGENERATE_OPERATION})
        rebuilt = writer.graph
    await ctx.progress(93 if writer is not None else 70, "writing the article")
    written, content, markdown = await ctx.run_blocking(_write, rebuilt, style, language, writer)
    scores = await ctx.run_blocking(score_article, content, graph)
    article_id = await ctx.next_id("article_id_seq")

    await ctx.progress(95, "recording the article")
    article = Article(article_id=article_id, workspace_id=ctx.workspace_id, environment=source.environment,
                      job_id=ctx.job_id, video_id=source.video_id, media_id=source.media_id, title=written.title,
                      language=written.language, writing_style=written.writing_style, aeo_score=scores.aeo_score,
                      geo_score=scores.geo_score, composite_score=scores.composite_score,
                      keywords_primary=written.keywords_primary, has_transcript=source.has_transcript,
                      content=content, markdown=markdown, origin="regeneration", source_article_id=source.article_id,
                      graph_job_id=source.graph_job_id)
    ctx.record_with_completion(list(article.collect_events()))
    return {"article_id": article_id, "source_article_id": source.article_id, "writing_style": written.writing_style,
            "engine": engine, "graph_rebuilt_exactly": not departs,
            **({"graph_differs_in": departs} if departs else {}),
            **({"written": writer.record()} if writer is not None else {})}


def translation_handler(settings: Settings):
    provider = ChatProvider.from_settings(settings)

    async def translate_article(ctx: JobContext) -> dict:
        return await run_translation(ctx, provider)

    return translate_article


def regeneration_handler(settings: Settings):
    storage = storage_for(settings)
    provider = ChatProvider.from_settings(settings)

    async def regenerate_article(ctx: JobContext) -> dict:
        return await run_regeneration(ctx, settings, storage, provider)

    return regenerate_article
