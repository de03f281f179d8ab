"""The analysis step's CPU-time limit, on the real servers: an analysis job whose transcript takes
longer to analyse than ``analysis_cpu_limit_s`` fails at once with a message saying so (the graph
is built in a child process, which the limit stops), and nothing of the analysis is stored."""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid

import pytest

from domain.analysis import Segment
from infra.captions import to_webvtt
from infra.storage import LocalStorage
from services.application.videos import AnalysisOptions, IngestVideo, RequestAnalysis
from services.jobs.registry import default_handlers
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from services.processes.worker import Worker
from tests.helpers import handle
from tests.media_factory import run

DURATION_S = 12


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("limits") / "clip.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=s=160x120:r=10:d={DURATION_S}",
         "-f", "lavfi", "-i", f"sine=frequency=300:sample_rate=16000:duration={DURATION_S}",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(path)])
    return path


async def _finished(store, job_id, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = await store.fetch_for_writing(job_id)
        if job.finished:
            return job
        await asyncio.sleep(0.1)
    raise TimeoutError("job not finished")


async def test_an_analysis_over_its_cpu_time_limit_fails_with_a_clear_message(fast, store, pool, background, clip):
    # A lease long enough that a busy machine does not lapse it mid-pass (another attempt would then
    # start for a reason that is not the one under test).
    settings = fast.model_copy(update={"analysis_cpu_limit_s": 1, "worker_lease_s": 30.0})
    storage = LocalStorage.from_settings(settings)
    ws = uuid.uuid4()
    staged = storage.staging_path("test")
    shutil.copyfile(clip, staged)
    small = to_webvtt([Segment(1000, 3000, "Bonjour à tous.", "Anne")]).encode()
    video, _ = await handle(store, IngestVideo(ws, staged=staged, environment="sandbox", filename="clip.mp4",
        captions=small), storage=storage)
    # The transcript the worker reads is far longer than the media holds (an upload refuses it,
    # an embedded subtitle track is not checked): tens of seconds of CPU to analyse.
    words = ["énergie", "rénovation", "isolation", "chauffage", "Paris", "Lyon", "ITER", "fusion", "plasma"]
    crowded = [Segment(k, k + 1, f"Le projet {words[k % 9]} numéro {k} coûte {k % 97} millions d'euros "
                                 f"en {1990 + k % 30} à {words[(k * 7) % 9]}.", ["Anne", "Paul"][k // 50 % 2])
               for k in range(20_000)]
    storage.path(video.captions_key).write_text(to_webvtt(crowded))

    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["jobs", "scheduler"]))
    background.start(Worker(settings, default_handlers(settings), pool=pool).run)
    job, _, _, _ = await handle(store, RequestAnalysis(ws, video_id=video.video_id, environment="sandbox",
        options=AnalysisOptions(outputs={"article": True}, language="fr")))
    done = await _finished(store, job.id)
    limit = ("building the content graph was stopped at its CPU-time limit of 1 s (20000 transcript segments); "
             "nothing was stored")
    assert done.status == "failed" and done.error_message == limit, (done.status, done.error_message)
    # The limit is final: the attempt that met it failed the job, no attempt was retried after it.
    ends = [(e.type, e.data.get("error_message")) for e in await store.read_stream(job.id)
            if e.type in ("JobAttemptFailed", "JobFailed")]
    assert ends[-1] == ("JobFailed", limit) and all(message != limit for _, message in ends[:-1]), ends
    stream = await store.read_stream(video.id)
    assert [e.type for e in stream] == ["VideoUploaded"]  # no graph, no analysis recorded
