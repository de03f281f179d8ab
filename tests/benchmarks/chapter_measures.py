"""How chapters are scored against human ones: the measures of the quality benchmark and of the
boundary fitting (``bench_quality``, ``fit_boundaries``), the folds they are held out by, and where the
set of transcripts is found.

Boundaries (chapter starts after 0:01 on both sides, as a video description's first chapter is always
at 0:00):

- F1 at +-30 s, +-15 s and +-3 s, matched one to one, closest pairs first (+-3 s is the collar of the
  field's evaluator, ``chunkseg``'s ``collar_f1``, computed here by chunkseg itself);
- Pk and WindowDiff (lower is better), by ``chunkseg`` 0.4.0 (its segeval on 6 s chunks of the timeline,
  the window half the mean human segment length): the figures the audio-chaptering literature reports;
- the count ratio, predicted chapters over human chapters, "ok" within 0.6-1.6x.

Titles:

- ROUGE-L F of each predicted title against the human title it is time-matched to, as chunkseg's
  TM-RL: a pair when both the start and the end of the two chapters agree within 5 s (chunkseg's own
  matching, ``chunkseg.titles._match_titles_by_time``), scored by ``rouge-score`` with its stemmer as
  chunkseg scores it; pooled over every matched pair of the set (``title_rl``). Its tokenizer keeps
  the letters a-z only, so accented letters split a word alike on both sides;
- the same ROUGE-L for the chapters whose starts match within +-30 s (one to one, as the F1): many more
  pairs, so a steadier figure of the titles where the boundary is roughly right (``title_rl_30``);
- the word overlap of the first version of this benchmark (F1 of the words of three letters or more
  of the titles matched at +-30 s, averaged per item);
- unpublishable titles: a pronoun or contraction, a dangling conjunction or article at either end, a
  repeated word, no word at all; and, counted apart, titles of one word that is no name or acronym
  (a bare common noun), and titles given twice in one video.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

SET_VARIABLE = "VAEO_QUALITY_SET"
COUNT_RATIO_OK = (0.6, 1.6)
FOLDS = 5
TITLE_TOLERANCE_S = 5.0  # chunkseg's default for its temporally matched title scores
CHUNK_S = 6.0  # chunkseg's default chunk of the timeline for Pk and WindowDiff
COLLAR_S = 3.0  # chunkseg's default collar for its boundary F1

PRONOUNS = frozenset("""
i me my we us our you your he him his she her they them their it its i'm i've i'll i'd we're we've we'll you're
you've you'll he's she's it's that's there's they're what's here's don't can't isn't won't let's
je tu il elle nous vous ils elles on c'est j'ai qu'il moi toi
""".split())
DANGLING_FIRST = frozenset(("and", "et", "or", "ou"))
DANGLING_LAST = frozenset(("and", "et", "or", "ou", "the", "le", "la", "of", "de"))
TITLE_TOKEN_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
OVERLAP_WORD_RE = re.compile(r"[^\W\d_]{3,}")


def set_folder(given: Path | None) -> Path:
    """The folder of transcripts with human chapters: ``--set``, else ``$VAEO_QUALITY_SET``; a clear
    message when neither names a folder that holds one (the set is not part of the repository)."""
    folder = given or (Path(os.environ[SET_VARIABLE]) if os.environ.get(SET_VARIABLE) else None)
    if folder is None:
        raise SystemExit(f"no set of transcripts with human chapters: give --set DIR or set {SET_VARIABLE}=DIR "
                         "(a folder of NAME.srt or NAME.transcript.md beside NAME.chapters.json)")
    if not folder.is_dir() or not any(folder.glob("*.chapters.json")):
        raise SystemExit(f"{folder}: no NAME.chapters.json there (a folder of NAME.srt or NAME.transcript.md "
                         "beside NAME.chapters.json is needed)")
    return folder


def fold_of(names: list[str], folder: Path, folds: int = FOLDS) -> dict[str, int]:
    """Each item's fold: items of one video (the same talk in two languages, named by the same
    ``url`` in the folder's ``manifest.json`` when it has one) share a fold, so that no talk is
    both fitted on and scored; the videos are dealt to the folds in the order of their first item."""
    video: dict[str, str] = {}
    manifest = folder / "manifest.json"
    if manifest.exists():
        for entry in json.loads(manifest.read_text(encoding="utf-8")):
            url = str(entry.get("url") or entry.get("id"))
            video[str(entry.get("id"))] = url.rsplit("v=", 1)[-1].rsplit("/", 1)[-1]
    order: list[str] = []
    for name in sorted(names):
        key = video.get(name, name)
        if key not in order:
            order.append(key)
    return {name: order.index(video.get(name, name)) % folds for name in names}


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


def unpublishable(title: str) -> bool:
    """A title no editor would publish: a pronoun or contraction, a dangling conjunction or
    article at either end, a repeated word, or no word at all."""
    tokens = TITLE_TOKEN_RE.findall(title.lower().replace("’", "'"))
    if not tokens or any(t in PRONOUNS for t in tokens):
        return True
    if tokens[0] in DANGLING_FIRST or tokens[-1] in DANGLING_LAST:
        return True
    return len(set(tokens)) < len(tokens)


def bare_noun(title: str, lowercase: frozenset[str]) -> bool:
    """A title of one word that the transcript also says in lowercase (``lowercase``), and that is
    no acronym nor a word with capitals inside (CSS, JavaScript): a bare common noun ("Dots",
    "Columns"; a name such as "Wordle" is always said capitalised). German capitalises every noun,
    so there a one-word common noun is not caught."""
    tokens = TITLE_TOKEN_RE.findall(title)
    if len(tokens) != 1 or title.strip().endswith("?"):
        return False
    word = tokens[0]
    return not (word.isupper() or any(c.isupper() for c in word[1:])) and word.lower() in lowercase


def lowercase_words(text: str) -> frozenset[str]:
    """The words a transcript says in lowercase somewhere."""
    return frozenset(w for w in TITLE_TOKEN_RE.findall(text) if w.islower())


def title_words(title: str) -> set[str]:
    return set(OVERLAP_WORD_RE.findall(title.lower()))


class Rouge:
    """ROUGE-L F as chunkseg's title scores compute it (``rouge-score``, stemmed), loaded once."""

    scorer = None

    @classmethod
    def f(cls, predicted: str, human: str) -> float:
        if cls.scorer is None:
            from rouge_score import rouge_scorer

            cls.scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
        return cls.scorer.score(human, predicted)["rougeL"].fmeasure


def field_measures(starts: list[float], gold_starts: list[float], duration_s: float) -> dict:
    """Pk, WindowDiff and the F1 at +-3 s as ``chunkseg`` computes them (starts in seconds, 0 excluded)."""
    from chunkseg import evaluate

    found = evaluate(hypothesis=list(starts), reference=list(gold_starts), duration=duration_s,
                     chunk_size=CHUNK_S, collar=COLLAR_S)
    return {"pk": found.get("pk", 1.0), "windowdiff": found.get("window_diff", 1.0),
            "f1_3": found.get("collar_f1", 0.0)}


def time_matched_titles(chapters: list[tuple[str, float]], gold: list[tuple[str, float]], duration_s: float,
                        tolerance: float = TITLE_TOLERANCE_S) -> list[tuple[str, str]]:
    """(predicted, human) title pairs of the chapters whose start and end agree within ``tolerance``,
    by chunkseg's own matching."""
    from chunkseg.titles import _match_titles_by_time

    predicted, human = _match_titles_by_time(chapters, gold, tolerance, duration_s)
    return list(zip(predicted, human, strict=True))


@dataclass(frozen=True)
class TitlePairs:
    """ROUGE-L F of each matched pair of an item: time-matched (chunkseg) and at +-30 s."""

    matched: tuple[float, ...]
    at_30: tuple[float, ...]


def score_item(chapters: list[dict], gold: list[dict], duration_s: float,
               lowercase: frozenset[str] = frozenset()) -> dict:
    """The measures of one item; ``chapters`` as the graph gives them (startMs, title); ``lowercase``
    the words the transcript says in lowercase (``bare_noun``)."""
    predicted = [c for c in chapters if c["startMs"] > 1000]
    human = [g for g in gold if g["start_s"] > 1]
    starts = [c["startMs"] / 1000 for c in predicted]
    gold_starts = [g["start_s"] for g in human]
    evenly = [duration_s * k / len(gold) for k in range(1, len(gold))]
    overlaps, rouge_30 = [], []
    for i, j in matched_pairs(starts, gold_starts, 30):
        a, b = title_words(predicted[i]["title"]), title_words(human[j]["title"])
        common = len(a & b)
        overlaps.append(2 * common / (len(a) + len(b)) if common else 0.0)
        rouge_30.append(Rouge.f(predicted[i]["title"], human[j]["title"]))
    every = [(c.get("title") or "", c["startMs"] / 1000) for c in chapters]
    matched = [Rouge.f(p, h) for p, h in time_matched_titles(every, [(g["title"], g["start_s"]) for g in gold],
                                                              duration_s)]
    titles = [c.get("title") or "" for c in chapters]
    return {
        "pred": len(chapters), "gold": len(gold),
        "f1_30": boundary_f1(starts, gold_starts, 30), "f1_15": boundary_f1(starts, gold_starts, 15),
        **field_measures(starts, gold_starts, duration_s),
        "uniform_f1_30": boundary_f1(evenly, gold_starts, 30),
        "title_overlap": sum(overlaps) / len(overlaps) if overlaps else 0.0,
        "title_pairs": TitlePairs(tuple(matched), tuple(rouge_30)),
        "bad_titles": sum(map(unpublishable, titles)) / len(titles) if titles else 1.0,
        "bare_titles": sum(bare_noun(t, lowercase) for t in titles),
        "repeated_titles": len(titles) - len({t.lower() for t in titles}),
        "titles": titles, "starts": [round(c["startMs"] / 1000) for c in chapters],
    }


MEASURES = ("f1_30", "f1_15", "f1_3", "pk", "windowdiff", "uniform_f1_30", "title_overlap", "bad_titles")


def summary(rows: list[dict]) -> dict:
    """The means of ``rows`` (the title ROUGE-L pooled over every matched pair), the items whose count
    is within ``COUNT_RATIO_OK``, and the titles that are bare common nouns or repeated."""
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in MEASURES}
    matched = [f for r in rows for f in r["title_pairs"].matched]
    at_30 = [f for r in rows for f in r["title_pairs"].at_30]
    mean["title_rl"] = sum(matched) / len(matched) if matched else 0.0
    mean["title_pairs"] = len(matched)
    mean["title_rl_30"] = sum(at_30) / len(at_30) if at_30 else 0.0
    low, high = COUNT_RATIO_OK
    mean["count_ok"] = sum(low <= r["pred"] / r["gold"] <= high for r in rows)
    mean["bare_titles"] = sum(r["bare_titles"] for r in rows)
    mean["repeated_titles"] = sum(r["repeated_titles"] for r in rows)
    mean["items"] = len(rows)
    return mean


def summary_line(m: dict) -> str:
    return (f"F1@30 {m['f1_30']:.3f}  F1@3 {m['f1_3']:.3f}  Pk {m['pk']:.3f}  WD {m['windowdiff']:.3f}  "
            f"title RL {m['title_rl']:.3f} ({m['title_pairs']} pairs), at 30 s {m['title_rl_30']:.3f}  "
            f"count ok {m['count_ok']}/{m['items']}  unpublishable {m['bad_titles']:.3f}, "
            f"bare {m['bare_titles']}, repeated {m['repeated_titles']}")
