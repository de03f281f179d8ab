"""``analysis_mode=behavioral`` without a vision model: what the voice and the turns tell.

Measured from the transcript timing and, when present, the audio facts: speaking rate per speaker
and per minute (and how much it varies), pauses (gaps between sentences, silences), turn-taking
(turn counts and lengths, overlaps, response latency between speakers, question-answer exchanges),
hesitation markers and exclamations. Not measurable without images, and reported as such:
gestures, posture, facial expressions, gaze direction, left/right laterality, proxemics.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from domain.analysis.model import MediaFacts, Sentence
from domain.analysis.speakers import Diarisation
from domain.analysis.text import words

PAUSE_MS = 1000
HESITATION_RE = re.compile(r"\b(?:euh|heu|hum|hmm|um|uh|erm|er|ben|bah)\b", re.IGNORECASE)
UNAVAILABLE = ("gestures", "posture", "facial_expressions", "gaze_direction", "laterality", "proxemics")


def behavioral_profile(sentences: Sequence[Sentence], diarisation: Diarisation, facts: MediaFacts | None,
                       duration_ms: int) -> dict:
    minutes = max(1, -(-duration_ms // 60_000))
    per_minute = [0] * minutes
    for s in sentences:
        per_minute[min(minutes - 1, s.start_ms // 60_000)] += len(words(s.text))
    active = [w for w in per_minute if w]
    rate_cv = round(statistics.pstdev(active) / statistics.mean(active), 3) if len(active) > 1 else 0.0

    gaps = [b.start_ms - a.end_ms for a, b in zip(sentences, sentences[1:], strict=False)]
    pauses = [g for g in gaps if g >= PAUSE_MS]
    turns = diarisation.turns
    changes = [(a, b) for a, b in zip(turns, turns[1:], strict=False) if a.speaker != b.speaker]
    latencies = [b.start_ms - a.end_ms for a, b in changes]
    overlaps = [x for x in latencies if x < 0]
    exchanges = sum(1 for a, b in zip(sentences, sentences[1:], strict=False)
                    if a.is_question and b.speaker != a.speaker and b.speaker is not None)
    text = " ".join(s.text for s in sentences)
    silences = facts.silences if facts else ()
    return {
        "mode": "behavioral",
        "source": "transcript timing and audio; no vision model",
        "speakingRate": {
            "overallWordsPerMinute": round(sum(per_minute) / max(duration_ms / 60_000, 1 / 60), 1),
            "perMinute": per_minute,
            "variation": rate_cv,
            "perSpeaker": {s.name: s.words_per_minute for s in diarisation.speakers},
        },
        "pauses": {
            "count": len(pauses),
            "totalMs": sum(pauses),
            "longestMs": max(pauses, default=0),
            "silenceCount": len(silences),
            "silenceMs": sum(r.end_ms - r.start_ms for r in silences),
        },
        "turnTaking": {
            "turns": len(turns),
            "speakerChanges": len(changes),
            "meanTurnMs": round(statistics.mean([t.end_ms - t.start_ms for t in turns]), 1) if turns else 0.0,
            "meanResponseLatencyMs": round(statistics.mean(latencies), 1) if latencies else None,
            "overlaps": len(overlaps),
            "questionAnswerExchanges": exchanges,
        },
        "expressiveness": {
            "hesitations": len(HESITATION_RE.findall(text)),
            "exclamations": text.count("!"),
            "questions": sum(1 for s in sentences if s.is_question),
        },
        "unavailable": {name: "needs a vision model, which this analysis does not use" for name in UNAVAILABLE},
    }
