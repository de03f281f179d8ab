"""Captions (WebVTT, SRT) to transcript segments with speakers.

Speakers come from WebVTT voice spans (``<v Name>``, ``<v.loud Name>``; a cue holding several
voices becomes one segment per voice, its time shared by text length) or from a ``NAME:`` prefix
at the start of a line (``JEAN : ...``, ``Marie Curie: ...``, ``>> BOB: ...``, ``[ALICE] ...``).
An all-capitals prefix is always a speaker; a Title Case one only when it recurs in the file at
least twice (otherwise "Note: ..." would become a speaker). A cue with no label continues the
previous speaker: captions name a speaker at the start of a turn, not on every line.
Markup (``<i>``, ``<c.x>``, timestamps, ``{\\an8}``, ``<font>``) and entities are removed.
Control characters (NUL, the other C0 controls but tab and line ends, DEL, C1) are removed before
anything else, wherever the text comes from (an upload, a stored file, an embedded track): they
are never caption text, and PostgreSQL refuses a NUL in the events that carry the transcript.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

from domain.analysis.model import Segment


class CaptionError(ValueError):
    """The captions could not be read as WebVTT or SRT."""


TIMING_RE = re.compile(
    r"^\s*((?:\d+:)?\d{1,2}:\d{2}(?:[.,]\d{1,3})?)\s*-->\s*((?:\d+:)?\d{1,2}:\d{2}(?:[.,]\d{1,3})?)")
VOICE_RE = re.compile(r"<v(?:\.[\w.\-]+)?\s+([^>]+)>")
TAG_RE = re.compile(r"</?[a-zA-Z][^>]*>|<\d{1,2}:\d{2}[:.\d]*>|\{\\[^}]*\}")
CAPS_PREFIX_RE = re.compile(r"^(?:>>\s*)?([A-ZÀ-ÖØ-Þ][A-ZÀ-ÖØ-Þ0-9.'’\- ]{0,40}?)\s?:\s+(?=\S)")
TITLE_PREFIX_RE = re.compile(
    r"^(?:>>\s*)?((?:[A-ZÀ-ÖØ-Þ][\w'’\-.]*)(?:\s+(?:de\s+|van\s+|von\s+|le\s+)?[A-ZÀ-ÖØ-Þ][\w'’\-.]*){0,2})\s?:\s+(?=\S)")
BRACKET_PREFIX_RE = re.compile(r"^\[([^\]\d][^\]]{0,40})\]\s*")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def parse_timestamp(value: str) -> int:
    """``hh:mm:ss.mmm`` / ``mm:ss.mmm`` / ``hh:mm:ss,mmm`` to milliseconds."""
    value = value.strip().replace(",", ".")
    main, _, frac = value.partition(".")
    parts = [int(p) for p in main.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    hours, minutes, seconds = parts
    millis = int((frac + "000")[:3]) if frac else 0
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


def _cues(text: str) -> list[tuple[int, int, list[str]]]:
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    blocks = re.split(r"\n\s*\n", text)
    cues = []
    for block in blocks:
        lines = [line for line in block.split("\n")]
        timing_at = next((i for i, line in enumerate(lines) if "-->" in line), None)
        if timing_at is None:
            continue  # header, NOTE, STYLE, REGION or a stray index
        match = TIMING_RE.match(lines[timing_at])
        if not match:
            continue
        start, end = parse_timestamp(match.group(1)), parse_timestamp(match.group(2))
        body = [line for line in lines[timing_at + 1:] if line.strip()]
        if body and end >= start:
            cues.append((start, end, body))
    return cues


def _clean(line: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(TAG_RE.sub("", line))).strip()


def _label_candidates(cues: list[tuple[int, int, list[str]]]) -> set[str]:
    """Title Case prefixes used at least twice: those are speakers, not "Note:"."""
    counts: Counter = Counter()
    for _, _, body in cues:
        for raw in body:
            match = TITLE_PREFIX_RE.match(_clean(VOICE_RE.sub("", raw)).lstrip("-– "))
            if match:
                counts[match.group(1).strip()] += 1
    return {name for name, n in counts.items() if n >= 2}


def _split_label(line: str, titled: set[str]) -> tuple[str | None, str]:
    stripped = line.lstrip("-– ").strip()
    match = BRACKET_PREFIX_RE.match(stripped)
    if match and not re.fullmatch(r"[\W\d]*|(?:musique|music|rires|laughter|applause|applaudissements)\b.*",
                                  match.group(1), re.IGNORECASE):
        return match.group(1).strip(), stripped[match.end():]
    match = CAPS_PREFIX_RE.match(stripped)
    if match and any(ch.isalpha() for ch in match.group(1)) and len(match.group(1).strip()) >= 2:
        name = match.group(1).strip()
        return name.title() if name.isupper() else name, stripped[match.end():]
    match = TITLE_PREFIX_RE.match(stripped)
    if match and match.group(1).strip() in titled:
        return match.group(1).strip(), stripped[match.end():]
    return None, stripped


def parse_captions(text: str) -> list[Segment]:
    """WebVTT or SRT text to segments in time order."""
    text = CONTROL_RE.sub("", text)
    if not text.strip():
        return []
    cues = _cues(text)
    if not cues:
        raise CaptionError("no caption cue found: not WebVTT or SRT")
    titled = _label_candidates(cues)
    segments: list[Segment] = []
    current: str | None = None
    for start, end, body in cues:
        pieces: list[tuple[str | None, str]] = []
        for raw in body:
            voices = list(VOICE_RE.finditer(raw))
            if voices:
                lead = _clean(raw[:voices[0].start()])
                if lead:
                    pieces.append((None, lead))
                for k, match in enumerate(voices):
                    stop = voices[k + 1].start() if k + 1 < len(voices) else len(raw)
                    pieces.append((match.group(1).strip(), _clean(raw[match.end():stop])))
                continue
            speaker, rest = _split_label(_clean(raw), titled)
            pieces.append((speaker, rest))
        merged: list[list] = []
        for speaker, text_piece in pieces:
            if not text_piece:
                continue
            speaker = speaker or (merged[-1][0] if merged else current)
            if merged and merged[-1][0] == speaker:
                merged[-1][1] += " " + text_piece
            else:
                merged.append([speaker, text_piece])
        if not merged:
            continue
        total = sum(len(t) for _, t in merged) or 1
        cursor = start
        for k, (speaker, piece) in enumerate(merged):
            piece_end = end if k == len(merged) - 1 else cursor + (end - start) * len(piece) // total
            segments.append(Segment(cursor, piece_end, piece, speaker))
            cursor = piece_end
        current = merged[-1][0]
    segments.sort(key=lambda s: (s.start_ms, s.end_ms))
    return segments


def decode_captions(data: bytes) -> str:
    """Caption bytes to text: UTF-16 when a byte-order mark says so, else UTF-8 (BOM or not),
    cp1252, Latin-1 (which decodes anything)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def read_captions(path: str | Path) -> list[Segment]:
    return parse_captions(decode_captions(Path(path).read_bytes()))


def read_caption_upload(data: bytes) -> tuple[list[Segment], str]:
    """An uploaded caption file: its segments and the extension it is stored under (``.vtt`` or
    ``.srt``). CPU work in proportion to the file (5 MiB: seconds): run it off the event loop.
    ``CaptionError`` when it is not WebVTT or SRT; no segment when it holds no caption text."""
    text = decode_captions(data)
    segments = parse_captions(text)
    return segments, ".vtt" if CONTROL_RE.sub("", text).lstrip().startswith("WEBVTT") else ".srt"


def to_webvtt(segments: list[Segment]) -> str:
    """Segments back to WebVTT with voice spans (for exports and test fixtures)."""

    def stamp(ms: int) -> str:
        h, rest = divmod(ms, 3_600_000)
        m, rest = divmod(rest, 60_000)
        s, milli = divmod(rest, 1000)
        return f"{h:02d}:{m:02d}:{s:02d}.{milli:03d}"

    lines = ["WEBVTT", ""]
    for seg in segments:
        voice = f"<v {seg.speaker}>" if seg.speaker else ""
        lines += [f"{stamp(seg.start_ms)} --> {stamp(seg.end_ms)}", f"{voice}{seg.text}", ""]
    return "\n".join(lines)


def _stamp(ms: int, separator: str) -> str:
    h, rest = divmod(max(0, int(ms)), 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{milli:03d}"


def _one_line(text: str) -> str:
    """A cue's text on one line, with no timing arrow (which would start a cue of its own)."""
    return " ".join(CONTROL_RE.sub("", text).replace("-->", "->").split())


def transcript_webvtt(segments: list[Segment]) -> str:
    """A transcript for download as WebVTT: text escaped (``&``, ``<``, ``>``), speakers as voice spans."""
    lines = ["WEBVTT", ""]
    for k, seg in enumerate(segments, 1):
        text = html.escape(_one_line(seg.text), quote=False)
        voice = f"<v {html.escape(_one_line(seg.speaker), quote=False).replace('>', '')}>" if seg.speaker else ""
        lines += [str(k), f"{_stamp(seg.start_ms, '.')} --> {_stamp(seg.end_ms, '.')}", f"{voice}{text}", ""]
    return "\n".join(lines)


def transcript_srt(segments: list[Segment]) -> str:
    """A transcript for download as SRT (numbered cues, comma milliseconds, ``Speaker:`` prefixes)."""
    blocks = []
    for k, seg in enumerate(segments, 1):
        text = _one_line(seg.text)
        if seg.speaker:
            text = f"{_one_line(seg.speaker)}: {text}"
        blocks.append(f"{k}\n{_stamp(seg.start_ms, ',')} --> {_stamp(seg.end_ms, ',')}\n{text}\n")
    return "\n".join(blocks)
