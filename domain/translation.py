"""The pure half of article translation: the prompt, and the answer checked into a translated article.

An OpenAI-compatible provider (``infra/llm.py``) translates the structured article (title,
introduction, sections, key facts, FAQ, conclusion, keywords). This module never talks to it:
``translation_messages`` builds the Chat Completions ``messages`` from the stored content, and
``translated_content`` turns the provider's text into the content of the translated article, or
raises ``InvalidTranslation``. The job stores a whole translation or none, so the answer is held
to the source's shape exactly:

- one JSON object (one surrounding Markdown code fence is tolerated), matching ``TranslationAnswer``:
  every member, no other, no empty text, bounded lengths;
- as many sections as the source, each with as many paragraphs; as many key facts, FAQ entries and
  keywords: a translation that drops or adds a part is refused, never patched;
- what is not text is the source's, never the provider's: each section's time range, each key
  fact's claim and time, each paragraph's speaker and role.

Languages: ``TRANSLATION_LANGUAGES`` (fr, the default language of analyses, and en, de, es, it,
pt, nl). The material is the article itself, bounded by ``MAX_SOURCE_CHARS``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from domain.analysis.premium_prompts import object_schema, string_schema, tuple_schema
from domain.analysis.provider_article import parse_structured
from domain.analysis.scoring_documents import split_text
from domain.analysis.text import words
from domain.languages import CODES, DEFAULT_LANGUAGE, table

TRANSLATION_LANGUAGES = (DEFAULT_LANGUAGE, *(code for code in CODES if code != DEFAULT_LANGUAGE))  # the default first
LANGUAGE_NAMES = table("name")
# What a premium analysis adds to its article that a translation does not carry over: the summary
# and the platform descriptions are in the source's language, and the record of what the model wrote
# describes the source, not the translation.
PREMIUM_ONLY = ("summary", "descriptions", "written")
MAX_SOURCE_CHARS = 100_000  # far above any article the engines write; a bound on what one request sends

SYSTEM_PROMPT = """You translate articles from {source} into {target}.
Translate every text faithfully: keep every fact, figure, name, date and quotation; add nothing, \
drop nothing, do not summarise. Keep proper names as they are.
Answer with one JSON object and nothing else (no Markdown, no code fence, no comment), with exactly \
the structure of the article you are given: the same members, the same number of sections, of \
paragraphs in each section, of key facts, of FAQ entries and of keywords, in the same order, each \
text translated in place. Every text is non-empty."""

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TranslatedSection(_Strict):
    heading: Annotated[Text, StringConstraints(max_length=300)]
    paragraphs: list[Annotated[Text, StringConstraints(max_length=8000)]] = Field(max_length=50)


class TranslatedFaq(_Strict):
    question: Annotated[Text, StringConstraints(max_length=500)]
    answer: Annotated[Text, StringConstraints(max_length=5000)]


class TranslationAnswer(_Strict):
    """What the provider must answer: the material's shape, texts translated."""

    title: Annotated[Text, StringConstraints(max_length=300)]
    introduction: Annotated[str, StringConstraints(strip_whitespace=True, max_length=8000)]
    sections: list[TranslatedSection] = Field(max_length=100)
    key_facts: list[Annotated[Text, StringConstraints(max_length=2000)]] = Field(max_length=20)
    faq: list[TranslatedFaq] = Field(max_length=20)
    conclusion: Annotated[str, StringConstraints(strip_whitespace=True, max_length=8000)]
    keywords: list[Annotated[Text, StringConstraints(max_length=200)]] = Field(max_length=20)


class InvalidTranslation(ValueError):
    """The provider's answer is not a translation of the article's structure (the message says why)."""


def _paragraph_text(paragraph: dict[str, Any]) -> str:
    return (paragraph.get("text") or " ".join(paragraph.get("sentences") or [])).strip()


def translation_material(content: dict[str, Any], keywords: list[str]) -> dict[str, Any]:
    """The texts to translate, in the structure the answer must keep."""
    return {
        "title": content.get("title") or "",
        "introduction": content.get("introduction") or "",
        "sections": [{"heading": s.get("heading") or "",
                      "paragraphs": [_paragraph_text(p) for p in s.get("paragraphs") or [] if _paragraph_text(p)]}
                     for s in content.get("sections") or []],
        "key_facts": [f.get("text") or "" for f in content.get("key_facts") or []],
        "faq": [{"question": f.get("question") or "", "answer": f.get("answer") or ""}
                for f in content.get("faq") or []],
        "conclusion": content.get("conclusion") or "",
        "keywords": list(keywords),
    }


def material_words(material: dict[str, Any]) -> int:
    """Words of the material: what a translation is priced by."""
    return len(words(json.dumps(material, ensure_ascii=False)))


def translation_messages(content: dict[str, Any], keywords: list[str], source_language: str,
                         target_language: str) -> list[dict[str, Any]]:
    """The Chat Completions ``messages``: the rules, then the article to translate as JSON."""
    material = translation_material(content, keywords)
    text = json.dumps(material, ensure_ascii=False)
    if len(text) > MAX_SOURCE_CHARS:
        raise InvalidTranslation(f"the article is {len(text)} characters long; one translation takes at most "
                                 f"{MAX_SOURCE_CHARS}")
    system = SYSTEM_PROMPT.format(source=LANGUAGE_NAMES.get(source_language, source_language),
                                  target=LANGUAGE_NAMES.get(target_language, target_language))
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def translation_schema(content: dict[str, Any], keywords: list[str]) -> dict[str, Any]:
    """The JSON Schema of the answer: the source's shape exactly (as many sections, paragraphs in
    each, key facts, FAQ entries and keywords), so a server that follows a schema answers in it."""
    material = translation_material(content, keywords)
    text, optional = string_schema(), {"type": "string"}
    return object_schema({
        "title": text,
        "introduction": text if material["introduction"].strip() else optional,
        "sections": tuple_schema([object_schema({"heading": text,
                                                 "paragraphs": tuple_schema([text] * len(s["paragraphs"]))})
                                  for s in material["sections"]]),
        "key_facts": tuple_schema([text] * len(material["key_facts"])),
        "faq": tuple_schema([object_schema({"question": text, "answer": text})] * len(material["faq"])),
        "conclusion": text if material["conclusion"].strip() else optional,
        "keywords": tuple_schema([text] * len(material["keywords"])),
    })


def answer_tokens(messages: list[dict[str, Any]]) -> int:
    """A bound on the translation's tokens: about what the article takes, twice over (a token is
    three to four characters of Latin text; a translation is seldom half as long again)."""
    return min(32_000, 500 + len(messages[-1]["content"]) // 2)


def parse_translation(text: str) -> TranslationAnswer:
    """The answer as ``TranslationAnswer``, or ``InvalidTranslation`` saying what is wrong."""
    return parse_structured(text, TranslationAnswer, InvalidTranslation)


def _same_count(what: str, got: int, want: int) -> None:
    if got != want:
        raise InvalidTranslation(f"the answer has {got} {what}; the article has {want}")


def translated_content(text: str, content: dict[str, Any], keywords: list[str],
                       target_language: str) -> tuple[dict[str, Any], list[str]]:
    """The translated article's content (``Article.to_dict()``'s shape) and keywords, from the
    provider's ``text`` checked against the source ``content``."""
    answer = parse_translation(text)
    material = translation_material(content, keywords)
    _same_count("sections", len(answer.sections), len(material["sections"]))
    for k, (got, want) in enumerate(zip(answer.sections, material["sections"], strict=True), start=1):
        _same_count(f"paragraphs in section {k}", len(got.paragraphs), len(want["paragraphs"]))
    _same_count("key facts", len(answer.key_facts), len(material["key_facts"]))
    _same_count("FAQ entries", len(answer.faq), len(material["faq"]))
    _same_count("keywords", len(answer.keywords), len(material["keywords"]))
    if bool(answer.introduction) != bool(material["introduction"].strip()):
        raise InvalidTranslation("the answer's introduction does not match the article's")
    if bool(answer.conclusion) != bool(material["conclusion"].strip()):
        raise InvalidTranslation("the answer's conclusion does not match the article's")

    sections = []
    for source, translated in zip(content.get("sections") or [], answer.sections, strict=True):
        kept = [p for p in source.get("paragraphs") or [] if _paragraph_text(p)]
        sections.append({
            "heading": translated.heading, "startMs": source.get("startMs"), "endMs": source.get("endMs"),
            "paragraphs": [{"text": text, "sentences": split_text(text), "speaker": p.get("speaker"),
                            "role": p.get("role") or "text"} for p, text in zip(kept, translated.paragraphs,
                                                                                   strict=True)]})
    key_facts = [{**fact, "text": text} for fact, text in zip(content.get("key_facts") or [], answer.key_facts,
                                                                strict=True)]
    faq = [{**entry, "question": t.question, "answer": t.answer}
           for entry, t in zip(content.get("faq") or [], answer.faq, strict=True)]
    carried = {k: v for k, v in content.items() if k not in PREMIUM_ONLY}
    article: dict[str, Any] = {
        **carried, "title": answer.title, "language": target_language, "introduction": answer.introduction,
        "sections": sections, "key_facts": key_facts, "faq": faq, "conclusion": answer.conclusion,
        "keywords_primary": list(answer.keywords), "engine": "provider",
    }
    body = [answer.introduction, *(p for s in answer.sections for p in s.paragraphs), *answer.key_facts,
            *(f.answer for f in answer.faq), answer.conclusion]
    article["word_count"] = sum(len(words(t)) for t in body)
    return article, list(answer.keywords)
