"""The checks a model-written text passes before it replaces the offline one (pure).

A language model writes fluent text that may be wrong: a figure the speaker never said, a quotation
nobody spoke, another language, a chapter that starts outside the video. Each part the premium
path asks for (``domain.analysis.premium``) is held to these checks, and a part that fails any of
them is refused whole: the offline text stands for it, and the reason is recorded.

- **Lengths**: every text within its bounds (``check_text``), one line where a line is expected.
- **Grounding**: a quotation (text between double quotation marks of any script) must occur,
  normalised (``fold``: case, accents and punctuation ignored), in the transcript or in a claim;
  a figure (a number of two digits or more, or with a decimal part) must be one the transcript
  says, in digits or in words (``Language.digits`` reads "forty-four" as 44); a key fact's figures
  must be figures of the claim it names.
- **Language**: the language guessed from the text (``guess_language``, by the stop words only one
  of the seven languages has) must be the video's when the text says clearly which it is in; a
  text too short to tell is not refused for it.
- **Chapters**: starts inside the video, the first at 0:00, in order, each chapter at least 10 s
  (the video site's rules, ``validate_chapters``), each start within ``MOVE_WINDOW_MS`` of the
  offline start and at a sentence's start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from domain.analysis.chapters import validate_chapters
from domain.analysis.language import guess_language, lang_code
from domain.analysis.language import language as language_of
from domain.analysis.text import fold

# Stop words only one language lists that a written text must hold before its language is judged: a
# transcript's guess wants 8, but a model's summary is a few sentences (a title, none at all).
LANGUAGE_MIN_HITS = 3
MOVE_WINDOW_MS = 30_000  # how far a model may move a chapter's start from the offline one
QUOTE_RE = re.compile(r"[\"“”„«»「『]\s*([^\"“”„«»」』]{2,400}?)\s*[\"“”«»」』]")
NUMBER_RE = re.compile(r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)|\d+(?:[.,]\d+)*")


class Refused(ValueError):
    """A model-written part that fails a check; the message is the reason a person reads."""


@dataclass(frozen=True)
class Grounds:
    """What a model's text may rest on: the transcript and the claims, folded, and the figures said."""

    language: str
    transcript: str  # folded
    claims: dict[str, str]  # claim id -> its text
    figures: frozenset[str]

    @classmethod
    def of(cls, language: str, transcript: Sequence[str], claims: dict[str, str]) -> Grounds:
        text = " ".join([*transcript, *claims.values()])
        apart = re.sub(r"[ \u00a0\u202f]", "  ", text)  # "in 2019 200 people": 2019 and 200, not 2019200
        return cls(language=language, transcript=fold(" ".join(transcript)), claims=dict(claims),
                   figures=frozenset(figures_in(text, language) | figures_in(apart, language)))


def _figure_key(raw: str) -> str:
    """A figure as compared: its digits, thousands separators dropped, a decimal comma as a point."""
    compact = re.sub(r"[ \u00a0\u202f]", "", raw)
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", compact) or re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}", compact):
        compact = re.sub(r"[.,]", "", compact)
    return compact.replace(",", ".").rstrip(".")


def figures_in(text: str, language: str) -> set[str]:
    """The figures of ``text`` that a reader takes as facts: two digits or more, or a decimal part
    (a lone digit, "step 2", says little and is too often a model's own numbering)."""
    digits = language_of(lang_code(language)).digits(text)
    out = set()
    for source in (text, digits):
        for match in NUMBER_RE.finditer(source):
            key = _figure_key(match.group(0))
            if len(key.replace(".", "")) >= 2:
                out.add(key)
    return out


def _chars(count: int) -> str:
    return f"{count} character{'' if count == 1 else 's'}"


def check_text(what: str, text: str, *, max_chars: int, min_chars: int = 1, one_line: bool = False) -> str:
    """``text`` stripped, or ``Refused`` when it is empty, too long or too short, or breaks a line
    where one line is wanted."""
    value = (text or "").strip()
    if len(value) < min_chars:
        raise Refused(f"{what} is {'empty' if not value else f'{_chars(len(value))}, under {min_chars}'}")
    if len(value) > max_chars:
        raise Refused(f"{what} is {len(value)} characters long, over {max_chars}")
    if one_line and ("\n" in value or "\r" in value):
        raise Refused(f"{what} is not one line")
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", value):
        raise Refused(f"{what} holds control characters")
    return value


def check_grounded(what: str, texts: Iterable[str], grounds: Grounds) -> None:
    """Every quotation found in the transcript or a claim; every figure said in the video."""
    for text in texts:
        for quoted in QUOTE_RE.findall(text):
            folded = fold(quoted)
            if folded and folded not in grounds.transcript and not any(
                    folded in fold(claim) for claim in grounds.claims.values()):
                raise Refused(f"{what} quotes words the video does not say: “{quoted[:80]}”")
        invented = sorted(figures_in(text, grounds.language) - grounds.figures)
        if invented:
            raise Refused(f"{what} states figures the video does not say: {', '.join(invented[:5])}")


def check_fact(what: str, text: str, claim_id: str, grounds: Grounds) -> None:
    """A key fact names a claim of the video and states no figure that claim does not."""
    claim = grounds.claims.get(claim_id)
    if claim is None:
        raise Refused(f"{what} names a claim the video does not have ({claim_id[:40]})")
    extra = sorted(figures_in(text, grounds.language) - figures_in(claim, grounds.language))
    if extra:
        raise Refused(f"{what} states figures its claim does not: {', '.join(extra[:5])}")


def check_language(what: str, texts: Iterable[str], language: str) -> None:
    """The texts, read together, are in ``language`` when they say clearly which language they are in."""
    guessed = guess_language(" ".join(texts), default="", min_hits=LANGUAGE_MIN_HITS)
    if guessed and guessed != lang_code(language):
        raise Refused(f"{what} is in another language ({guessed}) than the video ({lang_code(language)})")


def check_distinct(what: str, texts: Sequence[str]) -> None:
    seen: set[str] = set()
    for text in texts:
        key = fold(text)
        if key in seen:
            raise Refused(f"{what}: “{text[:60]}” appears twice")
        seen.add(key)


def check_starts(starts: Sequence[int], offline: Sequence[int], allowed: Sequence[frozenset[int]],
                 duration_ms: int) -> None:
    """Chapter starts the model chose: as many as the offline chapters, the first at 0, each one of
    ``allowed`` for its chapter (sentence starts near the offline start), in order, within the
    video, each chapter 10 s or longer."""
    if len(starts) != len(offline):
        raise Refused(f"the chapter starts are {len(starts)}; the video has {len(offline)} chapters")
    for k, (start, was, options) in enumerate(zip(starts, offline, allowed, strict=True), start=1):
        if not 0 <= start < duration_ms:
            raise Refused(f"chapter {k} starts at {start} ms, outside the video (0-{duration_ms} ms)")
        if abs(start - was) > MOVE_WINDOW_MS:
            raise Refused(f"chapter {k} moved {abs(start - was) / 1000:.0f} s from where the analysis put it "
                          f"(at most {MOVE_WINDOW_MS // 1000} s)")
        if start != was and start not in options:
            raise Refused(f"chapter {k} starts at {start} ms, which is no sentence's start near its boundary")
    problems = validate_chapters([{"startMs": s, "title": "-"} for s in starts], duration_ms)
    if problems and not validate_chapters([{"startMs": s, "title": "-"} for s in offline], duration_ms):
        raise Refused(f"the chapter starts break the video site's rules: {problems[0]}")
    if any(b <= a for a, b in zip(starts, starts[1:], strict=False)):
        raise Refused("the chapter starts are not in order")
