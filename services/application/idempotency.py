"""Idempotent requests for any command of the write side, with Stripe's semantics.

A client sends a key with a request. The key is scoped to the API key that sent it (so to its
workspace and environment too) and the operation: another API key sending the same key, even of
the same workspace, has a key of its own and its request runs on its own (an answer may hold a new
API key or a secret, and another key may not be allowed what the first did). The request's
parameters are hashed (``request_hash``, canonical JSON). Then:

- the first request with the key claims it, runs, and its answer (status and body) is stored in
  the transaction that appends the command's events: the answer exists if and only if the events
  do;
- a later request with the key and the same parameters gets that answer again, without running
  (``reused`` true in ``data`` where the operation's answer has that field);
- the same key with other parameters is refused, 409 ``idempotency_key_mismatch``, and changes
  nothing;
- while the first request still runs, another one with the key is refused, 409
  ``idempotency_key_in_use`` (Stripe does the same): the client retries it and then gets the
  replay. Of many concurrent requests with one key exactly one runs; each other one is either
  a replay or that 409.

The claim is a row taken in its own short transaction, with an owner and a time it lapses
(``claim_s``): a process that dies in flight blocks its key that long at most, then the next
request runs. A request whose claim lapsed and was taken over cannot commit: completing a claim
one no longer holds fails the append it rides in (PostgreSQL ``VA002``), so a key never has two
executions. A request that wrote nothing is not the key's answer: a refusal (a 4xx such as a
missing scope or a short balance) or an unexpected failure (an outage, a conflict retried out)
releases its claim, and the same request may be sent with the key again (it is decided afresh).
A refusal after the request's events committed is stored: the work was done. Keys and their
answers are kept ``retention_s`` (at least 24 hours) after they were first claimed, then
``purge`` deletes them; a revoked API key's keys are deleted with its revocation
(``KeyAnswersDropped``).

The deterministic form, for an operation that reuses an identical earlier request's job without
any key (``jobs.queue_job_once``): the canonical request hashed into the job id (uuid5), so an
identical request finds the job's stream instead of creating one.

The rules are here (``IdempotencyKeys``); the keys' rows are a port (``ports.KeyRows``): the
PostgreSQL table (``infra.idempotency_rows``) or, for tests, its twin beside an in-memory event
store's tables (``infra.memory_ports``), the same rules on either.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import orjson

from domain.base import DomainError, deterministic_id
from infra.effects import ClaimLapsed, IdempotencyAnswer
from infra.settings import wall_clock
from services.application.ports import KeyRows, KeyScope

CLAIM_S = 60.0
RETENTION_S = 24 * 3600.0
PENDING = "vaeo_answer_pending"  # the placeholder's field: the key is bound, its answer not stored yet

# The claim of the request that runs in this task, for an operation whose key is applied around its
# whole handler (the API's ``Idempotency-Key`` header): ``Context.save`` binds it to the first append
# that commits (``ambient_effects``).
AMBIENT: contextvars.ContextVar[Claim | None] = contextvars.ContextVar("vaeo_idempotency_claim", default=None)


class IdempotencyKeyInUse(DomainError):
    code = "idempotency_key_in_use"
    status = 409


class IdempotencyKeyMismatch(DomainError):
    code = "idempotency_key_mismatch"
    status = 409


class ReplayedRefusal(DomainError):
    """The refusal the key's first request got, answered again: same status, code, message, details."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any]) -> None:
        super().__init__(message, **details)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Outcome:
    """An operation's answer: what the first request got, and what a replay gets (``reused``)."""

    status: int
    body: dict[str, Any]
    reused: bool = False


def request_hash(request: Mapping[str, Any]) -> str:
    """The hash of a request's parameters, independent of key order: what a key's replay must match."""
    canonical = orjson.dumps(request, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(canonical).hexdigest()


def _refusal_body(exc: DomainError) -> dict[str, Any]:
    return {"error": {"code": exc.code, "message": exc.message, "details": dict(exc.details)}}


@dataclass(frozen=True)
class Claim:
    """A request's hold on its key while it runs. ``records(outcome)`` is the effect that stores
    the answer: give it to the command's append (``effects=``)."""

    workspace_id: UUID
    environment: str
    api_key_id: UUID
    operation: str
    key: str
    owner: UUID
    clock: Callable[[], datetime] = field(repr=False, compare=False)
    # Set once an append that stored the answer has committed: the answer need not be looked for.
    _stored: list[bool] = field(default_factory=list, repr=False, compare=False)
    # Set once an append that bound the key to its events (``binds``) has committed: the answer is
    # stored over the binding's placeholder.
    _bound: list[bool] = field(default_factory=list, repr=False, compare=False)

    @property
    def answer_stored(self) -> bool:
        return bool(self._stored)

    @property
    def bound(self) -> bool:
        """Whether an append of this request committed with the key bound to it (``binds``)."""
        return bool(self._bound)

    @property
    def placeholder(self) -> dict[str, Any]:
        """The body a bound key holds until the request stores its answer: a request that finds it
        is told the key is in use."""
        return {PENDING: str(self.owner)}

    def binds(self) -> IdempotencyAnswer:
        """The effect that binds the key to an append whose request builds its answer afterwards
        (the ambient claim, ``ambient_effects``): the key is done with a placeholder, in the append's
        transaction, so that the events exist if and only if the key is taken for good. Refused
        (``ClaimLapsed``) when the claim lapsed."""
        return IdempotencyAnswer(self.workspace_id, self.environment, self.api_key_id, self.operation, self.key,
                                 self.owner, 0, self.placeholder, self.clock(),
                                 on_commit=lambda: self._bound.append(True))

    def records(self, outcome: Outcome) -> IdempotencyAnswer:
        """The effect that stores ``outcome`` as the key's answer; it refuses the append
        (``ClaimLapsed``) when the claim lapsed."""
        return IdempotencyAnswer(self.workspace_id, self.environment, self.api_key_id, self.operation, self.key,
                                 self.owner, outcome.status, outcome.body, self.clock(),
                                 on_commit=lambda: self._stored.append(True))

    @property
    def scope(self) -> KeyScope:
        """The key's row: workspace, environment, API key, operation, key."""
        return self.workspace_id, self.environment, self.api_key_id, self.operation, self.key


class IdempotencyKeys:
    """``run`` a command once per key, on the keys' rows (``ports.KeyRows``: the PostgreSQL table,
    ``infra.idempotency_rows``, or its twin beside an in-memory store, ``infra.memory_ports``). The
    rules are here; the rows claim, answer, complete, release and purge keys."""

    def __init__(self, rows: KeyRows, *, clock: Callable[[], datetime] = wall_clock, claim_s: float = CLAIM_S,
                 retention_s: float = RETENTION_S) -> None:
        if retention_s < RETENTION_S:
            raise ValueError("idempotency keys are kept 24 hours at least")
        self.rows = rows
        self.clock = clock
        self.claim_s = claim_s
        self.retention_s = retention_s

    async def run(self, workspace_id: UUID, operation: str, key: str, request: Mapping[str, Any],
                  command: Callable[[Claim], Awaitable[Outcome]], *, api_key_id: UUID,
                  environment: str = "production") -> Outcome:
        """``command(claim)`` once for this key of the API key ``api_key_id``; its answer again for
        every later request of that API key with it (another API key's key is another key).

        The command decides, builds its answer (an ``Outcome``) and appends its events with
        ``effects=[claim.records(outcome)]``, then returns the outcome. A command that appends
        nothing has its answer stored when it returns. A ``DomainError`` it raises before anything
        was written is not stored: the key is released and the error raised (the same request may
        be sent again, and is decided afresh); one raised once its events committed is stored as
        the key's answer and raised again (a replay raises ``ReplayedRefusal``, the same envelope).
        Raises ``IdempotencyKeyMismatch`` and ``IdempotencyKeyInUse``, which store nothing.
        """
        found = await self._claim((workspace_id, environment, api_key_id, operation, key), request_hash(request))
        if isinstance(found, Outcome):
            return _replay(found)
        claim = found
        try:
            outcome = await command(claim)
        except DomainError as exc:
            if not claim.bound:
                # A refusal (403, 402, 404...) or a service that could not do it now (a missing
                # provider): nothing was written, so nothing is the key's answer; the key is free
                # again and the request is decided afresh when sent again.
                await asyncio.shield(self._release(claim))
                raise
            await self._finish(claim, Outcome(exc.status, _refusal_body(exc)))
            raise
        except ClaimLapsed:
            raise IdempotencyKeyInUse("a request with this idempotency key is in progress; retry it "
                                      "shortly", operation=operation) from None
        except BaseException:
            await asyncio.shield(self._release(claim))
            raise
        await self._finish(claim, outcome)
        return outcome

    async def _claim(self, scope: KeyScope, digest: str) -> Claim | Outcome:
        """The key ``scope`` (workspace, environment, API key, operation, key) claimed for this
        request, or the stored answer to replay; raises when in use or bound to other parameters.
        A lapsed claim is taken over (its request wrote nothing)."""
        operation = scope[3]
        for _ in range(3):  # a row purged or released between the two statements: try again
            now, owner = self.clock(), uuid4()
            if await self.rows.claim(scope, digest, owner, now + timedelta(seconds=self.claim_s), now):
                return Claim(*scope, owner, self.clock)
            row = await self.rows.read(scope)
            if row is None:
                continue
            return _found(row, digest, operation)
        raise IdempotencyKeyInUse("the idempotency key is changing hands; retry the request", operation=operation)

    async def _finish(self, claim: Claim, outcome: Outcome) -> None:
        """Store the answer on its own (a refusal once the work committed, an answer that needed no
        append). Nothing happens when the command's append stored it already, or when the claim
        lapsed and moved on."""
        # Asked first whether the command's append stored it, so that a large answer is not sent
        # to the database a second time.
        if claim.answer_stored:
            return  # the command's own append stored it and committed
        if claim.bound:  # the answer replaces the placeholder its append bound the key with
            await self.rows.answer(claim.scope, claim.placeholder, outcome.status, outcome.body, claim.clock())
            return
        await self.rows.complete(claim.scope, claim.owner, outcome.status, outcome.body, claim.clock())

    async def _release(self, claim: Claim) -> None:
        """Give the key back after an unexpected failure: the request wrote nothing (had its append
        committed, the claim would be done, which this leaves alone)."""
        await self.rows.release(claim.scope, claim.owner)

    async def purge(self) -> int:
        """Delete the keys first claimed more than ``retention_s`` ago (a live claim is left alone)."""
        now = self.clock()
        return await self.rows.purge(now - timedelta(seconds=self.retention_s), now)


def _found(row: Mapping[str, Any], digest: str, operation: str) -> Outcome:
    """What an existing key answers a request that could not claim it."""
    if row["request_hash"] != digest:
        raise IdempotencyKeyMismatch("this idempotency key was used with other parameters; use a new key "
                                     "for a different request", operation=operation)
    if row["state"] == "done" and not (isinstance(row["body"], dict) and PENDING in row["body"]):
        return Outcome(row["status"], row["body"])
    raise IdempotencyKeyInUse("a request with this idempotency key is in progress; retry it shortly",
                              operation=operation)


def _replay(stored: Outcome) -> Outcome:
    """A stored answer given again: a refusal is raised, a success says ``reused`` where it has the field."""
    error = stored.body.get("error") if stored.status >= 400 else None
    if isinstance(error, dict):
        raise ReplayedRefusal(stored.status, error.get("code", "invalid_request"), error.get("message", ""),
                              error.get("details") or {})
    body = stored.body
    data = body.get("data")
    if isinstance(data, dict) and "reused" in data:
        body = {**body, "data": {**data, "reused": True}}
    return replace(stored, body=body, reused=True)


def ambient_effects() -> list[IdempotencyAnswer]:
    """What an append of the running request adds to bind its idempotency key (``Claim.binds``):
    the binding until one append carrying it has committed, then nothing."""
    claim = AMBIENT.get()
    if claim is None or claim.bound or claim.answer_stored:
        return []
    return [claim.binds()]


def job_id_for(workspace_id: UUID, environment: str, operation: str, request: Mapping[str, Any],
               generation: int = 0) -> UUID:
    """The job id an identical request always names (uuid5 of the scope and the request's hash)."""
    return deterministic_id("job", workspace_id, environment, operation, request_hash(request), generation)
