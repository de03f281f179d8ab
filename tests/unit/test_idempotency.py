"""The pure parts of idempotent requests: the canonical request hash and what a replay answers."""

from __future__ import annotations

from uuid import UUID

import pytest

from services.application.idempotency import Outcome, ReplayedRefusal, _replay, job_id_for, request_hash

WS = UUID("00000000-0000-0000-0000-000000000001")


def test_the_request_hash_ignores_key_order_and_sees_every_value():
    one, other = {"a": 1, "b": {"c": [1, 2], "d": None}}, {"b": {"d": None, "c": [1, 2]}, "a": 1}
    assert request_hash(one) == request_hash(other)
    assert request_hash({"a": 1}) != request_hash({"a": 2})
    assert request_hash({"a": [1, 2]}) != request_hash({"a": [2, 1]})


def test_an_identical_request_names_the_same_job_and_nothing_else_does():
    request = {"article_id": 4, "template_id": 2}
    same = job_id_for(WS, "production", "clips.detect", dict(reversed(request.items())))
    assert job_id_for(WS, "production", "clips.detect", request) == same
    assert job_id_for(WS, "sandbox", "clips.detect", request) != same
    assert job_id_for(WS, "production", "clips.render", request) != same
    assert job_id_for(WS, "production", "clips.detect", request, generation=1) != same


def test_a_replay_says_reused_where_the_answer_has_the_field():
    with_field = _replay(Outcome(202, {"data": {"job_id": "j", "reused": False}}))
    assert with_field.reused and with_field.body == {"data": {"job_id": "j", "reused": True}}
    without = _replay(Outcome(201, {"data": {"id": 3}}))
    assert without.reused and without.body == {"data": {"id": 3}}


def test_a_replayed_refusal_is_raised_with_its_status_code_and_details():
    stored = Outcome(402, {"error": {"code": "insufficient_credits", "message": "short", "details": {"needed": 5}}})
    with pytest.raises(ReplayedRefusal) as replayed:
        _replay(stored)
    assert (replayed.value.status, replayed.value.code, replayed.value.message, replayed.value.details) == \
        (402, "insufficient_credits", "short", {"needed": 5})
