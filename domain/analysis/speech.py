"""Recognised speech as a transcript: windows to recognise, words to caption-like segments.

Pure. The audio is cut into windows at pauses (the voice-activity regions, grouped while a window
stays within its bound), each window recognised on its own (a job item); the words of all windows
become segments that the analysis reads exactly as caption cues, and that the WebVTT / SRT
download and the clips' burned captions are made from.

A segment ends after a word that ends a sentence (``.``, ``!``, ``?``, ``…``), at a pause of more
than ``PAUSE_MS`` between two words, or once it holds ``MAX_SEGMENT_WORDS`` words or lasts
``MAX_SEGMENT_MS``: the length of a caption a viewer can read, and short enough that the
analysis' interpolation of times inside a cue stays close to the words' own times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from domain.analysis.model import Segment

PAUSE_MS = 1000
MAX_SEGMENT_WORDS = 16
MAX_SEGMENT_MS = 7000
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
    padded = []
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


def segments_from_words(words: Sequence[Sequence], speaker: str | None = None) -> list[Segment]:
    """``words`` (``[start_ms, end_ms, text, ...]`` in time order) as caption-like segments."""
    segments: list[Segment] = []
    current: list[Sequence] = []

    def close() -> None:
        if current:
            text = " ".join(str(w[2]).strip() for w in current).strip()
            if text:
                segments.append(Segment(int(current[0][0]), max(int(current[0][0]), int(current[-1][1])), text,
                                        speaker))
            current.clear()

    for word in words:
        if current and (int(word[0]) - int(current[-1][1]) > PAUSE_MS
                        or len(current) >= MAX_SEGMENT_WORDS
                        or int(word[1]) - int(current[0][0]) > MAX_SEGMENT_MS):
            close()
        current.append(word)
        if SENTENCE_END.search(str(word[2])):
            close()
    close()
    return segments
