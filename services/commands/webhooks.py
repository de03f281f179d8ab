"""Webhooks: register (the secret encrypted in the event), delete, record a test send, resend a delivery."""

from __future__ import annotations

from uuid import UUID, uuid4

from domain.base import NotFound
from domain.webhooks import Webhook, WebhookDelivery
from infra.crypto import SecretBox
from infra.eventstore import EventStore
from infra.webhook_http import new_webhook_secret
from services.commands.common import with_retries
from services.commands.meta import joining


async def register_webhook(store: EventStore, box: SecretBox, workspace_id: UUID, *, environment: str, url: str,
                           events: list[str] | None, meta: dict | None = None) -> tuple[Webhook, str, int]:
    """A new webhook; returns it, its secret (never stored in clear) and the position."""
    webhook_id = uuid4()
    secret = new_webhook_secret()
    webhook = Webhook.register(webhook_id=webhook_id, workspace_id=workspace_id, environment=environment, url=url,
                               events=events, secret_encrypted=box.encrypt(secret, str(webhook_id)))
    return webhook, secret, await store.save(webhook, workspace_id=workspace_id, meta=meta)


async def load_webhook(store: EventStore, workspace_id: UUID, environment: str, webhook_id: UUID) -> Webhook:
    """A live webhook of this workspace and environment; any other (or a deleted one) is a 404."""
    webhook = await store.load_aggregate(webhook_id)
    if (not isinstance(webhook, Webhook) or webhook.workspace_id != workspace_id
            or webhook.environment != environment or webhook.status == "deleted"):
        raise NotFound("webhook not found", id=str(webhook_id))
    return webhook


async def delete_webhook(store: EventStore, workspace_id: UUID, webhook_id: UUID, *, environment: str,
                         meta: dict | None = None) -> int:
    async def attempt() -> int:
        webhook = await load_webhook(store, workspace_id, environment, webhook_id)
        webhook.delete()
        return await store.save(webhook, workspace_id=workspace_id, meta=meta)

    return await with_retries(attempt)


async def resend_delivery(store: EventStore, workspace_id: UUID, webhook_id: UUID, delivery_id: UUID, *,
                          environment: str, requested_by: str, meta: dict | None = None) -> int:
    async def attempt() -> int:
        await load_webhook(store, workspace_id, environment, webhook_id)
        delivery = await store.load_aggregate(delivery_id)
        if not isinstance(delivery, WebhookDelivery) or delivery.webhook_id != webhook_id:
            raise NotFound("delivery not found", id=str(delivery_id))
        delivery.resend(requested_by)
        # The resend joins the chain of the event the delivery carries (``meta.joining``).
        chained = joining(meta, await store.origin(delivery_id))
        return await store.save(delivery, workspace_id=workspace_id, meta=chained)

    return await with_retries(attempt)


async def record_test(store: EventStore, workspace_id: UUID, webhook_id: UUID, *, message_id: UUID, signed_at: int,
                      status_code: int | None, latency_ms: float, error: str | None, meta: dict | None = None) -> int:
    """``WebhookTestSent`` on the webhook's stream: what the test endpoint did, never the secret."""

    async def attempt() -> int:
        webhook = await store.load_aggregate(webhook_id)
        webhook.record_test(message_id=message_id, signed_at=signed_at, status_code=status_code,
                            latency_ms=latency_ms, error=error)
        return await store.save(webhook, workspace_id=workspace_id, meta=meta)

    return await with_retries(attempt)
