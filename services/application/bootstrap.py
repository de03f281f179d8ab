"""Building the application once, at start-up: from settings, with the process's adapters."""

from __future__ import annotations

from typing import Any

from domain.videos import max_duration_ms
from infra.crypto import SecretBox
from infra.eventstore import EventStore
from infra.memory_store import MemoryEventStore
from infra.settings import Settings
from services.application.context import Application
from services.application.handlers import HANDLERS
from services.application.idempotency import IdempotencyKeys, MemoryIdempotencyKeys


def bootstrap(settings: Settings, store: EventStore, *, storage: Any = None) -> Application:
    """The application of a process: its store, the settings' clock and policies, and the
    idempotency keys of the store's database."""
    if isinstance(store, MemoryEventStore):
        keys: Any = MemoryIdempotencyKeys(store.database, clock=settings.now, claim_s=settings.idempotency_claim_s,
                                          retention_s=settings.idempotency_retention_s)
    else:
        keys = IdempotencyKeys(store.pool, clock=settings.now, claim_s=settings.idempotency_claim_s,
                               retention_s=settings.idempotency_retention_s)
    return Application(
        store=store, idempotency=keys, clock=settings.now, max_attempts=settings.job_max_attempts,
        sandbox=settings.sandbox_allowance, speech_max_ms=int(settings.asr_max_duration_s * 1000),
        vision_max_ms=int(settings.vision_max_duration_s * 1000),
        max_duration_ms=max_duration_ms(settings.media_max_duration_s), provider_configured=settings.llm_configured,
        completion_timeout_s=settings.api_completion_timeout_s, job_secret_grace_s=settings.job_secret_grace_s,
        storage=storage, box=SecretBox(settings.secret_key), handlers=HANDLERS)
