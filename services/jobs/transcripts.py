"""A video's transcript as every job reads it (the analysis, an article's rewriting, clip detection
and rendering): one reading, so that the clips' captions and a regenerated article are cut from the
very words the analysis saw."""

from __future__ import annotations

from domain.analysis.model import Segment
from domain.videos import Video
from infra.captions import parse_captions, read_captions
from infra.media.probe import extract_subtitles, pick_subtitle_track, probe
from infra.storage import Storage


def read_transcript(storage: Storage, video: Video, timeout: float, stored_speech: bool = True):
    """Segments and where they came from: sidecar captions, an embedded text track, the speech
    recognised by the video's latest analysis (``stored_speech``: what clips read), or none.

    The file is read as the container its upload was accepted as (``video.demuxer``; a video
    recorded before the demuxer was kept is probed again, whitelisted), and no further than the
    duration that was priced."""
    if video.captions_key:
        return read_captions(storage.path(video.captions_key)), "captions"
    source = storage.path(video.storage_key)
    info = probe(source, demuxer=video.demuxer)
    position = pick_subtitle_track(info, video.language)
    if position is None:
        graph = video.graph or {}
        recorded = graph.get("transcriptSource")
        if stored_speech and isinstance(recorded, dict) and recorded.get("kind") == "speech":
            return [Segment(s["startMs"], s["endMs"], s["text"], s.get("speaker"))
                    for s in graph.get("transcript") or []], "speech"
        return [], "none"
    text = extract_subtitles(source, position, timeout=timeout, info=info, limit_ms=video.duration_ms)
    return parse_captions(text), "embedded"
