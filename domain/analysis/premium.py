"""The premium writer: a language model writes every text a person reads, each part checked, each
part that fails a check replaced by the offline text with the reason recorded (pure).

The offline engine's work is the input and the fallback: the graph the analysis built (its
chapters, claims, transcript) and the article ``write_article`` writes from it. ``PremiumWriter``
asks for three calls (``domain.analysis.premium_prompts``), reads each answer into its parts, holds
every part to ``domain.analysis.premium_checks``, and keeps either the model's text of a part or the
offline one, whole, never a mixture:

==================  ===============================================  ==================================
part                what it is                                       offline text when refused
==================  ===============================================  ==================================
``title``           the article's title (the video's title)          the offline article's title
``summary``         two or three sentences on what the video says     the first sentences of the
                    (``content.summary``)                             offline introduction
``chapter_titles``  each chapter's title                              the analysis' chapter titles
``chapter_starts``  each chapter's start, moved at most 30 s, to a   the analysis' starts
                    sentence's start
``article``         introduction, sections, key facts, conclusion    the offline article's
``faq``             the questions and their answers                  the offline FAQ
``descriptions``    a short and a long description for the          none: the platforms take the
                    platforms of description completion              article's introduction
==================  ===============================================  ==================================

``outcomes`` says, for every part, ``{"by": "model"}`` or ``{"by": "offline", "reason": ...}``;
the job stores it with the graph, the article and its result. A call the provider did not answer
(after its retries) is the job's failure, not a part's: that is decided by the caller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from domain.analysis.article import Article, Paragraph, Section, resolve_style, section_spans, write_article
from domain.analysis.chapters import Chapter
from domain.analysis.graph import ContentGraph
from domain.analysis.premium_checks import (
    Grounds,
    Refused,
    check_distinct,
    check_fact,
    check_grounded,
    check_language,
    check_starts,
    check_text,
)
from domain.analysis.premium_prompts import (
    ANSWER_CHARS,
    ARTICLE_PARAGRAPH_CHARS,
    CHAPTER_TITLE_CHARS,
    FACT_CHARS,
    HEADING_CHARS,
    LONG_CHARS,
    MAX_FACTS,
    MAX_FAQ,
    MAX_PARAGRAPHS,
    QUESTION_CHARS,
    SHORT_CHARS,
    SUMMARY_CHARS,
    TITLE_CHARS,
    Call,
    article_call,
    boundary_options,
    descriptions_call,
    outline_call,
)
from domain.analysis.provider_article import STYLE_GUIDANCE, article_material, json_object
from domain.platforms import PLATFORMS, description_kind, measure

PARTS = ("title", "summary", "chapter_titles", "chapter_starts", "article", "faq", "descriptions")
OFFLINE_SUMMARY_CHARS = 400
MODEL, OFFLINE = "model", "offline"


@dataclass(frozen=True)
class Reply:
    """What the provider answered to one call: its text and why it stopped."""

    content: str
    finish_reason: str | None = None


def outcome(reason: str | None) -> dict[str, Any]:
    return {"by": MODEL} if reason is None else {"by": OFFLINE, "reason": reason}


def read_reply(reply: Reply) -> dict[str, Any]:
    """The answer's JSON object, or ``Refused`` saying why there is none (every part of the call then
    falls back with that reason)."""
    if reply.finish_reason == "length":
        raise Refused("the answer was cut at its length limit")
    return json_object(reply.content, Refused)


T = TypeVar("T")


def _member(data: dict[str, Any], name: str, kind: type[T]) -> T:
    value = data.get(name)
    if not isinstance(value, kind):
        raise Refused(f"the answer has no {name}" if value is None else f"the answer's {name} is not a {kind.__name__}")
    return value


def offline_summary(article: Article) -> str:
    """The offline summary: the offline introduction's first sentences, within ``OFFLINE_SUMMARY_CHARS``."""
    out: list[str] = []
    for sentence in article.introduction:
        if out and len(" ".join([*out, sentence])) > OFFLINE_SUMMARY_CHARS:
            break
        out.append(sentence)
    return " ".join(out)[:OFFLINE_SUMMARY_CHARS]


class PremiumWriter:
    """One premium writing: ``outline_call`` -> ``take_outline``, ``article_call`` -> ``take_article``,
    ``descriptions_call`` -> ``take_descriptions``, then ``article()`` and ``outcomes``. Each
    ``take_*`` accepts None for a call that was not made (nothing to write it from)."""

    def __init__(self, graph: ContentGraph, writing_style: str, language: str) -> None:
        self.offline_graph = graph
        self.graph = graph
        self.style = writing_style
        self.language = language
        self.offline = write_article(graph, writing_style, language)
        self.grounds = Grounds.of(language, [s.text for s in graph.sentences],
                                  {c.id: c.text for c in graph.claims})
        self.title = self.offline.title
        self.summary = offline_summary(self.offline)
        self.descriptions: dict[str, str] | None = None
        self.model_article: Article | None = None
        self.model_faq: list[dict[str, Any]] | None = None
        self.outcomes: dict[str, dict[str, Any]] = {}

    # ---------------------------------------------------------------- outline: title, summary, chapters

    def outline_call(self) -> Call:
        return outline_call(self.graph, self.language, self.offline.title)

    def take_outline(self, reply: Reply | None, why_not: str = "no answer") -> None:
        try:
            data = read_reply(reply) if reply is not None else None
            if data is None:
                raise Refused(why_not)
        except Refused as exc:
            for part in ("title", "summary", "chapter_titles", "chapter_starts"):
                self.outcomes[part] = outcome(str(exc))
            return
        self.title = self._part("title", lambda: self._title(data), self.offline.title)
        self.summary = self._part("summary", lambda: self._summary(data), self.summary)
        chapters = data.get("chapters")
        if not self.graph.chapters:
            self.outcomes["chapter_titles"] = self.outcomes["chapter_starts"] = outcome("the video has no chapters")
            return
        titles = self._part("chapter_titles", lambda: self._chapter_titles(chapters), None)
        starts = self._part("chapter_starts", lambda: self._chapter_starts(chapters), None)
        if titles is not None or starts is not None:
            self.graph = dataclasses.replace(self.graph, chapters=self._chapters(titles, starts))
            self.offline = write_article(self.graph, self.style, self.language)
            if self.outcomes["title"]["by"] == OFFLINE:
                self.title = self.offline.title

    def _part(self, name: str, read: Callable[[], Any], fallback: Any) -> Any:
        try:
            value = read()
        except Refused as exc:
            self.outcomes[name] = outcome(str(exc))
            return fallback
        self.outcomes[name] = outcome(None)
        return value

    def _title(self, data: dict[str, Any]) -> str:
        title = check_text("the title", str(_member(data, "title", str)), max_chars=TITLE_CHARS, min_chars=3,
                           one_line=True)
        check_grounded("the title", [title], self.grounds)
        check_language("the title", [title], self.language)
        return title

    def _summary(self, data: dict[str, Any]) -> str:
        summary = check_text("the summary", str(_member(data, "summary", str)), max_chars=SUMMARY_CHARS, min_chars=20)
        check_grounded("the summary", [summary], self.grounds)
        check_language("the summary", [summary], self.language)
        return summary

    def _chapter_items(self, chapters: object) -> list[dict[str, Any]]:
        count = len(self.graph.chapters)
        if not isinstance(chapters, list) or not all(isinstance(c, dict) for c in chapters):
            raise Refused("the answer has no list of chapters")
        if len(chapters) != count:
            raise Refused(f"the answer has {len(chapters)} chapters; the video has {count}")
        return chapters

    def _chapter_titles(self, chapters: object) -> list[str]:
        items = self._chapter_items(chapters)
        titles = [check_text(f"chapter {k}'s title", str(c.get("title") or ""), max_chars=CHAPTER_TITLE_CHARS,
                             min_chars=2, one_line=True) for k, c in enumerate(items, start=1)]
        check_distinct("the chapter titles", titles)
        check_grounded("a chapter title", titles, self.grounds)
        check_language("the chapter titles", titles, self.language)
        return titles

    def _chapter_starts(self, chapters: object) -> list[int]:
        items = self._chapter_items(chapters)
        starts = []
        for k, c in enumerate(items, start=1):
            value = c.get("startMs")
            if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
                raise Refused(f"chapter {k}'s startMs is not a whole number of milliseconds")
            starts.append(int(value))
        offline = [c.start_ms for c in self.offline_graph.chapters]
        allowed = [frozenset(o["startMs"] for o in options) for options in boundary_options(self.offline_graph)]
        check_starts(starts, offline, allowed, self.offline_graph.duration_ms)
        return starts

    def _chapters(self, titles: list[str] | None, starts: list[int] | None) -> list[Chapter]:
        """The chapters as decided: the model's titles and starts where they passed, the analysis' otherwise."""
        old = self.offline_graph.chapters
        starts = starts or [c.start_ms for c in old]
        titles = titles or [c.title for c in old]
        sentences = self.graph.sentences
        out = []
        for k, (start, title) in enumerate(zip(starts, titles, strict=True)):
            end = starts[k + 1] if k + 1 < len(starts) else self.graph.duration_ms
            inside = [s.index for s in sentences if start <= s.start_ms // 1000 * 1000 < end]
            first = inside[0] if inside else old[k].first_sentence
            out.append(Chapter(start, end, title, first, inside[-1] if inside else first))
        return out

    # ---------------------------------------------------------------- article and FAQ

    def article_call(self) -> Call:
        material = article_material(self.graph, self.style, self.language)
        return article_call(material, STYLE_GUIDANCE[material["writingStyle"]], self.language)

    def take_article(self, reply: Reply | None, why_not: str = "no answer") -> None:
        try:
            data = read_reply(reply) if reply is not None else None
            if data is None:
                raise Refused(why_not)
        except Refused as exc:
            self.outcomes["article"] = self.outcomes["faq"] = outcome(str(exc))
            return
        self.model_article = self._part("article", lambda: self._article(data), None)
        self.model_faq = self._part("faq", lambda: self._faq(data), None)

    def _paragraph(self, what: str, value: object, max_chars: int = ARTICLE_PARAGRAPH_CHARS) -> str:
        return check_text(what, value if isinstance(value, str) else "", max_chars=max_chars)

    def _article(self, data: dict[str, Any]) -> Article:
        spans = section_spans(self.graph, self.language)
        sections = _member(data, "sections", list)
        if len(sections) != len(spans):
            raise Refused(f"the answer has {len(sections)} section(s); the video has {len(spans)} chapter(s) "
                          f"and needs one section each")
        built = []
        for k, (section, (_, start, end)) in enumerate(zip(sections, spans, strict=True), start=1):
            if not isinstance(section, dict) or not isinstance(section.get("paragraphs"), list):
                raise Refused(f"section {k} has no paragraphs")
            paragraphs = [self._paragraph(f"a paragraph of section {k}", p) for p in section["paragraphs"]]
            if not 1 <= len(paragraphs) <= MAX_PARAGRAPHS:
                raise Refused(f"section {k} has {len(paragraphs)} paragraphs (1 to {MAX_PARAGRAPHS})")
            heading = check_text(f"section {k}'s heading", str(section.get("heading") or ""),
                                 max_chars=HEADING_CHARS, one_line=True)
            built.append(Section(heading, start, end, [Paragraph([p]) for p in paragraphs]))
        introduction = self._paragraph("the introduction", data.get("introduction"))
        conclusion = self._paragraph("the conclusion", data.get("conclusion"))
        facts = self._facts(data.get("key_facts"))
        texts = [introduction, conclusion, *(s.heading for s in built),
                 *(p.sentences[0] for s in built for p in s.paragraphs)]
        check_grounded("the article", [*texts, *(f["text"] for f in facts)], self.grounds)
        check_language("the article", texts, self.language)
        return dataclasses.replace(self.offline, introduction=[introduction], sections=built, key_facts=facts,
                                   conclusion=[conclusion],
                                   writing_style=resolve_style(self.graph, self.style))

    def _facts(self, value: object) -> list[dict[str, Any]]:
        if not isinstance(value, list) or len(value) > MAX_FACTS:
            raise Refused(f"the key facts are not a list of at most {MAX_FACTS}")
        claims = {c.id: c for c in self.graph.claims}
        facts = []
        for k, fact in enumerate(value, start=1):
            if not isinstance(fact, dict):
                raise Refused(f"key fact {k} is not an object")
            text = check_text(f"key fact {k}", str(fact.get("text") or ""), max_chars=FACT_CHARS)
            claim_id = str(fact.get("claim_id") or "")
            check_fact(f"key fact {k}", text, claim_id, self.grounds)
            facts.append({"text": text, "startMs": claims[claim_id].start_ms, "claimId": claim_id})
        return facts

    def _faq(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        value = data.get("faq")
        if not isinstance(value, list) or len(value) > MAX_FAQ:
            raise Refused(f"the FAQ is not a list of at most {MAX_FAQ} entries")
        faq: list[dict[str, Any]] = []
        for k, entry in enumerate(value, start=1):
            if not isinstance(entry, dict):
                raise Refused(f"FAQ entry {k} is not an object")
            question = check_text(f"FAQ question {k}", str(entry.get("question") or ""), max_chars=QUESTION_CHARS,
                                  one_line=True)
            if not question.rstrip().endswith(("?", "？")):
                raise Refused(f"FAQ question {k} is not a question: “{question[:60]}”")
            answer = check_text(f"FAQ answer {k}", str(entry.get("answer") or ""), max_chars=ANSWER_CHARS)
            faq.append({"question": question, "answer": [answer], "startMs": None, "source": "provider"})
        check_distinct("the FAQ questions", [f["question"] for f in faq])
        texts = [t for f in faq for t in (f["question"], f["answer"][0])]
        check_grounded("the FAQ", texts, self.grounds)
        check_language("the FAQ", texts, self.language)
        return faq

    # ---------------------------------------------------------------- descriptions

    def descriptions_call(self) -> Call:
        return descriptions_call(self.title, self.summary, self.graph, self.language)

    def take_descriptions(self, reply: Reply | None, why_not: str = "no answer") -> None:
        try:
            data = read_reply(reply) if reply is not None else None
            if data is None:
                raise Refused(why_not)
        except Refused as exc:
            self.outcomes["descriptions"] = outcome(str(exc))
            return
        self.descriptions = self._part("descriptions", lambda: self._descriptions(data), None)

    def _descriptions(self, data: dict[str, Any]) -> dict[str, str]:
        short = check_text("the short description", str(_member(data, "short", str)), max_chars=SHORT_CHARS,
                           min_chars=20)
        long = check_text("the long description", str(_member(data, "long", str)), max_chars=LONG_CHARS,
                          min_chars=80)
        for kind, text in (("short", short), ("long", long)):
            for platform in (p for p in PLATFORMS.values() if description_kind(p) == kind):
                if measure(text, platform.unit) > platform.max_length:
                    raise Refused(f"the {kind} description does not fit {platform.id} ({platform.max_length} "
                                  f"{platform.unit.replace('_', ' ')})")
        check_grounded("the descriptions", [short, long], self.grounds)
        check_language("the descriptions", [short, long], self.language)
        return {"short": short, "long": long}

    # ---------------------------------------------------------------- the result

    def article(self) -> Article:
        """The article as decided: the model's parts where they passed, the offline ones otherwise."""
        base = self.model_article or self.offline
        return dataclasses.replace(base, title=self.title,
                                   faq=self.model_faq if self.model_faq is not None else self.offline.faq)

    def content(self, article: Article) -> dict[str, Any]:
        """The stored content of ``article``: its dict, with the summary, the descriptions and the record."""
        return {**article.to_dict(), "engine": "provider", "summary": self.summary,
                **({"descriptions": self.descriptions} if self.descriptions else {}),
                "written": self.record()}

    def record(self) -> dict[str, Any]:
        """Every part, in ``PARTS`` order: written by the model, or offline with the reason."""
        return {part: self.outcomes.get(part, outcome("not asked")) for part in PARTS}
