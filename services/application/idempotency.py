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

The keys live in PostgreSQL (``IdempotencyKeys``) or, for tests, beside an in-memory event
store's tables (``MemoryIdempotencyKeys``): the same rules on either.
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

import asyncpg
import orjson

from domain.base import DomainError, deterministic_id
from infra.effects import ClaimLapsed, IdempotencyAnswer
from infra.memory_store import MemoryDatabase
from infra.settings import wall_clock

CLAIM_S = 60.0
RETENTION_S = 24 * 3600.0
LAPSED_SQLSTATE = "VA002"
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

    def __init__(self, status: int, code: str, message: str, details: dict) -> None:
        super().__init__(message, **details)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Outcome:
    """An operation's answer: what the first request got, and what a replay gets (``reused``)."""

    status: int
    body: dict
    reused: bool = False


def request_hash(request: Mapping[str, Any]) -> str:
    """The hash of a request's parameters, independent of key order: what a key's replay must match."""
    canonical = orjson.dumps(request, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(canonical).hexdigest()


def _refusal_body(exc: DomainError) -> dict:
    return {"error": {"code": exc.code, "message": exc.message, "details": dict(exc.details)}}


def _as_json(body: dict) -> str:
    """The body as stored and replayed, as JSON text (ids and instants become strings): sent as
    text and made ``jsonb`` by PostgreSQL, so that it is serialised once."""
    return orjson.dumps(body, default=str).decode()


def _as_stored(body: dict) -> dict:
    """The body as a replay reads it back (ids and instants as strings)."""
    return orjson.loads(_as_json(body))


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
    def placeholder(self) -> dict:
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
    def scope(self) -> tuple[UUID, str, UUID, str, str]:
        """The key's row: workspace, environment, API key, operation, key."""
        return self.workspace_id, self.environment, self.api_key_id, self.operation, self.key


class KeyTable:
    """``run`` a command once per key, on a table of keys (``IdempotencyKeys`` in PostgreSQL,
    ``MemoryIdempotencyKeys`` beside an in-memory store). A table claims, finishes, releases and
    purges keys."""

    clock: Callable[[], datetime]
    claim_s: float
    retention_s: float

    def __init__(self, *, clock: Callable[[], datetime] = wall_clock, claim_s: float = CLAIM_S,
                 retention_s: float = RETENTION_S) -> None:
        if retention_s < RETENTION_S:
            raise ValueError("idempotency keys are kept 24 hours at least")
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

    async def _claim(self, scope: tuple[UUID, str, UUID, str, str], digest: str) -> Claim | Outcome:
        """The key ``scope`` (workspace, environment, API key, operation, key) claimed for this
        request, or the stored answer to replay; raises when in use or bound to other parameters.
        A lapsed claim is taken over (its request wrote nothing)."""
        raise NotImplementedError

    async def _finish(self, claim: Claim, outcome: Outcome) -> None:
        """Store the answer on its own (a refusal once the work committed, an answer that needed no
        append). Nothing happens when the command's append stored it already, or when the claim
        lapsed and moved on."""
        raise NotImplementedError

    async def _release(self, claim: Claim) -> None:
        """Give the key back after an unexpected failure: the request wrote nothing (had its append
        committed, the claim would be done, which this leaves alone)."""
        raise NotImplementedError

    async def purge(self) -> int:
        """Delete the keys first claimed more than ``retention_s`` ago (a live claim is left alone)."""
        raise NotImplementedError


def _found(row: Mapping, digest: str, operation: str) -> Outcome:
    """What an existing key answers a request that could not claim it."""
    if row["request_hash"] != digest:
        raise IdempotencyKeyMismatch("this idempotency key was used with other parameters; use a new key "
                                     "for a different request", operation=operation)
    if row["state"] == "done" and not (isinstance(row["body"], dict) and PENDING in row["body"]):
        return Outcome(row["status"], row["body"])
    raise IdempotencyKeyInUse("a request with this idempotency key is in progress; retry it shortly",
                              operation=operation)


class IdempotencyKeys(KeyTable):
    """The keys of one PostgreSQL database."""

    def __init__(self, pool: asyncpg.Pool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.pool = pool

    async def _claim(self, scope: tuple[UUID, str, UUID, str, str], digest: str) -> Claim | Outcome:
        operation = scope[3]
        for _ in range(3):  # a row purged or released between the two statements: try again
            now, owner = self.clock(), uuid4()
            async with self.pool.acquire() as conn:
                claimed = await conn.fetchval(_CLAIM, *scope, digest, owner, now + timedelta(seconds=self.claim_s),
                                              now)
                if claimed is not None:
                    return Claim(*scope, owner, self.clock)
                row = await conn.fetchrow(_READ, *scope)
            if row is None:
                continue
            return _found(row, digest, operation)
        raise IdempotencyKeyInUse("the idempotency key is changing hands; retry the request", operation=operation)

    async def _finish(self, claim: Claim, outcome: Outcome) -> None:
        # Asked first whether the command's append stored it, so that a large answer is not sent
        # to the database a second time.
        if claim.answer_stored:
            return  # the command's own append stored it and committed
        if claim.bound:  # the answer replaces the placeholder its append bound the key with
            async with self.pool.acquire() as conn:
                await conn.execute(_ANSWER, *claim.scope, _as_json(claim.placeholder), outcome.status,
                                   _as_json(outcome.body), claim.clock())
            return
        async with self.pool.acquire() as conn:
            if await conn.fetchval(_DONE, *claim.scope):
                return  # stored by the command's append (or by the request that took over a lapsed claim)
            try:
                await conn.execute(_COMPLETE, *claim.scope, claim.owner, outcome.status, _as_json(outcome.body),
                                   claim.clock())
            except asyncpg.PostgresError as exc:
                if exc.sqlstate != LAPSED_SQLSTATE:
                    raise

    async def _release(self, claim: Claim) -> None:
        try:
            async with self.pool.acquire() as conn:
                await conn.execute(_RELEASE, *claim.scope, claim.owner)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            pass  # the claim lapses by itself

    async def purge(self) -> int:
        now = self.clock()
        async with self.pool.acquire() as conn:
            status = await conn.execute(_PURGE, now - timedelta(seconds=self.retention_s), now)
        return int(status.split()[-1])


class MemoryIdempotencyKeys(KeyTable):
    """The keys beside an in-memory store's tables (``MemoryDatabase.idempotency_keys``), where the
    store's ``IdempotencyAnswer`` completes them: the statements of ``IdempotencyKeys``, as dict
    operations, each in one step of the event loop."""

    def __init__(self, database: MemoryDatabase, **kwargs) -> None:
        super().__init__(**kwargs)
        self.keys = database.idempotency_keys

    async def _claim(self, scope: tuple[UUID, str, UUID, str, str], digest: str) -> Claim | Outcome:
        await asyncio.sleep(0)
        now, owner = self.clock(), uuid4()
        row = self.keys.get(scope)
        if row is None or (row["state"] == "in_flight" and row["claimed_until"] <= now):
            self.keys[scope] = {"request_hash": digest, "state": "in_flight", "owner": owner,
                                "claimed_until": now + timedelta(seconds=self.claim_s), "status": None,
                                "body": None, "created_at": now, "completed_at": None}
            return Claim(*scope, owner, self.clock)
        return _found(row, digest, scope[3])

    async def _finish(self, claim: Claim, outcome: Outcome) -> None:
        row = self.keys.get(claim.scope)
        if claim.bound and row is not None and row["body"] == _as_stored(claim.placeholder):
            row.update(status=outcome.status, body=_as_stored(outcome.body), completed_at=claim.clock())
            return
        if claim.answer_stored or row is None or row["state"] == "done" or row["owner"] != claim.owner:
            return
        row.update(state="done", owner=None, claimed_until=None, status=outcome.status,
                   body=_as_stored(outcome.body), completed_at=claim.clock())

    async def _release(self, claim: Claim) -> None:
        row = self.keys.get(claim.scope)
        if row is not None and row["state"] == "in_flight" and row["owner"] == claim.owner:
            del self.keys[claim.scope]

    async def purge(self) -> int:
        now = self.clock()
        expired = [scope for scope, row in self.keys.items()
                   if row["created_at"] < now - timedelta(seconds=self.retention_s)
                   and (row["state"] == "done" or row["claimed_until"] <= now)]
        for scope in expired:
            del self.keys[scope]
        return len(expired)


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


# $1-$5: the key's row (workspace, environment, API key, operation, key), as ``Claim.scope``.
_CLAIM = """
INSERT INTO idempotency_keys AS k (workspace_id, environment, api_key_id, operation, key, request_hash, state,
                                   owner, claimed_until, created_at)
VALUES ($1, $2, $3, $4, $5, $6, 'in_flight', $7, $8, $9)
ON CONFLICT (workspace_id, environment, api_key_id, operation, key) DO UPDATE
   SET request_hash = EXCLUDED.request_hash, owner = EXCLUDED.owner, claimed_until = EXCLUDED.claimed_until,
       created_at = EXCLUDED.created_at
 WHERE k.state = 'in_flight' AND k.claimed_until <= EXCLUDED.created_at
RETURNING owner
"""
_ROW = "workspace_id = $1 AND environment = $2 AND api_key_id = $3 AND operation = $4 AND key = $5"
_READ = f"SELECT request_hash, state, status, body FROM idempotency_keys WHERE {_ROW}"
_COMPLETE = "SELECT vaeo_idempotency_complete($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9)"
_ANSWER = (f"UPDATE idempotency_keys SET status = $7, body = $8::text::jsonb, completed_at = $9 "
           f"WHERE {_ROW} AND state = 'done' AND body = $6::text::jsonb")
_DONE = f"SELECT true FROM idempotency_keys WHERE {_ROW} AND state = 'done'"
_RELEASE = f"DELETE FROM idempotency_keys WHERE {_ROW} AND owner = $6 AND state = 'in_flight'"
_PURGE = "DELETE FROM idempotency_keys WHERE created_at < $1 AND (state = 'done' OR claimed_until <= $2)"
