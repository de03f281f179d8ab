"""The chapter-quality benchmark's held-out figures: monologues and dialogues are averaged apart."""

from __future__ import annotations

import pytest

from domain.analysis import MediaFacts, Segment, analyse
from tests.benchmarks.bench_quality import BEGIN, END, kind_summaries, score_item, transcript_kind, write_docs

LINES = [
    "Today we look at how bread rises in a warm kitchen.",
    "Yeast eats the sugar in the dough and breathes out gas.",
    "The gas fills small pockets that gluten holds in place.",
    "Now let's talk about ovens and how heat reaches the loaf.",
    "A stone keeps the heat and gives the crust its colour.",
    "Steam in the first minutes lets the loaf grow before it sets.",
]


def _segments(speakers: list[str | None]) -> list[Segment]:
    return [Segment(i * 5_000, i * 5_000 + 4_500, LINES[i % len(LINES)], speakers[i % len(speakers)])
            for i in range(24)]


def _graph(speakers: list[str | None]):
    return analyse(_segments(speakers), MediaFacts(duration_ms=120_000), language="en")


def test_captions_naming_two_speakers_are_a_dialogue() -> None:
    assert transcript_kind(_graph(["Ada", "Ada", "Ben"])) == "dialogue"


def test_captions_naming_nobody_or_one_speaker_are_a_monologue() -> None:
    assert transcript_kind(_graph([None])) == "monologue"
    assert transcript_kind(_graph(["Ada"])) == "monologue"


def _row(kind: str, predicted_s: list[int], gold_s: list[int]) -> dict:
    chapters = [{"startMs": s * 1000, "title": f"Part {chr(65 + k)} bread"} for k, s in enumerate([0, *predicted_s])]
    gold = [{"start_s": s, "title": "Part bread"} for s in [0, *gold_s]]
    return {"kind": kind, **score_item(chapters, gold, 600)}


def test_each_kind_is_averaged_apart_before_the_mean_of_all() -> None:
    rows = [_row("monologue", [100, 300], [100, 300]), _row("dialogue", [100, 300], [200, 400]),
            _row("monologue", [100, 300], [100, 400])]
    summaries = dict(kind_summaries(rows))
    assert list(summaries) == ["MEAN of 2 monologues", "MEAN of 1 dialogue", "MEAN of 3"]
    assert summaries["MEAN of 2 monologues"]["f1_30"] == (1.0 + 0.5) / 2
    assert summaries["MEAN of 1 dialogue"]["f1_30"] == 0.0
    assert summaries["MEAN of 3"]["f1_30"] == 0.5


def test_a_set_of_one_kind_gives_only_the_mean_of_all() -> None:
    rows = [_row("dialogue", [100], [100]), _row("dialogue", [100], [200])]
    assert [label for label, _ in kind_summaries(rows)] == ["MEAN of 2"]


def test_the_figures_are_written_between_the_markers_and_nowhere_else(tmp_path) -> None:
    rows = [{**_row("monologue", [100, 300], [100, 300]), "analyse_s": 0.25},
            {**_row("dialogue", [100, 300], [200, 400]), "analyse_s": 0.5}]
    docs = tmp_path / "benchmarks.md"
    docs.write_text(f"# Figures\n\nbefore\n\n{BEGIN}\nold figures\n{END}\n\nafter\n", encoding="utf-8")
    write_docs(rows, docs, today="2026-01-02")
    text = docs.read_text(encoding="utf-8")
    assert text.startswith("# Figures\n\nbefore\n\n") and text.endswith("\n\nafter\n") and "old figures" not in text
    assert "Last run 2026-01-02: 2 transcripts (1 monologues, 1 dialogues), analysed in 0.8 s." in text
    assert "| measure | 1 monologue | 1 dialogue | all 2 |" in text
    assert "| chapter boundary F1, +-30 s | 1.000 | 0.000 | 0.500 |" in text
    assert "| chapter count within 0.6-1.6x of the human count | 1 of 1 | 1 of 1 | 2 of 2 |" in text
    write_docs(rows, docs, today="2026-01-03")  # again: the block is replaced, not added
    assert docs.read_text(encoding="utf-8").count(BEGIN) == 1 and "2026-01-02" not in docs.read_text(encoding="utf-8")
    docs.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        write_docs(rows, docs)
