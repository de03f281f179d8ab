# mypy: disable-error-code="call-arg"
# (``attempt_events`` builds the delivery's events from their classes, which eventsourcing makes
# dataclasses when the aggregate is declared: mypy does not see their fields as parameters.)
"""Webhooks: subscriptions (``Webhook``), deliveries (``WebhookDelivery``) and their pure policies.

A webhook is a stream per subscription; its secret is stored encrypted (the command encrypts it
with the service key and the webhook id as associated data: the plaintext never enters an
event). A delivery is a stream per (target, source event position, webhook event name), named
by ``delivery_id`` (uuid5), so retries, replays and a second dispatcher all name the same
delivery. Its history (every attempt and its outcome) is events, hence auditable.

The webhook event types (their names, the domain events that emit them, their public ``data``)
are one row each in ``domain.webhook_payloads``. The pure policies here: the delivery's body
around that ``data``, the retry schedule with jitter and ``Retry-After``, and the events of one
attempt (``attempt_events``, ``cancel_events``), which the dispatcher builds without replaying the
delivery's stream.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event
from eventsourcing.utils import get_topic

from domain.base import DomainError, InvalidTransition, aggregate, deterministic_id
from domain.webhook_payloads import EVENT_NAMES

TEST_EVENT = "webhook.test"

ACTIVE, DELETED, DISABLED = "active", "deleted", "disabled"
CANCELLED = "cancelled"  # a delivery that ended unsent: its webhook was deleted or disabled


class WebhookError(DomainError):
    code = "invalid_webhook"


def delivery_id(target: str | UUID, source_position: int, event_name: str) -> UUID:
    """Stable across retries, replays and processes: the same target, event and name, one id."""
    return deterministic_id("webhook-delivery", target, source_position, event_name)


def check_events(events: Sequence[str] | None) -> list[str]:
    """None means every event type; otherwise unique names of event types, kept in the caller's order."""
    if events is None:
        return list(EVENT_NAMES)
    unknown = [e for e in events if e not in EVENT_NAMES]
    if unknown:
        raise WebhookError(f"unknown webhook events: {', '.join(unknown)}", field="events", allowed=list(EVENT_NAMES))
    if len(set(events)) != len(events):
        raise WebhookError("webhook events must be unique", field="events")
    return list(events)


def payload(delivery: UUID, event_name: str, created_at: str, workspace_id: UUID | str,
            data: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a delivery: the same for every attempt (the signature is not)."""
    return {"id": str(delivery), "type": event_name, "created_at": created_at, "workspace_id": str(workspace_id),
            "data": data}


def next_delay(schedule: Sequence[float], attempts_done: int, *, jitter: float = 0.1,
               retry_after: float | None = None, floor: float = 1.0, retry_after_max: float = 3600.0,
               timed_out: bool = False, rng: random.Random | None = None) -> float | None:
    """Seconds until the next attempt after ``attempts_done`` attempts, or None when exhausted.

    ``schedule[k]`` is the delay before attempt ``k + 1`` (``schedule[0]`` is the first attempt,
    normally 0). Jitter spreads retries of many deliveries (+-``jitter`` of the delay). A 429's
    ``Retry-After`` and a timeout get at least ``floor`` (a receiver that is struggling is not
    hammered); ``Retry-After`` is clamped to ``retry_after_max`` so one header cannot park a
    delivery for a week, and never shortens the schedule.
    """
    if attempts_done >= len(schedule):
        return None
    delay = schedule[attempts_done]
    delay *= 1 + (rng or random).uniform(-jitter, jitter)
    if retry_after is not None:
        delay = max(delay, min(max(retry_after, floor), retry_after_max))
    if timed_out or retry_after is not None:
        delay = max(delay, floor)
    return max(delay, 0.0)


@aggregate("Webhook")
class Webhook(Aggregate):
    class Registered(Aggregate.Created):
        """A subscription (a URL, the events it wants, an environment) with its secret encrypted under the service key.
        It is on the log, so a webhook registered before an event is ordered before it.

        Read by the `webhooks` read model (GET /webhooks); the dispatcher (its subscriptions come from the log)."""

        published_as = "WebhookRegistered"
        webhook_id: UUID
        workspace_id: UUID
        environment: str
        url: str
        events: list[str]
        secret_encrypted: str  # AES-GCM under the service key, associated data = webhook id

    class Deleted(Aggregate.Event):
        """The customer deleted a subscription: nothing more is sent to it, and its deliveries not yet sent end
        cancelled.

        Read by the `webhooks` read model; the dispatcher (stops delivering to it)."""

        published_as = "WebhookDeleted"
        reason: str

    class Disabled(Aggregate.Event):
        """The receiver answered 410 Gone: the dispatcher stops sending to it until the customer registers a new
        webhook.

        Read by the `webhooks` read model; the dispatcher."""

        published_as = "WebhookDisabled"
        reason: str

    class TestSent(Aggregate.Event):
        """POST /webhooks/{id}/test sent (or tried to send) a signed `webhook.test` event: the outcome is on record
        before the answer, though a test is not a delivery (no retry).

        Read by no read model: the audit of the log (`vaeo events tail`)."""

        published_as = "WebhookTestSent"
        message_id: UUID  # the test message's webhook-id
        signed_at: int  # its webhook-timestamp (seconds)
        delivered: bool  # the receiver answered 2xx
        status_code: int | None  # None: no answer (refused destination, network error, timeout)
        latency_ms: float  # to 0.1 ms, as the endpoint answered
        error: str | None

    @staticmethod
    def create_id(webhook_id: UUID) -> UUID:
        return webhook_id

    @event(Registered)
    def __init__(self, webhook_id: UUID, workspace_id: UUID, environment: str, url: str, events: list[str],
                 secret_encrypted: str):
        self.workspace_id = workspace_id
        self.environment = environment
        self.url = url
        self.events = events
        self.secret_encrypted = secret_encrypted
        self.status = ACTIVE
        self.reason: str | None = None

    @classmethod
    def register(cls, *, webhook_id: UUID, workspace_id: UUID, environment: str, url: str,
                 events: Sequence[str] | None, secret_encrypted: str) -> Webhook:
        if not url.startswith("https://"):
            raise WebhookError("a webhook url must start with https://", field="url")
        return cls(webhook_id=webhook_id, workspace_id=workspace_id, environment=environment, url=url,
                   events=check_events(events), secret_encrypted=secret_encrypted)

    def check_active(self, action: str) -> None:
        if self.status != ACTIVE:
            raise InvalidTransition(f"webhook is {self.status}; it cannot be {action}", status=self.status)

    def delete(self, reason: str = "deleted by API") -> None:
        if self.status == DELETED:
            raise InvalidTransition("webhook is already deleted", status=self.status)
        self._deleted(reason=reason)

    @event(Deleted)
    def _deleted(self, reason: str) -> None:
        self.status = DELETED
        self.reason = reason

    def disable(self, reason: str) -> None:
        """The receiver asked to stop (410 Gone): no further delivery until a new webhook."""
        if self.status != ACTIVE:
            return
        self._disabled(reason=reason)

    @event(Disabled)
    def _disabled(self, reason: str) -> None:
        self.status = DISABLED
        self.reason = reason

    def record_test(self, *, message_id: UUID, signed_at: int, status_code: int | None, latency_ms: float,
                    error: str | None) -> None:
        """A fact, whatever the webhook's status by now: the test was sent (or refused) already."""
        self._test_sent(message_id=message_id, signed_at=signed_at,
                        delivered=status_code is not None and 200 <= status_code < 300, status_code=status_code,
                        latency_ms=round(latency_ms, 1), error=error[:500] if error else None)

    @event(TestSent)
    def _test_sent(self, message_id: UUID, signed_at: int, delivered: bool, status_code: int | None,
                   latency_ms: float, error: str | None) -> None:
        pass


@aggregate("WebhookDelivery")
class WebhookDelivery(Aggregate):
    """One notification to one target, with every attempt; its id is ``delivery_id(...)``."""

    class Scheduled(Aggregate.Created):
        """The dispatcher decided that one event goes to one target (a webhook, or a job's `webhook_url`): the
        delivery's stream, whose id is the same across retries, replays and processes.

        Read by the `webhooks` read model (GET /webhooks/{id}/deliveries)."""

        published_as = "WebhookDeliveryScheduled"
        delivery_id: UUID
        workspace_id: UUID
        environment: str
        webhook_id: UUID | None  # None: a job's per-request webhook_url
        url: str
        event_name: str
        source_position: int

    class Attempted(Aggregate.Event):
        """An attempt is about to be sent, with the time it is signed at: every attempt is on record before its outcome,
        so one cut by a crash shows.

        Read by the `webhooks` read model (the delivery's attempts)."""

        published_as = "WebhookDeliveryAttempted"
        attempt: int
        signed_at: int  # the webhook-timestamp of this attempt (seconds)

    class Delivered(Aggregate.Event):
        """The receiver accepted an attempt (2xx): the delivery is done, with its status code and latency.

        Read by the `webhooks` read model (GET /webhooks/{id}/deliveries)."""

        published_as = "WebhookDelivered"
        attempt: int
        status_code: int
        latency_ms: int  # whole milliseconds

    class Failed(Aggregate.Event):
        """An attempt failed (the status or the network error, the latency), with when the next attempt is due from the
        retry schedule, or that the schedule is exhausted.

        Read by the `webhooks` read model (the delivery's status, last error and next attempt)."""

        published_as = "WebhookDeliveryFailed"
        attempt: int
        status_code: int | None
        error: str
        latency_ms: int  # whole milliseconds
        next_attempt_at: datetime | None
        exhausted: bool  # the schedule is used up: no further attempt unless resent

    class Resent(Aggregate.Event):
        """The customer asked for a delivery to be sent again (POST /webhooks/{id}/deliveries/{delivery_id}/resend),
        under the same delivery id.

        Read by the `webhooks` read model; the dispatcher (which schedules the new attempt)."""

        published_as = "WebhookDeliveryResent"
        requested_by: str

    class Cancelled(Aggregate.Event):
        """The delivery ended unsent because its webhook was deleted or disabled (410) meanwhile.

        Read by the `webhooks` read model."""

        published_as = "WebhookDeliveryCancelled"
        reason: str  # "webhook deleted" or "webhook disabled"
        attempts: int  # attempts made before (0: it was never sent)

    @staticmethod
    def create_id(delivery_id: UUID) -> UUID:
        return delivery_id

    @event(Scheduled)
    def __init__(self, delivery_id: UUID, workspace_id: UUID, environment: str, webhook_id: UUID | None, url: str,
                 event_name: str, source_position: int):
        self.workspace_id = workspace_id
        self.environment = environment
        self.webhook_id = webhook_id
        self.url = url
        self.event_name = event_name
        self.source_position = source_position
        self.status = "pending"
        self.attempts = 0

    def record_attempt(self, attempt: int, signed_at: int) -> None:
        self._attempted(attempt=attempt, signed_at=signed_at)

    @event(Attempted)
    def _attempted(self, attempt: int, signed_at: int) -> None:
        self.attempts = max(self.attempts, attempt)
        self.status = "sending"

    def record_delivered(self, attempt: int, status_code: int, latency_ms: float) -> None:
        self._delivered(attempt=attempt, status_code=status_code, latency_ms=round(latency_ms))

    @event(Delivered)
    def _delivered(self, attempt: int, status_code: int, latency_ms: int) -> None:
        self.status = "succeeded"

    def record_failed(self, attempt: int, status_code: int | None, error: str, latency_ms: float,
                      next_attempt_at: datetime | None, exhausted: bool) -> None:
        self._failed(attempt=attempt, status_code=status_code, error=error[:500], latency_ms=round(latency_ms),
                     next_attempt_at=next_attempt_at, exhausted=exhausted)

    @event(Failed)
    def _failed(self, attempt: int, status_code: int | None, error: str, latency_ms: int,
                next_attempt_at: datetime | None, exhausted: bool) -> None:
        self.status = "pending" if next_attempt_at is not None else ("exhausted" if exhausted else "failed")

    def resend(self, requested_by: str) -> None:
        if self.status not in ("failed", "exhausted"):
            raise InvalidTransition(f"only a failed or exhausted delivery can be resent; this one is {self.status}",
                                    status=self.status)
        self._resent(requested_by=requested_by)

    @event(Resent)
    def _resent(self, requested_by: str) -> None:
        self.status = "pending"

    def cancel(self, reason: str, attempts: int) -> None:
        self._cancelled(reason=reason, attempts=attempts)

    @event(Cancelled)
    def _cancelled(self, reason: str, attempts: int) -> None:
        self.status = CANCELLED


_DELIVERY_TOPIC = get_topic(WebhookDelivery)


def _start(version: int, delivery_id: UUID, now: datetime, scheduled: dict[str, Any]) -> list[Aggregate.Event]:
    if version:
        return []
    return [WebhookDelivery.Scheduled(originator_topic=_DELIVERY_TOPIC, originator_id=delivery_id,
                                      originator_version=1, timestamp=now, delivery_id=delivery_id,
                                      **scheduled)]


def attempt_events(delivery_id: UUID, version: int, scheduled: dict[str, Any], *, attempt: int, signed_at: int,
                   status_code: int | None, latency_ms: float, error: str | None,
                   now: datetime, next_attempt_at: datetime | None = None,
                   exhausted: bool = False) -> list[Aggregate.Event]:
    """The events of one attempt on a delivery stream at ``version`` (0: a new stream, which starts
    with ``Scheduled(**scheduled)``): ``Attempted``, then ``Delivered`` (2xx) or ``Failed``.

    The same events, field for field, as ``record_attempt`` and ``record_delivered`` or
    ``record_failed`` on the aggregate, built from the declared event classes without replaying
    the stream: recording an attempt checks no invariant (the sender's lease decides who records
    it), so the stream's version, which the sender's row keeps, is all it needs; replaying would
    cost a load per retry and most of the sender's time.
    """
    out = _start(version, delivery_id, now, scheduled)
    v = version + len(out)
    out.append(WebhookDelivery.Attempted(originator_id=delivery_id, originator_version=v + 1, timestamp=now,
                                         attempt=attempt, signed_at=signed_at))
    if status_code is not None and 200 <= status_code < 300:
        out.append(WebhookDelivery.Delivered(originator_id=delivery_id, originator_version=v + 2, timestamp=now,
                                             attempt=attempt, status_code=status_code,
                                             latency_ms=round(latency_ms)))
    else:
        out.append(WebhookDelivery.Failed(originator_id=delivery_id, originator_version=v + 2, timestamp=now,
                                          attempt=attempt, status_code=status_code,
                                          error=(error or "failed")[:500], latency_ms=round(latency_ms),
                                          next_attempt_at=next_attempt_at, exhausted=exhausted))
    return out


def cancel_events(delivery_id: UUID, version: int, scheduled: dict[str, Any], *, reason: str,
                  attempts: int, now: datetime) -> list[Aggregate.Event]:
    """The events that end a delivery unsent (``Cancelled``), as ``attempt_events`` builds an attempt's."""
    out = _start(version, delivery_id, now, scheduled)
    out.append(WebhookDelivery.Cancelled(originator_id=delivery_id, originator_version=version + len(out) + 1,
                                         timestamp=now, reason=reason, attempts=attempts))
    return out
