"""The offline reply: what was done, in the person's language (where the assistant speaks it, else
in English), with the numbers and ids the actions found.

One sentence per action, from its short result (``domain.agent.results``): what it found (a
balance, a list with its ids, a job and its link) or why it was not done (the missing scope, the
error's message). Then what the plan noted (a default it chose, an id it missed), what it did not
understand, and how many requested actions were left undone and why (the cap of 15, the rate
limit, a client that left). A message it does not understand at all gets the list of what it can
do (``help_text``).

This module is the reply's frame; its words are in each language's home (``domain.languages``,
``AssistantWords``): an action's label and the sentence about what it found are keyed there by the
action's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.agent.planner import DEFAULT_EXPORT_FORMAT, Note
from domain.agent.resolution import unresolved_text
from domain.languages import say


@dataclass(frozen=True)
class ActionView:
    """An action as the reply describes it."""

    name: str
    arguments: dict[str, Any]
    status: str  # ok, refused, failed
    result: dict[str, Any] | None
    error: dict[str, Any] | None  # {code, message, details}


def label(name: str, arguments: dict[str, Any], language: str) -> str:
    """What the action does, in a sentence's middle ("read the claims of video 3")."""
    return say(language).label(name, arguments)


def describe(view: ActionView, language: str) -> str:
    """One sentence about one action, in ``language`` (a code of ``domain.languages``)."""
    s = say(language)
    if view.status == "ok":
        return s.found(view.name, view.result or {}, view.arguments)
    error = view.error or {}
    what = s.label(view.name, view.arguments)
    if error.get("code") == "insufficient_scope":
        return s.words.lacks_scope(what, (error.get("details") or {}).get("required", "?"))
    message = str(error.get("message") or error.get("code") or "")
    details = error.get("details") or {}
    if error.get("code") == "not_resolved" and isinstance(details.get("reason"), str):
        message = unresolved_text(details["reason"], details, language)
    if view.status == "refused":
        return s.words.refused(what, message)
    return s.words.failed(what, message)


def _note(note: Note, language: str) -> str:
    s = say(language)
    sentence = s.words.notes.get(note.code)
    return sentence(s, {"format": DEFAULT_EXPORT_FORMAT, **note.values}) if sentence else note.code


def help_text(language: str) -> str:
    return say(language).words.help


def model_failed(message: str, language: str) -> str:
    """The reply's first line when the language model provider failed mid-turn with ``message``."""
    return say(language).words.model_failed + message


def missing_scopes(views: Sequence[ActionView], reply: str, language: str) -> str:
    """The sentence naming the scopes that refused actions needed and ``reply`` does not name ("" when
    it names them all, or none was missing)."""
    scopes = sorted({str((v.error or {}).get("details", {}).get("required")) for v in views
                     if v.status == "refused" and (v.error or {}).get("code") == "insufficient_scope"})
    unnamed = [s for s in scopes if s not in reply]
    if not unnamed:
        return ""
    return say(language).words.missing_scopes(", ".join(unnamed))


LEFT_REASONS = ("cap", "rate_limited", "stopped")


def left_undone(count: int, reason: str, language: str, *, cap: int, retry_after_s: int | None = None) -> str:
    """The sentence about the ``count`` requested actions that were not done, and why."""
    sentences = say(language).words.left_undone
    return sentences.get(reason, sentences["stopped"])(count, cap, retry_after_s)


def compose(language: str, views: Sequence[ActionView], *, notes: Sequence[Note] = (),
            not_understood: Sequence[str] = (), asked_help: bool = False, left: int = 0, left_reason: str = "cap",
            cap: int = 15, retry_after_s: int | None = None) -> str:
    """The whole offline reply (see the module's text)."""
    s = say(language)
    words = s.words
    lines: list[str] = []
    if len(views) > 3:
        lines.append(words.performed(len(views), sum(v.status == "ok" for v in views)))
    lines.extend(describe(v, language) for v in views)
    lines.extend(_note(n, language) for n in notes)
    if not_understood:
        lines.append(words.not_understood("; ".join(s.q(u) for u in not_understood)))
    if left:
        lines.append(left_undone(left, left_reason, language, cap=cap, retry_after_s=retry_after_s))
    if asked_help and not views:
        lines.append(help_text(language))
    return "\n".join(lines)
