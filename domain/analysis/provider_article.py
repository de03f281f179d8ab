"""The pure half of the provider article engine: the prompt, and the answer checked into an Article.

An OpenAI-compatible provider (``infra/llm.py``) writes the article of ``quality_profile=premium``
from the Content Graph. This module never talks to it: ``article_messages`` builds the Chat
Completions ``messages`` from the graph, and ``article_from_answer`` turns the provider's text into
the same ``Article`` the offline engine returns, or raises ``InvalidProviderArticle``.

The prompt asks for one JSON object (``ANSWER_SHAPE``); the answer is held to it strictly, because
a job stores a whole article or none:

- it must parse as JSON (one surrounding Markdown code fence is tolerated) and match
  ``ArticleAnswer`` exactly: every member present, no other member, no empty text, bounded lengths;
- one section per chapter, in order (one section when the video has no chapters): the sections
  take their time ranges from the chapters, never from the provider;
- every key fact names the id of a claim of the graph and takes its time from it: a fact the
  provider cannot tie to a claim is refused, so key facts stay grounded and citable.

The material sent is bounded, whatever the length of the video: the strongest claims
(``MAX_CLAIMS``), the chapters with an excerpt of their transcript (``EXCERPT_CHARS`` in all,
shared between chapters), the first search intents, topics, entities and the speakers' names.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from domain.analysis.article import (
    Article,
    Paragraph,
    Section,
    on_screen,
    primary_keywords,
    resolve_style,
    section_spans,
    sentences_between,
)
from domain.analysis.graph import ContentGraph
from domain.analysis.text import labels

MAX_CLAIMS = 60
EXCERPT_CHARS = 12_000
MAX_INTENTS, MAX_TOPICS, MAX_ENTITIES = 10, 10, 15

STYLE_GUIDANCE = {
    "journalistic": "news writing: the most important facts first, short paragraphs",
    "narrative": "a story told in the order of the video, longer paragraphs",
    "analytical": "an analysis that puts figures, causes and comparisons forward",
    "tutorial": "practical steps: each section is a step, one instruction per paragraph",
    "conversational": "a friendly, conversational tone that keeps the questions asked in the video",
    "documentary": "a chronological documentary account",
    "interview": "questions and answers, each answer attributed to the speaker who gave it",
}

ANSWER_SHAPE = {
    "title": "string",
    "introduction": "string: one paragraph",
    "sections": [{"heading": "string", "paragraphs": ["string", "..."]}],
    "key_facts": [{"claim_id": "the id of one of the claims given", "text": "string: the fact in one sentence"}],
    "faq": [{"question": "string", "answer": "string"}],
    "conclusion": "string: one paragraph",
}

SYSTEM_PROMPT = """You write articles for answer engines and generative engines from the analysis of a video.
Use only what the material says: do not invent any fact, figure, name, date or quotation.
Write in the language {language}, in this style: {style}.
Answer with one JSON object and nothing else (no Markdown, no code fence, no comment), exactly this \
structure and no other member:
{shape}
Rules:
- "sections": exactly {sections} section(s), one per chapter of the material, in the same order; \
each with a heading and 1 to 12 paragraphs.
- "key_facts": 3 to 7 facts (fewer if there are fewer claims), each tied to the "id" of one claim \
of the material in "claim_id".
- "faq": up to 5 questions a reader would ask (use the search intents), each with a direct answer \
from the material.
- Every text is non-empty."""

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnswerSection(_Strict):
    heading: Annotated[Text, StringConstraints(max_length=200)]
    paragraphs: list[Annotated[Text, StringConstraints(max_length=5000)]] = Field(min_length=1, max_length=12)


class AnswerFact(_Strict):
    claim_id: Text
    text: Annotated[Text, StringConstraints(max_length=1000)]


class AnswerFaq(_Strict):
    question: Annotated[Text, StringConstraints(max_length=300)]
    answer: Annotated[Text, StringConstraints(max_length=3000)]


class ArticleAnswer(_Strict):
    """What the provider must answer (``ANSWER_SHAPE``)."""

    title: Annotated[Text, StringConstraints(max_length=200)]
    introduction: Annotated[Text, StringConstraints(max_length=5000)]
    sections: list[AnswerSection] = Field(min_length=1)
    key_facts: list[AnswerFact] = Field(max_length=10)
    faq: list[AnswerFaq] = Field(max_length=10)
    conclusion: Annotated[Text, StringConstraints(max_length=5000)]


class InvalidProviderArticle(ValueError):
    """The provider's answer is not an article of the required structure (the message says why)."""


def _excerpt(graph: ContentGraph, start_ms: int, end_ms: int, budget: int) -> str:
    named = graph.diarisation.diarised
    out, used = [], 0
    for sentence in sentences_between(graph.sentences, start_ms, end_ms):
        line = f"{sentence.speaker}: {sentence.text}" if named and sentence.speaker else sentence.text
        if used + len(line) > budget:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def article_material(graph: ContentGraph, writing_style: str, language: str) -> dict:
    """What the provider is given: bounded, JSON-ready, built from the graph only."""
    spans = section_spans(graph, language)
    budget = EXCERPT_CHARS // len(spans)
    strongest = sorted(graph.claims, key=lambda c: (-c.confidence, c.start_ms))[:MAX_CLAIMS]
    return {
        "language": language,
        "writingStyle": resolve_style(graph, writing_style),
        "durationMs": graph.duration_ms,
        "chapters": [{"index": i, "title": title, "startMs": start, "endMs": end,
                      "excerpt": _excerpt(graph, start, end, budget)}
                     for i, (title, start, end) in enumerate(spans)],
        "claims": [{"id": c.id, "text": c.text, "startMs": c.start_ms, "confidence": round(c.confidence, 2)}
                   for c in sorted(strongest, key=lambda c: c.start_ms)],
        "searchIntents": [{"query": i.query, "relevance": round(i.relevance, 2)} for i in graph.intents[:MAX_INTENTS]],
        "topics": [t.name for t in graph.topics[:MAX_TOPICS]],
        "entities": [{"name": e.name, "type": e.type} for e in graph.entities[:MAX_ENTITIES]],
        "speakers": [s.name for s in graph.diarisation.speakers] if graph.diarisation.diarised else [],
    }


def article_messages(graph: ContentGraph, writing_style: str, language: str) -> list[dict]:
    """The Chat Completions ``messages``: the rules and the answer's shape, then the material as JSON."""
    material = article_material(graph, writing_style, language)
    system = SYSTEM_PROMPT.format(language=language, style=STYLE_GUIDANCE[material["writingStyle"]],
                                  shape=json.dumps(ANSWER_SHAPE, ensure_ascii=False, indent=1),
                                  sections=len(material["chapters"]))
    return [{"role": "system", "content": system},
            {"role": "user", "content": json.dumps(material, ensure_ascii=False)}]


_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*)\n```\Z", re.DOTALL)
M = TypeVar("M", bound=BaseModel)


def _problems(exc: ValidationError, limit: int = 3) -> str:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()[:limit]]
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def parse_structured(text: str, model: type[M], invalid: type[ValueError]) -> M:
    """A provider's answer as ``model``: the JSON object of the answer (a Markdown code fence around
    it is allowed), validated; else ``invalid`` saying what is wrong, in words a person reads."""
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise invalid(f"the answer is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise invalid(f"the answer is JSON but not an object ({type(data).__name__})")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(f"the answer does not have the article's structure: {_problems(exc)}") from None


def parse_answer(text: str) -> ArticleAnswer:
    """The answer as ``ArticleAnswer``, or ``InvalidProviderArticle`` saying what is wrong."""
    return parse_structured(text, ArticleAnswer, InvalidProviderArticle)


def article_from_answer(text: str, graph: ContentGraph, writing_style: str, language: str) -> Article:
    """The provider's answer checked against the graph, as an ``Article`` (same form as the offline one)."""
    answer = parse_answer(text)
    spans = section_spans(graph, language)
    if len(answer.sections) != len(spans):
        raise InvalidProviderArticle(f"the answer has {len(answer.sections)} section(s); the video has "
                                     f"{len(spans)} chapter(s) and needs one section each")
    claims = {c.id: c for c in graph.claims}
    unknown = [f.claim_id for f in answer.key_facts if f.claim_id not in claims]
    if unknown:
        raise InvalidProviderArticle(f"key facts name claims the video does not have: {', '.join(unknown[:5])}")
    return Article(
        title=answer.title, language=language, writing_style=resolve_style(graph, writing_style),
        requested_style=writing_style, introduction=[answer.introduction],
        sections=[Section(s.heading, start, end, [Paragraph([text]) for text in s.paragraphs])
                  for s, (_, start, end) in zip(answer.sections, spans, strict=True)],
        key_facts=[{"text": f.text, "startMs": claims[f.claim_id].start_ms, "claimId": f.claim_id}
                   for f in answer.key_facts],
        faq=[{"question": q.question, "answer": [q.answer], "startMs": None, "source": "provider"}
             for q in answer.faq],
        conclusion=[answer.conclusion], keywords_primary=primary_keywords(graph, language), labels=labels(language),
        on_screen=on_screen(graph))
