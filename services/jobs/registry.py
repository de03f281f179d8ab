"""The job types this build can run. Each engine registers its handler here.

The core ships the runtime only; the analysis, translation and clip engines register their
handlers as they are added.
"""

from __future__ import annotations

from infra.settings import Settings
from services.jobs.context import JobHandlers


def default_handlers(settings: Settings) -> JobHandlers:
    from domain.videos import ANALYZE_JOB
    from services.jobs.analysis import analysis_handler

    handlers = JobHandlers()
    handlers.register(ANALYZE_JOB)(analysis_handler(settings))
    from services.jobs.clips import register_clip_jobs

    register_clip_jobs(handlers, settings)  # video_clip, clip_detection, clip_render

    from domain.articles import REGENERATE_JOB, TRANSLATE_JOB
    from services.jobs.articles import regeneration_handler, translation_handler

    handlers.register(TRANSLATE_JOB)(translation_handler(settings))
    handlers.register(REGENERATE_JOB)(regeneration_handler(settings))
    return handlers
