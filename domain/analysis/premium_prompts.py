"""What the premium path asks a language model, and the JSON Schema each answer must follow (pure).

Three calls, each one Chat Completions request (``infra.llm``), each with its own material and its
own schema, so that a call that goes wrong costs only its parts (``domain.analysis.premium``):

====================  ==============================  ============================================
call (operation)      parts it writes                 material
====================  ==============================  ============================================
``analysis.enrich``   title, summary, chapter titles   the chapters with an excerpt each and the
                      and starts                       sentences near each boundary, the strongest
                                                       claims, topics and entities
``article.write``     article, FAQ                     ``provider_article.article_material``: the
                                                       chapters as decided, excerpts, claims, search
                                                       intents
``descriptions.       the platform descriptions       the title and summary as decided, the
complete``            (short and long)                 chapter titles, the strongest claims
====================  ==============================  ============================================

Each schema is as tight as the material allows, so a server that constrains its output to it (a
grammar, as llama.cpp's server builds from a JSON Schema) cannot answer outside it: the number of
chapters and sections is fixed (``prefixItems``), a chapter's start is one of the sentence starts
offered for it (``enum``), a key fact names one of the claims sent (``enum``). The schema does not
replace the checks: a server that only follows the prompt, or ignores the schema, is held to the
same rules when the answer is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from domain.analysis.article import sentences_between
from domain.analysis.graph import ContentGraph
from domain.analysis.premium_checks import MOVE_WINDOW_MS
from domain.languages import table

LANGUAGE_NAMES: dict[str, str] = table("name")
OUTLINE_EXCERPT_CHARS = 6_000  # the transcript the outline call reads, shared between chapters
OUTLINE_CLAIMS, OUTLINE_TOPICS, OUTLINE_ENTITIES = 25, 10, 12
BOUNDARY_OPTIONS, OPTION_CHARS = 4, 100  # sentence starts offered around a chapter's boundary, and of their sentence
TITLE_CHARS, SUMMARY_CHARS, CHAPTER_TITLE_CHARS = 100, 600, 80
SHORT_CHARS, LONG_CHARS = 220, 1500
DESCRIPTION_CLAIMS = 10


@dataclass(frozen=True)
class Call:
    """One request to the provider: what it is for, what it says, the schema its answer follows."""

    operation: str  # LlmUsageRecorded.operation
    what: str  # what it writes, in a message a person reads
    messages: list[dict[str, Any]]
    schema_name: str
    schema: dict[str, Any]
    max_tokens: int


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


# The longest ``maxLength`` a schema states. A server that turns the schema into a grammar spells a
# bound out character by character: llama-cpp-python's refuses a grammar with a few 1,500-character
# paragraphs ("exceeds sane defaults"). Longer texts are bounded by the checks and ``max_tokens``.
SCHEMA_MAX_LENGTH = 600


def string_schema(max_chars: int | None = None) -> dict[str, Any]:
    """A non-empty string, of at most ``max_chars`` when that is short enough to state (above)."""
    bound = {"maxLength": max_chars} if max_chars and max_chars <= SCHEMA_MAX_LENGTH else {}
    return {"type": "string", "minLength": 1, **bound}


def object_schema(properties: dict[str, Any]) -> dict[str, Any]:
    """An object with exactly these members, every one required."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def tuple_schema(items: list[dict[str, Any]]) -> dict[str, Any]:
    """An array of exactly these items, in this order."""
    return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}


# ------------------------------------------------------------------------------------ outline

OUTLINE_PROMPT = """You name and summarise a video for the people who will read about it, from the \
analysis of its transcript. Use only what the material says: invent no fact, figure, name or \
quotation. Write in {language}.
Answer with one JSON object and nothing else:
- "title": the video's subject, as an editor would title it: 3 to 12 words, at most {title} characters, \
no quotation marks.
- "summary": 2 or 3 sentences saying what the video explains, at most {summary} characters.
- "chapters": exactly {count} objects, one per chapter of the material, in its order. "title": what \
the chapter is about, in 2 to 7 words (a phrase or a question the chapter answers), different from \
every other chapter's title. "startMs": where the chapter's subject begins: its "startMs" as given, \
or one of its "startOptions" when the subject clearly begins at that sentence."""


def boundary_options(graph: ContentGraph) -> list[list[dict[str, Any]]]:
    """For each chapter, the sentence starts (whole seconds) within ``MOVE_WINDOW_MS`` of its start
    where the model may move it, nearest first, with their sentence; none for the first chapter."""
    out: list[list[dict[str, Any]]] = []
    for k, chapter in enumerate(graph.chapters):
        if k == 0:
            out.append([])
            continue
        near = {}
        for s in graph.sentences:
            at = s.start_ms // 1000 * 1000
            if 0 < abs(at - chapter.start_ms) <= MOVE_WINDOW_MS and at not in near:
                near[at] = s.text[:OPTION_CHARS]
        ordered = sorted(near.items(), key=lambda item: abs(item[0] - chapter.start_ms))[:BOUNDARY_OPTIONS]
        out.append([{"startMs": at, "sentence": text} for at, text in sorted(ordered)])
    return out


def _excerpt(graph: ContentGraph, start_ms: int, end_ms: int, budget: int) -> str:
    out, used = [], 0
    for sentence in sentences_between(graph.sentences, start_ms, end_ms):
        if used + len(sentence.text) > budget:
            break
        out.append(sentence.text)
        used += len(sentence.text) + 1
    return " ".join(out)


def outline_call(graph: ContentGraph, language: str, offline_title: str) -> Call:
    chapters = graph.chapters
    options = boundary_options(graph)
    budget = OUTLINE_EXCERPT_CHARS // max(1, len(chapters))
    strongest = sorted(graph.claims, key=lambda c: (-c.confidence, c.start_ms))[:OUTLINE_CLAIMS]
    material = {
        "language": language, "durationMs": graph.duration_ms, "workingTitle": offline_title,
        "chapters": [{"index": k, "startMs": c.start_ms, "workingTitle": c.title, "startOptions": options[k],
                      "excerpt": _excerpt(graph, c.start_ms, c.end_ms, budget)} for k, c in enumerate(chapters)],
        "claims": [c.text for c in sorted(strongest, key=lambda c: c.start_ms)],
        "topics": [t.name for t in graph.topics[:OUTLINE_TOPICS]],
        "entities": [e.name for e in graph.entities[:OUTLINE_ENTITIES]],
    }
    chapter_items = [object_schema({"startMs": {"enum": [c.start_ms, *(o["startMs"] for o in options[k])]},
                              "title": string_schema(CHAPTER_TITLE_CHARS)}) for k, c in enumerate(chapters)]
    schema = object_schema({"title": string_schema(TITLE_CHARS), "summary": string_schema(SUMMARY_CHARS),
                      "chapters": tuple_schema(chapter_items)})
    system = OUTLINE_PROMPT.format(language=language_name(language), title=TITLE_CHARS, summary=SUMMARY_CHARS,
                                   count=len(chapters))
    return Call("analysis.enrich", "the title, summary and chapters", _messages(system, material), "video_outline",
                schema, max_tokens=250 + 60 * len(chapters))


def _messages(system: str, material: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": system},
            {"role": "user", "content": json.dumps(material, ensure_ascii=False)}]


# ------------------------------------------------------------------------------------ article

ARTICLE_PROMPT = """You write an article for answer engines and generative engines from the analysis \
of a video. Use only what the material says: invent no fact, figure, name, date or quotation; a \
quotation (between quotation marks) must be the speaker's exact words. Write in {language}, in this \
style: {style}.
Answer with one JSON object and nothing else:
- "introduction": one paragraph.
- "sections": exactly {sections} section(s), one per chapter of the material, in its order, each \
with a "heading" and 1 to 6 "paragraphs".
- "key_facts": up to 7 facts, each tied to one claim of the material by its "claim_id", stated in \
one sentence with no figure the claim does not give.
- "faq": up to 5 questions a reader would ask (use the search intents), each with a direct answer \
from the material.
- "conclusion": one paragraph."""

ARTICLE_PARAGRAPH_CHARS, HEADING_CHARS, FACT_CHARS = 1500, 120, 400
QUESTION_CHARS, ANSWER_CHARS = 200, 800
MAX_FACTS, MAX_FAQ, MAX_PARAGRAPHS = 7, 5, 6


def article_call(material: dict[str, Any], style_guidance: str, language: str) -> Call:
    sections = len(material["chapters"])
    claim_ids = [c["id"] for c in material["claims"]]
    section = object_schema({"heading": string_schema(HEADING_CHARS),
                       "paragraphs": {"type": "array", "items": string_schema(ARTICLE_PARAGRAPH_CHARS), "minItems": 1,
                                      "maxItems": MAX_PARAGRAPHS}})
    fact = object_schema({"claim_id": {"enum": claim_ids} if claim_ids else {"type": "string"},
                    "text": string_schema(FACT_CHARS)})
    schema = object_schema({
        "introduction": string_schema(ARTICLE_PARAGRAPH_CHARS),
        "sections": tuple_schema([section] * sections),
        "key_facts": {"type": "array", "items": fact, "maxItems": MAX_FACTS if claim_ids else 0},
        "faq": {"type": "array", "items": object_schema({"question": string_schema(QUESTION_CHARS),
                                                   "answer": string_schema(ANSWER_CHARS)}), "maxItems": MAX_FAQ},
        "conclusion": string_schema(ARTICLE_PARAGRAPH_CHARS),
    })
    system = ARTICLE_PROMPT.format(language=language_name(language), style=style_guidance, sections=sections)
    return Call("article.write", "the article", _messages(system, material), "article", schema,
                max_tokens=min(8000, 500 + 300 * sections))


# ------------------------------------------------------------------------------------ descriptions

DESCRIPTIONS_PROMPT = """You write the description that goes under a video on video sites and social \
networks, from its title, summary, chapters and claims. Use only what the material says: invent no \
fact, figure, name or quotation. Write in {language}. No hashtags, no links, no emoji.
Answer with one JSON object and nothing else:
- "short": one or two sentences for a short post, at most {short} characters.
- "long": a description of one to three short paragraphs, at most {long} characters, that says what \
the viewer will learn."""


def descriptions_call(title: str, summary: str, graph: ContentGraph, language: str) -> Call:
    strongest = sorted(graph.claims, key=lambda c: (-c.confidence, c.start_ms))[:DESCRIPTION_CLAIMS]
    material = {"language": language, "title": title, "summary": summary,
                "chapters": [c.title for c in graph.chapters],
                "claims": [c.text for c in sorted(strongest, key=lambda c: c.start_ms)]}
    schema = object_schema({"short": string_schema(SHORT_CHARS), "long": string_schema(LONG_CHARS)})
    system = DESCRIPTIONS_PROMPT.format(language=language_name(language), short=SHORT_CHARS, long=LONG_CHARS)
    return Call("descriptions.complete", "the platform descriptions", _messages(system, material), "descriptions",
                schema, max_tokens=700)
