"""The ``analyze_video`` job: transcript, media facts, Content Graph, article; results as events.

Steps (``step`` and ``progress`` on GET /jobs/{id}), with a cancellation checkpoint between each:

====  ==========================================================================
  5   reading the transcript: sidecar captions, else an embedded text subtitle track
 20   measuring the media: scene changes, silences, loudness, speech/music (ffmpeg)
 22   ``analysis_mode=behavioral``: watching the person in the picture, one window of the video per
      job item up to 58 (``services.jobs.vision``)
 60   building the content graph (pure ``domain.analysis.analyse``)
 80   ``quality_profile=premium``: the provider writes the title, summary and chapters (80), the
      article and its FAQ (85), the platform descriptions (90) (``services.jobs.premium``)
 80   writing the article, when ``outputs.article`` (93 after the provider's parts): the offline
      engine's, or the premium writer's
 95   recording the results: VideoGraphRecorded + VideoAnalyzed (+ ArticleGenerated), appended
      with JobCompleted (``ctx.record_with_completion``): all of it commits, or none. The
      recording is decided on the video as it is at the append (a description edited, links
      revoked or another analysis recorded meanwhile change nothing of it), and decided again
      from there after a conflict: no write to the video makes the work run again
====  ==========================================================================

ffmpeg runs through ``ctx.run_blocking``, never on the loop; the content graph is built in a
process of its own with a CPU-time limit (``analysis_cpu_limit_s``; ``services.lib.cpu_limit``),
so that a transcript made to be slow cannot hold a worker: at the limit the job fails, with a
message saying so, and is not retried (another attempt would take as long). A media or caption
error fails the job at once (``PermanentJobError``: another attempt reads the same file).
``quality_profile=premium`` has every text a person reads written by the OpenAI-compatible
provider (``infra.llm``; prompts, schemas, checks and the fallback to the offline text part by part
in ``domain.analysis.premium``): the chapters it decides are the graph's, and what it wrote and
what fell back, with the reason, is the graph's, the article's and the result's ``written``.
Without a configured provider such a job fails at once with a message saying so, rather than
passing the offline engine off as premium. A provider that does not answer (after the client's own
bounded retries) fails the job (``PermanentJobError``: the media passes are not redone for it) with
a message naming the cause; nothing of the analysis is stored. An answer that fails a check only
costs its parts. Each answered call records ``LlmUsageRecorded`` at once, in its own append, since
the tokens were spent whatever happens to the job next.

Refunds are not this handler's business: the append that ends a job failed or cancelled carries
the refund of ``params.credits`` (``application.jobs.append_job``), wherever it happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from domain.analysis import analyse, chapters_text, write_article
from domain.analysis.behavioral import SeenVideo
from domain.analysis.model import MediaFacts
from domain.analysis.premium import PremiumWriter
from domain.analysis.scoring import score
from domain.articles import Article
from domain.languages import DEFAULT_LANGUAGE
from domain.videos import Video, video_stream_id
from infra.captions import CaptionError
from infra.llm import ChatProvider
from infra.media.elements import media_facts
from infra.media.ffmpeg import MediaError, scrub
from infra.media.posters import ensure_poster, poster_key
from infra.media.probe import probe
from infra.settings import Settings
from infra.storage import Storage, storage_for
from services.jobs import speech, vision
from services.jobs.context import JobContext
from services.jobs.errors import PermanentJobError
from services.jobs.premium import write_premium
from services.jobs.transcripts import read_transcript
from services.lib.cpu_limit import CpuLimitExceeded, run_with_cpu_limit

PREMIUM_UNAVAILABLE = ("quality_profile premium needs an OpenAI-compatible provider, and none is configured; "
                       "use quality_profile standard (offline engine)")
_HOW_TO_TRANSCRIPT = ("upload the video with a captions file (WebVTT or SRT), or a video with a text subtitle track "
                      "or audible speech")
NO_TRANSCRIPT = (f"no article: the video has no transcript, and an article is written from what is said ("
                 f"{_HOW_TO_TRANSCRIPT}); the content graph holds the media elements only")
NOTHING_STORED = "nothing of the analysis was stored"
PREMIUM_NO_TRANSCRIPT = (f"quality_profile premium writes its article from the transcript, and this video has none "
                         f"({_HOW_TO_TRANSCRIPT}); what the job was charged is refunded")


def _facts(path: Path, settings: Settings, video: Video):
    """The media passes, on the accepted container and the priced duration only."""
    return media_facts(path, scene_threshold=settings.media_scene_threshold,
                       silence_db=settings.media_silence_db, silence_min_s=settings.media_silence_min_s,
                       timeout=settings.media_timeout(video.duration_ms), demuxer=video.demuxer,
                       limit_ms=video.duration_ms)


def _article(graph, writing_style: str, language: str, writer: PremiumWriter | None = None):
    """The offline engine's article, or the premium writer's (model parts where they passed); scored alike."""
    if writer is None:
        article = write_article(graph, writing_style, language)
        content = {**article.to_dict(), "engine": "offline"}
    else:
        article = writer.article()
        content = writer.content(article)
    scores = score(sentences=graph.sentences, claims=graph.claims, entities=graph.entities, topics=graph.topics,
                   intents=graph.intents, moments=graph.moments, chapters=graph.chapters,
                   diarisation=graph.diarisation, duration_ms=graph.duration_ms, article=content)
    return article, content, article.to_markdown(), scores


async def run_analysis(ctx: JobContext, settings: Settings, storage: Storage,
                       provider: ChatProvider | None = None, recogniser=None) -> dict:
    p = ctx.params
    outputs = p.get("outputs") or {}
    premium = p.get("quality_profile") == "premium"
    if premium and provider is None:
        raise PermanentJobError(PREMIUM_UNAVAILABLE)
    video = await _the_video(ctx, storage)
    heard = await _transcript_step(ctx, settings, storage, video, recogniser)
    # No words, no article: an empty one would still be scored, exported and announced.
    wants_article = outputs.get("article", True)
    article_skipped = None
    if wants_article and not any(seg.text.strip() for seg in heard.segments):
        article_skipped = f"{NO_TRANSCRIPT} ({heard.no_words})" if heard.no_words else NO_TRANSCRIPT
    if premium and article_skipped:
        raise PermanentJobError(PREMIUM_NO_TRANSCRIPT)
    await ctx.checkpoint()

    facts = await _media_step(ctx, settings, storage, video)
    seen = await _vision_step(ctx, settings, storage, video)
    graph = await _graph_step(ctx, settings, heard, facts, seen)
    writer = None
    if premium:
        writer = await write_premium(ctx, provider, graph, p.get("writing_style", "auto"), heard.language,
                                     video.environment, NOTHING_STORED, everything=wants_article)
        graph = writer.graph
    graph_dict = _graph_dict(graph, heard, outputs, writer)
    article_agg = None
    if wants_article and not article_skipped:
        article_agg = await _article_step(ctx, writer, video, graph, heard)

    await ctx.progress(95, "recording the results")
    article_id = article_agg.article_id if article_agg is not None else None
    article_events = list(article_agg.collect_events()) if article_agg is not None else []

    async def results() -> list:
        """The analysis recorded on the video as it is now (called again after a conflict)."""
        now = await ctx.store.fetch_for_writing(video.id)
        now.record_analysis(job_id=ctx.job_id, graph=graph_dict, analysis_mode=p.get("analysis_mode", "standard"),
                            article_id=article_id)
        return [*now.collect_events(), *article_events]

    ctx.record_with_completion(results)
    return {"article_id": article_id, "video_id": video.video_id, "claims": len(graph.claims),
            "chapters": len(graph.chapters), "transcript_source": heard.source, "language": heard.language,
            "geo_readiness_score": graph.geo_readiness_score,
            **({"article_skipped": article_skipped} if article_skipped else {}),
            **({"written": writer.record()} if writer is not None else {})}


async def _the_video(ctx: JobContext, storage: Storage) -> Video:
    """The job's video, of its workspace, with its media file in storage (else the job fails)."""
    video_id = ctx.params["video_id"]
    video: Video | None = await ctx.store.fetch_for_writing(video_stream_id(video_id))
    if video is None or video.workspace_id != ctx.workspace_id:
        raise PermanentJobError(f"video {video_id} not found")
    if not storage.exists(video.storage_key):
        raise PermanentJobError(f"the media file of video {video.video_id} is missing from storage")
    return video


@dataclass(frozen=True)
class _Heard:
    """The transcript an analysis works on, where it came from, and the language it is in."""

    segments: list
    source: dict  # the graph's transcriptSource
    language: str
    no_words: str | None  # why speech recognition found no words, when it found none


async def _transcript_step(ctx: JobContext, settings: Settings, storage: Storage, video: Video,
                           recogniser) -> _Heard:
    """The captions (sidecar or embedded), else the speech recognised when a recogniser is given."""
    p = ctx.params
    language = p.get("language", DEFAULT_LANGUAGE)
    await ctx.progress(5, "reading the transcript")
    segments, source = [], "none"
    if p.get("transcript_source") != "speech":
        try:
            segments, source = await ctx.run_blocking(read_transcript, storage, video,
                                                      settings.media_timeout(video.duration_ms), False)
        except (CaptionError, MediaError) as exc:
            raise PermanentJobError(f"reading the transcript: {scrub(str(exc))}") from exc  # no path
    if source == "none" and recogniser is not None:
        named = language if p.get("language_given") else None
        recognised = await _speech(ctx, settings, storage, video, recogniser, named)
        return _Heard(recognised.segments, recognised.source, recognised.language or language, recognised.note)
    return _Heard(segments, {"kind": source}, language, None)


async def _media_step(ctx: JobContext, settings: Settings, storage: Storage, video: Video) -> MediaFacts:
    """The media's measures, and its poster when it has none yet (the exports show one: made here,
    never by a read)."""
    await ctx.progress(20, "measuring the media (scene changes, silences, loudness, speech/music)")
    try:
        source = await ctx.run_blocking(storage.path, video.storage_key)  # off the loop: an object store downloads it
        facts = await ctx.run_blocking(_facts, source, settings, video)
    except MediaError as exc:
        raise PermanentJobError(str(exc)) from exc
    if video.thumbnail_key is None:
        await ctx.run_blocking(partial(ensure_poster, has_video=video.width is not None), storage,
                               poster_key(ctx.workspace_id, video.video_id, None), video.storage_key, video.demuxer,
                               video.duration_ms)
    await ctx.checkpoint()
    return facts


async def _source(ctx: JobContext, storage: Storage, video: Video, what: str) -> tuple[Path, str]:
    """The video's file on this machine (from the store's cache on an object store) and the
    container it was accepted as (probed again for a video recorded before demuxers were)."""
    path = await ctx.run_blocking(storage.path, video.storage_key)
    demuxer = video.demuxer
    if not demuxer:
        try:
            demuxer = (await ctx.run_blocking(probe, path)).demuxer
        except MediaError as exc:
            raise PermanentJobError(f"{what}: {scrub(str(exc))}") from exc
    return path, demuxer


async def _vision_step(ctx: JobContext, settings: Settings, storage: Storage, video: Video) -> SeenVideo | None:
    """What the person in the picture does, for ``analysis_mode=behavioral`` (None otherwise)."""
    if ctx.params.get("analysis_mode") != "behavioral":
        return None
    path, demuxer = await _source(ctx, storage, video, "reading the frames")
    seen = await vision.see(ctx, settings, path, demuxer, video.duration_ms, video.width is not None)
    await ctx.checkpoint()
    return seen


async def _graph_step(ctx: JobContext, settings: Settings, heard: _Heard, facts: MediaFacts,
                      seen: SeenVideo | None = None):
    """The content graph, built in a child process under its CPU-time limit."""
    p = ctx.params
    await ctx.progress(60, "building the content graph")
    try:
        graph = await run_with_cpu_limit(analyse, heard.segments, facts, language=heard.language,
                                         mode=p.get("analysis_mode", "standard"), seen=seen,
                                         cpu_seconds=settings.analysis_cpu_limit_s)
    except CpuLimitExceeded as exc:
        raise PermanentJobError(
            f"building the content graph was stopped at its CPU-time limit of {exc.cpu_seconds} s "
            f"({len(heard.segments)} transcript segments); nothing was stored") from None
    await ctx.checkpoint()
    return graph


def _graph_dict(graph, heard: _Heard, outputs: dict, writer: PremiumWriter | None) -> dict:
    """The graph as stored: with its transcript's origin, the transcript when kept, the chapters as
    text when asked, and what the premium writer wrote (``written``)."""
    graph_dict = graph.to_dict()
    graph_dict["transcriptSource"] = heard.source
    if outputs.get("transcript") or heard.source["kind"] == "speech":  # clips and downloads read it
        graph_dict["transcript"] = [s.to_dict() for s in graph.segments]
    if outputs.get("chapters"):
        graph_dict["chaptersText"] = chapters_text(graph.chapters)
    if writer is not None:
        graph_dict["written"] = writer.record()
    return graph_dict


async def _article_step(ctx: JobContext, writer: PremiumWriter | None, video: Video, graph,
                        heard: _Heard) -> Article:
    """The article: the premium writer's when there is one, else the offline engine's; scored."""
    style = ctx.params.get("writing_style", "auto")
    await ctx.progress(93 if writer is not None else 80, "writing the article")
    written, content, markdown, scores = await ctx.run_blocking(_article, graph, style, heard.language, writer)
    article_id = await ctx.next_id("article_id_seq")
    article_agg = Article(
        article_id=article_id, workspace_id=ctx.workspace_id, environment=video.environment, job_id=ctx.job_id,
        video_id=video.video_id, media_id=video.media_id, title=written.title, language=written.language,
        writing_style=written.writing_style, aeo_score=scores.aeo_score, geo_score=scores.geo_score,
        composite_score=scores.composite_score, keywords_primary=written.keywords_primary,
        has_transcript=bool(heard.segments), content=content, markdown=markdown)
    await ctx.checkpoint()
    return article_agg


async def _speech(ctx: JobContext, settings: Settings, storage: Storage, video: Video, recogniser,
                  language: str | None) -> speech.SpeechTranscript:
    """The video's speech recognised (``services.jobs.speech``), on the accepted container."""
    path, demuxer = await _source(ctx, storage, video, "reading the audio")
    return await speech.transcribe(ctx, settings, recogniser, path, demuxer, video.duration_ms, language)


def analysis_handler(settings: Settings):
    storage = storage_for(settings)

    provider = ChatProvider.from_settings(settings)
    recogniser = speech.recogniser_for(settings)

    async def analyze_video(ctx: JobContext) -> dict:
        return await run_analysis(ctx, settings, storage, provider, recogniser)

    return analyze_video
