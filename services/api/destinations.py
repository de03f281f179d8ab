"""The destination guard at request time, for every operation that takes a notification URL.

``check_destination`` runs ``infra.netguard.vet`` (the guard the dispatcher runs before every
attempt) on a URL as the request arrives, with the caller's environment's allowance, and turns a
refusal into 400 ``destination_refused`` (``details.field``, ``details.reason``). POST /webhooks
calls it for ``url``; the API's endpoint wrapper calls it for the ``webhook_url`` of any request
body that has one (``check_body_webhook_url``), so an operation that takes a per-request
``webhook_url`` cannot forget it. A refusal found later, at send time, is permanent (see
services/processes/dispatcher/sender.py).
"""

from __future__ import annotations

from pydantic import BaseModel

from infra.netguard import BoundedResolver, DestinationRefused, allowance_for, vet
from infra.settings import Settings
from services.api.errors import ApiError

WEBHOOK_URL_FIELD = "webhook_url"


def refused(exc: DestinationRefused, field: str) -> ApiError:
    return ApiError(400, "destination_refused", f"the {field} is not a public HTTPS destination: {exc.reason}",
                    {"field": field, "reason": exc.reason})


async def check_destination(settings: Settings, environment: str, url: str, *, field: str) -> None:
    """400 ``destination_refused`` unless ``url`` passes the guard now (names resolved, bounded)."""
    try:
        await vet(url, BoundedResolver(), allowance_for(settings.webhook_test_allow, settings.mode, environment))
    except DestinationRefused as exc:
        raise refused(exc, field) from None


async def check_body_webhook_url(settings: Settings, environment: str, body: BaseModel | None) -> None:
    """The guard for a request body's ``webhook_url``, when the body has one and it is set."""
    url = getattr(body, WEBHOOK_URL_FIELD, None) if body is not None else None
    if isinstance(url, str):
        await check_destination(settings, environment, url, field=WEBHOOK_URL_FIELD)
