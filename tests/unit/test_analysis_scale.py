"""domain.analysis on crowded or long transcripts: bounds that keep the passes linear, and the
sliding windows of the chapter pass giving exactly what whole-window counts give."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from pathlib import Path

import pytest

from domain.analysis import MediaFacts, SceneChange, Segment, TimeRange, analyse
from domain.analysis.moments import MAX_SENTENCES
from domain.analysis.phrases import PhraseReader
from domain.analysis.sentences import split_sentences
from domain.analysis.structure import (
    BOUNDARY_FEATURES,
    BOUNDARY_WEIGHTS,
    CONVERSATION_WEIGHTS,
    boundary_features,
    boundary_scores,
    boundary_window_ms,
    build_chapters,
    chapters_from_scores,
    cohesion,
    is_monologue,
    word_bags,
)
from infra.captions import read_captions

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"


def test_a_clip_moment_holds_a_bounded_number_of_sentences_when_captions_crowd_them() -> None:
    # 240 factual sentences of half a second each: every 35 s stretch (the ideal clip) holds 70.
    segments = [Segment(k * 500, k * 500 + 450, f"Le projet {k} coûte 45 millions d'euros à Paris en 2024.", "Anne")
                for k in range(240)]
    graph = analyse(segments)
    assert graph.moments
    for moment in graph.moments:
        assert moment.last_sentence - moment.first_sentence + 1 <= MAX_SENTENCES


def _reference_cohesion(sentences, bags, window_ms):
    """The cosine of the weighted words before and after each sentence start, from whole windows (the definition)."""
    values = [1.0] * len(sentences)
    for i in range(1, len(sentences)):
        t = sentences[i].start_ms
        before, after = Counter(), Counter()
        for j, s in enumerate(sentences):
            if j < i and s.start_ms >= t - window_ms:
                before.update(bags[j])
            elif j >= i and (s.start_ms < t + window_ms or j == i):
                after.update(bags[j])
        dot = sum(v * after.get(k, 0) for k, v in before.items())
        norm = math.sqrt(sum(v * v for v in before.values())) * math.sqrt(sum(v * v for v in after.values()))
        values[i] = dot / norm if before and after and norm else 0.0
    return values


def test_sliding_chapter_windows_give_exactly_what_whole_windows_give() -> None:
    sentences = split_sentences(read_captions(FIXTURE), "fr")
    reader = PhraseReader("fr")
    bags = word_bags(sentences, reader)
    for window_ms in (5_000, 20_000, 60_000):
        assert cohesion(sentences, bags, window_ms) == _reference_cohesion(sentences, bags, window_ms)


def test_boundary_scores_are_linear_in_the_sentences() -> None:
    sentences = split_sentences(read_captions(FIXTURE), "fr")
    facts = MediaFacts(duration_ms=sentences[-1].end_ms,
                       scene_changes=tuple(SceneChange(t, 0.5) for t in range(7_000, sentences[-1].end_ms, 23_000)),
                       silences=tuple(TimeRange(t, t + 900) for t in range(12_000, sentences[-1].end_ms, 31_000)))
    scores = boundary_scores(sentences, facts, 60_000, "fr")
    assert len(scores) == len(sentences) and scores[0] == 0.0 and all(v >= 0 for v in scores)
    # a scene change and a cue phrase make a boundary stronger than the same point without them
    plain = boundary_scores(sentences, MediaFacts(duration_ms=sentences[-1].end_ms), 60_000, "fr")
    near_scene = [i for i, s in enumerate(sentences) if i and any(abs(c.time_ms - s.start_ms) <= 1500
                                                                 for c in facts.scene_changes)]
    assert near_scene and all(scores[i] > plain[i] for i in near_scene)


def test_the_words_around_a_point_are_those_splitting_would_give() -> None:
    import random

    from domain.analysis.text import word_after, word_before

    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice("ab. \t\u00a0J«-") for _ in range(rng.randint(0, 30)))
        for k in range(len(text) + 1):
            assert word_before(text, k) == (text[:k].split() or [""])[-1]
            assert word_after(text, k) == (text[k:].split() or [""])[0]


def _reference_split_points(text: str) -> list[int]:
    """Sentence ends as first written: slicing and splitting everything before each end."""
    import re

    from domain.analysis.sentences import ABBREVIATIONS, BOUNDARY_RE

    def is_initial(before: str, after: str) -> bool:
        previous = before.split()[-1] if before.split() else ""
        following = after.split()[0] if after.split() else ""
        if re.fullmatch(r"[A-Z]\.", following) or re.fullmatch(r"[A-Z]\.", previous):
            return True
        return bool(previous[:1].isupper() and not previous.endswith((".", "!", "?")) and following[:1].isupper())

    points = []
    for match in BOUNDARY_RE.finditer(text):
        if match.group(1) == ".":
            before = text[:match.start()]
            last = re.search(r"([\w.\-]+)$", before)
            token = last.group(1) if last else ""
            bare = token.rstrip(".").lower()
            if bare in ABBREVIATIONS or re.fullmatch(r"(?:\w\.)+\w", token):
                continue
            if len(bare) == 1 and bare.isalpha() and is_initial(before[:-1], text[match.end():]):
                continue
        points.append(match.end())
    return points


def test_sentence_ends_in_a_long_cue_are_found_as_before() -> None:
    import random

    from domain.analysis.sentences import _split_points

    rng = random.Random(11)
    pieces = ["J.", "K.", "Rowling", "a.", "etc.", "M.", "Dupont", "classés", "F", "ou", "G.", "Ces", "2.5", "U.S.A.",
              "fin.", "Vraiment ?", "Oui !", "é.", "x-y.", "«", "»", "Paris."]
    for _ in range(200):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        assert _split_points(text) == _reference_split_points(text)


def test_a_boundary_strength_is_its_features_weighted() -> None:
    sentences = split_sentences(read_captions(FIXTURE), "fr")
    reader = PhraseReader("fr")
    reader.learn(sentences, [])
    facts = MediaFacts(duration_ms=sentences[-1].end_ms,
                       scene_changes=tuple(SceneChange(t, 0.5) for t in range(7_000, sentences[-1].end_ms, 23_000)))
    columns = boundary_features(sentences, facts, 60_000, reader=reader)
    assert set(columns) == set(BOUNDARY_FEATURES) and all(len(c) == len(sentences) for c in columns.values())
    assert all(column[0] == 0.0 for column in columns.values())  # the talk's start is never a boundary
    strength = boundary_scores(sentences, facts, 60_000, reader=reader)
    assert not is_monologue(sentences)  # an interview: the weights of a conversation
    expected = [sum(w * columns[name][i] for name, w in CONVERSATION_WEIGHTS.items()) for i in range(len(sentences))]
    assert strength == pytest.approx(expected)
    # other weights read the same features: a cue phrase alone
    assert boundary_scores(sentences, facts, 60_000, reader=reader, weights={"phrase": 1.0}) == columns["phrase"]
    assert any(columns["phrase"]) and any(columns["scene"])


def test_a_pause_and_a_question_weigh_in_a_lecture_not_in_a_conversation() -> None:
    conversation = split_sentences(read_captions(FIXTURE), "fr")
    lecture = [dataclasses.replace(s, speaker=None) for s in conversation]  # the same words, one voice
    reader = PhraseReader("fr")
    reader.learn(conversation, [])
    columns = boundary_features(conversation, None, 60_000, reader=reader)
    in_conversation = boundary_scores(conversation, None, 60_000, reader=reader)
    in_lecture = boundary_scores(lecture, None, 60_000, reader=reader)
    lecture_columns = boundary_features(lecture, None, 60_000, reader=reader)
    assert lecture_columns["depth"] == columns["depth"]
    expected = [sum(w * lecture_columns[name][i] for name, w in BOUNDARY_WEIGHTS.items()) for i in range(len(lecture))]
    assert in_lecture == pytest.approx(expected)
    same_voice = [i for i in range(1, len(conversation)) if not columns["speaker"][i] and not columns["turn"][i]]
    paused = [i for i in same_voice if columns["pause"][i] and not columns["question"][i]]
    asked = [i for i in same_voice if columns["question"][i] and not columns["pause"][i]]
    assert paused and asked
    # one voice: a long pause adds to the boundary, a question the speaker asks takes from it
    assert all(in_lecture[i] > in_conversation[i] for i in paused)
    assert all(in_lecture[i] < in_conversation[i] for i in asked)
    # in a conversation, neither moves it: the strength there is the lexical valley plus the cue phrase
    cues = ("phrase", "sponsor")
    assert all(in_conversation[i] == pytest.approx(
        columns["depth"][i] + sum(CONVERSATION_WEIGHTS[name] * columns[name][i] for name in cues))
        for i in paused + asked)


def test_chapters_from_the_strengths_are_those_the_analysis_builds() -> None:
    sentences = split_sentences(read_captions(FIXTURE), "fr")
    reader = PhraseReader("fr")
    reader.learn(sentences, [])
    duration_ms = sentences[-1].end_ms + 2_000
    scores = boundary_scores(sentences, None, boundary_window_ms(duration_ms), reader=reader)
    built = build_chapters(sentences, duration_ms, None, "fr", reader=reader)
    assert len(built) >= 3
    assert chapters_from_scores(sentences, duration_ms, scores, reader) == built
    # other strengths move the boundaries: the one point standing out becomes one
    target = len(sentences) // 2
    other = [0.0] * len(sentences)
    other[target] = 5.0
    chapters = chapters_from_scores(sentences, duration_ms, other, reader)
    assert sentences[target].start_ms // 1000 * 1000 in [c.start_ms for c in chapters]
    assert sentences[target].start_ms // 1000 * 1000 not in [c.start_ms for c in built]
