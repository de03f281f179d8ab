"""The adapters of the application's ports (``services.application.ports``) a process runs with:
PostgreSQL for the idempotency keys and the read model lookups, ffmpeg for media, the disk or the
object store for files, HTTPS for a webhook's test send. The in-memory twins, for unit tests, are
``infra.memory_ports``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.candidates import PostgresCandidateVideos
from infra.idempotency_rows import PostgresKeyRows
from infra.media.inspector import FfmpegInspector


@dataclass(frozen=True)
class Adapters:
    """One set of adapters: ``key_rows`` (``KeyRows``), ``media`` (``MediaInspector``), ``files``
    (``FileStore``; None in a process that stores no upload), ``candidates`` (``CandidateVideos``)
    and ``webhook_tests`` (``WebhookTestSender``; None in a process that sends no test)."""

    key_rows: Any
    media: Any
    files: Any
    candidates: Any
    webhook_tests: Any = None


def database_adapters(pool: Any, *, storage: Any = None, webhook_tests: Any = None) -> Adapters:
    """The production adapters over a PostgreSQL ``pool`` and ``storage`` (``infra.storage.storage_for``);
    ``webhook_tests`` (``infra.webhook_tests.HttpWebhookTests``) where the API runs."""
    return Adapters(key_rows=PostgresKeyRows(pool), media=FfmpegInspector(), files=storage,
                    candidates=PostgresCandidateVideos(pool), webhook_tests=webhook_tests)

