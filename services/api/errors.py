"""Every non-2xx answer is ``{"error": {"code", "message", "details"}}``: this module maps to it.

One function, ``to_api_error``, turns whatever a call raised into an ``ApiError``: our own
errors, the domain error family (code and status declared on the class), aiohttp's HTTP
exceptions (unknown route, method, body size), a body that cannot be decoded, pydantic
validation errors, an append conflict that survived its retries, outages of PostgreSQL, Kafka or
the object store (503), and anything else (500, no traceback, the request id to quote).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, TypeVar

import asyncpg
import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from domain.base import DomainError
from infra.eventstore import ConcurrencyError
from infra.storage import StorageUnavailable

log = logging.getLogger("vaeo.api")

T = TypeVar("T")
MAX_BODY = web.AppKey("max_body_bytes", int)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}
        self.close = close  # close the connection after the answer (a body left unread)

    def envelope(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def printable(value: str, limit: int = 80) -> str:
    """A value the client sent (a header), safe to quote back: ASCII, with every other byte as a
    ``\\xNN`` escape (aiohttp keeps bytes that are not UTF-8 as surrogates, which JSON cannot carry)."""
    return value.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")[:limit]


def error_response(err: ApiError) -> web.Response:
    """The envelope of ``err``; one that cannot be encoded (text a client sent, not valid Unicode)
    is answered with its code and status and a message that quotes nothing."""
    try:
        return json_error(err.envelope(), err.status, err.headers)
    except (TypeError, ValueError):
        plain = ApiError(err.status, err.code, "the request was refused; its values could not be quoted", {})
        return json_error(plain.envelope(), err.status, err.headers)


def json_error(envelope: dict[str, Any], status: int, headers: dict[str, str]) -> web.Response:
    return web.Response(body=orjson.dumps(envelope, default=str), status=status, content_type="application/json",
                        headers=headers)


def body_timeout(seconds: float) -> ApiError:
    return ApiError(408, "request_timeout", f"the request body did not arrive in time (at most {seconds:g} s "
                    "without data, at a documented minimum rate); nothing was written", {"timeout_s": seconds},
                    close=True)


def not_found(what: str, ident: object) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found", {"id": str(ident)})


def found(row: T | None, what: str, ident: object) -> T:
    """The one not-found rule of the reads: a read model's row (or a query's ``True``) as it is,
    and for a missing one (None, or ``False`` from a query that answers whether it exists) the
    404 of a missing ``what``. Another workspace's or environment's row is missing too: every
    query is scoped to the caller's."""
    if row is None or row is False:
        raise not_found(what, ident)
    return row


def unavailable(what: str) -> ApiError:
    return ApiError(503, "unavailable", f"{what} is unreachable; nothing was written, retry later",
                    {"dependency": what})


def too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"the request body is larger than {limit} bytes",
                    {"limit_bytes": limit})


def validation_error(exc: ValidationError, where: str) -> ApiError:
    """400 naming each field (dotted path inside ``where``: body or query) and the rule it broke."""
    fields = []
    for err in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"])
        fields.append({"field": f"{where}.{loc}" if loc else where, "rule": err["type"], "message": err["msg"]})
    names = ", ".join(f["field"] for f in fields)
    return ApiError(400, "validation_error", f"invalid request: {names}", {"fields": fields})


def _http_status_error(exc: web.HTTPException, request: web.Request) -> ApiError:
    if exc.status == 404:
        return ApiError(404, "not_found", f"no route {request.path}", {"path": request.path})
    if exc.status == 405:
        allowed = sorted(getattr(exc, "allowed_methods", ()) or ())
        return ApiError(405, "method_not_allowed", f"{request.method} is not allowed on {request.path}",
                        {"method": request.method, "allowed": allowed},
                        headers={"Allow": ", ".join(allowed)})
    if exc.status == 413:
        return too_large(request.app[MAX_BODY])
    return ApiError(exc.status, exc.reason.lower().replace(" ", "_") or "http_error", exc.reason, {})


def is_outage(exc: BaseException) -> str | None:
    """The dependency an exception says is unreachable, or None."""
    if isinstance(exc, (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, ConnectionError, OSError,
                        TimeoutError)):
        return "PostgreSQL"
    if isinstance(exc, asyncpg.PostgresError) and (exc.sqlstate or "")[:2] in ("08", "57", "53"):
        return "PostgreSQL"
    if isinstance(exc, KafkaError):
        return "Kafka"
    return None


def client_gone(exc: BaseException, request: web.Request) -> bool:
    """A connection error raised while the client's own connection is closed: its abort, not ours."""
    transport = request.transport
    closed = transport is None or transport.is_closing() is True
    return closed and isinstance(exc, (OSError, RequestPayloadError, asyncio.IncompleteReadError))


def to_api_error(exc: BaseException, request: web.Request, request_id: str) -> ApiError:
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, DomainError):
        details = {k: v for k, v in exc.details.items()}
        return ApiError(exc.status, exc.code, exc.message, details)
    if isinstance(exc, ValidationError):
        return validation_error(exc, "body")
    if isinstance(exc, ConcurrencyError):
        return ApiError(409, "conflict", "the resource kept changing under this request; retry it", {})
    if isinstance(exc, StorageUnavailable):  # its message names neither the endpoint nor a credential
        log.warning("request %s: the object store is unavailable", request_id, extra={"request_id": request_id})
        return unavailable("the object store")
    if isinstance(exc, web.HTTPException):
        return _http_status_error(exc, request)
    if isinstance(exc, RequestPayloadError):  # a body aiohttp cannot decode (a Content-Encoding that lies)
        reason = getattr(exc.__cause__, "message", None) or "the body ended early or is malformed"
        log.info("request %s: the body could not be read: %s", request_id, reason, extra={"request_id": request_id})
        return ApiError(400, "invalid_body", f"the request body could not be read: {reason}", {})
    if client_gone(exc, request):
        # The client closed its connection mid-request: nothing is wrong on our side, and the
        # answer reaches nobody. Counted as 499 (client closed request), not as an outage.
        log.info("request %s: the client closed the connection (%s)", request_id, type(exc).__name__,
                 extra={"request_id": request_id})
        return ApiError(499, "client_closed_request", "the client closed the connection before the answer", {})
    dependency = is_outage(exc)
    if dependency:
        log.warning("request %s: %s unreachable: %s: %s", request_id, dependency, type(exc).__name__, exc,
                    extra={"request_id": request_id})
        return unavailable(dependency)
    log.error("request %s failed", request_id, exc_info=exc, extra={"request_id": request_id})
    return ApiError(500, "internal_error", f"internal error; quote request id {request_id}",
                    {"request_id": request_id})
