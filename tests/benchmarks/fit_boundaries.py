"""Fit the chapter boundary weights and measure them held out: ``python -m tests.benchmarks fit-boundaries --set DIR``.

``--folds``: the weights and the count rule that ship, searched out of fold (``fit_folds``).

The folder is the quality benchmark's (``bench_quality``: transcripts that people chaptered by hand).
Each sentence start of each transcript is a row: its ``boundary_features`` (``domain.analysis.structure``)
and a label, 1 when a human chapter starts within ``LABEL_TOLERANCE_S`` of it. A logistic regression
(numpy, Newton steps, an L2 penalty on the standardised weights) fits the weights of the features.

Printed, for the hand weights of now (``BOUNDARY_WEIGHTS`` for one voice, ``CONVERSATION_WEIGHTS`` for
  several) and for the fitted ones:

- **held out one item at a time**: for each transcript, the weights fitted on all the others chapter
  it, and it is scored as the quality benchmark scores it; the mean of those figures is the honest
  one (``--by-kind``: fitted on the other transcripts of its own kind only, monologue or dialogue);
- in sample: the weights fitted on all the transcripts, scored on the same transcripts (optimistic),
  and those weights divided by the depth's (the form ``BOUNDARY_WEIGHTS`` takes: the scene change and
  silence weights, which a caption-only set cannot fit, stay in the depth's units).

The strength of a boundary is the fitted linear score (the log-odds): the count rule and the picks
use only its order and its spread, which a positive scale and shift leave alone.
"""

from __future__ import annotations

import argparse
import bisect
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from domain.analysis import MediaFacts
from domain.analysis.graph import read_transcript
from domain.analysis.language import _after_leading_words
from domain.analysis.phrases import PhraseReader
from domain.analysis.structure import (
    BOUNDARY_FEATURES,
    BOUNDARY_WEIGHTS,
    COUNT_RULE,
    KIND_WEIGHTS,
    CountRule,
    boundary_features,
    boundary_window_ms,
    chapters_from_scores,
    lexical_depth,
    place_chapters,
    talk_kind,
    word_bags,
)
from domain.analysis.text import words
from domain.analysis.titles import TAG_QUESTION_RE
from infra.captions import parse_captions
from tests.benchmarks.bench_quality import Item, load_items
from tests.benchmarks.chapter_measures import (
    COUNT_RATIO_OK,
    boundary_f1,
    lowercase_words,
    score_item,
    set_folder,
)

LABEL_TOLERANCE_S = 15
# Candidate features measured here beside the analysis' own (``BOUNDARY_FEATURES``); see ``candidate_features``.
CANDIDATE_FEATURES = ("depth_short", "plan", "asks", "pause_rank", "position", "since_strong")
FEATURES = (*BOUNDARY_FEATURES, *CANDIDATE_FEATURES)
# A first-person plan opening a sentence, after the leading words (as cue phrases are matched).
PLAN_PHRASES = {
    "en": r"let['’]?s|let\s+us|let\s+me|we['’]ll|we\s+will|we['’]re\s+going\s+to|we\s+are\s+going\s+to|i['’]ll|"
          r"i['’]m\s+going\s+to|i\s+want\s+to|i['’]d\s+like\s+to|we\s+(?:want|need)\s+to",
    "fr": r"on\s+va|nous\s+allons|je\s+vais|j['’]aimerais|je\s+voudrais|laissez-moi|allons|essayons|voyons|regardons",
}
SINCE_STRONG_MS = 300_000  # the scale of ``since_strong``: five minutes
ANSWER_SENTENCES = 3  # where the answer to a question that opens a part is looked for
# Features a caption-only set holds no example of: their weights stay the hand ones, in the depth's units.
UNFITTED = ("scene", "silence")


def candidate_features(sentences: list, reader: PhraseReader, window_ms: int, depth: list[float]
                       ) -> dict[str, list[float]]:
    """Features not in the analysis, measured here (index 0 all zero):

    - ``depth_short``: the lexical valley's depth at half the window;
    - ``plan``: the sentence opens with a first-person plan ("we'll", "I want to", "let me", "on va");
    - ``asks``: a question of four words or more (no tag question) whose content words come back
      in the next ``ANSWER_SENTENCES`` ("What is a group? ... a group is ...");
    - ``pause_rank``: the rank of the pause before it among the talk's pauses (0 to 1);
    - ``position``: how far into the talk it lies (0 to 1);
    - ``since_strong``: the time since the last earlier sentence with a cue phrase or a valley deeper
      than the talk's mean plus one standard deviation, in ``SINCE_STRONG_MS`` (at most 1).
    """
    kit = reader.kit
    n = len(sentences)
    columns = {name: [0.0] * n for name in CANDIDATE_FEATURES}
    if n < 2:
        return columns
    plan_re = re.compile(rf"(?:{PLAN_PHRASES.get(kit.code, PLAN_PHRASES['en'])})(?!\w)", re.IGNORECASE)
    short = lexical_depth(sentences, word_bags(sentences, reader), window_ms // 2)
    stems = [{reader.stem(t) for t in s.tokens} for s in sentences]
    gaps = [0] + [max(0, sentences[i].start_ms - sentences[i - 1].end_ms) for i in range(1, n)]
    ordered_gaps = sorted(gaps[1:])
    mean = sum(depth[1:]) / (n - 1)
    deep = mean + math.sqrt(sum((v - mean) ** 2 for v in depth[1:]) / (n - 1))
    duration = max(1, sentences[-1].end_ms)
    last_strong = 0
    for i in range(1, n):
        sentence = sentences[i]
        text = sentence.text
        columns["depth_short"][i] = short[i]
        columns["plan"][i] = float(bool(plan_re.match(_after_leading_words(text, kit.leading_words))))
        columns["asks"][i] = float(sentence.is_question and len(words(text)) >= 4 and not TAG_QUESTION_RE.search(text)
                                   and any(stems[i] & stems[j] for j in range(i + 1, min(n, i + 1 + ANSWER_SENTENCES))))
        columns["pause_rank"][i] = bisect.bisect_left(ordered_gaps, gaps[i]) / len(ordered_gaps)
        columns["position"][i] = sentence.start_ms / duration
        columns["since_strong"][i] = min(1.0, (sentence.start_ms - last_strong) / SINCE_STRONG_MS)
        if kit.opens_with_cue(text) or depth[i] > deep:
            last_strong = sentence.start_ms
    return columns


@dataclass
class Prepared:
    item: Item
    kind: str
    duration_ms: int
    sentences: list
    reader: PhraseReader
    lowercase: frozenset[str]  # the words the transcript says in lowercase (``bare_noun``)
    features: np.ndarray  # sentences x features (row 0: the talk's start, never a boundary)
    labels: np.ndarray
    far: np.ndarray  # sentence starts more than ``FAR_S`` from every human boundary


FAR_S = 30  # a boundary placed there is a false one even at +-30 s


def prepare(item: Item, tolerance_s: float = LABEL_TOLERANCE_S, nearest: bool = False) -> Prepared:
    """The item read as the analysis reads it (``read_transcript``), its features and labels."""
    segments = parse_captions(item.captions)
    duration_ms = (max(s.end_ms for s in segments) // 1000 + 2) * 1000
    reading = read_transcript(segments, MediaFacts(duration_ms=duration_ms), item.language)
    sentences, reader = reading.sentences, reading.reader
    window_ms = boundary_window_ms(duration_ms)
    columns = boundary_features(sentences, MediaFacts(duration_ms=duration_ms), window_ms, reader=reader)
    columns.update(candidate_features(sentences, reader, window_ms, columns["depth"]))
    features = np.array([columns[name] for name in FEATURES]).T
    gold = np.array([g["start_s"] for g in item.gold if g["start_s"] > 1])
    starts = np.array([s.start_ms / 1000 for s in sentences])
    distance = np.abs(starts[:, None] - gold[None, :])
    labels = (distance <= tolerance_s).any(axis=1).astype(float)
    if nearest:  # only the sentence start nearest each human boundary
        labels = np.zeros(len(starts))
        for j in range(len(gold)):
            if distance[:, j].min() <= tolerance_s:
                labels[int(distance[:, j].argmin())] = 1.0
    labels[0] = 0.0
    kind = talk_kind(sentences)
    far = (distance > FAR_S).all(axis=1)
    far[0] = False
    lowercase = lowercase_words(" ".join(s.text for s in segments))
    return Prepared(item, kind, duration_ms, sentences, reader, lowercase, features, labels, far)


def fit(train: list[Prepared], names: list[str], penalty: float, balance: bool, pairwise: bool = False
        ) -> dict[str, float]:
    """Logistic regression of the labels on the named features (rows after each talk's start),
    weights in the features' own units; ``balance`` weighs each talk's rows to one talk's worth.
    ``pairwise``: a ranking instead, within each talk, of every labelled sentence start above every
    one more than ``FAR_S`` from any human boundary (the differences of their features, both ways)."""
    columns = [FEATURES.index(n) for n in names]
    if pairwise:
        blocks, counts = [], []
        for p in train:
            positive, negative = p.features[p.labels == 1][:, columns], p.features[p.far][:, columns]
            difference = (positive[:, None, :] - negative[None, :, :]).reshape(-1, len(columns))
            blocks += [difference, -difference]
            counts.append(len(difference))
        x = np.vstack(blocks)
        y = np.concatenate([np.concatenate([np.ones(c), np.zeros(c)]) for c in counts])
        rows = np.concatenate([np.full(2 * c, 1.0 / c if balance else 1.0) for c in counts])
    else:
        x = np.vstack([p.features[1:, columns] for p in train])
        y = np.concatenate([p.labels[1:] for p in train])
        rows = np.concatenate([np.full(len(p.labels) - 1, 1.0 / (len(p.labels) - 1) if balance else 1.0)
                               for p in train])
    rows = rows / rows.mean()
    mean, spread = (np.zeros(x.shape[1]) if pairwise else x.mean(axis=0)), x.std(axis=0)
    spread[spread == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / spread])
    beta = np.zeros(z.shape[1])
    ridge = np.full(z.shape[1], penalty)
    ridge[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(z @ beta)))
        gradient = z.T @ (rows * (y - p)) - ridge * beta
        hessian = (z * (rows * p * (1 - p))[:, None]).T @ z + np.diag(ridge)
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    return {n: float(w) for n, w in zip(names, beta[1:] / spread, strict=True)}


def in_depth_units(weights: dict[str, float]) -> dict[str, float]:
    """The weights divided by the depth's, with the hand weights of the features no caption shows."""
    depth = weights.get("depth") or 1.0
    scaled = {n: w / depth for n, w in weights.items()}
    for name in UNFITTED:
        scaled[name] = BOUNDARY_WEIGHTS.get(name, 0.0)
    return scaled


KINDS = tuple(KIND_WEIGHTS)  # the hand weights of each kind of talk, as ``boundary_scores`` reads them
# Weights for each kind of talk: what the search moves (one move applies to both kinds alike).
KindWeights = dict[str, dict[str, float]]


def strengths(prepared: Prepared, weights: dict[str, float]) -> list[float]:
    """Each sentence start's boundary strength under ``weights`` (index 0: never a boundary)."""
    scores = prepared.features @ np.array([weights.get(n, 0.0) for n in FEATURES])
    scores[0] = 0.0
    return scores.tolist()


def evaluate(prepared: Prepared, weights: dict[str, float], rule: CountRule = COUNT_RULE) -> dict:
    """The item chaptered with ``weights`` and ``rule``, titled, and scored as the quality benchmark scores it."""
    chapters = chapters_from_scores(prepared.sentences, prepared.duration_ms, strengths(prepared, weights),
                                    prepared.reader, rule)
    row = score_item([c.to_dict() for c in chapters], prepared.item.gold, prepared.duration_ms / 1000,
                     prepared.lowercase)
    return {"item": prepared.item.name, "kind": prepared.kind, **row}


def boundaries_only(prepared: Prepared, weights: dict[str, float], rule: CountRule = COUNT_RULE) -> tuple:
    """(F1 +-30 s, F1 +-15 s, count within ``COUNT_RATIO_OK``) of the item chaptered with ``weights``
    and ``rule``, untitled: what the searches compare, fast."""
    chapters = place_chapters(prepared.sentences, prepared.duration_ms, strengths(prepared, weights),
                              prepared.reader, rule)
    starts = [c.start_ms / 1000 for c in chapters if c.start_ms > 1000]
    gold = [g["start_s"] for g in prepared.item.gold if g["start_s"] > 1]
    low, high = COUNT_RATIO_OK
    return (boundary_f1(starts, gold, 30), boundary_f1(starts, gold, 15),
            float(low <= len(chapters) / len(prepared.item.gold) <= high))


def means(rows: list[dict]) -> str:
    low, high = COUNT_RATIO_OK

    def mean(key: str, part: list[dict]) -> float:
        return sum(r[key] for r in part) / len(part) if part else float("nan")

    kinds = {k: [r for r in rows if r["kind"] == k] for k in ("monologue", "dialogue")}
    count_ok = sum(low <= r["pred"] / r["gold"] <= high for r in rows)
    return (f"F1@30 {mean('f1_30', rows):.3f}  F1@15 {mean('f1_15', rows):.3f}  count ok {count_ok}/{len(rows)}  "
            f"bad titles {mean('bad_titles', rows):.3f}  title overlap {mean('title_overlap', rows):.4f}  | "
            + "  ".join(f"{k} {mean('f1_30', part):.3f}/{mean('f1_15', part):.3f}" for k, part in kinds.items()))


def held_out(prepared: list[Prepared], names: list[str], penalty: float, balance: bool, by_kind: bool,
             pairwise: bool) -> list[dict]:
    rows = []
    for k, target in enumerate(prepared):
        train = [p for j, p in enumerate(prepared) if j != k and (not by_kind or p.kind == target.kind)]
        rows.append(evaluate(target, in_depth_units(fit(train, names, penalty, balance, pairwise))))
    return rows


SEARCH_STEPS = (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2)
SEARCH_MIN_GAIN = 0.002  # a move must raise the training mean of F1 +-30 s by this much
SEARCH_ROUNDS = 30


class BoundaryF1:
    """The F1 at +-30 s and +-15 s of each transcript chaptered with given weights (and the count
    rule of now), without the titles (which do not move the boundaries), remembered per weight vector."""

    def __init__(self, prepared: list[Prepared]) -> None:
        self.prepared = prepared
        self.seen: dict[tuple, np.ndarray] = {}

    def __call__(self, weights: KindWeights) -> np.ndarray:
        key = tuple(round(weights[kind].get(n, 0.0), 4) for kind in KINDS for n in FEATURES)
        if key not in self.seen:
            self.seen[key] = np.array([boundaries_only(p, weights[p.kind])[:2] for p in self.prepared])
        return self.seen[key]


def search(f1: BoundaryF1, train: list[int], names: list[str], start: KindWeights | None = None
           ) -> KindWeights:
    """Coordinate ascent on the mean F1 +-30 s of the ``train`` transcripts (ties: F1 +-15 s) from
    ``start`` (the hand weights of each kind by default): each round takes the best single move of
    one weight by ``SEARCH_STEPS``, the same for both kinds (the depth's weight stays 1: the scale),
    while it gains ``SEARCH_MIN_GAIN``."""
    weights = {kind: dict(w) for kind, w in (KIND_WEIGHTS if start is None else start).items()}

    def value(w: KindWeights) -> tuple[float, float]:
        rows = f1(w)[train]
        return float(rows[:, 0].mean()), float(rows[:, 1].mean())

    best = value(weights)
    for _ in range(SEARCH_ROUNDS):
        moves = []
        for name in names:
            if name == "depth":
                continue
            for step in SEARCH_STEPS:
                trial = {kind: {**w, name: round(w.get(name, 0.0) + step, 4)} for kind, w in weights.items()}
                moves.append((value(trial), name, step, trial))
        (score, name, step, trial) = max(moves, key=lambda m: m[0])
        if score[0] < best[0] + SEARCH_MIN_GAIN:
            break
        weights, best = trial, score
    return weights


def across_kinds(prepared: list[Prepared], names: list[str]) -> None:
    """The weights searched on one kind (all its transcripts) and read on the other kind."""
    f1 = BoundaryF1(prepared)
    for kind, other in (("monologue", "dialogue"), ("dialogue", "monologue")):
        train = [j for j, p in enumerate(prepared) if p.kind == kind]
        weights = search(f1, train, names)
        changed = moved(weights)
        rows = [evaluate(p, weights[p.kind]) for p in prepared]
        print(f"searched on the {kind}s ({changed or 'the hand weights'}):", means(rows))
        print(f"    read on the {other}s (held out)")


def moved(weights: KindWeights) -> dict[str, float]:
    """How far the search moved each weight from the hand weights (the same for both kinds)."""
    return {n: round(w - KIND_WEIGHTS["monologue"].get(n, 0.0), 4) for n, w in weights["monologue"].items()
            if w != KIND_WEIGHTS["monologue"].get(n, 0.0)}


def searched(prepared: list[Prepared], names: list[str], by_kind: bool, start: KindWeights | None = None
             ) -> tuple[list[dict], KindWeights]:
    """Held out one transcript at a time: the weights searched on the others (of its kind with
    ``by_kind``) chapter it; then the weights searched on all."""
    f1 = BoundaryF1(prepared)
    rows = []
    for k, target in enumerate(prepared):
        train = [j for j, p in enumerate(prepared) if j != k and (not by_kind or p.kind == target.kind)]
        weights = search(f1, train, names, start)
        rows.append({**evaluate(target, weights[target.kind]), "weights": weights})
    return rows, search(f1, list(range(len(prepared))), names, start)


def swept(prepared: list[Prepared], name: str, values: list[float]) -> None:
    """One weight chosen for each kind of talk apart, held out: for each transcript, the value of
    ``values`` with the best mean F1 +-30 s on the other transcripts of its kind (ties: the hand
    weight, then the lower value) chapters it. Printed per kind: each value's mean in sample, the
    value chosen for each transcript and the held-out mean."""
    f1 = BoundaryF1(prepared)
    for kind in KINDS:
        members = [j for j, p in enumerate(prepared) if p.kind == kind]
        if not members:
            continue
        hand = KIND_WEIGHTS[kind].get(name, 0.0)
        table = {}
        for value in values:
            trial = {k: dict(w) for k, w in KIND_WEIGHTS.items()}
            trial[kind][name] = value
            table[value] = f1(trial)[:, 0]
        print(f"{kind}s: {name} " + "  ".join(f"{v:g}: {table[v][members].mean():.3f}" for v in values)
              + f"  (hand weight {hand:g})")
        held, chosen = [], []
        for j in members:
            others = [i for i in members if i != j]
            if not others:
                continue
            best = max(values, key=lambda v: (round(float(table[v][others].mean()), 6), v == hand, -v))
            held.append(table[best][j])
            chosen.append(best)
        if held:
            print(f"    held out within the kind: {sum(held) / len(held):.3f} (chosen: "
                  f"{', '.join(f'{v:g}' for v in chosen)})")


def run(args: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks fit-boundaries",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, help="folder of NAME.srt|.transcript.md + .chapters.json "
                                                 "(default: $VAEO_QUALITY_SET)")
    parser.add_argument("--folds", action="store_true",
                        help="the boundary weights and the count rule searched on four folds and read on the "
                             "fifth, in turn (fit_folds); the other options are ignored")
    parser.add_argument("--features", default=",".join(n for n in FEATURES if n not in UNFITTED),
                        help="comma-separated features to fit (default: all that captions show)")
    parser.add_argument("--penalty", type=float, default=1.0, help="L2 penalty on the standardised weights")
    parser.add_argument("--balance", action="store_true", help="each transcript weighs the same, whatever its length")
    parser.add_argument("--by-kind", action="store_true", help="fit on the transcripts of the same kind only")
    parser.add_argument("--tolerance", type=float, default=LABEL_TOLERANCE_S,
                        help="label: a human boundary within this (s)")
    parser.add_argument("--nearest", action="store_true",
                        help="label only the sentence start nearest each human boundary")
    parser.add_argument("--per-transcript", action="store_true",
                        help="standardise each feature within each transcript (mean 0, deviation 1)")
    parser.add_argument("--pairwise", action="store_true",
                        help="rank the labelled sentence starts above those far from any human boundary")
    parser.add_argument("--search", action="store_true",
                        help="instead of the logistic regression, a coordinate ascent on the F1 itself")
    parser.add_argument("--from-depth", action="store_true",
                        help="with --search: start from the lexical depth alone instead of the hand weights")
    parser.add_argument("--across-kinds", action="store_true",
                        help="with --search: search on one kind, read on the other")
    parser.add_argument("--sweep", metavar="NAME=V1,V2,...",
                        help="one weight, chosen for each kind apart and held out within the kind")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per held-out item")
    options = parser.parse_args(args)
    names = [n for n in options.features.split(",") if n]
    unknown = set(names) - set(FEATURES)
    if unknown:
        raise SystemExit(f"unknown features: {', '.join(sorted(unknown))}")
    folder = set_folder(options.set)
    items = load_items(folder)
    if not items:
        raise SystemExit(f"no transcript with human chapters in {folder}")
    prepared = [prepare(item, options.tolerance, options.nearest) for item in items]
    if options.folds:
        from tests.benchmarks.fit_folds import run_folds

        run_folds(prepared, folder, [n for n in names if n in BOUNDARY_FEATURES], options.verbose)
        return
    hand = means([evaluate(p, KIND_WEIGHTS[p.kind]) for p in prepared])  # before any standardisation
    if options.per_transcript:
        for p in prepared:
            spread = p.features[1:].std(axis=0)
            spread[spread == 0] = 1.0
            p.features[1:] = (p.features[1:] - p.features[1:].mean(axis=0)) / spread
    positives = sum(int(p.labels.sum()) for p in prepared)
    rows = sum(len(p.labels) - 1 for p in prepared)
    print(f"{len(prepared)} transcripts, {rows} sentence starts, {positives} within {options.tolerance:g} s of a human "
          f"boundary; features: {', '.join(names)}; penalty {options.penalty}"
          f"{', balanced' if options.balance else ''}{', by kind' if options.by_kind else ''}"
          f"{', standardised per transcript' if options.per_transcript else ''}")
    print("hand weights (now), in sample:   ", hand)
    if options.sweep:
        name, _, listed = options.sweep.partition("=")
        if name not in FEATURES or not listed:
            raise SystemExit(f"--sweep NAME=V1,V2,...: NAME one of {', '.join(FEATURES)}")
        swept(prepared, name, [float(v) for v in listed.split(",")])
        return
    if options.search and options.across_kinds:
        across_kinds(prepared, names)
        return
    if options.search:
        start = dict.fromkeys(KINDS, {"depth": 1.0, **dict.fromkeys(UNFITTED, 0.0)}) if options.from_depth else None
        out, weights = searched(prepared, names, options.by_kind, start)
        if options.verbose:
            for r in out:
                changed = moved(r["weights"])
                print(f"    {r['item'][:36]:36} {r['kind']:9} {r['pred']:>3}/{r['gold']:<3} "
                      f"{r['f1_30']:.3f} {r['f1_15']:.3f} {changed}")
        print("searched, held out one at a time:", means(out))
        print("searched on all, in sample:      ", means([evaluate(p, weights[p.kind]) for p in prepared]))
        for kind in KINDS:
            print(f"    {kind} weights:", ", ".join(f"{n} {w:.3f}" for n, w in weights[kind].items()))
        return
    out = held_out(prepared, names, options.penalty, options.balance, options.by_kind, options.pairwise)
    if options.verbose:
        for r in out:
            print(f"    {r['item'][:36]:36} {r['kind']:9} {r['pred']:>3}/{r['gold']:<3} "
                  f"{r['f1_30']:.3f} {r['f1_15']:.3f}")
    print("fitted, held out one at a time:  ", means(out))
    groups = sorted({p.kind for p in prepared}) if options.by_kind else [None]
    for kind in groups:
        train = [p for p in prepared if kind is None or p.kind == kind]
        weights = in_depth_units(fit(train, names, options.penalty, options.balance, options.pairwise))
        label = "fitted on all, in sample:        " if kind is None else f"fitted on all {kind}s, in sample: "
        print(label, means([evaluate(p, weights) for p in train]))
        print("    weights (depth = 1):", ", ".join(f"{n} {w:.3f}" for n, w in weights.items()))


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
