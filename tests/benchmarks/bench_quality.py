"""Chapter quality against human chapters: ``python -m tests.benchmarks quality --set DIR [--items 01,02]``.

A folder of transcripts that people chaptered by hand: ``NAME.srt`` (or ``NAME.transcript.md``, a
``**Speaker:** text`` export with ``[hh:mm:ss]`` markers about every minute) beside
``NAME.chapters.json`` (``[{"start_s": 77, "title": "..."}]``). A name ending in ``-fr``, ``-de``,
``-es``, ``-it``, ``-pt`` or ``-nl`` is analysed in that language, any other in English.

Each item is analysed in this process exactly as the worker would (the captions parsed by
``infra.captions``, the video as long as the last cue plus two seconds) and scored:

- boundary F1 at +-30 s and +-15 s: chapter starts after 0:01 on both sides, matched one to one,
  closest pairs first (greedy);
- the same F1 at +-30 s for as many evenly spaced chapters as the human ones (what a guess gives);
- count ratio: predicted chapters / human chapters, "ok" within 0.6-1.6;
- title overlap: for the boundaries matched at +-30 s, the F1 of the lowercase words of three
  letters or more of the two titles, averaged over the matches;
- unpublishable titles: the share of the predicted titles with a pronoun or contraction, a
  dangling conjunction or article, a repeated word, or no word at all.

Prints one row per item, the means of the monologues (one speaker: lectures) and of the dialogues
(speakers labelled: podcasts, interviews) apart, so that a parameter chosen on one kind can be
checked on the other, and the mean of all, the titles given and the human ones, the analysis time per
item, and optionally writes every row as JSON (``--json out.json``) and the means into
docs/benchmarks.md, between its markers (``--write-docs``).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from domain.analysis import MediaFacts, analyse
from infra.captions import parse_captions

LANGUAGE_SUFFIXES = ("fr", "de", "es", "it", "pt", "nl")
TOLERANCES_S = (30, 15)
COUNT_RATIO_OK = (0.6, 1.6)

PRONOUNS = frozenset("""
i me my we us our you your he him his she her they them their it its i'm i've i'll i'd we're we've we'll you're
you've you'll he's she's it's that's there's they're what's here's don't can't isn't won't let's
je tu il elle nous vous ils elles on c'est j'ai qu'il moi toi
""".split())
DANGLING_FIRST = frozenset(("and", "et", "or", "ou"))
DANGLING_LAST = frozenset(("and", "et", "or", "ou", "the", "le", "la", "of", "de"))
TITLE_TOKEN_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
OVERLAP_WORD_RE = re.compile(r"[^\W\d_]{3,}")
MARKER_RE = re.compile(r"\[(\d{2}):(\d{2}):(\d{2})\]")


@dataclass(frozen=True)
class Item:
    name: str
    language: str
    captions: str
    gold: list[dict]


def unpublishable(title: str) -> bool:
    """A title no editor would publish: a pronoun or contraction, a dangling conjunction or
    article at either end, a repeated word, or no word at all."""
    tokens = TITLE_TOKEN_RE.findall(title.lower().replace("’", "'"))
    if not tokens or any(t in PRONOUNS for t in tokens):
        return True
    if tokens[0] in DANGLING_FIRST or tokens[-1] in DANGLING_LAST:
        return True
    return len(set(tokens)) < len(tokens)


def matched_pairs(predicted: list[float], gold: list[float], tolerance: float) -> list[tuple[int, int]]:
    """One-to-one matching of boundaries within ``tolerance``, the closest pairs first."""
    pairs = sorted((abs(p - g), i, j) for i, p in enumerate(predicted) for j, g in enumerate(gold)
                   if abs(p - g) <= tolerance)
    used_p: set[int] = set()
    used_g: set[int] = set()
    out = []
    for _, i, j in pairs:
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            out.append((i, j))
    return out


def boundary_f1(predicted: list[float], gold: list[float], tolerance: float) -> float:
    if not predicted or not gold:
        return 0.0
    hits = len(matched_pairs(predicted, gold, tolerance))
    precision, recall = hits / len(predicted), hits / len(gold)
    return 2 * precision * recall / (precision + recall) if hits else 0.0


def title_words(title: str) -> set[str]:
    return set(OVERLAP_WORD_RE.findall(title.lower()))


def score_item(chapters: list[dict], gold: list[dict], duration_s: float) -> dict:
    """The measures of one item; ``chapters`` as the graph gives them (startMs, title)."""
    predicted = [c for c in chapters if c["startMs"] > 1000]
    human = [g for g in gold if g["start_s"] > 1]
    starts = [c["startMs"] / 1000 for c in predicted]
    gold_starts = [g["start_s"] for g in human]
    evenly = [duration_s * k / len(gold) for k in range(1, len(gold))]
    overlaps = []
    for i, j in matched_pairs(starts, gold_starts, 30):
        a, b = title_words(predicted[i]["title"]), title_words(human[j]["title"])
        common = len(a & b)
        overlaps.append(2 * common / (len(a) + len(b)) if common else 0.0)
    titles = [c.get("title") or "" for c in chapters]
    return {
        "pred": len(chapters), "gold": len(gold),
        "f1_30": boundary_f1(starts, gold_starts, 30), "f1_15": boundary_f1(starts, gold_starts, 15),
        "uniform_f1_30": boundary_f1(evenly, gold_starts, 30),
        "title_overlap": sum(overlaps) / len(overlaps) if overlaps else 0.0,
        "bad_titles": sum(map(unpublishable, titles)) / len(titles) if titles else 1.0,
        "titles": titles,
    }


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
    row = score_item([c.to_dict() for c in graph.chapters], item.gold, duration_ms / 1000)
    return {"item": item.name, "lang": item.language, "kind": transcript_kind(graph),
            "duration_s": duration_ms // 1000,
            "analyse_s": seconds,
            "gold_titles": [g["title"] for g in item.gold], "topics": [t.name for t in graph.topics[:8]], **row}


MEASURES = ("f1_30", "f1_15", "uniform_f1_30", "title_overlap", "bad_titles")


def summary(rows: list[dict]) -> dict:
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in MEASURES}
    low, high = COUNT_RATIO_OK
    mean["count_ok"] = sum(low <= r["pred"] / r["gold"] <= high for r in rows)
    mean["items"] = len(rows)
    return mean


def kind_summaries(rows: list[dict]) -> list[tuple[str, dict]]:
    """The means of each kind of transcript apart when the set holds both (the held-out figures),
    then the mean of all."""
    groups = [(f"MEAN of {len(part)} {kind}{'s' if len(part) > 1 else ''}", part)
              for kind in ("monologue", "dialogue")
              if 0 < len(part := [r for r in rows if r["kind"] == kind]) < len(rows)]
    return [*((label, summary(part)) for label, part in groups), (f"MEAN of {len(rows)}", summary(rows))]


def print_table(rows: list[dict], verbose: bool) -> None:
    print(f"{'item':38} {'lang':4} {'pred/gold':>9} {'F1@30':>6} {'F1@15':>6} {'even':>6} {'title':>6} "
          f"{'bad':>5} {'time':>6}")
    for r in rows:
        print(f"{r['item'][:38]:38} {r['lang']:4} {r['pred']:>4}/{r['gold']:<4} {r['f1_30']:6.3f} {r['f1_15']:6.3f} "
              f"{r['uniform_f1_30']:6.3f} {r['title_overlap']:6.3f} {r['bad_titles']:5.2f} {r['analyse_s']:5.2f}s")
        if verbose:
            print("    given:", " | ".join(r["titles"]))
            print("    human:", " | ".join(r["gold_titles"]))
            print("    topics:", " | ".join(r["topics"]))
    for label, m in kind_summaries(rows):
        print(f"{label:38} {'':4} {'':9} {m['f1_30']:6.3f} {m['f1_15']:6.3f} "
              f"{m['uniform_f1_30']:6.3f} {m['title_overlap']:6.3f} {m['bad_titles']:5.3f}")
    print(f"chapter count within {COUNT_RATIO_OK[0]}-{COUNT_RATIO_OK[1]}x of the human count: "
          f"{m['count_ok']} of {m['items']} items")


DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
BEGIN = "<!-- quality benchmark: begin (written by `python -m tests.benchmarks quality --set DIR --write-docs`) -->"
END = "<!-- quality benchmark: end -->"


def figures_block(rows: list[dict], today: str) -> str:
    """The latest figures as a markdown table, one column per kind and one for all, between the
    markers ``BEGIN`` and ``END``."""
    groups = kind_summaries(rows)
    kinds = sum(1 for r in rows if r["kind"] == "monologue"), sum(1 for r in rows if r["kind"] == "dialogue")
    header = " | ".join(label.replace("MEAN of ", "") if k < len(groups) - 1 else f"all {len(rows)}"
                        for k, (label, _) in enumerate(groups))
    lines = [BEGIN, "",
             f"Last run {today}: {len(rows)} transcripts ({kinds[0]} monologues, {kinds[1]} dialogues), analysed in "
             f"{sum(r['analyse_s'] for r in rows):.1f} s.", "",
             f"| measure | {header} |", "|---|" + "---|" * len(groups)]
    names = [("chapter boundary F1, +-30 s", "f1_30", "{:.3f}"), ("chapter boundary F1, +-15 s", "f1_15", "{:.3f}"),
             ("the same for evenly spaced chapters, +-30 s", "uniform_f1_30", "{:.3f}"),
             ("title word overlap with the human title", "title_overlap", "{:.3f}"),
             ("unpublishable titles", "bad_titles", "{:.1%}")]
    for label, key, form in names:
        lines.append(f"| {label} | " + " | ".join(form.format(m[key]) for _, m in groups) + " |")
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
    parser.add_argument("--set", type=Path, required=True, help="folder of NAME.srt|.transcript.md + .chapters.json")
    parser.add_argument("--items", help="comma-separated item numbers or names")
    parser.add_argument("--json", type=Path, help="write every row there")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the titles and topics of each item")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the means into docs/benchmarks.md (between its quality benchmark markers)")
    options = parser.parse_args(args)
    items = load_items(options.set, set(options.items.split(",")) if options.items else None)
    if not items:
        raise SystemExit(f"no transcript with human chapters in {options.set}")
    rows = [run_item(item) for item in items]
    print_table(rows, options.verbose)
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    if options.write_docs:
        write_docs(rows)
        print(f"figures written to {DOCS}")


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
