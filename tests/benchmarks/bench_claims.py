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
- the kinds of claims found in each.

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


def claims_of(item: Item) -> tuple[list[tuple[int, int, list[str]]], float]:
    """(start, end, kinds) of each claim the analysis finds in ``item``, and its length in minutes."""
    segments = parse_captions(item.captions)
    duration_ms = (max(s.end_ms for s in segments) // 1000 + 2) * 1000
    graph = analyse(segments, MediaFacts(duration_ms=duration_ms), language=item.language)
    return [(c.start_ms, c.end_ms, list(c.kinds)) for c in graph.claims], duration_ms / 60_000


def overlapping(spans: list[tuple[int, int, list[str]]], others: list[tuple[int, int, list[str]]]) -> int:
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
        claims, minutes = found[item.name]
        by_language.setdefault(item.language, []).append(len(claims) / minutes)
    print("claims per minute, mean by language: " + ", ".join(
        f"{code} {sum(v) / len(v):.2f} ({len(v)} items)" for code, v in sorted(by_language.items())))
    print(f"{'translation':38} {'original':36} {'per min':>13} {'English found':>14} {'theirs in English':>18}")
    totals = Counter[str]()
    for item in items:
        original = english.get(video.get(item.name))
        if item.language == "en" or original is None:
            continue
        theirs, minutes = found[item.name]
        ours, original_minutes = found[original.name]
        recall, precision = overlapping(ours, theirs), overlapping(theirs, ours)
        totals.update({"english": len(ours), "recall": recall, "theirs": len(theirs), "precision": precision})
        rates = f"{len(theirs) / minutes:5.2f} / {len(ours) / original_minutes:5.2f}"
        print(f"{item.name[:38]:38} {original.name[:36]:36} {rates} "
              f"{recall / max(1, len(ours)):14.2f} {precision / max(1, len(theirs)):18.2f}")
        if options.verbose:
            print(f"    {item.language}: {dict(Counter(k for *_, kinds in theirs for k in kinds))}")
            print(f"    en: {dict(Counter(k for *_, kinds in ours for k in kinds))}")
    if totals["english"]:
        print(f"ALL TRANSLATIONS: {totals['recall']} of {totals['english']} English claims found "
              f"({totals['recall'] / totals['english']:.2f}); {totals['precision']} of {totals['theirs']} of "
              f"theirs in English ({totals['precision'] / max(1, totals['theirs']):.2f})")
