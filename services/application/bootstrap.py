"""Building the application once, at start-up: from settings, with the process's adapters."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from domain.videos import max_duration_ms
from infra.adapters import Adapters
from infra.crypto import SecretBox
from infra.eventstore import EventStore
from infra.settings import Settings
from services.application.context import Application
from services.application.handlers import HANDLERS
from services.application.idempotency import IdempotencyKeys

# Description drafts are computed in threads of their own, two at most per application (one per
# process): see ``revival._drafts``.
DRAFTING_THREADS = 2


def bootstrap(settings: Settings, store: EventStore, adapters: Adapters) -> Application:
    """The application of a process: its store, the settings' clock and policies, and the ports
    the configuration picked (``adapters``: ``infra.adapters.database_adapters`` in a process,
    ``infra.memory_ports.memory_adapters`` beside an in-memory store)."""
    keys = IdempotencyKeys(adapters.key_rows, clock=settings.now, claim_s=settings.idempotency_claim_s,
                           retention_s=settings.idempotency_retention_s)
    return Application(
        store=store, idempotency=keys, clock=settings.now, max_attempts=settings.job_max_attempts,
        sandbox=settings.sandbox_allowance, speech_max_ms=int(settings.asr_max_duration_s * 1000),
        vision_max_ms=int(settings.vision_max_duration_s * 1000),
        max_duration_ms=max_duration_ms(settings.media_max_duration_s), provider_configured=settings.llm_configured,
        completion_timeout_s=settings.api_completion_timeout_s, job_secret_grace_s=settings.job_secret_grace_s,
        storage=adapters.files, media=adapters.media, candidates=adapters.candidates,
        webhook_tests=adapters.webhook_tests,
        drafting=ThreadPoolExecutor(max_workers=DRAFTING_THREADS, thread_name_prefix="vaeo-drafts"),
        box=SecretBox(settings.secret_key), handlers=HANDLERS)
