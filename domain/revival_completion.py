"""The completion of a revival candidate's descriptions (``complete_descriptions``), per platform.

It writes three sections: the verified description (the video's own words, cleaned; the article's
introduction when it has none, or its first section's opening paragraph when the article has no
introduction), the chapters (the analysis' chapters as ``0:00 Title`` lines, when
the video can satisfy the video site's rules and the platform shows chapters) and an answer-first
GEO summary whose every sentence is a transcript sentence of the article (see
``geo_summary_parts``). What the original description already had is kept, not replaced (its
reading is ``domain.revival``'s ``parse_description``). Each draft is fitted to its platform's
limit in the platform's unit (``fit``): the least important parts go first, and nothing is ever
split inside a grapheme cluster or a chapter line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from domain.analysis.chapters import format_timestamp
from domain.analysis.text import lang_key
from domain.languages import LANGUAGES
from domain.platforms import CHAPTERS, DESCRIPTION, GEO_SUMMARY, PLATFORMS, Platform, description_kind, measure
from domain.revival import analysis_facts, clean_text, parse_description

# ---------------------------------------------------------------- the sections

MAX_CHAPTER_TITLE = 100  # characters: a chapter title is a line, not a paragraph
MAX_SUMMARY_SENTENCE = 300  # characters: longer transcript sentences are not summary material
MAX_FACTS, MAX_EXTRA_QUESTIONS, MAX_ENTITIES = 4, 3, 5
_DIGIT = re.compile(r"\d")
ELLIPSIS = "…"


def _labels(language: str | None) -> dict[str, str]:
    """A description's section labels: the article's own (``domain.languages``), in the language's
    typography. A language outside the seven reads English, as the article does."""
    home = LANGUAGES[lang_key(language)]
    return {"in_short": home.labels["in_short"], "answers": home.labels["also_answered"],
            "key_facts": home.labels["key_facts"], "entities": home.labels["main_entities"], "colon": home.colon}


@dataclass(slots=True)
class SummaryPart:
    """Lines of the summary with the order they are given up in when a draft is too long
    (``drop_rank``: higher goes first)."""

    lines: list[str]
    drop_rank: int
    fact: bool = False


def _opening_paragraph(article: dict[str, Any]) -> str:
    """An article with no introduction (a short talk whose opening chapter kept its sentences, a tutorial
    whose introduction takes no step) opens with its first section: its first paragraph."""
    sections = article.get("sections") or []
    paragraphs = sections[0].get("paragraphs") or [] if sections else []
    return str(paragraphs[0].get("text") or "") if paragraphs else ""


def _one_line(text: str) -> str:
    return " ".join(clean_text(text).split())


def chapter_lines(graph: dict[str, Any]) -> list[str]:
    lines = []
    for chapter in graph.get("chapters") or []:
        title = _one_line(str(chapter.get("title") or ""))
        if len(title) > MAX_CHAPTER_TITLE:
            title = _word_prefix(title, MAX_CHAPTER_TITLE)
        lines.append(f"{format_timestamp(int(chapter.get('startMs') or 0))} {title}")
    return lines


def geo_summary_parts(article: dict[str, Any], graph: dict[str, Any], language: str | None) -> list[SummaryPart]:
    """The answer-first summary: what the video answers (a question asked in it and its answer),
    then its key facts with their figures and their moment, then the main entities.

    Every sentence is a transcript sentence as the article quotes it (its FAQ built from questions
    asked in the video, its key facts); entity names are those the analysis found in the
    transcript; only the labels are ours, in the article's language (French or English labels;
    English for other languages, as the analysis' own labels)."""
    label = _labels(language)

    def usable(text: str) -> bool:
        return bool(text) and len(text) <= MAX_SUMMARY_SENTENCE

    # (question, answer) and (text, start) on one line each, cleaned once
    asked = [(question, answer) for question, answer in
             ((_one_line(entry.get("question") or ""), _one_line(entry.get("answer") or ""))
              for entry in article.get("faq") or [] if entry.get("source") == "question")
             if usable(question) and usable(answer)]
    facts = [(text, int(f.get("startMs") or 0)) for text, f in
             ((_one_line(f.get("text") or ""), f) for f in article.get("key_facts") or []) if usable(text)]
    parts: list[SummaryPart] = []
    lead_text = None
    if asked:
        lead_text = f"{asked[0][0]} {asked[0][1]}"
    elif facts:
        first = max(facts, key=lambda f: bool(_DIGIT.search(f[0])))
        lead_text = first[0]
        facts = [f for f in facts if f is not first]
    if lead_text:
        parts.append(SummaryPart([f"{label['in_short']}{label['colon']}{lead_text}"], drop_rank=0))
    extra = [question for question, _ in asked[1:1 + MAX_EXTRA_QUESTIONS]]
    if extra:
        parts.append(SummaryPart([f"{label['answers']}{label['colon']}{' '.join(extra)}"], drop_rank=2 * MAX_FACTS))
    # facts with figures first, then the others; shown in the video's order
    chosen = sorted(facts, key=lambda f: (not _DIGIT.search(f[0]), f[1]))[:MAX_FACTS]
    chosen.sort(key=lambda f: f[1])
    for rank, (text, start_ms) in enumerate(chosen, start=1):
        parts.append(SummaryPart([f"- {text} ({format_timestamp(start_ms)})"], drop_rank=rank, fact=True))
    summary = ((graph.get("scores") or {}).get("geo_summary") or {}).get("main_entities")
    names = summary if summary is not None else [e.get("name") for e in graph.get("entities") or []
                                                 if e.get("type") not in ("date", "number")]
    names = [_one_line(str(n)) for n in names if n and _one_line(str(n))][:MAX_ENTITIES]
    if names:
        parts.append(SummaryPart([f"{label['entities']}{label['colon']}{', '.join(names)}."],
                                 drop_rank=2 * MAX_FACTS + 1))
    return parts


def render_summary(parts: Sequence[SummaryPart], language: str | None) -> str:
    label = _labels(language)
    lines: list[str] = []
    header_done = False
    for part in parts:
        if part.fact and not header_done:
            lines.append(f"{label['key_facts']}{label['colon'].rstrip()}")
            header_done = True
        lines.extend(part.lines)
    return "\n".join(lines)


# ---------------------------------------------------------------- fitting a draft

def graphemes(text: str) -> list[str]:
    """The text's extended grapheme clusters (an emoji sequence, a flag, a letter with its marks)."""
    clusters: list[str] = regex.findall(r"\X", text)
    return clusters


def _word_prefix(text: str, max_chars: int) -> str:
    """At most ``max_chars`` code points of ``text``, cut at a word boundary, with an ellipsis."""
    clusters, kept, size = graphemes(text), [], 0
    for cluster in clusters:
        if size + len(cluster) > max_chars - 1:
            break
        kept.append(cluster)
        size += len(cluster)
    return _cut(kept, len(kept), len(clusters))


def _cut(clusters: Sequence[str], k: int, total: int) -> str:
    """The first ``k`` clusters, backed off to the last space when that keeps at least half of them
    (else cut at the cluster boundary: unspaced scripts, one long word), with an ellipsis when
    anything was left out."""
    if k >= total:
        return "".join(clusters[:k])
    if k == 0:
        return ""
    end = k
    for j in range(k - 1, 0, -1):
        if clusters[j].isspace():
            if j >= k // 2:
                end = j
            break
    text = "".join(clusters[:end]).rstrip()
    text = re.sub(r"[\s,;:\-–—(\[]+$", "", text)
    return text + ELLIPSIS if text else ""


@dataclass(slots=True)
class Fitted:
    sections: dict[str, str]
    text: str
    length: int
    truncated: bool
    warnings: list[str] = field(default_factory=list)


def _replace_forbidden(text: str, platform: Platform) -> tuple[str, int]:
    if not platform.forbidden:
        return text, 0
    count = sum(text.count(ch) for ch in platform.forbidden)
    if not count:
        return text, 0
    for ch in platform.forbidden:
        text = text.replace(ch, {"<": "‹", ">": "›"}.get(ch, ""))
    return text, count


def _fewest(options: int, fits: Callable[[int], bool]) -> int:
    """The first of ``options`` (0 to options - 1, each shorter than the one before) for which
    ``fits`` holds, by bisection; the last one when none does."""
    low, high = 0, options - 1
    if options == 0 or fits(0):
        return 0
    while high - low > 1:  # low does not fit; high fits or is the last option
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle
    return high


def fit(platform: Platform, description: str, chapters: Sequence[str], summary: Sequence[SummaryPart],
        language: str | None) -> Fitted:
    """The draft for ``platform`` within its limit, in its unit.

    Drop order, least important first: the summary's sentences (the entities, the other questions,
    the key facts from the last, the answer-first lead), then trailing chapters (fewer than three
    are no chapters: all go), then the description is cut at a word boundary, never inside a
    grapheme cluster, with an ellipsis. What was dropped is said in ``warnings``."""
    unit_name = f"{platform.max_length} {platform.unit.replace('_', ' ')}"
    summary, chapters = list(summary), list(chapters)  # copies: parts are dropped from these

    rendered: dict[int, str] = {}  # the summary's text by how many of its lines were dropped

    def summary_text() -> str:
        text = rendered.get(len(summary))
        if text is None:
            text = rendered[len(summary)] = render_summary(summary, language)
        return text

    def sections_of(desc: str) -> dict[str, str]:
        return {DESCRIPTION: desc, CHAPTERS: "\n".join(chapters), GEO_SUMMARY: summary_text()}

    def render(sections: dict[str, str]) -> str:
        return "\n\n".join(sections[name] for name in platform.order if sections[name])

    def length_of(desc: str) -> int:
        return measure(render(sections_of(desc)), platform.unit)

    warnings: list[str] = []
    total_parts = len(summary)
    # Summary lines go in drop order (highest ``drop_rank`` first, ties in their order), chapters
    # from the last (and fewer than three are none). Each step only shortens the text, so the
    # fewest drops that fit are found by bisection: a few measures of the whole text, not one per
    # line (the microblog's weighted count is the costly one).
    drop_order = sorted(range(total_parts), key=lambda i: -summary[i].drop_rank)
    all_parts = summary

    def summary_after(drops: int) -> list[SummaryPart]:
        dropped = set(drop_order[:drops])
        return [part for i, part in enumerate(all_parts) if i not in dropped]

    def fits_after_drops(drops: int) -> bool:
        nonlocal summary
        summary = summary_after(drops)
        return length_of(description) <= platform.max_length

    summary = summary_after(_fewest(total_parts + 1, fits_after_drops))
    if total_parts and len(summary) < total_parts:
        warnings.append(f"{platform.id}: the GEO summary was left out to fit {unit_name}" if not summary else
                        f"{platform.id}: {total_parts - len(summary)} of the GEO summary's {total_parts} lines were "
                        f"left out to fit {unit_name}")
    total_chapters = len(chapters)
    all_chapters = chapters
    kept_counts = [total_chapters, *range(total_chapters - 1, 2, -1), *([0] if total_chapters else [])]

    def fits_with_chapters(option: int) -> bool:
        nonlocal chapters
        chapters = all_chapters[:kept_counts[option]]
        return length_of(description) <= platform.max_length

    chapters = all_chapters[:kept_counts[_fewest(len(kept_counts), fits_with_chapters)]]
    if len(chapters) < total_chapters:
        warnings.append(f"{platform.id}: the chapters were left out: fewer than three fit in {unit_name}"
                        if not chapters else
                        f"{platform.id}: the last {total_chapters - len(chapters)} chapters were left out to fit "
                        f"{unit_name}")
    cut = length_of(description) > platform.max_length
    if cut:
        description = _longest_cut(description, lambda d: length_of(d) <= platform.max_length)
        warnings.append(f"{platform.id}: the description was cut at a word boundary to fit {unit_name}")
    sections = sections_of(description)
    text = render(sections)
    return Fitted(sections, text, measure(text, platform.unit),
                  truncated=cut or len(summary) < total_parts or len(chapters) < total_chapters, warnings=warnings)


def _longest_cut(description: str, fits: Callable[[str], bool]) -> str:
    """The longest cut of ``description`` (at a word boundary, never inside a grapheme cluster,
    with an ellipsis) that ``fits``: found by bisection, a cut only shortens the text."""
    clusters = graphemes(description)
    low, high = 0, len(clusters)  # low fits (an empty description does), high does not
    while high - low > 1:
        middle = (low + high) // 2
        if fits(_cut(clusters, middle, len(clusters))):
            low = middle
        else:
            high = middle
    return _cut(clusters, low, len(clusters))


# ---------------------------------------------------------------- the completion


@dataclass(slots=True)
class Completion:
    drafts: list[dict[str, Any]]
    warnings: list[str]


def complete_descriptions(original: str | None, graph: dict[str, Any], article: dict[str, Any], language: str | None,
                          platforms: Sequence[str]) -> Completion:
    """Drafts for ``platforms`` (in their order) from the video's description, its Content Graph
    and its article's content (pure: the same inputs always give the same drafts)."""
    parsed = parse_description(original)
    presence = parsed.presence
    warnings: list[str] = []
    facts = analysis_facts(graph)

    written = article.get("descriptions") or {}  # a premium analysis' own descriptions, short and long
    introduction = clean_text(article.get("introduction") or _opening_paragraph(article))
    if presence[CHAPTERS]:
        chapters = list(parsed.chapter_lines)
        warnings.append("the description already has chapters: they are kept as they are")
    elif facts.chapters_possible:
        chapters = chapter_lines(graph)
    else:
        chapters = []
        warnings.append(f"no chapters: {facts.chapter_problem}")
    if presence[GEO_SUMMARY]:
        summary = [SummaryPart([line], drop_rank=len(parsed.summary_lines) - k)
                   for k, line in enumerate(parsed.summary_lines)]
        warnings.append("the description already has a summary: it is kept as it is")
    else:
        summary = geo_summary_parts(article, graph, language)
        if not summary:
            warnings.append("no GEO summary: the article has no fact or answered question to summarise")

    drafts = []
    for platform_id in platforms:
        platform = PLATFORMS[platform_id]
        description = parsed.prose if presence[DESCRIPTION] else clean_text(
            written.get(description_kind(platform)) or "") or introduction
        desc, replaced = _replace_forbidden(description, platform)
        lines = []
        for line in chapters if platform.shows_chapters else []:
            fixed, count = _replace_forbidden(line, platform)
            lines.append(fixed)
            replaced += count
        parts = []
        for part in summary:
            fixed_lines = []
            for line in part.lines:
                fixed, count = _replace_forbidden(line, platform)
                fixed_lines.append(fixed)
                replaced += count
            parts.append(SummaryPart(fixed_lines, part.drop_rank, part.fact))
        if chapters and not platform.shows_chapters:
            warnings.append(f"{platform.id}: no chapters: the platform does not show chapters")
        if replaced:
            warnings.append(f"{platform.id}: {replaced} '<' or '>' characters, which the platform refuses, were "
                            f"replaced by ‹ and ›")
        fitted = fit(platform, desc, lines, parts, language)
        warnings.extend(fitted.warnings)
        drafts.append({
            "platform_id": platform.id, "display_name": platform.display_name,
            "original_description": original or "", "sections": fitted.sections,
            "section_presence_before": presence, "completed_description": fitted.text,
            "measured_length": fitted.length, "max_length": platform.max_length, "length_unit": platform.unit,
            "was_truncated": fitted.truncated})
    return Completion(drafts, warnings)
