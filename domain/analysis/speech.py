"""Recognised speech as a transcript: windows to recognise, words to caption-like segments.

Pure. The audio is cut into windows at pauses (the voice-activity regions, grouped while a window
stays within its bound), each window recognised as a job item, in order, told the text recognised
before it (``prompt_for``: Whisper's own long-form practice, so that a window is not recognised as
if the talk began there); the words of all windows become segments that the analysis reads exactly
as caption cues, and that the WebVTT / SRT download and the clips' burned captions are made from.

Words are joined as the recogniser spaced them (``words_text``): a word it wrote onto the one
before, with no space (the "'eau" of "l'eau", the "-en" of "arc-en-ciel", the ",5" of "1,5"),
is marked ``joins`` (a word list's fifth value, 1) and written without a space; every other word
is preceded by one. A word list of four values (words recorded before the mark existed) is a
word with a space before it.

A segment ends after a word that ends a sentence (``.``, ``!``, ``?``, ``…``), at a pause of more
than ``PAUSE_MS`` between two words, or once it holds ``MAX_SEGMENT_WORDS`` words or lasts
``MAX_SEGMENT_MS``: the length of a caption a viewer can read, and short enough that the
analysis' interpolation of times inside a cue stays close to the words' own times. It never ends
before a word that joins the one before it ("l'" and "eau" stay in one cue), unless the segment
already holds ``MAX_JOINED_WORDS`` words (no recogniser writes such a run; a hostile provider could).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from domain.analysis.model import Segment

PAUSE_MS = 1000
MAX_SEGMENT_WORDS = 16
MAX_SEGMENT_MS = 7000
MAX_JOINED_WORDS = 3 * MAX_SEGMENT_WORDS
# The text a window is told came before it: Whisper reads at most the last 223 tokens of a prompt,
# about 800 characters of French or English; the tail of the text so far is cut to that, at a word
# (``asr_prompt_chars`` in the settings).
PROMPT_MAX_CHARS = 800
SENTENCE_END = re.compile(r"[.!?…][\"”»)\]]*$")
ITEM_RE = re.compile(r"^speech-(\d{5})-(\d{1,9})-(\d{1,9})$")


def plan_windows(regions: Iterable[tuple[int, int]], max_ms: int, duration_ms: int) -> list[tuple[int, int]]:
    """Consecutive speech regions grouped into windows no longer than ``max_ms`` (a region longer
    than that is cut into pieces of ``max_ms``), clamped to ``[0, duration_ms]``. A window is cut
    only between regions, at a pause, never inside a word the VAD heard."""
    windows: list[tuple[int, int]] = []
    for start, end in sorted(regions):
        start, end = max(0, start, windows[-1][1] if windows else 0), min(duration_ms, end)
        if end <= start:
            continue
        if windows and end - windows[-1][0] <= max_ms:
            windows[-1] = (windows[-1][0], end)
            continue
        while end - start > max_ms:
            windows.append((start, start + max_ms))
            start += max_ms
        windows.append((start, end))
    return windows


def pad_windows(windows: list[tuple[int, int]], pad_ms: int, duration_ms: int) -> list[tuple[int, int]]:
    """Each window widened by up to ``pad_ms`` of the silence around it (never into its neighbours):
    the recogniser reads a first word better with a moment of quiet before it."""
    padded: list[tuple[int, int]] = []
    for k, (start, end) in enumerate(windows):
        before = padded[-1][1] if padded else 0
        after = windows[k + 1][0] if k + 1 < len(windows) else duration_ms
        padded.append((max(before, start - pad_ms), min(after, end + pad_ms)))
    return padded


def item_name(index: int, window: tuple[int, int]) -> str:
    """A window's job item: its place and its range, so that a resumed job finds the same names."""
    return f"speech-{index:05d}-{window[0]}-{window[1]}"


def item_window(name: str) -> tuple[int, int]:
    match = ITEM_RE.match(name)
    if match is None:
        raise ValueError(f"not a speech window item: {name!r}")
    return int(match.group(2)), int(match.group(3))


def joins(word: Sequence[Any]) -> bool:
    """Whether ``word`` (``[start_ms, end_ms, text, probability, joins]``) was written onto the
    word before it with no space."""
    return len(word) > 4 and bool(word[4])


def words_text(words: Iterable[Sequence[Any]]) -> str:
    """The words' text as the recogniser spaced them (see the module's text)."""
    parts: list[str] = []
    for word in words:
        text = " ".join(str(word[2]).split())
        if text:
            if parts and not joins(word):
                parts.append(" ")
            parts.append(text)
    return "".join(parts)


def prompt_for(earlier: Sequence[Sequence[Sequence[Any]]], max_chars: int = PROMPT_MAX_CHARS) -> str:
    """What a window is told was said before it: the tail of the text of the windows before it
    (``earlier``, their word lists in order), at most ``max_chars``, cut at a word."""
    if max_chars <= 0:
        return ""
    tail: list[Sequence[Any]] = []
    chars = 0
    for words in reversed(earlier):
        tail[:0] = words
        chars += sum(len(str(w[2])) + 1 for w in words)
        if chars > max_chars:
            break
    text = words_text(tail)
    if len(text) <= max_chars:
        return text
    cut = text[-max_chars:]
    return cut[cut.find(" ") + 1:] if " " in cut else ""


def _ends_before(current: Sequence[Sequence[Any]], word: Sequence[Any]) -> bool:
    """Whether the segment ``current`` ends before ``word``."""
    if not current or (joins(word) and len(current) < MAX_JOINED_WORDS):
        return False
    last = current[-1]
    return bool(SENTENCE_END.search(str(last[2]).rstrip())
                or int(word[0]) - int(last[1]) > PAUSE_MS
                or len(current) >= MAX_SEGMENT_WORDS
                or int(word[1]) - int(current[0][0]) > MAX_SEGMENT_MS)


def segments_from_words(words: Sequence[Sequence[Any]], speaker: str | None = None) -> list[Segment]:
    """``words`` (``[start_ms, end_ms, text, probability, joins]`` in time order) as caption-like
    segments, their text joined as the recogniser spaced it."""
    segments: list[Segment] = []
    current: list[Sequence[Any]] = []

    def close() -> None:
        text = words_text(current)
        if text:
            segments.append(Segment(int(current[0][0]), max(int(current[0][0]), int(current[-1][1])), text, speaker))
        current.clear()

    for word in words:
        if _ends_before(current, word):
            close()
        current.append(word)
    close()
    return segments
