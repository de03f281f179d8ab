"""Chapter quality against human chapters: ``python -m tests.benchmarks quality --set DIR [--items 01,02]``.

A folder of transcripts that people chaptered by hand: ``NAME.srt`` (or ``NAME.transcript.md``, a
``**Speaker:** text`` export with ``[hh:mm:ss]`` markers about every minute) beside
``NAME.chapters.json`` (``[{"start_s": 77, "title": "..."}]``). A name ending in ``-fr``, ``-de``,
``-es``, ``-it``, ``-pt`` or ``-nl`` is analysed in that language, any other in English.

Each item is analysed in this process exactly as the worker would (the captions parsed by
``infra.captions``, the video as long as the last cue plus two seconds) and scored by the measures of
``tests.benchmarks.chapter_measures``: boundary F1 at +-30 s and +-3 s, Pk and WindowDiff (``chunkseg``),
the count ratio, title ROUGE-L against the time-matched human titles, and the titles no editor would
publish. The folder is ``--set DIR`` or ``$VAEO_QUALITY_SET``; it is not part of the repository.

Prints one row per item (``-v``: the titles given and the human ones, with their times), the means of
the monologues (one speaker: lectures) and of the dialogues (speakers labelled: podcasts, interviews)
apart, then the mean of all, and each fold's figures (the five folds ``fit_boundaries`` holds out; the
two languages of one talk share a fold). The figures of the code as it is are in-fold for whatever its
parameters were chosen on; ``fit_boundaries --folds`` gives the out-of-fold ones. Optionally writes
every row as JSON (``--json out.json``) and the means into docs/benchmarks.md, between its markers
(``--write-docs``).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from domain.analysis import MediaFacts, analyse, format_timestamp
from infra.captions import parse_captions
from tests.benchmarks.chapter_measures import (
    COUNT_RATIO_OK,
    FOLDS,
    SET_VARIABLE,
    fold_of,
    lowercase_words,
    score_item,
    set_folder,
    summary,
    summary_line,
)

LANGUAGE_SUFFIXES = ("fr", "de", "es", "it", "pt", "nl")
MARKER_RE = re.compile(r"\[(\d{2}):(\d{2}):(\d{2})\]")


@dataclass(frozen=True)
class Item:
    name: str
    language: str
    captions: str
    gold: list[dict]


def _timestamp(ms: int) -> str:
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    seconds, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d},{ms:03d}"


def markdown_to_srt(text: str) -> str:
    """A ``**Speaker:** text`` transcript with a ``[hh:mm:ss]`` marker about every minute, as SRT:
    each paragraph is timed by interpolation between the markers around it (the last stretch is
    given a minute per forty paragraphs, at least 30 s); struck-out fillers (``~~um~~``) are dropped."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip() and not p.startswith("#")]
    marks: list[tuple[int, int]] = []
    rows: list[tuple[str | None, str]] = []
    speaker = None
    for index, paragraph in enumerate(paragraphs):
        labelled = re.match(r"\*\*([^*]+):\*\*\s*(.*)", paragraph, re.S)
        body = paragraph
        if labelled:
            speaker, body = labelled.group(1).strip(), labelled.group(2)
        for mark in MARKER_RE.finditer(body):
            h, m, s = (int(x) for x in mark.groups())
            marks.append((index, (h * 3600 + m * 60 + s) * 1000))
        body = re.sub(r"~~[^~]*~~", "", MARKER_RE.sub("", body)).replace("\n", " ").strip()
        body = re.sub(r"\s+", " ", body)
        rows.append((speaker, body))
    if not marks or marks[0][0] != 0:
        marks.insert(0, (0, 0))
    last_index, last_ms = marks[-1]
    tail = max(60_000 * (len(paragraphs) - last_index) // max(1, len(paragraphs) // 40), 30_000)
    marks.append((len(paragraphs), last_ms + tail))
    times = []
    for index in range(len(paragraphs)):
        before = max((m for m in marks if m[0] <= index), key=lambda m: m[0])
        after = min((m for m in marks if m[0] > index), key=lambda m: m[0])
        share = (index - before[0]) / max(1, after[0] - before[0])
        times.append(int(before[1] + share * (after[1] - before[1])))
    cues = []
    for number, ((who, body), start) in enumerate(zip(rows, times, strict=True), 1):
        end = times[number] if number < len(times) else start + 20_000
        end = max(end - 100, start + 500)
        cues.append(f"{number}\n{_timestamp(start)} --> {_timestamp(end)}\n{f'{who}: {body}' if who else body}\n")
    return "\n".join(cues)


def load_items(folder: Path, only: set[str] | None = None) -> list[Item]:
    items = []
    for gold_path in sorted(folder.glob("*.chapters.json")):
        name = gold_path.name[: -len(".chapters.json")]
        if "." in name or (only and name[:2] not in only and name not in only):
            continue  # NAME.chapters.en.json: the same chapters with other titles
        srt, markdown = folder / f"{name}.srt", folder / f"{name}.transcript.md"
        if srt.exists():
            captions = srt.read_text(encoding="utf-8-sig")
        elif markdown.exists():
            captions = markdown_to_srt(markdown.read_text(encoding="utf-8"))
        else:
            continue
        suffix = name.rsplit("-", 1)[-1]
        language = suffix if suffix in LANGUAGE_SUFFIXES else "en"
        items.append(Item(name, language, captions, json.loads(gold_path.read_text(encoding="utf-8"))))
    return items


def transcript_kind(graph) -> str:
    """"dialogue" when the captions name two speakers or more (podcasts, interviews), else
    "monologue" (lectures, one narrator): the two kinds whose boundaries differ most, so that a
    parameter chosen on one can be checked on the other."""
    return "dialogue" if graph.diarisation.diarised and len(graph.diarisation.speakers) > 1 else "monologue"


def run_item(item: Item) -> dict:
    segments = parse_captions(item.captions)
    duration_ms = (max(s.end_ms for s in segments) // 1000 + 2) * 1000
    started = time.perf_counter()
    graph = analyse(segments, MediaFacts(duration_ms=duration_ms), language=item.language)
    seconds = time.perf_counter() - started
    lowercase = lowercase_words(" ".join(s.text for s in segments))
    row = score_item([c.to_dict() for c in graph.chapters], item.gold, duration_ms / 1000, lowercase)
    return {"item": item.name, "lang": item.language, "kind": transcript_kind(graph),
            "duration_s": duration_ms // 1000,
            "analyse_s": seconds,
            "gold_titles": [g["title"] for g in item.gold], "gold_starts": [round(g["start_s"]) for g in item.gold],
            "topics": [t.name for t in graph.topics[:8]], **row}


def kind_summaries(rows: list[dict]) -> list[tuple[str, dict]]:
    """The means of each kind of transcript apart when the set holds both, then the mean of all."""
    groups = [(f"MEAN of {len(part)} {kind}{'s' if len(part) > 1 else ''}", part)
              for kind in ("monologue", "dialogue")
              if 0 < len(part := [r for r in rows if r["kind"] == kind]) < len(rows)]
    return [*((label, summary(part)) for label, part in groups), (f"MEAN of {len(rows)}", summary(rows))]


def print_table(rows: list[dict], verbose: bool) -> None:
    print(f"{'item':38} {'lang':4} {'pred/gold':>9} {'F1@30':>6} {'F1@3':>6} {'Pk':>6} {'WD':>6} {'even':>6} "
          f"{'bad':>5} {'time':>6}")
    for r in rows:
        print(f"{r['item'][:38]:38} {r['lang']:4} {r['pred']:>4}/{r['gold']:<4} {r['f1_30']:6.3f} {r['f1_3']:6.3f} "
              f"{r['pk']:6.3f} {r['windowdiff']:6.3f} {r['uniform_f1_30']:6.3f} {r['bad_titles']:5.2f} "
              f"{r['analyse_s']:5.2f}s")
        if verbose:
            print("    given:", " | ".join(f"{format_timestamp(s * 1000)} {t}" for s, t in zip(r["starts"], r["titles"],
                                                                                            strict=True)))
            print("    human:", " | ".join(f"{format_timestamp(s * 1000)} {t}" for s, t in zip(
                r["gold_starts"], r["gold_titles"], strict=True)))
            print("    topics:", " | ".join(r["topics"]))
    for label, m in kind_summaries(rows):
        print(f"{label}: {summary_line(m)}")


def print_folds(rows: list[dict], folds: dict[str, int]) -> None:
    """Each fold's figures (the folds ``fit_boundaries`` holds out): how much a figure moves with the items."""
    for k in sorted(set(folds.values())):
        part = [r for r in rows if folds[r["item"]] == k]
        names = ", ".join(r["item"][:2] for r in part)
        print(f"fold {k + 1} ({len(part)} items: {names}): {summary_line(summary(part))}")


DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
BEGIN = "<!-- quality benchmark: begin (written by `python -m tests.benchmarks quality --set DIR --write-docs`) -->"
END = "<!-- quality benchmark: end -->"
DOC_MEASURES = (
    ("chapter boundary F1, +-30 s", "f1_30", "{:.3f}"), ("chapter boundary F1, +-3 s (chunkseg)", "f1_3", "{:.3f}"),
    ("Pk (chunkseg; lower is better)", "pk", "{:.3f}"),
    ("WindowDiff (chunkseg; lower is better)", "windowdiff", "{:.3f}"),
    ("the F1 +-30 s of evenly spaced chapters", "uniform_f1_30", "{:.3f}"),
    ("title ROUGE-L, time-matched (chunkseg's matching, 5 s)", "title_rl", "{:.3f}"),
    ("title ROUGE-L, starts matched within +-30 s", "title_rl_30", "{:.3f}"),
    ("unpublishable titles", "bad_titles", "{:.1%}"),
)


def figures_block(rows: list[dict], today: str) -> str:
    """The latest figures as a markdown table, one column per kind and one for all, between the
    markers ``BEGIN`` and ``END``."""
    groups = kind_summaries(rows)
    kinds = sum(1 for r in rows if r["kind"] == "monologue"), sum(1 for r in rows if r["kind"] == "dialogue")
    header = " | ".join(label.replace("MEAN of ", "") if k < len(groups) - 1 else f"all {len(rows)}"
                        for k, (label, _) in enumerate(groups))
    lines = [BEGIN, "",
             f"Last run {today}: {len(rows)} transcripts ({kinds[0]} monologues, {kinds[1]} dialogues), analysed in "
             f"{sum(r['analyse_s'] for r in rows):.1f} s. In-fold: the parameters of the code were chosen on "
             "this set (the figures held out, five folds in turn, are below).", "",
             f"| measure | {header} |", "|---|" + "---|" * len(groups)]
    for label, key, form in DOC_MEASURES:
        lines.append(f"| {label} | " + " | ".join(form.format(m[key]) for _, m in groups) + " |")
    lines.append("| titles of one common word, titles given twice in a video | "
                 + " | ".join(f"{m['bare_titles']}, {m['repeated_titles']}" for _, m in groups) + " |")
    lines.append(f"| chapter count within {COUNT_RATIO_OK[0]}-{COUNT_RATIO_OK[1]}x of the human count | "
                 + " | ".join(f"{m['count_ok']} of {m['items']}" for _, m in groups) + " |")
    return "\n".join([*lines, "", END])


def write_docs(rows: list[dict], docs: Path = DOCS, today: str | None = None) -> None:
    """Replace the figures between the markers of ``docs`` with those of ``rows``."""
    text = docs.read_text(encoding="utf-8")
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise SystemExit(f"{docs}: no block between the quality benchmark's markers")
    block = figures_block(rows, today or time.strftime("%Y-%m-%d"))
    docs.write_text(text[:begin] + block + text[end + len(END):], encoding="utf-8")


def run(args: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks quality", description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, help=f"folder of NAME.srt|.transcript.md + .chapters.json "
                                                 f"(default: ${SET_VARIABLE})")
    parser.add_argument("--items", help="comma-separated item numbers or names")
    parser.add_argument("--json", type=Path, help="write every row there")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the titles and topics of each item")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the means into docs/benchmarks.md (between its quality benchmark markers)")
    options = parser.parse_args(args)
    folder = set_folder(options.set)
    items = load_items(folder, set(options.items.split(",")) if options.items else None)
    if not items:
        raise SystemExit(f"no transcript with human chapters in {folder}")
    rows = [run_item(item) for item in items]
    print_table(rows, options.verbose)
    if len(rows) > FOLDS:
        print_folds(rows, fold_of([r["item"] for r in rows], folder))
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False, default=lambda o: o.__dict__),
                                encoding="utf-8")
    if options.write_docs:
        write_docs(rows)
        print(f"figures written to {DOCS}")


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
