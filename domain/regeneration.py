"""Regeneration: an article rewritten from the analysis it came from, in another writing style.

The stored Content Graph is what an analysis concluded, not everything the article engines read:
they need the transcript's sentences, which the graph does not keep. So a regeneration rebuilds
the graph the way the analysis built it, from the same two inputs, without decoding the media
again:

- the transcript, read again from what the analysis read (the stored captions, or the media's
  embedded text track);
- the media facts, taken back from the media elements the analysis recorded in the graph
  (``facts_from_graph``): the scene changes are the shots' starts with their cut scores, the
  silences, speech and music segments and the loudness are the audio elements, the duration is
  the graph's.

The analysis being deterministic, the same inputs give the same graph; ``differences`` says where
a rebuilt graph departs from the stored one (claims or chapters), which happens only when the
analysis engine itself has changed since: the job reports it in its result. Scores are always
computed against the stored graph (``domain.analysis.scoring.score_article``), like every other
article's.
"""

from __future__ import annotations

from typing import Any

from domain.analysis.model import AudioSegment, Loudness, MediaFacts, SceneChange, TimeRange

# The offline engine writes in the language of the transcript: another language is a translation.
ENGINES = ("offline", "provider")


def facts_from_graph(graph: dict[str, Any]) -> MediaFacts:
    """The media facts an analysis measured, as its graph recorded them."""
    duration = int(graph.get("durationMs") or 0)
    visual = [e for e in graph.get("visualElements") or [] if e.get("type") == "shot"]
    audio = list(graph.get("audioElements") or [])
    scenes = tuple(SceneChange(int(e["startMs"]), float(e.get("changeScore") or 0.0))
                   for e in visual if int(e.get("startMs") or 0) > 0)
    silences = tuple(TimeRange(int(e["startMs"]), int(e["endMs"])) for e in audio if e.get("type") == "silence")
    segments = tuple(AudioSegment(int(e["startMs"]), int(e["endMs"]), e["type"], float(e.get("confidence") or 0.5))
                     for e in audio if e.get("type") in ("speech", "music"))
    loud = next((e for e in audio if e.get("type") == "loudness"), None)
    loudness = None if loud is None else Loudness(loud.get("integratedLufs"), loud.get("loudnessRangeLu"),
                                                  loud.get("truePeakDbtp"))
    return MediaFacts(duration_ms=duration or None, scene_changes=scenes, silences=silences, audio_segments=segments,
                      loudness=loudness, has_audio=bool(audio), has_video=bool(visual))


def differences(rebuilt: dict[str, Any], stored: dict[str, Any]) -> list[str]:
    """What a rebuilt graph (``to_dict()``) does not share with the stored one: claims, chapters."""
    out = []
    if [c.get("id") for c in rebuilt.get("claims") or []] != [c.get("id") for c in stored.get("claims") or []]:
        out.append("claims")
    spans = [(c.get("startMs"), c.get("endMs")) for c in rebuilt.get("chapters") or []]
    if spans != [(c.get("startMs"), c.get("endMs")) for c in stored.get("chapters") or []]:
        out.append("chapters")
    return out
