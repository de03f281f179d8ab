"""Writes to a video while it is analysed, on the real servers: an analysis records its result
whatever else of the video changed meanwhile, and a write that lands between the recording's
decision and its append is a conflict retried from the append, never a reason to redo the work.

The writes are made deterministic by the worker's event store (a seam): right after each of the
first loads of the video by the job, another process edits the video (its description, then its
public links, then its description again), so that every load the job decides on is already
stale when it appends: the load at the job's start (before all the work) and the loads of its
recording.
"""

from __future__ import annotations

import itertools
import re
import shutil
import uuid

import pytest

from domain.analysis import Segment
from domain.videos import video_stream_id
from infra.eventstore_postgres import PostgresEventStore
from infra.storage import LocalStorage
from services.application.videos import (
    AnalysisOptions,
    ChangeVideoDescription,
    IngestVideo,
    RequestAnalysis,
    RevokePublicLinks,
)
from services.jobs.registry import default_handlers
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from services.processes.worker import Worker
from tests.helpers import handle
from tests.media_factory import make_captioned_video
from tests.support.pipeline import job_finished, wait_for

DURATION_S = 6
CUES = [Segment(500, 2500, "Bonjour à tous, voici la rénovation du bâtiment.", "Anne"),
        Segment(3000, 5500, "Le chantier commence à Lyon en mars.", "Anne")]


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return make_captioned_video(tmp_path_factory.mktemp("meanwhile"), DURATION_S, CUES)


class EditedMeanwhile(PostgresEventStore):
    """The worker's store: after each of the first loads of ``video``, another process writes to
    the video, so that what the job loaded is stale by one write when it appends."""

    def __init__(self, pool, edits, **kwargs) -> None:
        super().__init__(pool, **kwargs)
        self.video: uuid.UUID | None = None
        self.edits = iter(edits)  # each an async function of nothing: one write by another process
        self.loads = 0

    async def fetch_for_writing(self, stream_id):
        loaded = await super().fetch_for_writing(stream_id)
        if stream_id == self.video:
            self.loads += 1
            edit = next(self.edits, None)
            if edit is not None:
                await edit()
        return loaded


async def _analysed_while(fast, store, pool, registry, background, clip, edits):
    """A captioned video analysed by a worker whose loads of it are each followed by the next of
    ``edits`` (given the workspace, the video id and another process's store); the job, ended,
    and the seam."""
    storage = LocalStorage.from_settings(fast)
    ws = uuid.uuid4()
    staged = storage.staging_path("test")
    shutil.copyfile(clip["video"], staged)
    video, _ = await handle(store, IngestVideo(ws, staged=staged, environment="sandbox", filename="clip.mp4",
                                               captions=clip["vtt"].read_bytes()), storage=storage)
    other = PostgresEventStore(pool, registry)  # the API process that takes the edits
    seam = EditedMeanwhile(pool, edits(ws, video.video_id, other), registry=registry, clock=fast.now)
    seam.video = video_stream_id(video.video_id)

    background.start(Relay(fast).run)
    background.start(lambda stop: run_projector(fast, stop, ["jobs", "scheduler"]))
    background.start(Worker(fast, default_handlers(fast), pool=pool, store=seam).run)
    options = AnalysisOptions(outputs={"article": True}, language="fr")
    job, _, _, _ = await handle(store, RequestAnalysis(ws, video_id=video.video_id, environment="sandbox",
                                                       options=options))
    return job, await wait_for(lambda: job_finished(store, job.id), 120, "the analysis ended"), seam


def _describe(ws, video_id, other, text: str):
    return lambda: handle(other, ChangeVideoDescription(ws, "sandbox", video_id, description=text))


async def test_writes_to_the_video_during_its_analysis_neither_fail_nor_repeat_it(fast, store, pool, registry,
                                                                                   background, clip):
    def edits(ws, video_id, other):
        return [_describe(ws, video_id, other, "first edit"),
                lambda: handle(other, RevokePublicLinks(ws, "sandbox", video_id)),
                _describe(ws, video_id, other, "the edit that stays")]

    job, done, seam = await _analysed_while(fast, store, pool, registry, background, clip, edits)

    assert (done.status, done.attempts, done.error_message) == ("completed", 1, None)
    assert seam.loads == 4  # the start, then the recording decided three times
    steps = [e.data.get("step", "") for e in await store.read_stream(job.id) if e.type == "JobProgressed"]
    assert sum(step.startswith("measuring the media") for step in steps) == 1, steps  # the work ran once
    assert [e.type for e in await store.read_stream(job.id)].count("JobStarted") == 1
    recorded = [e.type for e in await store.read_stream(seam.video)]
    assert recorded == ["VideoUploaded", "VideoDescriptionChanged", "VideoPublicLinksRevoked",
                        "VideoDescriptionChanged", "VideoGraphRecorded", "VideoAnalyzed"], recorded
    now = await store.fetch_for_writing(seam.video)
    assert now.description == "the edit that stays" and now.public_links_generation == 1
    assert now.last_analysis_job_id == job.id and now.graph["claims"] is not None


async def test_a_video_that_never_stops_changing_fails_the_job_with_a_readable_message(fast, store, pool, registry,
                                                                                        background, clip):
    """A conflict retried out ends the job (refunded, as any failure) with a message a client can
    read: no internal stream id nor version."""
    def edits(ws, video_id, other):
        return (_describe(ws, video_id, other, f"edit {n}") for n in itertools.count())

    job, done, _ = await _analysed_while(fast, store, pool, registry, background, clip, edits)

    assert done.status == "failed", (done.status, done.error_message)
    assert done.error_message == ("recording the job's work kept conflicting with concurrent changes to the "
                                  "same records; it was not recorded")
    messages = [e.data["error_message"] for e in await store.read_stream(job.id)
                if e.type in ("JobAttemptFailed", "JobFailed")]
    assert messages and not any(re.search(r"[0-9a-f]{8}-[0-9a-f]{4}|version", m) for m in messages), messages
