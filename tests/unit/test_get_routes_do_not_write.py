"""A GET answers from what is there: it appends no event and runs no ffmpeg (a poster, a first
export's record, anything that changes the system belongs to the write side: a command, a job).

Checked on the code: from each GET route's handler, every function it can reach is followed (the
handler's module-level helpers, the functions and module attributes it imports from this project,
such as the application's functions), and none may reach a write: a command (``context.handle(``),
an event store append (``.save(``, ``.save_batch(``, ``.save_within(``, ``store.append(``), a
storage write (``.write_bytes(``, ``.write_text(``), or a process (``infra.media.ffmpeg.run`` /
``run_killable``, ``subprocess``). Methods of objects are not followed, so the sinks are matched
by name wherever they appear."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from functools import cache

from services.api.routes import ROUTES

WRITE_METHODS = frozenset({"save", "save_batch", "save_within", "write_bytes", "write_text",
                           "create_subprocess_exec"})
# Methods that write only on their own receivers: a store's append (not a list's), and a context's
# handle (``call.context.handle(command)``: every command goes through it).
ON_RECEIVER = {"append": "store", "handle": "context"}
PROCESS_MODULES = frozenset({"subprocess"})
FOLLOWED = ("services", "infra.media", "domain")

# GET handlers that still write, with exactly the writes they make (none): a handler listed here
# that no longer writes, or one that writes and is not listed, fails the test.
KNOWN: dict[str, tuple[str, ...]] = {}


def _is_sink_function(obj) -> bool:
    return getattr(obj, "__module__", "") == "infra.media.ffmpeg" and obj.__name__ in ("run", "run_killable")


@cache
def _writes(func) -> tuple[str, ...]:
    """How ``func`` (a function of this project) writes, followed through every function of the
    project it names: called, or handed to a thread (``asyncio.to_thread(f, ...)``, ``partial``)."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return ()
    module = inspect.getmodule(func)
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver, name = node.func.value, node.func.attr
            owner = receiver.id if isinstance(receiver, ast.Name) else getattr(receiver, "attr", "")
            on_its_receiver = name in ON_RECEIVER and owner.endswith(ON_RECEIVER[name])
            if name in WRITE_METHODS or on_its_receiver:
                found.append(f"{func.__qualname__}: .{name}(")
            elif isinstance(receiver, ast.Name) and receiver.id in PROCESS_MODULES:
                found.append(f"{func.__qualname__}: {receiver.id}.{name}(")
            continue
        named = None
        if isinstance(node, ast.Name):
            named = getattr(module, node.id, None)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = getattr(module, node.value.id, None)
            if isinstance(owner, types.ModuleType):
                named = getattr(owner, node.attr, None)
        if named is None or named is func:
            continue
        if _is_sink_function(named):
            found.append(f"{func.__qualname__}: infra.media.ffmpeg.{named.__name__}(")
        elif inspect.isfunction(named) and named.__module__.startswith(FOLLOWED):
            found += [f"{func.__qualname__} -> {w}" for w in _writes(named)]
    return tuple(dict.fromkeys(found))


def _get_handlers() -> dict[str, object]:
    return {r.handler.__name__: r.handler for r in ROUTES if r.method == "GET"}


def test_get_handlers_append_nothing_and_run_no_ffmpeg() -> None:
    handlers = _get_handlers()
    assert len(handlers) > 20
    writing = {name: _writes(h) for name, h in handlers.items() if _writes(h)}
    assert writing == KNOWN


def test_the_check_sees_a_write_through_a_command_and_through_ffmpeg() -> None:
    """The walk itself: a route that runs a command writes; a poster made with ffmpeg runs a process;
    an application function that saves, reached from a handler, writes."""
    from infra.media.posters import thumbnail
    from services.api.articles import update_article
    from services.application.articles import update_article as update_command

    assert any(".handle(" in w for w in _writes(update_article))
    assert any(".save(" in w for w in _writes(update_command))
    assert any("infra.media.ffmpeg.run(" in w for w in _writes(thumbnail))
