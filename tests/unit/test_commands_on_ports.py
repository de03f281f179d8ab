"""Every command of the write side on the in-memory store, with the ports' in-memory twins
(``infra.memory_ports``): the application is built as a process builds it (``bootstrap``), with
the adapters the configuration picks, so uploads, clips, revival, webhooks and translations run
here without ffmpeg, a disk or PostgreSQL. ``tests/command_contract.py`` holds the commands whose
rules need both stores (charges, idempotency, refunds)."""

from __future__ import annotations

import ast
import dataclasses
import typing
import uuid
from pathlib import Path

import orjson
import pytest

from domain.analysis import analyse, write_article
from domain.articles import Article
from domain.base import DomainError, NotFound
from domain.clips import DETECTION_JOB, RENDER_JOB, template
from domain.pricing import analysis_price, description_price, detection_price, render_clip_price
from domain.revival import candidate_id
from domain.videos import UnreadableMedia, UnsupportedMedia, Video, video_stream_id
from domain.webhooks import WebhookDelivery
from domain.workspaces import Workspace
from infra.codec import EventRegistry
from infra.memory_ports import MemoryFiles, fake_media, memory_adapters
from infra.memory_store import MemoryDatabase, MemoryEventStore
from infra.settings import Settings
from infra.webhook_http import Outcome as SendOutcome
from services.application import articles, clips, media, revival, videos, webhooks, workspaces
from services.application.bootstrap import bootstrap
from services.application.handlers import HANDLERS
from services.application.idempotency import Outcome, job_id_for
from tests.media_factory import podcast_cues

ENV = "production"


class World:
    """A workspace on an in-memory store, and the application a process would build over it."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.database = MemoryDatabase()
        self.store = MemoryEventStore(EventRegistry(), self.database)
        self.adapters = memory_adapters(self.database, files=MemoryFiles(copies=tmp_path / "copies"))
        self.app = bootstrap(Settings(secret_key="11" * 32), self.store, self.adapters)
        self.ws: uuid.UUID = uuid.uuid4()

    @property
    def files(self) -> dict[str, bytes]:
        return self.adapters.files.files

    async def handle(self, command, **policies):
        app = dataclasses.replace(self.app, **policies) if policies else self.app
        return await app.context({"request_id": "test"}).handle(command)

    def types(self) -> list[str]:
        return [e.type for e in self.database.events if e.workspace_id == self.ws]

    async def balance(self) -> int:
        workspace = await self.store.fetch_for_writing(self.ws)
        assert isinstance(workspace, Workspace)
        return workspace.credits_balance

    def staged(self, data: bytes, name: str = "upload.bin") -> Path:
        path = self.tmp_path / name
        path.write_bytes(data)
        return path

    async def upload(self, **command) -> Video:
        staged = self.staged(fake_media(duration_ms=60_000))
        video, _ = await self.handle(videos.IngestVideo(self.ws, ENV, staged, "talk.mp4", **command))
        return video

    async def analysed(self, video: Video, article_id: int = 3) -> Article:
        """The video analysed into an article, as the analysis job leaves them."""
        job_id = uuid.uuid4()
        graph = analyse(podcast_cues(60, max_chars=3000), language="fr")
        stored = await self.store.fetch_for_writing(video_stream_id(video.video_id))
        stored.record_analysis(job_id=job_id, graph=graph.to_dict(), analysis_mode="standard", article_id=article_id)
        article = Article(article_id=article_id, workspace_id=self.ws, environment=ENV, job_id=job_id,
                          video_id=video.video_id, media_id=video.media_id, title="Rénovation", language="fr",
                          writing_style="auto", aeo_score=50, geo_score=50, composite_score=50.0,
                          keywords_primary=["isolation"], has_transcript=True,
                          content=write_article(graph, "auto", "fr").to_dict(), markdown="")
        await self.store.save(stored, article, workspace_id=self.ws)
        return article


@pytest.fixture
async def world(tmp_path) -> World:
    w = World(tmp_path)
    w.ws, _ = await w.handle(workspaces.CreateWorkspace(name="ports", plan="pro", credits=100_000, rate_limit=100))
    return w


def test_the_application_built_over_an_in_memory_store_runs_on_its_twins(tmp_path):
    """Configuration picks the ports: no branch on the store's class; the in-memory set is whole."""
    w = World(tmp_path)
    assert w.app.storage is w.adapters.files and w.app.media is w.adapters.media
    assert w.app.candidates is w.adapters.candidates and w.app.idempotency.rows is w.adapters.key_rows
    assert w.app.drafting is not None and w.app.handlers is HANDLERS


ADAPTERS = ("asyncpg", "infra.media", "infra.storage", "infra.storage_s3", "infra.idempotency_rows",
            "infra.candidates", "infra.memory_store", "infra.memory_ports")


def test_the_application_reaches_the_world_through_its_ports_only():
    """No module of ``services/application`` imports an adapter (ffmpeg's modules, the storage, the
    database driver, the in-memory twins): they come in through ``Application``'s ports."""
    root = Path(__file__).resolve().parents[2] / "services" / "application"
    found = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{path.name}: {n}" for n in names if any(n == a or n.startswith(f"{a}.") for a in ADAPTERS)]
    assert found == []


def test_every_handler_answers_one_typed_result():
    """A handler answers a named result (``services.application.results``) or a single value, never
    a bare tuple whose places a caller must know."""
    for handler in HANDLERS.values():
        answer = typing.get_type_hints(handler).get("return")
        assert answer is not None, handler
        assert (typing.get_origin(answer) or answer) is not tuple, handler
        if isinstance(answer, type) and issubclass(answer, tuple):
            assert hasattr(answer, "_fields"), handler


# -- workspaces and medias -------------------------------------------------------------------


async def test_a_job_secret_is_rotated(world: World):
    versions, position = await world.handle(workspaces.RotateJobSecret(world.ws, ENV))
    assert position == world.database.events[-1].position and world.types()[-1] == "JobSecretRotated"
    again, _ = await world.handle(workspaces.RotateJobSecret(world.ws, ENV))
    assert again != versions


async def test_a_media_is_created_with_the_next_id(world: World):
    first, _ = await world.handle(media.CreateMedia(world.ws, ENV, "Podcast", language="en"))
    second, position = await world.handle(media.CreateMedia(world.ws, ENV, "Talks"))
    assert (first.media_id, second.media_id, first.language) == (1, 2, "en")
    assert world.types().count("MediaCreated") == 2 and position == world.database.events[-1].position


# -- videos ----------------------------------------------------------------------------------


async def test_an_upload_is_probed_measured_stored_with_its_thumbnail_and_recorded(world: World):
    created, _ = await world.handle(media.CreateMedia(world.ws, ENV, "Podcast"))
    staged = world.staged(fake_media(duration_ms=600_000, measured_ms=60_000))  # a header that lies
    video, position = await world.handle(videos.IngestVideo(world.ws, ENV, staged, "My talk.mov",
                                                            media_id=created.media_id))
    folder = f"videos/{world.ws}/{video.video_id}"
    assert not staged.exists()
    assert set(world.files) == {f"{folder}/source.mp4", f"{folder}/thumbnail.jpg"}
    assert (video.name, video.duration_ms, video.language, video.media_id) == ("My talk", 60_000, "fr", 1)
    assert video.thumbnail_key == f"{folder}/thumbnail.jpg" and video.storage_key == f"{folder}/source.mp4"
    assert world.types()[-1] == "VideoUploaded" and position == world.database.events[-1].position


async def test_an_upload_without_a_picture_is_stored_without_a_thumbnail(world: World):
    staged = world.staged(fake_media(demuxer="mp3", video_codec=None, poster=False))
    video, _ = await world.handle(videos.IngestVideo(world.ws, ENV, staged, "episode.mp3"))
    assert video.thumbnail_key is None and list(world.files) == [f"videos/{world.ws}/{video.video_id}/source.mp3"]


@pytest.mark.parametrize(("data", "error"), [
    (b"not media at all", UnsupportedMedia),
    (fake_media(unreadable=True), UnreadableMedia),
    (fake_media(duration_ms=10**9), DomainError),
])
async def test_a_refused_upload_leaves_nothing_stored_nor_staged(world: World, data: bytes, error):
    staged = world.staged(data)
    before = list(world.types())
    with pytest.raises(error):
        await world.handle(videos.IngestVideo(world.ws, ENV, staged, "x.mp4"))
    assert not staged.exists() and world.files == {} and world.types() == before


async def test_captions_that_do_not_fit_refuse_the_upload_and_nothing_stays_stored(world: World):
    staged = world.staged(fake_media(duration_ms=2_000))
    captions = b"WEBVTT\n\n00:05:01.000 --> 00:05:09.000\nBonjour et bienvenue.\n"  # starts past the end
    with pytest.raises(DomainError):
        await world.handle(videos.IngestVideo(world.ws, ENV, staged, "x.mp4", captions=captions))
    assert world.files == {} and not staged.exists()


async def test_a_description_change_is_recorded_once(world: World):
    video = await world.upload(description="old")
    changed, position = await world.handle(videos.ChangeVideoDescription(world.ws, ENV, video.video_id, "new"))
    assert changed.description == "new" and position is not None
    _, again = await world.handle(videos.ChangeVideoDescription(world.ws, ENV, video.video_id, "new"))
    assert again is None
    with pytest.raises(NotFound):
        await world.handle(videos.ChangeVideoDescription(world.ws, "sandbox", video.video_id, "x"))


async def test_public_links_move_to_a_new_generation(world: World):
    video = await world.upload()
    first, _ = await world.handle(videos.RevokePublicLinks(world.ws, ENV, video.video_id))
    second, position = await world.handle(videos.RevokePublicLinks(world.ws, ENV, video.video_id))
    assert second == first + 1 and world.types()[-1] == "VideoPublicLinksRevoked"


async def test_an_analysis_is_queued_and_charged_in_one_append(world: World):
    video = await world.upload()
    before = await world.balance()
    job, _, price, position = await world.handle(videos.RequestAnalysis(world.ws, ENV, video.video_id))
    assert price > 0 and price == analysis_price(60_000, "standard", 60_000, 0)
    assert await world.balance() == before - price
    assert job.params["language"] == "fr" and job.params["language_given"] is False
    # every option is recorded, with the interface's default where the request named none
    assert {k: job.params[k] for k in ("outputs", "writing_style", "analysis_mode", "quality_profile",
                                       "transcript_source")} == {
        "outputs": {}, "writing_style": "auto", "analysis_mode": "standard", "quality_profile": "standard",
        "transcript_source": "auto"}
    with pytest.raises(DomainError, match="premium"):
        await world.handle(videos.RequestAnalysis(world.ws, ENV, video.video_id,
                                                  videos.AnalysisOptions(quality_profile="premium")))


# -- articles --------------------------------------------------------------------------------


async def test_a_translation_needs_the_provider_and_is_charged_when_there_is_one(world: World):
    article = await world.analysed(await world.upload())
    with pytest.raises(articles.ProviderNotConfigured):
        await world.handle(articles.RequestTranslation(world.ws, ENV, article.article_id, "en"))
    assert "JobQueued" not in world.types()
    job, price, _ = await world.handle(articles.RequestTranslation(world.ws, ENV, article.article_id, "en"),
                                       provider_configured=True)
    assert job.params["target_language"] == "en" and job.params["words"] > 0 and price > 0
    with pytest.raises(DomainError, match="already"):
        await world.handle(articles.RequestTranslation(world.ws, ENV, article.article_id, "fr"),
                           provider_configured=True)


async def test_a_regeneration_is_queued_for_the_articles_video(world: World):
    article = await world.analysed(await world.upload())
    job, billing, _ = await world.handle(articles.RequestRegeneration(world.ws, ENV, article.article_id, "concise"))
    assert (job.params["engine"], job.params["language"], job.params["writing_style"]) == ("offline", "fr", "concise")
    assert billing.estimated_credits == (billing.estimated_credits if billing.enabled else 0)
    with pytest.raises(DomainError, match="translate"):
        await world.handle(articles.RequestRegeneration(world.ws, ENV, article.article_id, "auto", language="en"))


async def test_the_first_export_of_a_format_is_recorded_once(world: World):
    article = await world.analysed(await world.upload())
    command = articles.RecordExport(world.ws, ENV, article.article_id, "markdown", "text/markdown", '"e1"', 10,
                                    "exports/a.md")
    assert await world.handle(command) is True
    assert await world.handle(command) is False
    assert world.types().count("ExportReady") == 1


# -- clips -----------------------------------------------------------------------------------


async def test_a_clip_is_queued_within_the_video(world: World):
    video = await world.upload()
    job, price, _ = await world.handle(clips.RequestClip(world.ws, ENV, video.video_id, 1_000, 6_000, "mp4"))
    assert job.params["end_ms"] == 6_000 and price > 0 and "ClipRenderQueued" in world.types()
    with pytest.raises(clips.ClipRefused):
        await world.handle(clips.RequestClip(world.ws, ENV, video.video_id, 1_000, 99_000, "mp4"))


DETECTION = {"target_duration_seconds": None, "requested_clip_count": 3, "analysis_mode": "multimodal",
             "prompt": None, "protect_sentence_boundaries": True, "duration_margin_enabled": True,
             "duration_margin_percent": 10, "allow_shorter_duration": True, "allow_longer_duration": False}


async def test_a_detection_loads_what_it_names_and_an_identical_request_reuses_its_job(world: World):
    video = await world.upload()
    article = await world.analysed(video)
    command = clips.RequestDetection(world.ws, ENV, article.article_id, 1, **DETECTION)
    job, reused, price, _ = await world.handle(command)
    assert (reused, price) == (False, detection_price(60_000)) and job.params["video_id"] == video.video_id
    # The job is named by the client's request, the template's duration filled in.
    canonical = {"article_id": article.article_id, "template_id": 1, **DETECTION,
                 "target_duration_seconds": template(1).target_duration_seconds}
    assert job.id == job_id_for(world.ws, ENV, DETECTION_JOB, canonical)
    again, reused, _, position = await world.handle(command)
    assert (again.id, reused, position) == (job.id, True, None)
    with pytest.raises(NotFound, match="template"):
        await world.handle(dataclasses.replace(command, template_id=999))
    with pytest.raises(NotFound, match="article"):
        await world.handle(dataclasses.replace(command, environment="sandbox"))


async def test_a_render_prices_each_clip_and_refuses_one_outside_the_video(world: World):
    article = await world.analysed(await world.upload())
    clip = {"id": "a", "title": "A", "start_ms": 0, "end_ms": 5_000, "duration_ms": 5_000}
    command = clips.RequestRender(world.ws, ENV, article.article_id, 1, None, [clip])
    job, reused, price, _ = await world.handle(command)
    assert (reused, price, job.params["item_credits"]) == (False, render_clip_price(5_000), {"a": price})
    canonical = {"article_id": article.article_id, "template_id": 1, "target_duration_seconds": None, "clips": [clip]}
    assert job.id == job_id_for(world.ws, ENV, RENDER_JOB, canonical)
    with pytest.raises(clips.ClipRefused):
        await world.handle(dataclasses.replace(command, clips=[{**clip, "end_ms": 90_000, "duration_ms": 90_000}]))


# -- revival ---------------------------------------------------------------------------------


async def candidate(world: World) -> tuple[Video, Article]:
    created, _ = await world.handle(media.CreateMedia(world.ws, ENV, "Podcast"))
    video = await world.upload(media_id=created.media_id)
    return video, await world.analysed(video)


async def test_a_candidate_is_found_through_the_port_and_moved(world: World):
    video, _ = await candidate(world)
    cid = candidate_id(video.video_id)
    position = await world.handle(revival.MoveCandidate(world.ws, ENV, cid, "reviewing"))
    assert position is not None and world.types()[-1] == "CandidateStatusChanged"
    assert await world.handle(revival.MoveCandidate(world.ws, ENV, cid, "reviewing")) is None
    with pytest.raises(NotFound):
        await world.handle(revival.MoveCandidate(world.ws, ENV, uuid.uuid4(), "reviewing"))
    with pytest.raises(NotFound):  # another environment's candidate is missing (decided on the video's stream)
        await world.handle(revival.MoveCandidate(world.ws, "sandbox", cid, "reviewing"))


async def test_descriptions_are_completed_charged_and_answered_again_for_the_same_key(world: World):
    video, article = await candidate(world)
    cid, before = candidate_id(video.video_id), await world.balance()
    ran = []

    async def command(claim) -> Outcome:
        outcome, position = await world.handle(revival.CompleteDescriptions(
            world.ws, ENV, cid, video.media_id, article.article_id, ["videosite_long"], claim))
        ran.append(position)
        return outcome

    keys, api_key = world.app.idempotency, uuid.uuid4()
    first = await keys.run(world.ws, "revival.complete", "k1", {"candidate": str(cid)}, command, api_key_id=api_key)
    again = await keys.run(world.ws, "revival.complete", "k1", {"candidate": str(cid)}, command, api_key_id=api_key)
    assert len(ran) == 1 and ran[0] is not None and again.reused
    assert first.body["data"]["drafts"] and again.body["data"]["request_id"] == first.body["data"]["request_id"]
    assert await world.balance() == before - description_price(1)
    assert {"DescriptionsCompleted", "CandidateSelected"} <= set(world.types())


# -- webhooks --------------------------------------------------------------------------------


async def test_a_webhook_is_registered_with_its_secret_encrypted_and_deleted(world: World):
    webhook, secret, _ = await world.handle(webhooks.RegisterWebhook(world.ws, ENV, "https://hooks.example.com/a"))
    recorded = orjson.dumps([e.data for e in world.database.events]).decode()
    assert secret and secret not in recorded
    assert world.app.box.decrypt(webhook.secret_encrypted, str(webhook.id)) == secret
    await world.handle(webhooks.DeleteWebhook(world.ws, ENV, webhook.id))
    with pytest.raises(NotFound):
        await world.handle(webhooks.DeleteWebhook(world.ws, ENV, webhook.id))


async def test_a_test_send_is_signed_with_the_webhooks_secret_and_recorded(world: World):
    webhook, secret, _ = await world.handle(webhooks.RegisterWebhook(world.ws, ENV, "https://hooks.example.com/a"))
    tested = await world.handle(webhooks.SendWebhookTest(world.ws, ENV, webhook.id))
    [(url, environment, used_secret, body, message_id, signed_at, bound)] = world.adapters.webhook_tests.sent
    assert (url, environment, used_secret, bound) == (webhook.url, ENV, secret, webhooks.TEST_TIMEOUT_S)
    sent = orjson.loads(body)
    assert sent["type"] == "webhook.test" and sent["data"] == {"webhook_id": str(webhook.id), "test": True}
    assert message_id == str(tested.message_id) and tested.delivered and tested.status_code == 204
    recorded = world.database.events[-1]
    assert tested.position == recorded.position and recorded.type == "WebhookTestSent"
    assert recorded.data["signed_at"] == signed_at and secret not in orjson.dumps(recorded.data).decode()


async def test_a_failed_test_send_is_recorded_with_its_reason(world: World):
    webhook, _, _ = await world.handle(webhooks.RegisterWebhook(world.ws, ENV, "https://hooks.example.com/a"))
    world.adapters.webhook_tests.answer = SendOutcome(None, 0.0, "destination refused: private address")
    tested = await world.handle(webhooks.SendWebhookTest(world.ws, ENV, webhook.id))
    assert not tested.delivered and tested.error == "destination refused: private address"
    assert world.database.events[-1].data["error"] == tested.error


async def test_another_workspaces_webhook_is_not_sent_a_test(world: World):
    webhook, _, _ = await world.handle(webhooks.RegisterWebhook(world.ws, ENV, "https://hooks.example.com/a"))
    with pytest.raises(NotFound):
        await world.handle(webhooks.SendWebhookTest(uuid.uuid4(), ENV, webhook.id))
    assert world.adapters.webhook_tests.sent == []


async def test_a_failed_delivery_is_resent_in_its_chain(world: World):
    webhook, _, _ = await world.handle(webhooks.RegisterWebhook(world.ws, ENV, "https://hooks.example.com/a"))
    delivery_id = uuid.uuid4()
    delivery = WebhookDelivery(delivery_id=delivery_id, workspace_id=world.ws, environment=ENV, webhook_id=webhook.id,
                               url=webhook.url, event_name="video.uploaded", source_position=1)
    delivery.record_attempt(1, 1_700_000_000)
    delivery.record_failed(1, 500, "HTTP 500", 3.0, None, True)
    await world.store.save(delivery, workspace_id=world.ws, meta={"correlation_id": "c-1"})
    await world.handle(webhooks.ResendDelivery(world.ws, ENV, webhook.id, delivery_id, "key k"))
    resent = world.database.events[-1]
    assert resent.type == "WebhookDeliveryResent" and resent.meta.get("correlation_id") == "c-1"
    with pytest.raises(NotFound):
        await world.handle(webhooks.ResendDelivery(world.ws, ENV, webhook.id, uuid.uuid4(), "key k"))
