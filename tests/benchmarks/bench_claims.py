"""Claims in every language: ``python -m tests.benchmarks claims --set DIR [-v]``.

A claim is a sentence that states something checkable (``domain.analysis.claims``); what makes one
is partly the same in every language (a figure, a date, a name) and partly words of the language
(a definition, a cause, a comparison; a hedge or a greeting that rules one out). This measures
whether a talk gets the same claims whatever the language it is told in.

The chaptered folder of the quality benchmark holds talks subtitled in English and translated by
people into other languages, the translations cued at the same moments of the same video (the
folder's ``manifest.json`` names each item's video). For every translation with an English
original, both are analysed as the worker does and compared by time:

- claims per minute in each;
- the English claims a claim of the translation overlaps (a share of the English claims; the spans
  widened by ``SLACK_MS`` on each side, since a translated cue starts a second or two apart), and
  the translation's claims that overlap an English one (a share of the translation's claims);
- the kinds of claims found in each;
- the clip moments (``domain.analysis.moments``): for each English moment, the best intersection over
  union of its span with a moment of the translation (0 when none overlaps), averaged.

English is the reference because its rules are the ones read most, not because they are right: a
translation that finds a claim English misses counts against it here. The folder is ``--set DIR`` or
``$VAEO_QUALITY_SET``; it is not part of the repository.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from domain.analysis import MediaFacts, analyse
from infra.captions import parse_captions
from tests.benchmarks.bench_quality import Item, load_items
from tests.benchmarks.chapter_measures import SET_VARIABLE, set_folder

SLACK_MS = 3000


Spans = list[tuple[int, int, list[str]]]


def claims_of(item: Item) -> tuple[Spans, float, list[tuple[int, int]]]:
    """(start, end, kinds) of each claim the analysis finds in ``item``, its length in minutes, and
    (start, end) of each clip moment."""
    segments = parse_captions(item.captions)
    duration_ms = (max(s.end_ms for s in segments) // 1000 + 2) * 1000
    graph = analyse(segments, MediaFacts(duration_ms=duration_ms), language=item.language)
    return ([(c.start_ms, c.end_ms, list(c.kinds)) for c in graph.claims], duration_ms / 60_000,
            [(m.start_ms, m.end_ms) for m in graph.moments])


def moment_agreement(ours: list[tuple[int, int]], theirs: list[tuple[int, int]]) -> float:
    """The mean over ``ours`` of the best intersection over union with one of ``theirs``."""
    def iou(a: tuple[int, int], b: tuple[int, int]) -> float:
        inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
        return inter / (max(a[1], b[1]) - min(a[0], b[0]))

    return sum(max((iou(m, t) for t in theirs), default=0.0) for m in ours) / max(1, len(ours))


def overlapping(spans: Spans, others: Spans) -> int:
    """How many of ``spans`` overlap one of ``others`` (each widened by ``SLACK_MS``)."""
    return sum(1 for a, b, _ in spans if any(a - SLACK_MS < d and c < b + SLACK_MS for c, d, _ in others))


def videos(folder: Path) -> dict[str, str]:
    """Each item's video, from the folder's ``manifest.json`` (none: no pairs)."""
    manifest = folder / "manifest.json"
    if not manifest.exists():
        return {}
    return {str(e["id"]): str(e.get("url") or e["id"]) for e in json.loads(manifest.read_text(encoding="utf-8"))}


def run(args: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks claims", description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, help=f"the quality benchmark's folder (default: ${SET_VARIABLE})")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the kinds of claims of each item")
    options = parser.parse_args(args)
    folder = set_folder(options.set)
    items = load_items(folder)
    video = videos(folder)
    english = {video.get(i.name): i for i in items if i.language == "en" and i.name in video}
    found = {i.name: claims_of(i) for i in items}
    by_language: dict[str, list[float]] = {}
    for item in items:
        claims, minutes, _ = found[item.name]
        by_language.setdefault(item.language, []).append(len(claims) / minutes)
    print("claims per minute, mean by language: " + ", ".join(
        f"{code} {sum(v) / len(v):.2f} ({len(v)} items)" for code, v in sorted(by_language.items())))
    print(f"{'translation':38} {'original':36} {'per min':>13} {'English found':>14} {'theirs in English':>18} "
          f"{'moments IoU':>12}")
    totals = Counter[str]()
    moments: list[float] = []
    for item in items:
        original = english.get(video.get(item.name))
        if item.language == "en" or original is None:
            continue
        theirs, minutes, their_moments = found[item.name]
        ours, original_minutes, our_moments = found[original.name]
        agreement = moment_agreement(our_moments, their_moments)
        moments.append(agreement)
        recall, precision = overlapping(ours, theirs), overlapping(theirs, ours)
        totals.update({"english": len(ours), "recall": recall, "theirs": len(theirs), "precision": precision})
        rates = f"{len(theirs) / minutes:5.2f} / {len(ours) / original_minutes:5.2f}"
        print(f"{item.name[:38]:38} {original.name[:36]:36} {rates} "
              f"{recall / max(1, len(ours)):14.2f} {precision / max(1, len(theirs)):18.2f} {agreement:12.2f}")
        if options.verbose:
            print(f"    {item.language}: {dict(Counter(k for *_, kinds in theirs for k in kinds))}")
            print(f"    en: {dict(Counter(k for *_, kinds in ours for k in kinds))}")
    if totals["english"]:
        print(f"ALL TRANSLATIONS: {totals['recall']} of {totals['english']} English claims found "
              f"({totals['recall'] / totals['english']:.2f}); {totals['precision']} of {totals['theirs']} of "
              f"theirs in English ({totals['precision'] / max(1, totals['theirs']):.2f}); the English moments' "
              f"best IoU with the translation's, mean {sum(moments) / len(moments):.2f}")
