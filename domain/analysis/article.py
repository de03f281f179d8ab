"""The offline article engine: a structured article from the Content Graph, with no provider.

Every sentence of the body (introduction, sections, key facts, FAQ answers, conclusion) is a
sentence of the transcript, cleaned only at its start (fillers such as "euh, alors," dropped,
first letter capitalised) and given a final full stop when the caption had none. Nothing is
paraphrased, so nothing is invented; the title and headings are built from the transcript's own
phrases (topics, chapter titles) and the FAQ questions are the questions asked in the video or a
query formed from a topic (``qu'est-ce que ...``), always answered by a transcript sentence.

One section per chapter. ``writing_style`` changes the structure and the choice of sentences, the
same way every time:

- journalistic: the lead (the two strongest claims that stand alone) opens; in each section the strongest sentence
  comes first; short paragraphs; key facts right after the introduction.
- narrative: chronological, longer paragraphs, the hook opens, key facts at the end.
- analytical: figures, causes and comparisons preferred; a "facts and figures" block first.
- tutorial: sections are numbered steps; instructions ("il faut", "make sure", "ensuite") preferred;
  one sentence per paragraph.
- conversational: questions from the video kept, each sentence attributed to its speaker.
- documentary: chronological, each heading carries the chapter's timestamp.
- interview: question and answer pairs, by speaker.
- auto: interview for two or more named speakers exchanging questions; tutorial when instructions
  are frequent; analytical when most claims are figures; journalistic otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.chapters import format_timestamp
from domain.analysis.claims import Claim
from domain.analysis.faq import write_faq
from domain.analysis.graph import ContentGraph
from domain.analysis.headings import answers, question_headings, talk_title
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import (
    RESTART_RE,
    capitalise,
    colon,
    fold,
    labels,
    norm_token,
    quote,
    strip_leading_fillers,
    words,
)
from domain.analysis.titles import video_subject_title
from domain.languages import DEFAULT_LANGUAGE

WRITING_STYLES = ("auto", "journalistic", "narrative", "analytical", "tutorial", "conversational", "documentary",
                  "interview")
# A talk is a tutorial when it tells the viewer what to do (``Language.instructs``: "Click Save.", "Then make
# sure the radiators are large enough", "Step two: ...") in at least this share of its sentences, and at
# least ``TUTORIAL_MIN`` times. On the development set's 40 lectures and podcasts the share is 0 to 2.5 %
# (a lecturer's imperatives, "imagine", "consider", "take", are not instructions): none is a tutorial.
TUTORIAL_SHARE = 0.06
TUTORIAL_MIN = 3

# sentences per section, sentences per paragraph
SHAPES = {
    "journalistic": (3, 2), "narrative": (6, 3), "analytical": (5, 2), "tutorial": (5, 1),
    "conversational": (5, 2), "documentary": (5, 3), "interview": (6, 2),
}


@dataclass(slots=True)
class Paragraph:
    sentences: list[str]
    speaker: str | None = None
    role: str = "text"  # text, question, answer
    start_ms: int | None = None  # where its first sentence is said (the offline engine quotes; a provider writes)

    def to_dict(self) -> dict[str, Any]:
        return {"text": " ".join(self.sentences), "sentences": list(self.sentences), "speaker": self.speaker,
                "role": self.role, **({"startMs": self.start_ms} if self.start_ms is not None else {})}


@dataclass(slots=True)
class Section:
    heading: str
    start_ms: int
    end_ms: int
    paragraphs: list[Paragraph] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"heading": self.heading, "startMs": self.start_ms, "endMs": self.end_ms,
                "paragraphs": [p.to_dict() for p in self.paragraphs]}


@dataclass(slots=True)
class Article:
    title: str
    language: str
    writing_style: str
    requested_style: str
    introduction: list[str]
    sections: list[Section]
    key_facts: list[dict[str, Any]]
    faq: list[dict[str, Any]]
    conclusion: list[str]
    keywords_primary: list[str]
    labels: dict[str, str]
    # What the picture shows (analysis_mode=behavioral): the behavioural summaries, in English; not
    # transcript sentences, so never among ``body_sentences``. Printed under "On screen" in an
    # English article's markdown, kept in the JSON content of every article.
    on_screen: list[str] = field(default_factory=list)

    def body_sentences(self) -> list[str]:
        """Every sentence that must be grounded in the transcript."""
        out = list(self.introduction)
        for section in self.sections:
            for paragraph in section.paragraphs:
                out.extend(paragraph.sentences)
        out.extend(f["text"] for f in self.key_facts)
        for entry in self.faq:
            out.extend(entry["answer"])
        out.extend(self.conclusion)
        return out

    @property
    def word_count(self) -> int:
        return sum(len(words(s)) for s in self.body_sentences())

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "language": self.language, "writing_style": self.writing_style,
                "requested_style": self.requested_style, "introduction": " ".join(self.introduction),
                "sections": [s.to_dict() for s in self.sections], "key_facts": self.key_facts,
                "faq": [{"question": f["question"], "answer": " ".join(f["answer"]), "startMs": f["startMs"],
                         "source": f["source"]} for f in self.faq],
                "conclusion": " ".join(self.conclusion), "keywords_primary": self.keywords_primary,
                "word_count": self.word_count,
                **({"on_screen": {"language": "en", "summaries": list(self.on_screen)}} if self.on_screen else {})}

    def to_markdown(self) -> str:
        label = self.labels
        lines = [f"# {self.title}", ""]
        if self.introduction:  # none of a talk whose opening is all greeting (the exports leave it out too)
            lines += [f"## {label['introduction']}", "", " ".join(self.introduction), ""]
        facts_block = [f"## {label['figures'] if self.writing_style == 'analytical' else label['key_facts']}", ""]
        facts_block += [f"- {f['text']} ({format_timestamp(f['startMs'])})" for f in self.key_facts] + [""]
        if self.writing_style in ("journalistic", "analytical"):
            lines += facts_block
        for section in self.sections:
            lines += [f"## {section.heading}", ""]
            for paragraph in section.paragraphs:
                text = " ".join(paragraph.sentences)
                if paragraph.start_ms is not None:
                    text = f"{text} ({format_timestamp(paragraph.start_ms)})"
                if self.writing_style == "tutorial":
                    lines.append(f"- {text}")
                    continue
                if paragraph.speaker and self.writing_style in ("conversational", "interview"):
                    prefix = f"**{paragraph.speaker}**" + (" (Q)" if paragraph.role == "question" else "")
                    text = f"{prefix}{colon(self.language)}{text}"
                lines += [text, ""]
            if self.writing_style == "tutorial":
                lines.append("")
        if self.writing_style not in ("journalistic", "analytical"):
            lines += facts_block
        if self.faq:
            lines += [f"## {label['faq']}", ""]
            for entry in self.faq:
                lines += [f"### {entry['question']}", "", " ".join(entry["answer"]), ""]
        if self.on_screen and self.language == "en":
            lines += ["## On screen", "", *[f"- {text[:1].upper()}{text[1:]}." for text in self.on_screen], ""]
        if self.conclusion:
            lines += [f"## {label['conclusion']}", "", " ".join(self.conclusion), ""]
        return "\n".join(lines).rstrip() + "\n"


def resolve_style(graph: ContentGraph, style: str) -> str:
    if style not in WRITING_STYLES:
        raise ValueError(f"writing_style must be one of {', '.join(WRITING_STYLES)}")
    if style != "auto":
        return style
    sentences = graph.sentences
    named = [s for s in graph.diarisation.speakers if s.name != "unknown"]
    questions = [s for s in sentences if s.is_question]
    exchanges = sum(1 for a, b in zip(sentences, sentences[1:], strict=False)
                    if a.is_question and b.speaker and b.speaker != a.speaker)
    if len(named) >= 2 and exchanges >= 3 and len(questions) >= 3:
        return "interview"
    if is_tutorial(graph):
        return "tutorial"
    if graph.claims and sum(1 for c in graph.claims if "statistic" in c.kinds) >= 0.4 * len(graph.claims):
        return "analytical"
    return "journalistic"


def is_tutorial(graph: ContentGraph) -> bool:
    """The talk tells its viewer what to do, step by step (``TUTORIAL_SHARE``): only then are an
    article's sections numbered steps."""
    kit = language_of(graph.language)
    instructions = sum(1 for s in graph.sentences if kit.instructs(s.text))
    return instructions >= TUTORIAL_MIN and instructions >= TUTORIAL_SHARE * len(graph.sentences)


# The lead of a section: a statement of at least this many content words, weighed by the section's
# recurring words it holds, the heading's words (each ``LEAD_HEADING_WEIGHT``), its claim's confidence
# (``LEAD_CLAIM_WEIGHT`` times it), or a definition (``LEAD_DEFINITION_WEIGHT``: "A solar panel is...", which
# states a part's point as nothing else does).
LEAD_MIN_WORDS = 4
LEAD_MAX_WORDS = 40
LEAD_HEADING_WEIGHT = 0.5
LEAD_CLAIM_WEIGHT = 0.5
LEAD_DEFINITION_WEIGHT = 1.0


class _Writer:
    def __init__(self, graph: ContentGraph, style: str, language: str) -> None:
        self.graph = graph
        self.style = style
        self.language = language
        self.kit = language_of(graph.language or language)
        self.claims = {c.sentence: c for c in graph.claims}
        self.top_words = {w for t in graph.topics[:10] for w in t.words}
        self.used: set[int] = set()

    def leans(self, claim: Claim) -> bool:
        """The claim leans on what was said before it ("It gives three units...", "But in winter...", "Es el
        verdadero valor..."): out of its context it says less than it seems."""
        return self.kit.opens_dependent(strip_leading_fillers(claim.text, self.language))

    def fact_order(self, claim: Claim) -> tuple[bool, float, int]:
        """Claims as a lead or a key fact take them, out of their context: those that stand alone first
        (``leans``), then the strongest, then the earliest."""
        return self.leans(claim), -claim.confidence, claim.start_ms

    def quality(self, sentence: Sentence) -> float:
        count = len(words(sentence.text))
        if count < 5 or self.kit.social_re.search(sentence.text):
            return -1.0
        if sentence.is_question and self.style not in ("conversational", "interview"):
            return -1.0
        if self.kit.reports_question(sentence.text):
            return -1.0  # "Adam says what makes a software engineer senior.": a question (its heading asks it)
        if self.kit.announced(sentence.text) is not None:
            return -1.0  # "Next, let's talk about the cost": a transition, not content (the section's heading says it)
        claim: Claim | None = self.claims.get(sentence.index)
        value = 2.0 * claim.confidence if claim else 0.0
        value += len(self.top_words.intersection(sentence.tokens)) / max(3, len(sentence.tokens))
        value += 0.3 if 8 <= count <= 40 else 0.0
        if self.kit.hedge_re.search(sentence.text):
            value -= 0.3
        if self.style == "analytical" and claim and {"statistic", "causal", "comparison"} & set(claim.kinds):
            value += 0.6
        if self.style == "tutorial" and self.kit.instructs(sentence.text):
            value += 0.8
        return value

    def pick(self, pool: Sequence[Sentence], k: int) -> list[Sentence]:
        """The ``k`` best sentences of ``pool`` not used yet, in their spoken order."""
        ranked = sorted((s for s in pool if s.index not in self.used and self.quality(s) >= 0),
                        key=lambda s: (-self.quality(s), s.index))[:k]
        self.used.update(s.index for s in ranked)
        return sorted(ranked, key=lambda s: s.index)

    def with_lead(self, pool: Sequence[Sentence], chosen: list[Sentence], heading: str) -> list[Sentence]:
        """``chosen`` with the sentence of ``pool`` that best states the section's point first
        (``states``), then the others in their spoken order; the lead takes the place of the weakest
        chosen sentence when it was not among them."""
        candidates = [s for s in pool if (s in chosen or s.index not in self.used) and self.quality(s) >= 0
                      and not s.is_question and len(s.tokens) >= LEAD_MIN_WORDS and self.reads_clean(s)]
        if not candidates:
            return chosen
        said: dict[str, int] = {}
        for sentence in pool:
            for stem in {self.kit.stem(t) for t in sentence.tokens}:
                said[stem] = said.get(stem, 0) + 1
        named = {self.kit.stem(norm_token(w)) for w in words(heading)}
        lead = max(candidates, key=lambda s: (self.states(s, said, named), -s.index))
        if lead not in chosen:
            if chosen:
                weakest = min(chosen, key=lambda s: (self.quality(s), -s.index))
                self.used.discard(weakest.index)
                chosen = [s for s in chosen if s is not weakest]
            self.used.add(lead.index)
        return [lead, *sorted((s for s in chosen if s is not lead), key=lambda s: s.index)]

    def reads_clean(self, sentence: Sentence) -> bool:
        """May lead a section: no sponsor read, no restart ("I, I always thought", "if you, if you"),
        at most ``LEAD_MAX_WORDS`` words (a podcast's rambling turn states no point)."""
        text = sentence.text
        return (len(words(text)) <= LEAD_MAX_WORDS and not self.kit.sponsor_re.search(text)
                and not RESTART_RE.search(text))

    def states(self, sentence: Sentence, said: dict[str, int], named: set[str]) -> float:
        """How well ``sentence`` states its section's point: the section's recurring words it holds
        (``said``: in how many of the section's sentences each stem is), per the square root of its
        length, the heading's words it says (``named``), and its strength as a claim (a definition most).
        These weights are set by hand: no human "lead" of a section was there to fit them on."""
        stems = {self.kit.stem(t) for t in sentence.tokens}
        value = sum(1 for t in stems if said.get(t, 0) >= 2) / math.sqrt(max(LEAD_MIN_WORDS, len(stems)))
        value += LEAD_HEADING_WEIGHT * len(stems & named)
        claim = self.claims.get(sentence.index)
        if claim is not None:
            value += LEAD_DEFINITION_WEIGHT if "definition" in claim.kinds else LEAD_CLAIM_WEIGHT * claim.confidence
        return value

    def paragraphs(self, chosen: Sequence[Sentence], size: int) -> list[Paragraph]:
        out: list[Paragraph] = []
        by_speaker = self.style == "conversational"
        for s in chosen:
            last = out[-1] if out else None
            same = last is not None and len(last.sentences) < size and (not by_speaker or last.speaker == s.speaker)
            if same and last is not None:
                last.sentences.append(quote(s, self.language))
            else:
                out.append(Paragraph([quote(s, self.language)], s.speaker, "question" if s.is_question else "text",
                                     s.start_ms))
        return out

    def interview_section(self, pool: Sequence[Sentence], k: int) -> list[Paragraph]:
        out: list[Paragraph] = []
        for i, s in enumerate(pool):
            if len(out) >= 2 * (k // 2) or not s.is_question or s.index in self.used or len(words(s.text)) < 4:
                continue
            answers = [a for a in pool[i + 1:i + 4] if a.speaker != s.speaker and not a.is_question
                       and a.index not in self.used and self.quality(a) >= 0]
            if not answers:
                continue
            self.used.add(s.index)
            self.used.update(a.index for a in answers[:2])
            out.append(Paragraph([quote(s, self.language)], s.speaker, "question", s.start_ms))
            out.append(Paragraph([quote(a, self.language) for a in answers[:2]], answers[0].speaker, "answer",
                                 answers[0].start_ms))
        return out


def write_article(graph: ContentGraph, writing_style: str = "auto", language: str | None = None) -> Article:
    """An article from the graph. ``language`` (default: the graph's) sets labels and question forms."""
    language = language or graph.language or DEFAULT_LANGUAGE
    label = labels(language)
    style = resolve_style(graph, writing_style)
    writer = _Writer(graph, style, language)
    sentences = graph.sentences

    # the FAQ first: each answer is the passage that answers its question, so the prose that
    # follows leaves those sentences to it (no sentence is printed twice, key facts aside)
    faq = write_faq(graph, writer, language)

    # introduction
    if style == "journalistic":
        lead = sorted((c for c in graph.claims if c.sentence not in writer.used), key=writer.fact_order)[:2]
        intro = [sentences[c.sentence] for c in sorted(lead, key=lambda c: c.start_ms)]
        writer.used.update(s.index for s in intro)
    else:
        opening = [p for p in graph.narrative if p.part in ("hook", "context")]
        end = opening[-1].end_ms if opening else (sentences[-1].end_ms if sentences else 0)
        pool = [s for s in sentences if s.start_ms < end] or list(sentences[:10])
        if style == "tutorial":  # the steps are the sections': "First, mix the flour..." introduces nothing
            pool = [s for s in pool if not writer.kit.instructs(s.text)]
        intro = writer.pick(pool, 3 if style in ("narrative", "documentary") else 2)

    conclusion_part = next((p for p in graph.narrative if p.part == "conclusion"), None)
    sections = _sections(graph, writer, {fold(e["question"]) for e in faq}, language)

    conclusion: list[str] = []
    if conclusion_part is not None:
        pool = [s for s in sentences if conclusion_part.start_ms <= s.start_ms < conclusion_part.end_ms]
        conclusion = [quote(s, language) for s in writer.pick(pool, 1 if style == "journalistic" else 2)]

    _give_back(sections, faq)
    intro = _give_back_the_opening(sections, intro, language)
    introduction = [quote(s, language) for s in intro]

    # key facts: the strongest claims that stand alone (a list read out of context), in video order; not those
    # the introduction just said (a journalistic lead is the two strongest)
    said = {s.index for s in intro}
    strongest = sorted((c for c in graph.claims if c.sentence not in said and not writer.leans(c)),
                       key=writer.fact_order)[:7 if style == "analytical" else 5]
    key_facts = [{"text": quote(sentences[c.sentence], language), "startMs": c.start_ms, "claimId": c.id}
                 for c in sorted(strongest, key=lambda c: c.start_ms)]
    title = _title(graph, language)
    return Article(title=title, language=language, writing_style=style, requested_style=writing_style,
                   introduction=introduction, sections=sections, key_facts=key_facts, faq=faq,
                   conclusion=conclusion, keywords_primary=primary_keywords(graph, language), labels=label,
                   on_screen=on_screen(graph))


def _sections(graph: ContentGraph, writer: _Writer, taken: set[str], language: str) -> list[Section]:
    """One section per chapter: its heading (the chapter's title, or the question it answers:
    ``headings.question_headings``; numbered steps only in a tutorial's talk, ``is_tutorial``), and its
    paragraphs, the sentence that best states its point first (``_Writer.with_lead``)."""
    style, label = writer.style, labels(language)
    per_section, per_paragraph = SHAPES[style]
    spans = section_spans(graph, language)
    numbered = style == "tutorial" and is_tutorial(graph)
    questions = question_headings(graph, spans, taken, language, queries=not numbered)
    sections: list[Section] = []
    step = 0
    for number, (title, start, end) in enumerate(spans, start=1):
        pool = sentences_between(graph.sentences, start, end)
        title = questions.get(number - 1, title)
        # a step is a part that tells what to do; the opening that says what will be made is none
        if numbered and (step or any(writer.kit.instructs(s.text) for s in pool)):
            step += 1
            heading = f"{label['step']} {step}{colon(language)}{title}"
        elif style == "documentary":
            heading = f"[{format_timestamp(start)}] {title}"
        else:
            heading = title
        paragraphs = writer.interview_section(pool, per_section) if style == "interview" else []
        if not paragraphs:
            chosen = writer.with_lead(pool, writer.pick(pool, per_section), title)
            if style == "tutorial":
                chosen.sort(key=lambda s: s.index)  # steps in the order they are done
            paragraphs = writer.paragraphs(chosen, per_paragraph)
        if not paragraphs:
            fallback = [s for s in pool if s.index not in writer.used and len(words(s.text)) >= 3
                        and not writer.kit.social_re.search(s.text)][:1]  # "Welcome to...", "Thanks for watching"
            writer.used.update(s.index for s in fallback)
            paragraphs = writer.paragraphs(fallback, per_paragraph)
        if title != spans[number - 1][0] and not answers(title, [t for p in paragraphs for t in p.sentences],
                                                         writer.kit):
            heading = heading.replace(title, spans[number - 1][0])  # the question its body does not answer
        sections.append(Section(heading, start, end, paragraphs))
    return sections


def _give_back_the_opening(sections: list[Section], intro: list[Sentence], language: str) -> list[Sentence]:
    """A section the introduction left with no sentence (a short opening chapter: "Welcome to the show.
    Questions came from all over...") takes its sentences back, so that no heading stands over nothing;
    the introduction keeps the rest (and, with none left, is not printed)."""
    for section in sections:
        mine = [s for s in intro if section.start_ms <= s.start_ms < section.end_ms]
        if mine and not section.paragraphs:
            section.paragraphs.append(Paragraph([quote(s, language) for s in mine], None, "text", mine[0].start_ms))
            intro = [s for s in intro if s not in mine]
    return intro


def _give_back(sections: list[Section], faq: list[dict[str, Any]]) -> None:
    """A section left with no sentence of its own (the FAQ took the answer to its question or to a search
    query: a short talk) takes that answer back: a heading with nothing under it, or a greeting, reads as
    a broken article; the FAQ loses the entry (no sentence is printed twice)."""
    for section in sections:
        if section.paragraphs:
            continue
        entry = next((e for e in faq if section.start_ms <= e["startMs"] // 1000 * 1000 < section.end_ms), None)
        if entry is not None:
            faq.remove(entry)
            section.paragraphs.append(Paragraph(list(entry["answer"]), None, "text", entry["startMs"]))


def on_screen(graph: ContentGraph) -> list[str]:
    """The behavioural summaries of what the picture shows (none outside ``analysis_mode=behavioral``,
    or when no frame was seen)."""
    vision = (graph.behavioral or {}).get("vision") or {}
    return [str(text) for text in vision.get("summaries") or []]


KEYWORDS = 5
NAMED_ENTITY_TYPES = ("person", "organization", "place", "product")


def primary_keywords(graph: ContentGraph, language: str) -> list[str]:
    """The primary keywords: the first topics; for a talk with none (a short one whose nouns are
    each said once), the subject it names for itself and its names (people, organisations, places,
    products), so that no article goes without."""
    if graph.topics:
        return [t.name for t in graph.topics[:KEYWORDS]]
    found = [s for s in (video_subject_title(graph.sentences, language),) if s]
    for entity in sorted(graph.entities, key=lambda e: (-e.mentions, e.first_ms)):
        if entity.type in NAMED_ENTITY_TYPES and entity.name.lower() not in {k.lower() for k in found}:
            found.append(entity.name)
    return found[:KEYWORDS]


def section_spans(graph: ContentGraph, language: str) -> list[tuple[str, int, int]]:
    """(title, start_ms, end_ms) of each section: one per chapter, or the whole video as one."""
    return [(c.title, c.start_ms, c.end_ms) for c in graph.chapters or []] or [
        (graph.topics[0].name.capitalize() if graph.topics else labels(language)["in_short"], 0, graph.duration_ms)]


def sentences_between(sentences: Sequence[Sentence], start_ms: int, end_ms: int) -> list[Sentence]:
    """The sentences of a section: those starting in it, at chapter (whole second) precision."""
    return [s for s in sentences if start_ms <= s.start_ms // 1000 * 1000 < end_ms]


def _title(graph: ContentGraph, language: str) -> str:
    """The talk's subject (``headings.talk_title``); else its first topics joined ("Vector and
    directions"); else its first words."""
    subject = talk_title(graph, language)
    if subject is not None:
        return subject
    names = [t.name for t in graph.topics[:2]]
    if not names:
        first = graph.sentences[0].text if graph.sentences else ""
        return capitalise(" ".join(words(strip_leading_fillers(first))[:8]))
    return capitalise(f" {labels(language)['and']} ".join(names))
