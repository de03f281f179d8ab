"""How much caption a video can carry: bounds checked at upload, against the media's duration.

The analysis costs time in proportion to the transcript, and the price follows the media's
duration, so a caption file must stay within what the media can hold: what one person can say
in that time, with room for a quick dialogue, captions cut into short cues (one word per cue, as
some exports do) and a few speakers talking over each other. Beyond that, the captions belong
to another media or were made to load the service, and they are refused (400), not trimmed: a
trimmed transcript would be analysed as if it were the whole one.

- no cue may start after the media's end (a cue may end a little after it; the analysis clips
  it there); ``END_TOLERANCE_MS`` absorbs rounding between caption tools and ffprobe;
- at most ``MAX_CUES_PER_SECOND`` cues per second of media, plus ``CUE_ALLOWANCE``;
- at most ``MAX_CHARS_PER_SECOND`` characters of caption text per second, plus
  ``CHAR_ALLOWANCE``. People speak 12-18 characters a second; 50 covers three at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.analysis.model import Segment
from domain.base import DomainError

END_TOLERANCE_MS = 1_000
MAX_CUES_PER_SECOND = 4
CUE_ALLOWANCE = 50
MAX_CHARS_PER_SECOND = 50
CHAR_ALLOWANCE = 2_000


class CaptionsDoNotFit(DomainError):
    """The captions hold more than the media can: refused at upload (400 ``invalid_request``)."""


def _clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


def check_captions_fit(segments: Sequence[Segment], duration_ms: int) -> None:
    """Raise ``CaptionsDoNotFit`` when the captions do not fit a media of ``duration_ms``."""
    late = [s for s in segments if s.start_ms > duration_ms + END_TOLERANCE_MS]
    if late:
        first = min(s.start_ms for s in late)
        raise CaptionsDoNotFit(
            f"{len(late)} caption cue(s) start after the end of the media ({_clock(duration_ms)}), the first at "
            f"{_clock(first)}: are these the captions of another media?",
            field="captions", media_duration_ms=duration_ms, cues_after_end=len(late), first_after_end_ms=first)
    seconds = duration_ms / 1000
    max_cues = int(seconds * MAX_CUES_PER_SECOND) + CUE_ALLOWANCE
    if len(segments) > max_cues:
        raise CaptionsDoNotFit(
            f"{len(segments)} caption cues for {seconds:.0f} s of media: more than anyone can say "
            f"(at most {max_cues}: {MAX_CUES_PER_SECOND} a second, plus {CUE_ALLOWANCE})",
            field="captions", media_duration_ms=duration_ms, cues=len(segments), max_cues=max_cues)
    chars = sum(len(s.text) for s in segments)
    max_chars = int(seconds * MAX_CHARS_PER_SECOND) + CHAR_ALLOWANCE
    if chars > max_chars:
        raise CaptionsDoNotFit(
            f"{chars} characters of captions for {seconds:.0f} s of media: more than anyone can say "
            f"(at most {max_chars}: {MAX_CHARS_PER_SECOND} a second, plus {CHAR_ALLOWANCE})",
            field="captions", media_duration_ms=duration_ms, characters=chars, max_characters=max_chars)
