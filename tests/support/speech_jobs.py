"""Speech analysis jobs in a test: settings, an uploaded video, the worker that analyses it, its
items and steps; a two-voice dialogue to analyse."""

from __future__ import annotations

import shutil
import uuid

from domain.videos import ANALYZE_JOB
from infra.settings import Settings
from infra.storage import LocalStorage
from services.application.videos import AnalysisOptions, IngestVideo, RequestAnalysis
from services.jobs.analysis import run_analysis
from services.jobs.context import JobHandlers
from services.processes.worker import Worker
from tests.helpers import handle


def speech_settings(fast, **more):
    """The test's settings with 8-second windows: a short talk makes several windows, for the tests
    of the windows themselves (retries, cancellation, resumption, the text told to the next one).
    Whisper reads every window as 30 s of sound, so a window costs the same CPU however short:
    the tests of what is heard (speakers, noise, the language) pass ``WHOLE_WINDOWS``. The lease lasts 30 s:
    the worker tests' 1.5 s can lapse while a busy machine delays a heartbeat, and the job is then claimed
    again (one attempt more), where these tests count attempts and need no lease to end."""
    return fast.model_copy(update={"asr_window_s": 8, "worker_lease_s": 30.0, **more})


# the service's default (30 s): one window where 8 s make three or four
WHOLE_WINDOWS = {"asr_window_s": Settings.model_fields["asr_window_s"].default}


async def upload(store, settings, path, environment="sandbox"):
    storage = LocalStorage.from_settings(settings)
    staged = storage.staging_path("test")
    shutil.copyfile(path, staged)
    ws = uuid.uuid4()
    video, _ = await handle(store, IngestVideo(ws, staged=staged, environment=environment, filename=path.name),
        storage=storage)
    return ws, video, storage


def analysis_worker(settings, pool, recogniser):
    handlers = JobHandlers()
    storage = LocalStorage.from_settings(settings)

    @handlers.register(ANALYZE_JOB)
    async def analyse(ctx):
        return await run_analysis(ctx, settings, storage, None, recogniser)

    return Worker(settings, handlers, pool=pool)


async def analyse_video(store, ws, video, language="en", **options):
    job, _, price, _ = await handle(store, RequestAnalysis(ws, video_id=video.video_id, environment="sandbox",
        options=AnalysisOptions(outputs={"article": True}, language=language, **options)))
    return job


async def items(store, job_id):
    return [(e.type, e.data["item_id"], e.data["attempt"]) for e in await store.read_stream(job_id)
            if e.type in ("JobItemCompleted", "JobItemFailed")]


async def steps(store, job_id):
    """(step, attempt) of each JobProgressed, the attempt being the last JobStarted's."""
    out, attempt = [], 0
    for e in await store.read_stream(job_id):
        if e.type == "JobStarted":
            attempt = e.data["attempt"]
        elif e.type == "JobProgressed":
            out.append((e.data.get("step"), attempt))
    return out


DIALOGUE = [
    "The committee met on Tuesday to review the budget for next year.",
    "I think we should spend more on the new library downtown.",
    "That sounds reasonable, but the roads also need urgent repairs.",
    "Yes, the bridge on the river road has been closed since March.",
    "We could ask the state government for an emergency grant.",
    "Last year they gave the neighbouring town almost two million dollars.",
    "Then let us prepare the application before the end of the month.",
    "I will call the engineer tomorrow morning and ask for a cost estimate.",
    "Good. Please also send me the photographs of the damaged bridge.",
    "Of course. I will put everything in a shared folder this afternoon.",
    "Thank you. Shall we move on to the question of the summer festival?",
    "Yes, the organisers want to close the main square for three days.",
]
