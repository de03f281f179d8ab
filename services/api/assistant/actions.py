"""The assistant's actions: the API's own operations, described from the route table and run in-process.

**Described** (``Catalog``): every operation of the route table but those refused by design
(``domain.agent.policy.REFUSED_BY_DESIGN``), public routes and streams, is an action named by its
operation id, with the route's summary, its method, path and scope, and one JSON Schema of its
parameters: the path parameters, the query model's fields and the body model's fields side by side
(``{"id": 12, "outputs": {"chapters": true}}`` for POST /videos/{id}/analyze), the same pydantic
models the HTTP API validates with. ``webhook_url`` is left out: the assistant never sets one.
A language model gets these as its tools; docs/agent.md lists them.

**Run** (``ActionRunner``): through the route's own handler, with the caller's key, as the HTTP
endpoint runs it. In order, an action is refused (``refused``) when it is refused by design, sets
a ``webhook_url``, needs a scope the key lacks (the error names the scope; nothing of the resource
is read), writes without the person's message asking for that kind of change (``asked_writes``;
a model's actions only), reads a kind of resource the person's messages do not name once the
model has read content (``asked_reads``; a model's actions only), or finds the workspace's rate
limit reached. Then its arguments are
validated by the route's models (400-style ``validation_error`` with each field), a write waits
for Kafka as the endpoint does, and the handler runs with the caller's workspace, environment and
credits: the events it appends carry the assistant call's request id in their ``meta``, and the
action's index (``agent_action``). Any
error of the operation makes the action ``failed`` with the error envelope the HTTP call would
have answered (a 404 of another workspace's video is the 404 of a missing one).

**Rate limit**: each action that reaches the rate-limit check counts as one request of the
workspace's window, as the same call over HTTP would, whatever its outcome. The first of them
takes the number the assistant's own call was counted with (the call was admitted, so that action
is too): a message costs the requests its actions make, and one when it makes none. An action over
the limit is refused (``rate_limited``) and the turn does nothing more. The other counts are
grouped (``infra.ratelimit.RateCounter``): a plan known up front (the offline planner)
counts the actions after the first that will reach the check in one statement before the first
runs (``count_ahead``), each action then takes the next of those numbers, and those not used when
the turn ends are given back (``give_back``); a model's actions are counted one by one. Either way
the counts share their statements with the other turns of the process.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from pydantic import BaseModel, ValidationError

from domain.agent.actions import read_kinds, summarise
from domain.agent.policy import REFUSED_BY_DESIGN, WEBHOOK_URL_REFUSED
from infra.ratelimit import Numbers, Window
from services.api.article_exports import record_first_exports
from services.api.base import KAFKA, RATE_COUNTER, REQUEST_ID, SETTINGS, WINDOW, Call, Route
from services.api.destinations import WEBHOOK_URL_FIELD, check_body_webhook_url
from services.api.errors import ApiError, to_api_error, unavailable, validation_error

_INTEGER_IDS = ("/videos/{id}", "/articles/{id}")  # paths whose {id} is an integer (a uuid elsewhere)
IDEMPOTENCY_FIELD = "idempotency_key"


@dataclass(frozen=True)
class Action:
    """One operation the assistant may perform."""

    route: Route
    path_params: tuple[str, ...]
    query_fields: frozenset[str]
    body_fields: frozenset[str]
    parameters: dict[str, Any]  # JSON Schema of the flat arguments

    @property
    def name(self) -> str:
        return self.route.operation_id

    @property
    def writes(self) -> bool:
        return self.route.writes

    @property
    def description(self) -> str:
        r = self.route
        change = " Changes data." if r.writes else ""
        return f"{r.summary} ({r.method} /v1{r.path}; scope {r.scope}).{change}"

    def tool(self) -> dict[str, Any]:
        """The action as an OpenAI-compatible tool (function)."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}

    @classmethod
    def of(cls, route: Route) -> Action:
        path_params = tuple(p.split(":")[0] for p in _path_params(route.path))
        properties: dict[str, Any] = {}
        required: list[str] = []
        defs: dict[str, Any] = {}
        for name in path_params:
            integer = any(route.path.startswith(prefix) for prefix in _INTEGER_IDS) and name == "id"
            properties[name] = {"type": "integer" if integer else "string",
                                "description": f"path parameter {name} of {route.path}"}
            required.append(name)
        query_fields: frozenset[str] = frozenset()
        body_fields: frozenset[str] = frozenset()
        for model, kind in ((route.query, "query"), (route.body, "body")):
            if model is None:
                continue
            schema = model.model_json_schema(ref_template="#/$defs/{model}")
            fields = {k: v for k, v in schema.get("properties", {}).items() if k != WEBHOOK_URL_FIELD}
            clash = set(fields) & set(properties)
            if clash:
                raise ValueError(f"{route.operation_id}: {kind} field(s) {sorted(clash)} clash with other arguments")
            properties.update({k: {kk: vv for kk, vv in v.items() if kk != "title"} for k, v in fields.items()})
            required.extend(r for r in schema.get("required", []) if r in fields and r != IDEMPOTENCY_FIELD)
            defs.update(schema.get("$defs", {}))
            if kind == "query":
                query_fields = frozenset(model.model_fields)
            else:
                body_fields = frozenset(model.model_fields)
        parameters = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
        if defs:
            parameters["$defs"] = defs
        return cls(route, path_params, query_fields, body_fields, parameters)


def _path_params(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]


@dataclass(frozen=True)
class Catalog:
    actions: dict[str, Action]
    refused: dict[str, str]  # operation id -> why the assistant never performs it

    @classmethod
    def of(cls, routes: list[Route]) -> Catalog:
        actions, refused = {}, {}
        for route in routes:
            name = route.operation_id
            if name in REFUSED_BY_DESIGN:
                refused[name] = REFUSED_BY_DESIGN[name]
            elif route.scope is None or route.stream:
                refused[name] = "not an operation of a workspace the assistant can run"
            else:
                actions[name] = Action.of(route)
        return cls(actions, refused)

    def tools(self) -> list[dict[str, Any]]:
        return [a.tool() for a in self.actions.values()]


# The app's catalogue, built from the route table the app serves (``services.api.app``): handed in,
# so that the assistant never imports the route table, which holds the assistant's own routes.
ASSISTANT_ACTIONS = web.AppKey("assistant_actions", Catalog)


@dataclass
class Outcome:
    """What one action did. ``answer`` is the operation's whole answer (for the next actions of a
    plan and a model's view), never recorded nor returned as it is."""

    name: str
    arguments: dict[str, Any]
    status: str  # ok, refused, failed
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    answer: Any = None
    writes: bool = False

    @property
    def data(self) -> Any:
        return self.answer.get("data") if isinstance(self.answer, dict) and "data" in self.answer else self.answer

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments, "status": self.status,
                               "result": self.result}
        if self.error is not None:
            out["error"] = self.error
        return out


def refusal(name: str, arguments: dict, code: str, message: str, details: dict | None = None, *,
            status: str = "refused") -> Outcome:
    return Outcome(name, arguments, status, error={"code": code, "message": message, "details": details or {}})


@dataclass
class ActionCall(Call):
    """The assistant call's ``Call`` with the action's path parameters, method and no headers: a
    handler reads its ids with ``call.path(name)`` and its method with ``call.method`` as it does
    behind its own route (an export made by the assistant is recorded as a GET's is), and none of
    the assistant request's own headers (``If-None-Match``) reaches it."""

    path_params: dict[str, str] = field(default_factory=dict)
    route_method: str = "GET"
    index: int = 0  # the action's index in its turn

    def path(self, name: str) -> str:
        return self.path_params[name]

    def meta(self) -> dict[str, str]:
        """The assistant call's meta, and the action's index: the events an action caused are those
        with the turn's request id and its index (``ConversationActionPerformed`` has both)."""
        return {**super().meta(), "agent_action": str(self.index)}

    @property
    def method(self) -> str:
        return self.route_method

    def header(self, name: str) -> str | None:
        return None


class ActionRunner:
    """Runs the actions of one turn with the caller's key (see the module's text).

    ``asked_writes``: the operations that write which the person's message asks for, or None when
    every write of the plan was asked for (the offline planner reads them from the message).
    ``asked_reads``: the kinds of resource the person's messages name, or None when every read is
    asked for (the offline planner); once ``read_content`` is true (an action has answered, or the
    conversation already held actions), a read of another kind is refused."""

    def __init__(self, call: Call, actions: Catalog, *, asked_writes: frozenset[str] | None,
                 asked_reads: frozenset[str] | None = None, read_content: bool = False) -> None:
        self.call = call
        self.catalog = actions
        self.asked_writes = asked_writes
        self.asked_reads = asked_reads
        self.read_content = read_content
        self.window: Window | None = None  # the workspace's window after the last counted action
        self.limited = False
        self._own: Window | None = call.request.get(WINDOW)  # the call's own count: its first action's
        self._ahead: Numbers | None = None  # numbers counted ahead for the actions (count_ahead)
        self._counting: asyncio.Future | None = None  # that count, while in flight
        self._used = 0  # how many of them the actions took

    def _refused(self, name: Any, arguments: Any) -> Outcome | None:
        """The refusals decided before the rate-limit count, from the name and the arguments alone."""
        if not isinstance(arguments, dict):
            return refusal(str(name), {}, "validation_error", "the arguments must be a JSON object",
                           {"fields": [{"field": "arguments", "rule": "dict_type", "message": "must be an object"}]},
                           status="failed")
        if name in self.catalog.refused:
            return refusal(name, arguments, "not_available_to_assistant",
                           f"the assistant never performs {name}: {self.catalog.refused[name]}")
        action = self.catalog.actions.get(name)
        if action is None:
            return refusal(str(name), arguments, "unknown_action",
                           f"there is no operation {name} in this build of the service", status="failed")
        if WEBHOOK_URL_FIELD in arguments:
            return refusal(name, arguments, "not_available_to_assistant", WEBHOOK_URL_REFUSED)
        if not self.call.principal.has(action.route.scope):
            return refusal(name, arguments, "insufficient_scope",
                           f"this operation needs the scope {action.route.scope}, which your key lacks",
                           {"required": action.route.scope})
        if action.writes and self.asked_writes is not None and name not in self.asked_writes:
            return refusal(name, arguments, "not_requested",
                           f"{name} changes data, and your message did not ask for that kind of change: the "
                           "assistant changes only what you ask for")
        if (not action.writes and self.read_content and self.asked_reads is not None
                and not set(read_kinds(name)) & self.asked_reads):
            kinds = " or ".join(read_kinds(name))
            return refusal(name, arguments, "not_requested",
                           f"{name} reads {kinds}, which your messages did not ask about: once the assistant has "
                           "read content, it reads only what you asked about", {"kinds": list(read_kinds(name))})
        return None

    def counts(self, name: Any, arguments: Any) -> bool:
        """Whether ``run`` would count this action in the rate limit (it passes the checks before)."""
        return self._refused(name, arguments) is None

    async def run(self, index: int, name: str, arguments: Any) -> Outcome:
        refused = self._refused(name, arguments)
        if refused is not None:
            return refused
        action = self.catalog.actions[name]
        performing = None
        if not action.writes and self._own is None and self._counting is not None:
            # A read need not wait for the count in flight: it runs alongside it, and its answer is
            # dropped, never shown, when the count refuses it (a read has nothing to undo).
            performing = asyncio.ensure_future(self._perform(action, index, arguments))
        try:
            allowed = await self._count()
        except BaseException:
            if performing is not None:
                performing.cancel()
            raise
        if not allowed:
            if performing is not None:
                performing.cancel()
                await asyncio.gather(performing, return_exceptions=True)
            return refusal(name, arguments, "rate_limited",
                           f"your workspace's rate limit of {self.window.limit} requests per minute is reached; "
                           f"retry in {self.window.reset_in} s",
                           {"limit": self.window.limit, "retry_after_s": self.window.reset_in})
        try:
            answer = await (performing if performing is not None else self._perform(action, index, arguments))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            request = self.call.request
            err = exc if isinstance(exc, ApiError) else to_api_error(exc, request, request[REQUEST_ID])
            return Outcome(name, arguments, "failed", error=err.envelope()["error"], writes=action.writes)
        self.read_content = True  # what it answered may hold anyone's words from now on
        return Outcome(name, arguments, "ok", result=summarise(name, arguments, answer), answer=answer,
                       writes=action.writes)

    def count_ahead(self, n: int) -> None:
        """Start counting ``n`` actions about to run, in one statement (a plan known up front): the
        first takes the call's own number, the others take theirs from this count instead of a
        round trip each. The first of them waits for the count (a read runs alongside it). What is
        not used by the end of the turn is given back (``give_back``)."""
        if self._own is not None:
            n -= 1
        if n > 0:
            self._counting = asyncio.ensure_future(self.call.app[RATE_COUNTER].count(self.call.workspace_id, n))
            self._used = 0

    async def give_back(self) -> None:
        """The actions counted ahead that did not reach the count (the turn stopped, an argument
        could not be resolved, the limit was reached) no longer count: the window counts what ran."""
        if self._counting is not None:  # no action waited for the count: it still counted
            counting, self._counting = self._counting, None
            try:
                self._ahead = await counting
            except Exception:  # noqa: BLE001  it counted nothing
                return
        ahead, self._ahead = self._ahead, None
        if ahead is not None and self._used < ahead.size:
            await self.call.app[RATE_COUNTER].give_back(ahead, ahead.size - self._used)

    async def _count(self) -> bool:
        """Count the action in the workspace's window; False when it is over the limit."""
        if self._own is not None:  # the call was admitted with this number
            self.window, self._own = self._own, None
            self.limited = self.window.exceeded
            return not self.limited
        if self._counting is not None:
            counting, self._counting = self._counting, None
            self._ahead = await counting
        if self._ahead is not None and self._used < self._ahead.size:
            self.window = self._ahead.window(self._used)
            self._used += 1
        else:
            self.window = (await self.call.app[RATE_COUNTER].count(self.call.workspace_id)).window(0)
        self.limited = self.window.exceeded
        return not self.limited

    async def _perform(self, action: Action, index: int, arguments: dict[str, Any]) -> Any:
        route = action.route
        path, query_args, body_args, unknown = {}, {}, {}, []
        for key, value in arguments.items():
            if key in action.path_params:
                path[key] = value
            elif key in action.query_fields:
                query_args[key] = value
            elif key in action.body_fields or (route.body is not None and key not in action.query_fields):
                body_args[key] = value
            else:
                unknown.append(key)
        fields = [{"field": f"arguments.{k}", "rule": "extra_forbidden", "message": "not a parameter of this operation"}
                  for k in unknown]
        for name in action.path_params:
            value = path.get(name)
            if value is None:
                fields.append({"field": f"arguments.{name}", "rule": "missing", "message": "Field required"})
            elif isinstance(value, bool) or not isinstance(value, int | str):
                fields.append({"field": f"arguments.{name}", "rule": "string_type",
                               "message": "an id is an integer or a string"})
        if fields:
            raise ApiError(400, "validation_error", "invalid arguments: " + ", ".join(f["field"] for f in fields),
                           {"fields": fields})
        for name, regex in route.patterns:  # as the router matches them: another value is no route, a 404
            if not re.fullmatch(regex, str(path[name])):
                raise ApiError(404, "not_found", f"no resource of {route.path} has the {name} {path[name]}",
                               {name: str(path[name])})
        if IDEMPOTENCY_FIELD in action.body_fields and IDEMPOTENCY_FIELD not in body_args:
            # A retry of the same assistant request (the same X-Request-Id) replays instead of running twice.
            body_args[IDEMPOTENCY_FIELD] = f"agent-{self.call.request[REQUEST_ID]}-{index}"
        query = _validated(route.query, query_args)
        body = _validated(route.body, body_args) if route.body is not None else None
        await check_body_webhook_url(self.call.app[SETTINGS], self.call.environment, body)
        if route.writes and not self.call.app[KAFKA].available:
            raise unavailable("Kafka")
        call = ActionCall(self.call.request, self.call.principal, query, body,
                          path_params={k: str(v) for k, v in path.items()}, route_method=route.method,
                          index=index)
        answer = await route.handler(call)
        await record_first_exports(call)  # the assistant's POST records what its action exported first
        if isinstance(answer, web.StreamResponse):
            return _file_answer(answer)
        return orjson.loads(orjson.dumps(answer, default=str))  # as a client would read it: JSON types only


def _validated(model: type[BaseModel] | None, values: dict[str, Any]) -> BaseModel | None:
    """The route's own model, strict as the HTTP endpoint reads a JSON body."""
    if model is None:
        return None
    try:
        return model.model_validate_json(orjson.dumps(values), strict=True)
    except ValidationError as exc:
        raise validation_error(exc, "arguments") from None


def _file_answer(response: web.StreamResponse) -> dict[str, Any]:
    """What an operation that answers other than JSON (an export) gave: its type and size."""
    body = getattr(response, "body", None)
    size = len(body) if isinstance(body, bytes | bytearray) else response.content_length
    return {"status": response.status, "content_type": response.content_type, "bytes": size}
