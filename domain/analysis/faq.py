"""The article's FAQ: the questions a video asks or answers, each with the transcript's passage that
answers it (``write_faq``). Written before the article's prose, which leaves those sentences to it: no
sentence is printed twice. A question asked in the video is answered by what follows it (the steps it
opens, or the sentences that take up its words); a topic query by the sentence of the chapter where the
topic is most said that defines it, or names it with most of that chapter's words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from domain.analysis.claims import Claim
from domain.analysis.graph import ContentGraph
from domain.analysis.language import Language
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import capitalise, fold, question_mark, quote, words
from domain.analysis.topics import Topic


class Writing(Protocol):
    """What the FAQ reads of the article being written: the sentences printed so far (``used``, which it
    adds its answers to), the claims by sentence, and the language's words."""

    used: set[int]
    language: str
    claims: dict[int, Claim]
    kit: Language


SENTENCES_PER_FAQ_ENTRY = 6  # a short video keeps sentences for its sections: one entry per 6 sentences


def write_faq(graph: ContentGraph, writer: Writing, language: str, limit: int = 5) -> list[dict[str, Any]]:
    """Up to ``limit`` questions (fewer for a short video: one per ``SENTENCES_PER_FAQ_ENTRY``
    sentences) with the passage that answers each, in the order of the intents.

    A question asked in the video is answered by the sentences right after it (up to two, by any
    speaker, before the next question) that share a content word with it or with what it is about,
    or by the steps that follow it at once (``_steps_after``);
    a topic query ("what is X", "how does X work") by the sentences of the chapter where X is most
    said: its definition first ("X is ..."), else the sentence that says X with the most of the
    chapter's other words. Every answer shares content words with its question, and no sentence
    answers twice or appears elsewhere in the prose."""
    sentences = graph.sentences
    limit = min(limit, max(1, len(sentences) // SENTENCES_PER_FAQ_ENTRY))
    # where each question was asked: a sentence marked as one, else one that reports it ("Maria asks how...")
    by_start = {s.start_ms: s for s in sorted(sentences, key=lambda s: s.is_question)}
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for intent in graph.intents:
        if len(entries) >= limit:
            break
        asked = by_start.get(intent.start_ms) if intent.source == "question" and intent.start_ms is not None else None
        if asked is not None:
            answer = _steps_after(asked, sentences, writer) or _answer_after(asked, sentences, writer)
            question = intent.query if intent.query.rstrip()[-1:] in "?？" else intent.query + question_mark(language)
        else:
            topic = next((t for t in graph.topics if t.key and t.key in fold(intent.query)), None)
            if topic is None:
                continue
            answer = _answer_about(topic, graph, writer)
            question = capitalise(intent.query) + question_mark(language)
        if not answer or fold(question) in seen:
            continue
        seen.add(fold(question))
        writer.used.update(s.index for s in answer)
        if asked is not None:
            writer.used.add(asked.index)
        entries.append({"question": question, "answer": [quote(s, language) for s in answer],
                        "startMs": answer[0].start_ms, "source": intent.source})
    return entries


ANSWER_LOOKAHEAD = 6  # sentences after a question where its answer is looked for


STEPS_IN_ANSWER = 3  # sentences of an answer given as steps


def _steps_after(asked: Sentence, sentences: Sequence[Sentence], writer: Writing) -> list[Sentence]:
    """When the sentence right after the question opens steps ("How do you choose the right
    installation? Start by measuring your yearly use. Then compare the roofs. An installer sizes the
    installation."), those steps are its answer: up to ``STEPS_IN_ANSWER`` sentences, before a
    question or an announced subject, when one of them shares a word with the question (else none)."""
    kit = language_of(writer.language)
    first = asked.index + 1
    if first >= len(sentences) or not kit.opens_steps(sentences[first].text):
        return []
    steps: list[Sentence] = []
    for s in sentences[first:first + STEPS_IN_ANSWER]:
        if s.is_question or s.index in writer.used or kit.social_re.search(s.text) or (steps and kit.announced(s.text)):
            break
        steps.append(s)
    asked_words = set(asked.tokens)
    return steps if any(asked_words & set(s.tokens) for s in steps) else []


def _answer_after(asked: Sentence, sentences: Sequence[Sentence], writer: Writing) -> list[Sentence]:
    """The sentences right after the question, before the next question or the next part (a
    sentence opening with a cue phrase: "next", "passons à"): the first that shares a word with
    it, and the one after that when it shares one too."""
    asked_words = set(asked.tokens)
    kit = language_of(writer.language)
    following: list[Sentence] = []
    for s in sentences[asked.index + 1:asked.index + 1 + ANSWER_LOOKAHEAD]:
        if s.is_question or (following and s.index != following[-1].index + 1):
            break
        if not following and kit.opens_with_cue(s.text):
            break  # the speaker moved on: what comes after answers something else
        if s.index in writer.used or len(words(s.text)) < 5 or kit.social_re.search(s.text):
            continue
        if not asked_words & set(s.tokens):
            if following:
                break
            continue
        following.append(s)
        if len(following) == 2:
            break
    return following


def _answer_about(topic: Topic, graph: ContentGraph, writer: Writing) -> list[Sentence]:
    """The sentence that answers a query about ``topic``: in the chapter where the topic is most
    said, its definition if one is given, else the one naming it with most of the chapter's words."""
    sentences = graph.sentences
    naming = [s for s in sentences if s.index not in writer.used and s.index in writer.claims
              and topic.key in fold(s.text) and not s.is_question and not writer.kit.social_re.search(s.text)
              and not writer.kit.instructs(s.text)]  # "Let the dough rest..." says what to do, not what dough is
    if not naming:
        return []
    spans = [(c.start_ms, c.end_ms) for c in graph.chapters] or [(0, graph.duration_ms)]

    def chapter_of(sentence: Sentence) -> int:
        return next((k for k, (a, b) in enumerate(spans) if a <= sentence.start_ms // 1000 * 1000 < b), 0)

    per_chapter: dict[int, int] = {}
    for s in naming:
        per_chapter[chapter_of(s)] = per_chapter.get(chapter_of(s), 0) + 1
    home = max(per_chapter, key=lambda k: (per_chapter[k], -k))
    home_sentences = [s for s in sentences if chapter_of(s) == home]
    vocabulary: dict[str, int] = {}
    for s in home_sentences:
        for token in s.tokens:
            vocabulary[token] = vocabulary.get(token, 0) + 1
    candidates = [s for s in naming if chapter_of(s) == home]

    def strength(s: Sentence) -> tuple[Any, ...]:
        claim = writer.claims.get(s.index)
        defines = bool(claim and "definition" in claim.kinds and fold(s.text).find(topic.key) < 40)
        shared = sum(min(vocabulary.get(t, 0), 5) for t in set(s.tokens) if t not in topic.words)
        return (not defines, -shared, s.index)

    return [min(candidates, key=strength)]
