"""The languages the service supports, found by code (see ``domain.languages.base``).

One module per language, each declaring ``LANGUAGE``; ``LANGUAGES`` lists them in the order the
service names them (English first: the language of anything without one of its own).
"""

from __future__ import annotations

from domain.languages import en, fr
from domain.languages.base import AssistantWords, Language, Say, fold

LANGUAGES: dict[str, Language] = {m.LANGUAGE.code: m.LANGUAGE for m in (en, fr)}
ENGLISH = LANGUAGES["en"]
# The languages the assistant answers in (the others read its English).
ASSISTANT_LANGUAGES: tuple[str, ...] = tuple(code for code, lang in LANGUAGES.items() if lang.assistant is not None)


def language(code: str) -> Language:
    """The language of ``code``; English for a code the service does not support."""
    return LANGUAGES.get(code, ENGLISH)


def assistant_words(code: str) -> AssistantWords:
    """How the assistant speaks ``code``: its own words, or English where it has none."""
    return language(code).assistant or ENGLISH.assistant  # type: ignore[return-value]


def say(code: str) -> Say:
    return Say(assistant_words(code))


__all__ = ["ASSISTANT_LANGUAGES", "ENGLISH", "LANGUAGES", "AssistantWords", "Language", "Say", "assistant_words",
           "fold", "language", "say"]
