"""Command handlers, one module per aggregate: load, decide through the aggregate, save.

Each takes its ports (the event store, a clock where needed) as parameters and saves what the
aggregates decided with ``EventStore.save``. A conflict on append (another command moved the
stream) is retried a bounded number of times by ``with_retries``; the caller turns the final
``ConcurrencyError`` into a 409. API modules parse, call one of these and answer.
"""

from services.commands.clips import load_article_video, request_clip, request_detection, request_render
from services.commands.common import CHARGE_RETRIES, CONFLICT_RETRIES, load_in, load_owned, missing, with_retries
from services.commands.conversations import TurnRecorder, load_conversation
from services.commands.jobs import SandboxQuotaExceeded, append_job, cancel_job, cancel_job_in, queue_job
from services.commands.keys import IssuedKey, issue_key, revoke_key, revoke_key_in
from services.commands.media import create_media
from services.commands.videos import change_video_description, ingest_video, media_refusal, request_analysis
from services.commands.webhooks import delete_webhook, load_webhook, record_test, register_webhook, resend_delivery
from services.commands.workspaces import (
    add_credits,
    create_workspace,
    job_secret_versions,
    rotate_workspace_job_secret,
)

__all__ = [
    "CHARGE_RETRIES", "CONFLICT_RETRIES", "IssuedKey", "SandboxQuotaExceeded", "add_credits", "append_job",
    "cancel_job", "cancel_job_in", "change_video_description", "create_media", "create_workspace", "delete_webhook",
    "ingest_video",
    "issue_key", "job_secret_versions", "load_in", "load_owned", "load_webhook", "media_refusal", "missing",
    "queue_job", "record_test", "register_webhook", "request_analysis", "resend_delivery", "revoke_key",
    "revoke_key_in", "rotate_workspace_job_secret", "with_retries",
    "TurnRecorder", "load_conversation",
]
__all__ += ["load_article_video", "request_clip", "request_detection", "request_render"]

# Articles: rename and attach, translation and regeneration jobs, the first export of a format.
from services.commands.articles import (  # noqa: E402
    ProviderNotConfigured,
    load_article,
    record_export,
    request_regeneration,
    request_translation,
    update_article,
)

__all__ += ["ProviderNotConfigured", "load_article", "record_export", "request_regeneration",
            "request_translation", "update_article"]
