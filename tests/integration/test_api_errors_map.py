"""The error mapping of the API, exception by exception (no server: the envelope's contract)."""

from __future__ import annotations

import asyncpg
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from aiokafka.errors import KafkaConnectionError
from pydantic import BaseModel, ValidationError

from domain.base import InsufficientCredits, InvalidTransition, NotFound
from infra.eventstore import ConcurrencyError
from services.api.errors import MAX_BODY, to_api_error


def _request() -> web.Request:
    app = web.Application()
    app[MAX_BODY] = 1024
    return make_mocked_request("POST", "/v1/medias", app=app)


def _map(exc: BaseException):
    err = to_api_error(exc, _request(), "rid-12345678")
    return err.status, err.code, err.details


def test_conflict_after_retries_is_409_conflict():
    assert _map(ConcurrencyError("stream moved"))[:2] == (409, "conflict")


def test_domain_errors_keep_their_status_code_and_details():
    assert _map(InvalidTransition("finished", status="completed")) == (409, "invalid_state", {"status": "completed"})
    assert _map(NotFound("job not found", id="x"))[:2] == (404, "not_found")
    assert _map(InsufficientCredits("no", required=5, balance=1))[:2] == (402, "insufficient_credits")


def test_outages_are_503_naming_the_dependency():
    assert _map(ConnectionRefusedError()) == (503, "unavailable", {"dependency": "PostgreSQL"})
    assert _map(asyncpg.CannotConnectNowError("starting"))[2] == {"dependency": "PostgreSQL"}
    assert _map(KafkaConnectionError())[2] == {"dependency": "Kafka"}


def test_http_exceptions_and_validation():
    assert _map(web.HTTPRequestEntityTooLarge(max_size=1024, actual_size=4096)) == (
        413, "payload_too_large", {"limit_bytes": 1024})
    assert _map(web.HTTPNotFound())[:2] == (404, "not_found")

    class Body(BaseModel):
        name: str

    try:
        Body.model_validate({})
    except ValidationError as exc:
        status, code, details = _map(exc)
    assert (status, code) == (400, "validation_error")
    assert details["fields"] == [{"field": "body.name", "rule": "missing", "message": "Field required"}]


def test_anything_else_is_500_with_the_request_id_and_no_detail_of_the_failure():
    status, code, details = _map(KeyError("secret internals"))
    assert (status, code, details) == (500, "internal_error", {"request_id": "rid-12345678"})
    assert "secret" not in to_api_error(KeyError("secret internals"), _request(), "rid-12345678").message


def test_a_connection_error_on_a_closed_client_connection_is_its_abort_not_an_outage():
    from unittest import mock

    app = web.Application()
    app[MAX_BODY] = 1024
    closing = mock.Mock()
    closing.is_closing.return_value = True
    gone = make_mocked_request("POST", "/v1/videos", app=app, transport=closing)
    err = to_api_error(ConnectionResetError("Connection lost"), gone, "rid-12345678")
    assert (err.status, err.code) == (499, "client_closed_request")
    # The same error while the client is still connected is ours: the database's.
    assert _map(ConnectionResetError("Connection lost"))[:2] == (503, "unavailable")
