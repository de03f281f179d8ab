"""The material a provider writes an article from, and the reading of a provider's JSON answer (pure).

``article_material`` is what the premium path's article call sends (``domain.analysis.premium``,
``premium_prompts.article_call``): bounded, whatever the length of the video: the strongest claims
(``MAX_CLAIMS``), the chapters with an excerpt of their transcript (``EXCERPT_CHARS`` in all,
shared between chapters), the first search intents, topics, entities and the speakers' names.

``json_object`` reads a provider's answer as one JSON object (one surrounding Markdown code fence
is tolerated) and ``parse_structured`` holds it to a pydantic model (the translation's answer).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from domain.analysis.article import (
    resolve_style,
    section_spans,
    sentences_between,
)
from domain.analysis.graph import ContentGraph

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


def article_material(graph: ContentGraph, writing_style: str, language: str) -> dict[str, Any]:
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


_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*)\n```\Z", re.DOTALL)
M = TypeVar("M", bound=BaseModel)


def _problems(exc: ValidationError, limit: int = 3) -> str:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()[:limit]]
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def json_object(text: str, invalid: type[ValueError]) -> dict[str, Any]:
    """The JSON object of a provider's answer (a Markdown code fence around it is allowed); else
    ``invalid`` saying what is wrong, in words a person reads."""
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body, strict=False)  # a line break inside a string is the checks' to judge, not JSON's
    except json.JSONDecodeError as exc:
        raise invalid(f"the answer is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise invalid(f"the answer is JSON but not an object ({type(data).__name__})")
    return data


def parse_structured(text: str, model: type[M], invalid: type[ValueError]) -> M:
    """A provider's answer as ``model``: its JSON object (``json_object``), validated; else ``invalid``."""
    data = json_object(text, invalid)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(f"the answer does not have the structure asked for: {_problems(exc)}") from None
