"""Clip detection (pure): durations within the bounds each switch sets, sentence boundaries, no
overlap, the count and its shortfall, the signals of each analysis mode, the prompt, the choice."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from domain.analysis import Segment, analyse
from domain.analysis.sentences import split_sentences
from domain.clip_detection import (
    DetectionRequest,
    InvalidRatings,
    detect,
    parse_ratings,
    rating_messages,
    shortlist,
    viral_score,
)

# A talk of 24 sentences of 4 s each, 600 ms apart, from 2 s on: sentence k runs 2000 + 4600k to
# 6000 + 4600k. Every fourth is a question; sentence 9 quotes a figure; 14 names a prompt word.
TEXTS = [
    "Pourquoi le soleil brille-t-il autant ?", "Le soleil fusionne de l'hydrogène en hélium.",
    "Cette réaction libère une énergie considérable.", "Elle dure depuis des milliards d'années.",
    "Comment mesure-t-on sa température ?", "Les astronomes analysent sa lumière.",
    "Le spectre révèle la composition du gaz.", "Chaque raie correspond à un élément.",
    "Quelle est sa température au centre ?", "Selon la NASA, le cœur atteint 15 millions de degrés.",
    "La surface est bien plus froide.", "Elle reste pourtant à 5500 degrés.",
    "Que se passera-t-il dans le futur ?", "Le soleil deviendra une géante rouge.",
    "Les tempêtes magnétiques perturbent nos satellites.", "Et puis il s'éteindra lentement.",
    "Pourquoi ne pas capter toute cette énergie ?", "Les panneaux solaires en captent une partie.",
    "Leur rendement progresse chaque année.", "Mais le stockage reste difficile.",
    "Comment stocker l'électricité solaire ?", "Les batteries sont une première réponse.",
    "L'hydrogène en est une autre.", "Merci à tous pour votre attention.",
]
DURATION_MS = 2000 + 4600 * len(TEXTS) + 3000


def sentence_span(k: int) -> tuple[int, int]:
    return 2000 + 4600 * k, 6000 + 4600 * k


@pytest.fixture(scope="module")
def talk():
    segments = [Segment(*sentence_span(k), text, "Ana" if k % 2 else "Ben") for k, text in enumerate(TEXTS)]
    graph = analyse(segments, language="fr").to_dict()
    graph["durationMs"] = DURATION_MS
    cuts = [2000 + 4600 * k - 300 for k in (3, 8, 13, 18)]  # a scene change in the pause before these sentences
    graph["visualElements"] = [{"type": "shot", "startMs": s, "endMs": e}
                               for s, e in zip([0, *cuts], [*cuts, DURATION_MS], strict=True)]
    graph["audioElements"] = [{"type": "silence", "startMs": 0, "endMs": 2000},
                              {"type": "speech", "startMs": 2000, "endMs": DURATION_MS - 3000},
                              {"type": "silence", "startMs": DURATION_MS - 3000, "endMs": DURATION_MS}]
    return split_sentences(segments, "fr"), graph


def inside_speech(t: int) -> bool:
    return any(a < t < b for a, b in map(sentence_span, range(len(TEXTS))))


def check_clips(clips: list[dict], low: int, high: int, *, sentences: bool = True) -> None:
    ranges = sorted((c["start_ms"], c["end_ms"]) for c in clips)
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False)), ranges
    for c in clips:
        assert low <= c["duration_ms"] <= high, c
        assert c["duration_ms"] == c["end_ms"] - c["start_ms"] and 0 <= c["start_ms"] and c["end_ms"] <= DURATION_MS
        if sentences:
            assert not inside_speech(c["start_ms"]) and not inside_speech(c["end_ms"]), c
        assert 0 <= c["viral_score"] <= 100 and isinstance(c["viral_score"], int)
        assert c["rationale"] and len(c["rationale"]) <= 500
        assert c["title"] and len(c["title"]) <= 100 and len(c["thumbnail_title"]) <= 40
        assert len(c["id"]) <= 100


def test_defaults_give_clips_of_90_to_100_percent_of_the_target_on_sentence_boundaries(talk) -> None:
    sentences, graph = talk
    found = detect(sentences, graph, DetectionRequest(target_ms=14_000, requested_clip_count=4))
    assert len(found.clips) == 4 and found.shortfall_reason is None
    check_clips(found.clips, 12_600, 14_000)
    scores = [c["viral_score"] for c in found.clips]
    assert scores == sorted(scores, reverse=True)  # best first


@pytest.mark.parametrize(("switches", "low", "high"), [
    ({"allow_longer_duration": True, "allow_shorter_duration": False}, 14_000, 15_400),
    ({"allow_longer_duration": True, "duration_margin_percent": 30}, 9_800, 18_200),
    ({"duration_margin_enabled": False}, 14_000, 14_000),
    ({"allow_shorter_duration": False}, 14_000, 14_000),
])
def test_each_switch_moves_the_duration_bounds(talk, switches, low, high) -> None:
    sentences, graph = talk
    found = detect(sentences, graph, DetectionRequest(target_ms=14_000, requested_clip_count=5, **switches))
    assert found.clips
    check_clips(found.clips, low, high)


def test_without_sentence_protection_clips_last_the_target_exactly(talk) -> None:
    sentences, graph = talk
    found = detect(sentences, graph, DetectionRequest(target_ms=10_000, requested_clip_count=8,
                                                      protect_sentence_boundaries=False))
    assert len(found.clips) == 8
    check_clips(found.clips, 10_000, 10_000, sentences=False)


def test_fewer_clips_than_asked_come_with_the_reason(talk) -> None:
    sentences, graph = talk
    found = detect(sentences, graph, DetectionRequest(target_ms=60_000, requested_clip_count=10))
    assert 0 < len(found.clips) < 10
    assert found.shortfall_reason.startswith(f"the video ({DURATION_MS / 1000:.0f} s) gives {len(found.clips)} ")
    assert "10 were asked" in found.shortfall_reason and "sentence boundaries" in found.shortfall_reason


def test_the_count_is_never_exceeded_and_caps_at_what_fits(talk) -> None:
    sentences, graph = talk
    for count in (1, 3, 50):
        found = detect(sentences, graph, DetectionRequest(target_ms=5_000, requested_clip_count=count))
        assert len(found.clips) <= count
        check_clips(found.clips, 4_500, 5_000)
    # 5 s fits one sentence with its pauses: at most one clip per sentence
    assert len(detect(sentences, graph, DetectionRequest(target_ms=5_000, requested_clip_count=50)).clips) <= 24


def test_the_prompt_steers_the_choice_offline(talk) -> None:
    sentences, graph = talk
    request = DetectionRequest(target_ms=9_000, requested_clip_count=1, analysis_mode="transcript")
    plain = detect(sentences, graph, request).clips[0]
    steered = detect(sentences, graph, replace(request, prompt="tempêtes satellites"))
    [clip] = steered.clips
    tempest = sentence_span(14)
    assert clip["start_ms"] <= tempest[0] and tempest[1] <= clip["end_ms"]
    assert "matches the prompt" in clip["rationale"].lower() and clip != plain


def test_transcript_signals_are_named_in_the_rationale(talk) -> None:
    sentences, graph = talk
    clips = detect(sentences, graph, DetectionRequest(target_ms=9_000, requested_clip_count=10,
                                                      analysis_mode="transcript")).clips
    text = " ".join(c["rationale"] for c in clips)
    assert "opens with a question (a hook)" in text.lower()
    assert "quotation or attribution" in text  # "Selon la NASA"
    quoted = next(c for c in clips if "quotation" in c["rationale"])
    assert quoted["start_ms"] <= sentence_span(9)[0] and sentence_span(9)[1] <= quoted["end_ms"]
    assert "scene change" not in text and "speech" not in text  # other modes' signals do not count


def test_visual_mode_counts_scene_changes_and_audio_mode_the_energy(talk) -> None:
    sentences, graph = talk
    visual = detect(sentences, graph, DetectionRequest(target_ms=9_000, requested_clip_count=3,
                                                       analysis_mode="visual"))
    assert "starts on a scene change" in visual.clips[0]["rationale"].lower()
    assert "question" not in " ".join(c["rationale"] for c in visual.clips)
    audio = detect(sentences, graph, DetectionRequest(target_ms=9_000, requested_clip_count=24,
                                                      analysis_mode="audio"))
    text = " ".join(c["rationale"] for c in audio.clips)
    assert "% speech" in text and "speech enters after a pause" in text
    assert audio.signals == ["audio"] and visual.signals == ["visual"]


def test_transcript_mode_without_a_transcript_finds_nothing_and_says_why() -> None:
    found = detect([], {"durationMs": 60_000}, DetectionRequest(target_ms=10_000, analysis_mode="transcript"))
    assert found.clips == [] and "no transcript" in found.shortfall_reason


def test_without_a_transcript_other_modes_still_find_windows() -> None:
    graph = {"durationMs": 60_000, "visualElements": [{"type": "shot", "startMs": 20_000, "endMs": 60_000}],
             "audioElements": [{"type": "speech", "startMs": 0, "endMs": 60_000}]}
    found = detect([], graph, DetectionRequest(target_ms=10_000, requested_clip_count=6))
    assert len(found.clips) == 6
    check_clips(found.clips, 10_000, 10_000, sentences=False)
    assert found.clips[0]["start_ms"] == 20_000  # the scene change ranks first


def test_the_choice_prefers_more_clips_over_one_strong_clip_that_straddles_two() -> None:
    # Four sentences of 4.2 s; a window is two of them. The one opening on the question (B+C) is
    # the strongest, but it overlaps both others: a greedy pick of the best would stop at one clip.
    segments = [Segment(1000, 5200, "Le marché a progressé cette année.", "A"),
                Segment(5600, 9800, "Pourquoi ce chiffre de 40 % compte-t-il autant ?", "A"),
                Segment(10_200, 14_400, "Les analystes restent prudents pour la suite.", "A"),
                Segment(14_800, 19_000, "Les entreprises investissent davantage en Europe.", "A")]
    sentences = split_sentences(segments, "fr")
    request = DetectionRequest(target_ms=9_000, requested_clip_count=2, analysis_mode="transcript")
    best = detect(sentences, {"durationMs": 20_000}, replace(request, requested_clip_count=1)).clips
    assert best[0]["start_ms"] < 5600 < best[0]["end_ms"] and "question" in best[0]["rationale"]
    found = detect(sentences, {"durationMs": 20_000}, request)
    assert len(found.clips) == 2 and found.shortfall_reason is None
    assert sorted(c["start_ms"] for c in found.clips)[0] < 1000 and max(c["end_ms"] for c in found.clips) > 19_000


def test_viral_score_grows_with_points_and_stays_within_0_and_100() -> None:
    values = [viral_score(p) for p in (-10, 0, 20, 60, 120, 10_000)]
    assert values == sorted(values) and values[0] == 0 and values[-1] == 100 and values[2] == 25


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        detect([], {}, DetectionRequest(target_ms=10_000, analysis_mode="smell"))


# ---- the prompt through a provider


def test_the_shortlist_sends_the_best_windows_with_what_is_said(talk) -> None:
    sentences, graph = talk
    request = DetectionRequest(target_ms=9_000, requested_clip_count=3, prompt="tempêtes satellites")
    windows = shortlist(sentences, graph, request, size=5)
    assert [w["id"] for w in windows] == ["w1", "w2", "w3", "w4", "w5"]
    assert "tempêtes" in windows[0]["text"]  # the offline matching puts the prompt's window first
    assert all(len(w["text"]) <= 600 and w["end_ms"] - w["start_ms"] <= 9_000 for w in windows)
    system, user = rating_messages(request.prompt, windows)
    assert system["role"] == "system" and "JSON" in system["content"]
    material = json.loads(user["content"])
    assert material["request"] == "tempêtes satellites" and [c["id"] for c in material["candidates"]][:2] == [
        "w1", "w2"]


def test_the_providers_ratings_replace_the_offline_matching(talk) -> None:
    sentences, graph = talk
    request = DetectionRequest(target_ms=9_000, requested_clip_count=1, prompt="tempêtes satellites")
    windows = shortlist(sentences, graph, request, size=10)
    favourite = windows[-1]  # the provider prefers what the offline matching ranked last
    answer = json.dumps({"ratings": [{"id": w["id"], "relevance": 100 if w is favourite else 5} for w in windows]})
    rated = parse_ratings(f"```json\n{answer}\n```", windows)
    [clip] = detect(sentences, graph, request, rated).clips
    assert (clip["start_ms"], clip["end_ms"]) == (favourite["start_ms"], favourite["end_ms"])
    assert "the provider rates it 100/100 for the prompt" in clip["rationale"].lower()
    assert "matches the prompt" not in clip["rationale"]
    assert detect(sentences, graph, request, rated).signals[-1] == "prompt:provider"
    assert detect(sentences, graph, request).signals[-1] == "prompt:terms"


@pytest.mark.parametrize("answer", [
    "not json", "[]", '{"scores": []}', '{"ratings": [{"id": "w99", "relevance": 5}]}',
    '{"ratings": [{"id": "w1", "relevance": 101}]}', '{"ratings": [{"id": "w1", "relevance": "high"}]}',
    '{"ratings": [{"id": "w1", "relevance": true}]}', '{"ratings": ["w1"]}',
])
def test_an_answer_that_is_not_the_ratings_is_refused(answer: str) -> None:
    windows = [{"id": "w1", "start_ms": 0, "end_ms": 5000, "text": "x"}]
    with pytest.raises(InvalidRatings):
        parse_ratings(answer, windows)


def test_hooks_and_connectives_are_read_in_the_video_s_language() -> None:
    # a German talk: one clip opens on a hook formula ("Stell dir vor"), one mid-thought ("Aber")
    texts = ["Stell dir vor, eine Stadt ohne Autos und ohne Lärm.", "Die Straßen gehören den Kindern.",
             "Die Luft ist sauber und die Nächte sind ruhig.", "Die Busse fahren alle fünf Minuten.",
             "Aber die Händler fürchten um ihre Kunden.", "Sie verkaufen weniger an den Wochenenden.",
             "Die Stadt zahlt ihnen eine Hilfe.", "Die Kunden kommen nach einem Jahr zurück."]
    segments = [Segment(2000 + 7000 * k, 8000 + 7000 * k, text, "A") for k, text in enumerate(texts)]
    graph = analyse(segments, language="de").to_dict()
    graph["durationMs"] = 2000 + 7000 * len(texts)
    request = DetectionRequest(target_ms=20_000, requested_clip_count=2, analysis_mode="transcript")
    found = detect(split_sentences(segments, "de"), graph, request)
    rationales = {c["start_ms"]: c["rationale"].lower() for c in found.clips}
    assert "opens with a hook: “stell dir vor" in rationales[2000], rationales
    assert all("mid-thought" not in r for r in rationales.values()), rationales  # no clip starts on "Aber"
    assert 2000 + 7000 * 4 not in rationales
