"""The languages the service supports, found by code (see ``domain.languages.base``).

One module per language, each declaring ``LANGUAGE``; ``LANGUAGES`` lists them in the order the
service names them. English is the language of anything the service does not otherwise support.
The modules that read a language's words read them here: the tables they keep by code
(``table``) are views of these values, never a second copy.
"""

from __future__ import annotations

import re
from typing import Any

from domain.languages import de, en, es, fr, it, nl, pt
from domain.languages.base import AssistantWords, Language, Say, fold

LANGUAGES: dict[str, Language] = {m.LANGUAGE.code: m.LANGUAGE for m in (en, fr, de, es, it, pt, nl)}
CODES: tuple[str, ...] = tuple(LANGUAGES)
ENGLISH = LANGUAGES["en"]
# The language of an analysis, a video or a media that names none: the service's first users speak
# French (an analysis without a language reads French; a language outside the seven reads English).
DEFAULT_LANGUAGE = "fr"
# The languages the assistant answers in (the others read its English).
ASSISTANT_LANGUAGES: tuple[str, ...] = tuple(code for code, lang in LANGUAGES.items() if lang.assistant is not None)


# A language tag as the service takes one (BCP 47's shape: a primary language subtag, then subtags
# such as a script or a region, all case-insensitive as tags are). The primary subtag names the
# language; the service writes no regional variant, so ``en-US`` and ``EN`` are ``en``.
_TAG = re.compile(r"([A-Za-z]{2,3})(?:-[A-Za-z0-9]{1,8})*")
# The same rule as a JSON Schema pattern (ECMA-262: no inline flags): a tag whose primary subtag is
# one of the supported codes, in any case.
TAG_PATTERN = ("^(?:" + "|".join("".join(f"[{c.upper()}{c}]" for c in code) for code in CODES)
               + ")(?:-[A-Za-z0-9]{1,8})*$")


def supported(tag: str) -> str | None:
    """The code of the supported language that ``tag`` names (``EN``, ``en-US`` and ``en-Latn-GB``
    name ``en``), or None for a malformed tag or a language the service does not analyse and
    write (``xx``, ``zh``, ``eng``: BCP 47 names English ``en``)."""
    found = _TAG.fullmatch(tag) if isinstance(tag, str) else None
    code = found.group(1).lower() if found else None
    return code if code in LANGUAGES else None


def language(code: str) -> Language:
    """The language of ``code``; English for a code the service does not support."""
    return LANGUAGES.get(code, ENGLISH)


def table(field: str) -> dict[str, Any]:
    """``field`` of every language that has it (not None), by code: the view a module reads."""
    return {code: value for code, lang in LANGUAGES.items() if (value := getattr(lang, field)) is not None}


def assistant_words(code: str) -> AssistantWords:
    """How the assistant speaks ``code``: its own words, or English where it has none."""
    return language(code).assistant or ENGLISH.assistant  # type: ignore[return-value]


def say(code: str) -> Say:
    return Say(assistant_words(code))


__all__ = ["ASSISTANT_LANGUAGES", "CODES", "DEFAULT_LANGUAGE", "ENGLISH", "LANGUAGES", "TAG_PATTERN", "AssistantWords",
           "Language", "Say", "assistant_words", "fold", "language", "say", "supported", "table"]
