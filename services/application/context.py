"""The handler context: what every command handler needs, built once at start-up.

``Application`` holds the ports and policies of the write side, made from settings at start-up
(``bootstrap``): the event store, the clock, the idempotency keys, the job and sandbox policies,
the file storage and the secret box. ``Context`` is the application for one call: it adds where
the call's events come from (``meta``: the request, CLI command or job that causes them, and the
chain they belong to). A handler takes ``(command, context)`` and finds everything else here, so no
caller passes the same ambient values again.

Beside the ports, the context owns what several handlers share: retries on conflict, loading an
aggregate inside the caller's workspace, saving with the call's meta, and the one charging path
(``save_charged``).

Every append of the service goes through a context, so an event's ``meta`` is decided where its
context is made: ``Application.context(meta)`` for a request or a CLI command
(``meta.request_meta``, ``meta.command_meta``), ``Application.reacting(cause, ...)`` for what a
process appends because of an event it read (a job's work, a reader's effect, a webhook
delivery's attempts). A reader whose append rides in its own statement or transaction takes the
events encoded with that meta (``Context.encoded``) instead of ``save``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID, uuid4

from domain.base import InsufficientCredits, NotFound
from domain.pricing import SandboxAllowance
from domain.videos import MAX_DURATION_MS
from domain.workspaces import Workspace
from infra.codec import NewEvent, StoredEvent
from infra.eventstore import ConcurrencyError, EventStore, encoded, origin
from infra.settings import wall_clock
from services.application.idempotency import ambient_effects
from services.application.meta import caused_by, joining
from services.application.ports import CandidateVideos, FileStore, MediaInspector, WebhookTestSender

T = TypeVar("T")
CONFLICT_RETRIES = 5
CHARGE_RETRIES = 10  # a workspace's charges race across API processes: more, short, jittered attempts


@dataclass(frozen=True)
class Application:
    """The write side's ports and policies (see the module's docstring). ``handlers`` maps each
    command type to its handler (``services.application.handlers``), for ``Context.handle``."""

    store: EventStore
    idempotency: Any = None  # ``IdempotencyKeys`` over the process's key rows; None where no key is used
    clock: Callable[[], datetime] = wall_clock
    max_attempts: int = 3  # a job's attempts before it fails
    # Today's bounds of a workspace's free sandbox work (on the clock); None: sandbox work unbounded.
    sandbox: Callable[[], SandboxAllowance] | None = None
    speech_max_ms: int = 14_400_000  # the longest speech recognised, priced and decoded
    vision_max_ms: int = 7_200_000  # the longest part of a video seen by the behavioural analysis (priced)
    max_duration_ms: int = MAX_DURATION_MS  # the longest media accepted at upload
    provider_configured: bool = False  # the language model provider (translation, premium articles)
    completion_timeout_s: float = 5.0  # the bound of a description completion's drafts
    job_secret_grace_s: float = 86400.0  # a rotated job secret stays valid this long
    storage: FileStore | None = None  # uploads and their companions (``ports.FileStore``)
    media: MediaInspector | None = None  # probe, measure and picture an upload (``ports.MediaInspector``)
    candidates: CandidateVideos | None = None  # a revival candidate's video (``ports.CandidateVideos``)
    webhook_tests: WebhookTestSender | None = None  # sends POST /webhooks/{id}/test (``ports.WebhookTestSender``)
    drafting: Executor | None = None  # the threads description drafts run in (None: the loop's default)
    kept: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # handlers' bounded memos, by name
    box: Any = None  # ``infra.crypto.SecretBox`` (webhook secrets)
    handlers: Mapping[type, Callable[..., Any]] = field(default_factory=dict, repr=False)

    def context(self, meta: dict[str, Any] | None = None) -> Context:
        """The application for one call, whose events carry ``meta``."""
        return Context(self, dict(meta or {}))

    def reacting(self, cause: StoredEvent | Mapping[str, str] | None, **by: str) -> Context:
        """The application for what a process appends because of an event it read: a job's work
        (``by``: the worker and the job; the cause: its ``JobQueued``), a reader's effect (the
        charge the credits watch judged), a webhook delivery's attempts (the delivered event, whose
        ``caused_by`` the intake kept with the delivery: ``cause`` may be that mapping). The one
        rule of such events' ``meta``: ``by``, then the cause's position and chain
        (``meta.caused_by``)."""
        if isinstance(cause, StoredEvent):
            cause = caused_by(cause)
        return self.context({**by, **(cause or {})})


@dataclass(frozen=True)
class Context:
    """The application for one call (``Application.context``)."""

    app: Application
    meta: dict[str, Any]

    @property
    def store(self) -> EventStore:
        return self.app.store

    def now(self) -> datetime:
        return self.app.clock()

    def new_id(self) -> UUID:
        return uuid4()

    async def next_id(self, sequence: str) -> int:
        return await self.app.store.next_id(sequence)

    def sandbox_allowance(self, environment: str) -> SandboxAllowance | None:
        """Today's sandbox bounds for a call in ``environment`` (None for production)."""
        return self.app.sandbox() if environment == "sandbox" and self.app.sandbox is not None else None

    async def handle(self, command: Any) -> Any:
        """Run ``command`` through its handler."""
        return await self.app.handlers[type(command)](command, self)

    async def joining(self, stream_id: UUID) -> Context:
        """This call's context for what it appends to a stream that belongs to a chain already (a
        job's cancellation, a delivery's resend): the chain stays the stream's (``meta.joining``)."""
        return replace(self, meta=joining(self.meta, await origin(self.store, stream_id)))

    def encoded(self, *aggregates: Any, workspace_id: UUID | None, events: Sequence[Any] = ()) -> list[NewEvent]:
        """What ``save`` would append (``aggregates``' pending events, collected, and ``events``),
        encoded with this call's meta: for an append that rides in the caller's own statement or
        transaction (a reader's ``save_within``, the webhook sender's ``save_batch``)."""
        return encoded(self.store.registry, aggregates, events, workspace_id, self.meta)

    async def save(self, *aggregates: Any, workspace_id: UUID | None, events: Sequence[Any] = (),
                   effects: Sequence[Any] = (),
                   unhurried: bool = False) -> int:
        """``EventStore.save`` with this call's meta (and the binding of the running request's
        idempotency key, ``idempotency.ambient_effects``)."""
        return await self.store.save(*aggregates, workspace_id=workspace_id, meta=self.meta, events=events,
                                     effects=[*effects, *ambient_effects()], unhurried=unhurried)

    async def save_charged(self, workspace_id: UUID, amount: int, reason: str, *aggregates: Any,
                           job_id: UUID | None = None, events: Sequence[Any] = (), effects: Sequence[Any] = ()) -> int:
        """Charge the workspace ``amount`` and save it with ``events``, ``aggregates`` and
        ``effects``, in one append; 402 (``InsufficientCredits``) when the balance is short, and
        nothing is written.

        The workspace's charges are decided one after the other in this process (its turn,
        ``EventStore.in_turn``), held for the decision and the queueing of the append and not for
        its commit: concurrent charges queue up for a moment instead of failing on each other's
        version, their appends share group commits, and retries settle what other processes
        interleave. The charge is decided on this process's kept state, without a query: a charge
        it allows is checked by the append's expected version. A refusal appends nothing, so
        nothing would ever tell that the kept state missed a top-up or a refund another process
        appended (the CLI, another API process, a worker ending a job failed): before a refusal
        stands, the charge is decided again on the stream as committed (one query, on the refusing
        path only)."""
        async with self.store.in_turn(workspace_id) as turn:
            workspace = owned(await turn.fetch_for_writing(), workspace_id, Workspace, workspace_id, "workspace")
            try:
                workspace.charge(amount, reason, job_id=job_id)
            except InsufficientCredits:
                workspace = owned(await turn.fetch_for_writing(committed=True), workspace_id, Workspace,
                                  workspace_id, "workspace")
                workspace.charge(amount, reason, job_id=job_id)
            await turn.save(*aggregates, workspace, workspace_id=workspace_id, meta=self.meta, events=events,
                            effects=[*effects, *ambient_effects()])
        saved: int = await turn.saved
        return saved

    async def load_owned(self, stream_id: UUID, cls: type, workspace_id: UUID, what: str, shown_id: Any = None) -> Any:
        """The aggregate, to decide on, if it exists in this workspace; another workspace's answers
        exactly like none. The 404 names ``shown_id``, the id the client sent, when the stream id is
        derived from it."""
        return owned(await self.store.fetch_for_writing(stream_id), stream_id, cls, workspace_id, what, shown_id)

    async def load_in(self, stream_id: UUID, cls: type, workspace_id: UUID, environment: str | None, what: str,
                      shown_id: Any = None) -> Any:
        """Like ``load_owned``, and another environment's aggregate (sandbox vs production) is
        missing too: a key acts inside its workspace and its environment's data space. ``None``:
        any."""
        agg = await self.load_owned(stream_id, cls, workspace_id, what, shown_id)
        if environment is not None and agg.environment != environment:
            raise missing(what, stream_id, shown_id)
        return agg


async def with_retries(command: Callable[[], Awaitable[T]], attempts: int = CONFLICT_RETRIES) -> T:
    """Run ``command`` again after a conflict, ``attempts`` times at most. Between attempts a short
    random pause (a few milliseconds, growing) lets the commands that collided go one after the
    other instead of colliding again at once."""
    for attempt in range(attempts):
        try:
            return await command()
        except ConcurrencyError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
    raise AssertionError("unreachable")


def owned(agg: Any, stream_id: UUID, cls: type[Any], workspace_id: UUID, what: str, shown_id: Any = None) -> Any:
    """``agg`` when it is a ``cls`` of this workspace, else 404 (``missing``)."""
    if agg is None or not isinstance(agg, cls) or agg.workspace_id != workspace_id:
        raise missing(what, stream_id, shown_id)
    return agg


def missing(what: str, stream_id: UUID, shown_id: Any) -> NotFound:
    return NotFound(f"{what} not found", id=str(stream_id if shown_id is None else shown_id))
