"""Captions to sentences.

Caption cues cut sentences wherever the line was full, so sentences are rebuilt: a sentence runs
across cues of the same speaker until terminal punctuation. A sentence ends where both the
language's sentence segmenter (``sentencex``: abbreviations such as "z. B.", "Sr.", "bijv." per
language) and the rules here (initials inside names, "M.", "Dr", "etc.") put an end: each alone
misses some abbreviations. It is closed early at a speaker change,
at a pause longer than ``MAX_GAP_MS`` (a new thought), and at the end of a cue once it runs long
(``_runs_long``): a sentence of ``MAX_WORDS`` words or more ends where a cue ends a clause (a comma, a
semicolon), or, in captions without punctuation (automatic ones), where a cue's last word is no
function word; never after *a*, *the*, *of* (*...help uncover a* / *ship that had sunk...* is one
sentence). Punctuated captions wait for their own clause ends up to ``2 * MAX_WORDS`` words, and no
sentence outgrows ``3 * MAX_WORDS``. Times inside a cue are interpolated by character position, so a
sentence that starts mid-cue starts inside that cue.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from domain.analysis.language import language as language_of
from domain.analysis.model import Segment, Sentence
from domain.analysis.text import clean_spaces, content_tokens, looks_like_question, word_after, word_before
from domain.languages import DEFAULT_LANGUAGE

MAX_GAP_MS = 2500
MAX_WORDS = 45
# Captions with a sentence end per this many words or fewer are punctuated (a lecture's run 20-30,
# a podcast's 13-19; an automatic track has none).
PUNCTUATED_WORDS_PER_END = 60
CLAUSE_ENDS = (",", ";", ":", "–", "—")

ABBREVIATIONS = frozenset("""
m mme mmes mlle mm dr mr mrs ms st ste prof pr etc ex cf vs no nº p pp av env fig vol ch art éd ed jr sr inc ltd
co corp dept approx min max tel tél
""".split())

BOUNDARY_RE = re.compile(r"([.!?…]+)([\"”»)\]]*)(?=\s|$)")
CLOSING = " \t\n\"”»)]'’"


def _is_initial(previous: str, following: str) -> bool:
    """"J. K. Rowling", "Marie S. Curie": a capital letter and a dot inside a name, not "classés F ou G. Ces".

    ``previous`` is the word before the letter, ``following`` the word after its dot."""
    if re.fullmatch(r"[A-Z]\.", following) or re.fullmatch(r"[A-Z]\.", previous):
        return True
    return bool(previous[:1].isupper() and not previous.endswith((".", "!", "?")) and following[:1].isupper())


def _token_before(text: str, end: int) -> str:
    """The run of word characters, dots and hyphens that ends at ``end`` (scanned back from it)."""
    begin = end
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in "_.-"):
        begin -= 1
    return text[begin:end]


def _punctuation_end(text: str, end: int) -> int:
    """Where the terminal punctuation before ``end`` stops (closing quotes and spaces skipped back)."""
    while end > 0 and text[end - 1] in CLOSING:
        end -= 1
    return end


def _split_points(text: str, segmenter_ends: set[int] | None = None) -> list[int]:
    """Character offsets just after each sentence end in ``text``; with ``segmenter_ends`` (the
    language segmenter's ends, at their punctuation), only the ends it also found. Each end looks
    only at the words around it, so a long cue costs its length, not its length times its ends."""
    points = []
    for match in BOUNDARY_RE.finditer(text):
        if segmenter_ends is not None and match.end(1) not in segmenter_ends:
            continue
        punct = match.group(1)
        if punct == ".":
            token = _token_before(text, match.start())
            bare = token.rstrip(".").lower()
            if bare in ABBREVIATIONS or re.fullmatch(r"(?:\w\.)+\w", token):
                continue
            if len(bare) == 1 and bare.isalpha() and _is_initial(word_before(text, match.start() - 1),
                                                                 word_after(text, match.end())):
                continue
        points.append(match.end())
    return points


def is_punctuated(segments: Sequence[Segment]) -> bool:
    """Whether the captions end their sentences themselves (``PUNCTUATED_WORDS_PER_END``)."""
    words = ends = 0
    for seg in segments:
        words += len(seg.text.split())
        ends += len(BOUNDARY_RE.findall(seg.text))
    return words <= PUNCTUATED_WORDS_PER_END * max(1, ends)


def _runs_long(words: int, tail: str, stop_words: frozenset[str], punctuated: bool) -> bool:
    """Whether a sentence of ``words`` words so far, whose last cue ended with ``tail``, ends at this
    cue's end though no punctuation ends it (see the module)."""
    if words >= 3 * MAX_WORDS:
        return True
    if words < MAX_WORDS:
        return False
    tail = tail.rstrip()
    if tail.endswith(CLAUSE_ENDS):
        return True
    if punctuated and words < 2 * MAX_WORDS:
        return False
    last = word_before(tail, len(tail)).strip(CLOSING + ".!?…").lower().replace("’", "'")
    return bool(last) and last not in stop_words


def split_sentences(segments: Sequence[Segment], language: str | None = DEFAULT_LANGUAGE) -> list[Sentence]:
    kit = language_of(language)
    punctuated = is_punctuated(segments)
    sentences: list[Sentence] = []
    parts: list[str] = []
    state: dict[str, Any] = {}

    def flush() -> None:
        if not parts:
            return
        text = clean_spaces(" ".join(parts))
        parts.clear()
        if text and any(ch.isalnum() for ch in text):
            index = len(sentences)
            sentences.append(Sentence(
                index=index, text=text, start_ms=state["start"], end_ms=max(state["end"], state["start"]),
                speaker=state["speaker"], first_segment=state["first"], last_segment=state["last"],
                tokens=content_tokens(text, kit.code), is_question=looks_like_question(text, kit.code)))
        state.clear()

    for seg_index, seg in enumerate(segments):
        text = clean_spaces(seg.text)
        if not text:
            continue
        start, end = seg.start_ms, max(seg.end_ms, seg.start_ms)
        if parts and (seg.speaker != state["speaker"] or start - state["end"] > MAX_GAP_MS
                      or _runs_long(state["words"], parts[-1], kit.stop_words, punctuated)):
            flush()
        length = len(text)
        span = end - start
        cuts = _split_points(text, {_punctuation_end(text, end) for end in kit.sentence_ends(text)})
        bounds = [0, *cuts]
        if not cuts or cuts[-1] < length:
            bounds.append(length)
        for a, b in zip(bounds, bounds[1:], strict=False):
            fragment = text[a:b].strip()
            if not fragment:
                continue
            frag_start = start + span * a // length
            if span > 0:
                frag_start = min(frag_start, end - 1)
            frag_end = start + span * b // length
            if not parts:
                state.update(start=frag_start, speaker=seg.speaker, first=seg_index, words=0)
            parts.append(fragment)
            state["end"] = frag_end
            state["last"] = seg_index
            state["words"] += fragment.count(" ") + 1
            if b in cuts:
                flush()
    flush()
    return sentences
