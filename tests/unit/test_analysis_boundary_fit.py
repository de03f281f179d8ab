"""The chapter boundary fitting script: its logistic fits, its candidate features and a run held out."""

from __future__ import annotations

import json

import numpy as np

from domain.analysis.phrases import PhraseReader
from domain.analysis.sentences import split_sentences
from infra.captions import parse_captions
from tests.benchmarks.bench_quality import _timestamp
from tests.benchmarks.fit_boundaries import FEATURES, Prepared, candidate_features, fit, run


def _prepared(seed: int) -> Prepared:
    """600 sentence starts where a cue phrase marks every boundary and the depth is noise."""
    rng = np.random.default_rng(seed)
    features = np.zeros((600, len(FEATURES)))
    labels = (rng.random(600) < 0.1).astype(float)
    labels[0] = 0.0
    features[:, FEATURES.index("depth")] = rng.random(600)
    features[:, FEATURES.index("phrase")] = labels
    features[:, FEATURES.index("pause")] = labels * 0.5 + rng.random(600)
    far = labels == 0
    return Prepared(None, "monologue", 0, [], None, frozenset(), features, labels, far)


def test_the_fit_weighs_what_tells_the_boundaries_apart() -> None:
    train = [_prepared(1), _prepared(2)]
    for pairwise in (False, True):
        weights = fit(train, ["depth", "phrase", "pause"], penalty=1.0, balance=False, pairwise=pairwise)
        assert weights["phrase"] > 1.0 and weights["pause"] > 0.2
        assert abs(weights["depth"]) < weights["pause"] < weights["phrase"]
    # a stronger penalty shrinks the weights
    strong = fit(train, ["depth", "phrase", "pause"], penalty=1000.0, balance=False)
    assert 0 < strong["phrase"] < fit(train, ["depth", "phrase", "pause"], penalty=1.0, balance=False)["phrase"]


LINES = [
    ("Today we look at how bread rises in a warm kitchen.", 0),
    ("Yeast eats the sugar in the dough and breathes out gas.", 5),
    ("What is gluten made of in the dough?", 10),
    ("Gluten is made of two proteins that bind the dough.", 14),
    ("We'll see how ovens bake the loaf.", 30),
    ("A stone keeps the heat and gives the crust its colour.", 35),
]


def test_candidate_features_read_plans_answered_questions_and_positions() -> None:
    captions = "\n".join(f"{k + 1}\n{_timestamp(t * 1000)} --> {_timestamp(t * 1000 + 4000)}\n{text}\n"
                         for k, (text, t) in enumerate(LINES))
    sentences = split_sentences(parse_captions(captions), "en")
    assert len(sentences) == len(LINES)
    reader = PhraseReader("en")
    columns = candidate_features(sentences, reader, 20_000, [0.0] * len(sentences))
    assert columns["asks"] == [0, 0, 1, 0, 0, 0]  # answered by the next sentence ("gluten")
    assert columns["plan"] == [0, 0, 0, 0, 1, 0]
    assert columns["position"] == sorted(columns["position"]) and 0 < columns["position"][-1] < 1
    assert max(columns["pause_rank"]) == columns["pause_rank"][4] < 1  # the longest pause, before "We'll see"


def test_a_run_prints_the_held_out_and_the_in_sample_figures(tmp_path, capsys) -> None:
    topics = [("bread", "dough yeast flour gluten crust loaf"), ("ovens", "stone heat steam baking temperature fire"),
              ("bikes", "wheel chain pedal saddle brake gear"), ("boats", "sail hull keel mast anchor harbour")]
    for name in ("01-a", "02-b"):
        cues, t = [], 0
        for topic, vocabulary in topics:
            for k in range(8):
                words = vocabulary.split()
                text = f"The {topic} story has {words[k % 6]} and {words[(k + 2) % 6]} near {words[(k + 4) % 6]}."
                cues.append(f"{len(cues) + 1}\n{_timestamp(t)} --> {_timestamp(t + 4500)}\n{text}\n")
                t += 5000
        (tmp_path / f"{name}.srt").write_text("\n".join(cues), encoding="utf-8")
        gold = [{"start_s": 40 * k, "title": topic.capitalize()} for k, (topic, _) in enumerate(topics)]
        (tmp_path / f"{name}.chapters.json").write_text(json.dumps(gold), encoding="utf-8")
    run(["--set", str(tmp_path), "--features", "depth,phrase,pause"])
    out = capsys.readouterr().out
    assert "2 transcripts, 62 sentence starts" in out
    assert "fitted, held out one at a time:   F1@30 " in out and "fitted on all, in sample:" in out
    run(["--set", str(tmp_path), "--search", "--features", "depth,phrase"])
    assert "searched, held out one at a time: F1@30 " in capsys.readouterr().out
    run(["--set", str(tmp_path), "--sweep", "pause=0,0.15"])
    swept = capsys.readouterr().out
    assert "monologues: pause 0: " in swept and "held out within the kind: " in swept
    assert "dialogues" not in swept  # one voice in both transcripts: no conversation to choose for
