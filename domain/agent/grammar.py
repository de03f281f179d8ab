"""How the offline planner reads a message: its clauses, and the objects and options a clause names.

It also tells which of the seven languages a message is in (``detect_language``). The words are
not here: each language that the assistant reads requests in declares them in its
module (``domain.languages``, ``RequestWords``), and this module merges every such language's
words into one pattern per purpose, because a person may ask in any of them (and mix them).
What is the same in every language (digits, uuids, clock times, the export formats' names, the
platforms' ids) is read here.

A clause ends at a sentence's end, a line break, a semicolon or a word of sequence ("then",
"puis"); "and" or a comma start a new clause when a verb follows. The ids of a kind follow its
name: "video 12", "vidéos 3, 4 et 7", "articles 2 to 5".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from domain.exports import EXPORT_FORMATS
from domain.languages import CODES, LANGUAGES, fold, table
from domain.languages.base import RequestWords
from domain.platforms import PLATFORM_IDS, PLATFORMS

RANGE_MAX = 100  # ids one range may name ("videos 1 to 100"); a larger range is cut here, with a note
LIST_LIMIT_MAX = 100  # the page size the list operations accept

# The languages the assistant reads requests in, in the service's order.
READERS: tuple[RequestWords, ...] = tuple(table("requests").values())


def either(field: str) -> str:
    """``field`` of every language that reads requests, as one pattern of alternatives."""
    return "|".join(dict.fromkeys(getattr(words, field) for words in READERS))


def either_of(field: str, key: str) -> str:
    """The entry ``key`` of the table ``field`` of every language that has it, as one pattern."""
    found = [getattr(words, field)[key] for words in READERS if key in getattr(words, field)]
    return "|".join(dict.fromkeys(found)) or r"(?!)"  # (?!): a key no language names matches nothing


def merged(field: str) -> dict[str, str]:
    """The table ``field`` of every language that reads requests, one pattern per key (in the
    order the first language that has each key gives them)."""
    keys = dict.fromkeys(key for words in READERS for key in getattr(words, field))
    return {key: either_of(field, key) for key in keys}


# What a clause may ask for: the planner's names of the requests (``RequestWords.asks``).
ASKS = ("cancel", "translate", "translations", "translate_verb", "regenerate", "rename", "rename_to", "attach",
        "descriptions", "write", "clips", "moments", "detect", "generate", "render", "track", "cut", "candidates",
        "at_least", "export", "analyse", "results", "run", "chapters", "transcript", "behavioral", "premium",
        "scores", "graph", "create", "named", "status")
ASK: dict[str, str] = {name: either_of("asks", name) for name in ASKS}
KIND_WORDS: dict[str, str] = merged("kinds")  # video, article, job, media, template, clip -> their names
KINDS = ("video", "article", "job", "media", "template", "clip")
THIS = either("this")

# ------------------------------------------------------------------------------------ clauses

_VERBS = either("verbs")
_STRONG = re.compile(rf"\n+|;|[.!?](?=\s|$)|,?\s*\b(?:{either('sequence')})\b")
_WEAK = re.compile(rf"(?:,|\b(?:{either('conjunction')}|{either('also')})\b|&)\s*"
                   rf"(?=(?:(?:{either('polite')})\s+)?(?:{_VERBS})\b)")
_OBJECTS = "|".join(KIND_WORDS[kind] for kind in KINDS if kind != "clip")
_JOINED_OBJECT = re.compile(rf"(?:,|\b(?:{either('conjunction')})\b|&)\s*(?=(?:{either('determiners')})?"
                            rf"((?:{_OBJECTS}))\b)")


def clauses(folded: str) -> list[tuple[int, int]]:
    """Spans of the clauses of a folded message (see the module's text)."""
    spans = []
    start = 0
    for cut in _STRONG.finditer(folded):
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(folded)))
    out = []
    for a, b in spans:
        part_start = a
        cuts = sorted([(m.start(), m.end(), None) for m in _WEAK.finditer(folded, a, b)]
                      + [(m.start(), m.end(), m.group(1)) for m in _JOINED_OBJECT.finditer(folded, a, b)])
        for start, end, noun in cuts:
            if start < part_start:
                continue
            # "video 3 and article 5" is two requests; "video 3 and video 4" one enumeration.
            if noun is not None and re.search(rf"\b{re.escape(noun.rstrip('s'))}s?\b", folded[part_start:start]):
                continue
            out.append((part_start, start))
            part_start = end
        out.append((part_start, b))
    return [(a, b) for a, b in out if folded[a:b].strip(" ,.:;!?-")]


# ------------------------------------------------------------------------------------ language

def detect_language(folded: str) -> str:
    """The language most of the message's words are markers of (``Language.markers``; a letter
    of the language's own, ``Language.letters``, counts as two), English on a tie. Ids and numbers,
    whose letters say nothing, are left out. ``folded`` is the folded message and its lower case."""
    words = re.findall(r"[a-z]+", UUID.sub(" ", folded))
    scores = {code: sum(w in lang.markers for w in words)
              + 2 * (len(re.findall(f"[{lang.letters}]", folded)) if lang.letters else 0)
              for code, lang in LANGUAGES.items()}
    best = max(scores.values())
    return next(code for code, score in scores.items() if score == best)


def detect_language_of(message: str) -> str:
    return detect_language(fold(message) + " " + message.lower())


# ------------------------------------------------------------------------------------ entities

_NUM = r"\d{1,10}(?![\d:])"
_RANGES = re.compile(rf"(?:{either('ranges')}|-)")
_JOIN = rf"(?:,|&|\+|/|\b(?:{either('joins')}|{either('ranges')})\b|-)"
_NUM_LIST = rf"{_NUM}(?:\s*{_JOIN}\s*{_NUM})*"
_NUMBERED = rf"\s*(?:n[o°]\.?\s*|#\s*|(?:{either('numbered')})\s*|ids?\s*|nr\.?\s*)?"
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_TOKEN_AFTER_JOB = re.compile(r"\bjob\s+(?:id\s+)?([a-z0-9][a-z0-9_-]{15,159})\b")


@cache
def _ids_after(kind: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{KIND_WORDS[kind]}){_NUMBERED}({_NUM_LIST})")


def numbers_after(kind: str, clause: str) -> tuple[list[int], bool]:
    """The ids written after the name of ``kind`` ("videos 3, 4 and 7", "articles 2 to 5"), in
    order, each once; and whether a range was cut at ``RANGE_MAX``."""
    out: list[int] = []
    cut = False
    for match in _ids_after(kind).finditer(clause):
        tokens = re.findall(rf"{_NUM}|{_JOIN}", match.group(1))
        previous: int | None = None
        in_range = False
        for token in tokens:
            if token.isdigit():
                value = int(token)
                if in_range and previous is not None and value >= previous:
                    last = min(value, previous + RANGE_MAX - 1)
                    cut = cut or last < value
                    out.extend(range(previous + 1, last + 1))
                else:
                    out.append(value)
                previous, in_range = value, False
            else:
                in_range = _RANGES.fullmatch(token.strip()) is not None
    return list(dict.fromkeys(v for v in out if 1 <= v <= 2_147_483_647)), cut


def uuids(clause: str) -> list[str]:
    return list(dict.fromkeys(UUID.findall(clause)))


def job_token(clause: str, original: str) -> str | None:
    """A clip job's id: a uuid, or the token after "job" (16 to 160 characters), as written."""
    found = uuids(clause)
    if found:
        return found[0]
    match = _TOKEN_AFTER_JOB.search(clause)
    return original[match.start(1):match.end(1)] if match else None


# How a message names each language: its ``called`` and the other languages' names of it.
_LANGUAGES = {code: "|".join([called, *(words.languages[code] for words in READERS if code in words.languages)])
              for code, called in table("called").items()}
_LANGUAGE_CODE = re.compile(rf"\b(?:{either('language_word')})\s*[:=]?\s*({'|'.join(CODES)})\b")


def language_in(clause: str) -> str | None:
    for code, words in _LANGUAGES.items():
        if re.search(rf"\b(?:{words})\b", clause):
            return code
    match = _LANGUAGE_CODE.search(clause)
    return match.group(1) if match else None


_STYLES = merged("styles")


def style_in(clause: str, allowed: Sequence[str] = tuple(_STYLES)) -> str | None:
    for style in allowed:
        if re.search(rf"\b(?:{_STYLES[style]})\b", clause):
            return style
    return None


# The export formats' words (domain.exports), tried in their rank: a name holding another first.
_FORMATS = tuple((f.name, "|".join(map(re.escape, f.assistant_words)))
                 for f in sorted(EXPORT_FORMATS.values(), key=lambda f: f.assistant_rank))


def export_format_in(clause: str) -> str | None:
    for name, words in _FORMATS:
        if re.search(rf"\b(?:{words})\b", clause):
            return name
    return None


SECONDS = either("seconds")
_MINUTES = re.compile(either("minutes"))
_TIME = (r"(?:\d{1,2}:)?\d{1,2}:\d{2}(?:\.\d{1,3})?"
         rf"|\d+(?:\.\d+)?\s*(?:ms|{SECONDS}|{either('minutes')})\b")
_TIME_RANGE = re.compile(rf"\b(?:{either('time_from')})\s+({_TIME})\s*(?:{either('time_to')}|-)\s*({_TIME})")
_TIME_SPAN = re.compile(rf"({_TIME})\s*(?:-|\b(?:{either('ranges')})\b)\s*({_TIME})")


def to_ms(text: str) -> int:
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        seconds = float(parts[-1]) + 60 * int(parts[-2]) + (3600 * int(parts[-3]) if len(parts) == 3 else 0)
        return round(seconds * 1000)
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text)
    if found is None:
        raise ValueError(f"not a duration: {text!r}")
    value, unit = found.groups()
    factor = 1 if unit == "ms" else 60_000 if _MINUTES.fullmatch(unit) else 1000
    return round(float(value) * factor)


def time_range_in(clause: str) -> tuple[int, int] | None:
    match = _TIME_RANGE.search(clause) or _TIME_SPAN.search(clause)
    if not match:
        return None
    return to_ms(match.group(1)), to_ms(match.group(2))


_LIMITS = (re.compile(rf"\b(?:{either('limit_before')})\s+(\d{{1,4}})\b"),
           re.compile(rf"\b(\d{{1,4}})\s+(?:{either('limit_after')})\b"),
           re.compile(rf"\b(\d{{1,4}})\s+(?:{either('counted')})\b"))


def limit_in(clause: str) -> int | None:
    match = next((m for pattern in _LIMITS if (m := pattern.search(clause))), None)
    if not match:
        return None
    return max(1, min(LIST_LIMIT_MAX, int(match.group(1))))


_CANDIDATE_STATUS = merged("statuses")


def candidate_status_in(clause: str) -> str | None:
    for status, words in _CANDIDATE_STATUS.items():
        if re.search(rf"\b(?:{words})\b", clause):
            return status
    return None


# A platform by its id ("short_video_app", "short video app"), then by its nicknames (the platform
# table's) and what the languages call it; a name found is blanked so that another does not find it.
_PLATFORM_IDS = tuple((p, p.replace("_", "[ _]")) for p in PLATFORM_IDS)
_PLATFORM_NAMES = tuple((p, "|".join([*filter(None, (PLATFORMS[p].nicknames,)),
                                      *(words.platforms[p] for words in READERS if p in words.platforms)]))
                        for p in PLATFORM_IDS)
_ALL_PLATFORMS = re.compile(rf"\b(?:{either('all_platforms')})\b")


def platforms_in(clause: str) -> list[str]:
    if _ALL_PLATFORMS.search(clause):
        return list(PLATFORM_IDS)
    found: list[tuple[int, str]] = []
    rest = clause
    for platform, words in (*_PLATFORM_IDS, *_PLATFORM_NAMES):
        match = re.search(rf"\b(?:{words})\b", rest) if words else None
        if match and platform not in (p for _, p in found):
            found.append((match.start(), platform))
            rest = rest[:match.start()] + " " * (match.end() - match.start()) + rest[match.end():]
    return [p for _, p in sorted(found)]


def quoted(original: str) -> str | None:
    match = re.search(r"[\"“«]\s*([^\"“«»”]+?)\s*[\"”»]", original)
    if match:
        return match.group(1).strip()
    return None


def name_after(clause: str, original: str, words: str) -> str | None:
    """A name given in quotes, else the text after one of ``words`` to the end of the clause."""
    name = quoted(original)
    if name:
        return name
    match = re.search(rf"\b(?:{words})\s+(.+)$", clause)
    if match:
        return original[match.start(1):match.end(1)].strip(" .,;:!?\"'") or None
    return None
