"""The webhooks read models: GET /webhooks and GET /webhooks/{id}/deliveries.

Pure and rebuildable like every projection: these tables show subscriptions and the delivery
history (every attempt with its outcome) from the events. They are not what the dispatcher
works from: its ``webhook_targets`` and ``webhook_deliveries`` (migration 003) are its own state,
never truncated by a rebuild, so rebuilding these never sends anything.
"""

from __future__ import annotations

from datetime import datetime

from projections.base import Projection, Statement

projection = Projection(
    name="webhooks",
    ddl=[
        """CREATE TABLE IF NOT EXISTS webhooks (
            id           uuid PRIMARY KEY,
            workspace_id uuid NOT NULL,
            environment  text NOT NULL,
            url          text NOT NULL,
            events       text[] NOT NULL,
            status       text NOT NULL,
            reason       text,
            created_at   timestamptz NOT NULL,
            updated_at   timestamptz NOT NULL,
            version      integer NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS webhooks_by_workspace ON webhooks (workspace_id, environment, created_at, id)",
        """CREATE TABLE IF NOT EXISTS webhook_delivery_log (
            id               uuid PRIMARY KEY,
            workspace_id     uuid NOT NULL,
            environment      text NOT NULL,
            webhook_id       uuid,
            url              text NOT NULL,
            event            text NOT NULL,
            source_position  bigint NOT NULL,
            status           text NOT NULL,
            attempts         integer NOT NULL DEFAULT 0,
            last_status_code integer,
            last_error       text,
            next_attempt_at  timestamptz,
            created_at       timestamptz NOT NULL,
            updated_at       timestamptz NOT NULL,
            version          integer NOT NULL
        )""",
        """CREATE INDEX IF NOT EXISTS webhook_delivery_log_by_webhook
             ON webhook_delivery_log (webhook_id, created_at DESC)""",
        """CREATE TABLE IF NOT EXISTS webhook_attempts (
            delivery_id  uuid NOT NULL,
            attempt      integer NOT NULL,
            attempted_at timestamptz NOT NULL,
            signed_at    bigint,
            outcome      text,
            status_code  integer,
            error        text,
            latency_ms   double precision,
            PRIMARY KEY (delivery_id, attempt)
        )""",
    ],
    tables=["webhooks", "webhook_delivery_log", "webhook_attempts"],
    ordering="per_stream",
)


@projection.handles("WebhookRegistered")
def _registered(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO webhooks (id, workspace_id, environment, url, events, status, created_at, updated_at,
                                      version)
                VALUES ($1, $2, $3, $4, $5, 'active', $6, $6, $7) ON CONFLICT (id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], d["url"], d["events"], ev.recorded_at, ev.version))]


def _status(status: str):
    def handler(ev) -> list[Statement]:
        return [("UPDATE webhooks SET status = $2, reason = $3, updated_at = $4, version = $5 "
                 "WHERE id = $1 AND version < $5",
                 (ev.stream_id, status, ev.data.get("reason"), ev.recorded_at, ev.version))]

    return handler


projection.handles("WebhookDeleted")(_status("deleted"))
projection.handles("WebhookDisabled")(_status("disabled"))


@projection.handles("WebhookDeliveryScheduled")
def _scheduled(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO webhook_delivery_log (id, workspace_id, environment, webhook_id, url, event,
                                                  source_position, status, created_at, updated_at, version)
                VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $8, $9) ON CONFLICT (id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], d.get("webhook_id"), d["url"], d["event_name"],
              d["source_position"], ev.recorded_at, ev.version))]


_UPDATE = """UPDATE webhook_delivery_log SET status = coalesce($3, status), attempts = greatest(attempts, $4),
                    last_status_code = $5, last_error = $6, next_attempt_at = $7, updated_at = $8, version = $2
              WHERE id = $1 AND version < $2"""
_ATTEMPT = """INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, signed_at)
              VALUES ($1, $2, $3, $4) ON CONFLICT (delivery_id, attempt) DO NOTHING"""
_OUTCOME = """UPDATE webhook_attempts SET outcome = $3, status_code = $4, error = $5, latency_ms = $6
               WHERE delivery_id = $1 AND attempt = $2"""


@projection.handles("WebhookDeliveryAttempted")
def _attempted(ev) -> list[Statement]:
    d = ev.data
    return [(_ATTEMPT, (ev.stream_id, d["attempt"], ev.recorded_at, d.get("signed_at")))]


@projection.handles("WebhookDelivered")
def _delivered(ev) -> list[Statement]:
    d = ev.data
    return [(_OUTCOME, (ev.stream_id, d["attempt"], "delivered", d["status_code"], None, d["latency_ms"])),
            (_UPDATE, (ev.stream_id, ev.version, "succeeded", d["attempt"], d["status_code"], None, None,
                       ev.recorded_at))]


@projection.handles("WebhookDeliveryFailed")
def _failed(ev) -> list[Statement]:
    d = ev.data
    next_at = d.get("next_attempt_at")
    status = "pending" if next_at else ("exhausted" if d.get("exhausted") else "failed")
    return [(_OUTCOME, (ev.stream_id, d["attempt"], "failed", d.get("status_code"), d["error"], d["latency_ms"])),
            (_UPDATE, (ev.stream_id, ev.version, status, d["attempt"], d.get("status_code"), d["error"],
                       datetime.fromisoformat(next_at) if next_at else None, ev.recorded_at))]


@projection.handles("WebhookDeliveryCancelled")
def _cancelled(ev) -> list[Statement]:
    d = ev.data
    return [("""UPDATE webhook_delivery_log SET status = 'cancelled', attempts = greatest(attempts, $3),
                       last_error = $4, next_attempt_at = NULL, updated_at = $5, version = $2
                 WHERE id = $1 AND version < $2""",
             (ev.stream_id, ev.version, d["attempts"], d["reason"], ev.recorded_at))]


@projection.handles("WebhookDeliveryResent")
def _resent(ev) -> list[Statement]:
    return [("""UPDATE webhook_delivery_log SET status = 'pending', next_attempt_at = $3, updated_at = $3, version = $2
                 WHERE id = $1 AND version < $2""", (ev.stream_id, ev.version, ev.recorded_at))]
