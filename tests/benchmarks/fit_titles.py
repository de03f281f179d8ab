"""The weights of the chapter title ranking, fitted and measured out of fold:
``python -m tests.benchmarks fit-titles [--set DIR] [-v]``.

Titles are fitted and scored on the human chapters themselves (their starts given), so that a title is
judged on the span a person titled, whatever the boundaries. Each human chapter of the set's transcripts
(a ``Chapter`` from its start to the next, read as the analysis reads the transcript) gives its
candidate phrases with their ``titles.title_features``; each phrase is shown as a title would be and
scored by its ROUGE-L F against the human title (``chapter_measures.Rouge``). The weights are a ridge
least-squares fit of that score on the features, within each chapter (the features and the score
centred per chapter: only the order inside a chapter matters), on standardised features.

Five folds (``chapter_measures.fold_of``): for each, the weights fitted on the other four title its
chapters through ``titles.title_chapters`` (the opening question, the announced subject, the video's own
subject, the no-single-common-word and uniqueness rules all apply), scored against the human titles;
then the weights fitted on all, scored on all (in-fold), which are what ``TITLE_WEIGHTS`` ships; and
the weights of the code now, on all. The ROUGE-L is the mean over the human chapters (every chapter
counts: no matching is needed).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from domain.analysis import MediaFacts
from domain.analysis.chapters import Chapter
from domain.analysis.graph import Reading, read_transcript
from domain.analysis.phrases import heading
from domain.analysis.titles import TITLE_FEATURES, TITLE_WEIGHTS, TitleContext, title_chapters, title_features
from infra.captions import parse_captions
from tests.benchmarks.bench_quality import load_items
from tests.benchmarks.chapter_measures import Rouge, bare_noun, fold_of, lowercase_words, set_folder, unpublishable

RIDGE = 1.0
UNCHAPTERED = None  # the opening a podcast's hosts leave without a chapter: titled, never scored


@dataclass
class Spans:
    """One transcript read as the analysis reads it, cut at its human chapters."""

    name: str
    reading: Reading
    chapters: list[Chapter]
    human: list[str | None]  # each chapter's human title (None: the unchaptered opening)
    lowercase: frozenset[str]


def human_spans(item) -> Spans:
    segments = parse_captions(item.captions)
    duration_ms = (max(s.end_ms for s in segments) // 1000 + 2) * 1000
    reading = read_transcript(segments, MediaFacts(duration_ms=duration_ms), item.language)
    gold = [(int(g["start_s"] * 1000), g["title"]) for g in item.gold]
    if gold[0][0] > 1000:
        gold.insert(0, (0, UNCHAPTERED))
    chapters, human = [], []
    for k, (start, title) in enumerate(gold):
        end = gold[k + 1][0] if k + 1 < len(gold) else duration_ms
        inside = [s.index for s in reading.sentences if start <= s.start_ms < end]
        if inside:
            chapters.append(Chapter(start if k else 0, end, "", inside[0], inside[-1]))
            human.append(title)
    return Spans(item.name, reading, chapters, human, lowercase_words(" ".join(s.text for s in segments)))


def training_rows(spans: Spans) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per human chapter: its candidates' features and each one's ROUGE-L against the human title."""
    reading = spans.reading
    reader = reading.reader
    tables = [reader.table(reading.sentences[c.first_sentence:c.last_sentence + 1]) for c in spans.chapters]
    context = TitleContext(reading.sentences, reader, len(spans.chapters))
    for table in tables:
        context.spread.update(table.counts.keys())
    out = []
    for chapter, table, human in zip(spans.chapters, tables, spans.human, strict=True):
        if human is None:
            continue
        rows, scores = [], []
        for key, row in title_features(chapter, table, context).items():
            title = heading(reader.plural_head(reader.label(table.surfaces[key]), table.surfaces[key]))
            if reader.publishable(title) and not reader.is_fragment(title):
                rows.append(row)
                scores.append(Rouge.f(title, human))
        if len(rows) > 1:
            out.append((np.array(rows), np.array(scores)))
    return out


def fit(rows: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """Ridge least squares of the score on the features, both centred within each chapter."""
    x = np.vstack([features - features.mean(axis=0) for features, _ in rows])
    y = np.concatenate([scores - scores.mean() for _, scores in rows])
    spread = x.std(axis=0)
    spread[spread == 0] = 1.0
    z = x / spread
    beta = np.linalg.solve(z.T @ z + RIDGE * np.eye(z.shape[1]), z.T @ y) / spread
    return {name: round(float(w), 4) for name, w in zip(TITLE_FEATURES, beta, strict=True)}


def titled(spans: Spans, weights: dict[str, float]) -> dict:
    """The human chapters titled with ``weights``, scored: each chapter's ROUGE-L, the titles."""
    chapters = [Chapter(c.start_ms, c.end_ms, "", c.first_sentence, c.last_sentence) for c in spans.chapters]
    reading = spans.reading
    title_chapters(chapters, reading.sentences, reading.reader, weights)
    scored = [Rouge.f(c.title, h) for c, h in zip(chapters, spans.human, strict=True) if h is not None]
    titles = [c.title for c in chapters]
    return {"item": spans.name, "rouge": scored, "titles": titles, "human": spans.human,
            "bad": sum(map(unpublishable, titles)), "bare": sum(bare_noun(t, spans.lowercase) for t in titles),
            "repeated": len(titles) - len({t.lower() for t in titles})}


def line(rows: list[dict]) -> str:
    scores = [f for r in rows for f in r["rouge"]]
    return (f"title ROUGE-L {sum(scores) / len(scores):.3f} over {len(scores)} human chapters; unpublishable "
            f"{sum(r['bad'] for r in rows)}, one common word {sum(r['bare'] for r in rows)}, "
            f"repeated {sum(r['repeated'] for r in rows)}")


def run(args: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks fit-titles", description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, help="folder of NAME.srt|.transcript.md + .chapters.json "
                                                 "(default: $VAEO_QUALITY_SET)")
    parser.add_argument("-v", "--verbose", action="store_true", help="the titles of each held-out item")
    options = parser.parse_args(args)
    folder = set_folder(options.set)
    spans = [human_spans(item) for item in load_items(folder)]
    rows = {s.name: training_rows(s) for s in spans}
    folds = fold_of([s.name for s in spans], folder)
    held = []
    for k in sorted(set(folds.values())):
        weights = fit([r for s in spans if folds[s.name] != k for r in rows[s.name]])
        out = [titled(s, weights) for s in spans if folds[s.name] == k]
        held += out
        print(f"fold {k + 1}, held out ({', '.join(r['item'][:2] for r in out)}): {line(out)}")
        print(f"    weights: {weights}")
        if options.verbose:
            for r in out:
                print(f"      {r['item'][:30]:30} given: {' | '.join(r['titles'])}")
                print(f"      {'':30} human: {' | '.join(h or '-' for h in r['human'])}")
    print(f"OUT OF FOLD: {line(held)}")
    weights = fit([r for s in spans for r in rows[s.name]])
    print(f"IN FOLD (fitted on all, scored on all): {line([titled(s, weights) for s in spans])}")
    print(f"    weights: {weights}")
    print(f"the weights of the code now, on all: {line([titled(s, TITLE_WEIGHTS) for s in spans])}")
