"""The job types this build can run. Each engine registers its handler here.

The core ships the runtime only; the analysis, translation and clip engines register their
handlers as they are added.
"""

from __future__ import annotations

from infra.settings import Settings
from services.worker import JobHandlers


def default_handlers(settings: Settings) -> JobHandlers:
    return JobHandlers()
