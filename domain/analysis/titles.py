"""Chapter titles that name each chapter's subject: the question it opens with, the subject it
announces, or its best phrase by a ranking fitted on human chapters (``title_chapters``); never a
single common word, never another chapter's title. The rules a title follows are in ``phrases``."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from domain.analysis.chapters import Chapter, format_timestamp
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.phrases import (
    HOW_TO_RE,
    QUESTION_TITLE_WORDS,
    PhraseReader,
    PhraseTable,
    heading,
    publishable,
)
from domain.analysis.text import (
    content_tokens,
    definite_article,
    fold,
    impersonal,
    labels,
    norm_token,
    read_out_question,
    strip_leading_fillers,
    words,
)
from domain.languages import table as language_table

# How a candidate phrase is weighed as a chapter's title: a linear score of what is known of it in the
# chapter (``TITLE_FEATURES``). The weights were fitted by least squares on the development set's human
# chapters (each phrase's ROUGE-L against the human title, within each chapter), and measured held out,
# five folds in turn (``python -m tests.benchmarks fit-titles``; docs/benchmarks.md).
TITLE_FEATURES = ("tfidf", "two_words", "three_words", "rarity", "lead")
TITLE_WEIGHTS = {"tfidf": 0.0044, "two_words": 0.0124, "three_words": 0.0284, "rarity": 0.0192, "lead": 0.0396}


@dataclass(slots=True)
class TitleContext:
    """What the titles of one talk's chapters are chosen from: in how many chapters each phrase is
    said, and the titles given so far."""

    sentences: Sequence[Sentence]
    reader: PhraseReader
    chapters: int
    spread: Counter[tuple[str, ...]] = field(default_factory=Counter)
    used: set[str] = field(default_factory=set)  # titles given, folded without spaces, and their words' stems
    weights: dict[str, float] = field(default_factory=lambda: dict(TITLE_WEIGHTS))
    subject: str | None = None  # the subject the video names for itself (``video_subject_title``)
    aspect_tail: str | None = None  # what follows an aspect of that subject: "of home batteries" (``aspect_tail``)

    def free(self, title: str) -> bool:
        """No chapter has this title yet, nor one of the same words ("Post css" and "PostCSS")."""
        return _title_key(title, self.reader) not in self.used and fold(title).replace(" ", "") not in self.used

    def take(self, title: str) -> str:
        self.used.add(_title_key(title, self.reader))
        self.used.add(fold(title).replace(" ", ""))
        return title


def title_chapters(chapters: list[Chapter], sentences: Sequence[Sentence], reader: PhraseReader,
                   weights: dict[str, float] | None = None) -> None:
    """Each chapter's title (see ``chapter_title``), unique across the chapters; the first chapter of a
    video that names its own subject in its first sentences is titled by it."""
    tables = [reader.table(sentences[c.first_sentence:c.last_sentence + 1]) if sentences else None
              for c in chapters]
    context = TitleContext(sentences, reader, len(chapters), weights=dict(weights or TITLE_WEIGHTS))
    for table in tables:
        if table is not None:
            context.spread.update(table.counts.keys())
    context.subject = video_subject_title(sentences, reader.kit.code) if sentences else None
    context.aspect_tail = aspect_tail(context.subject, sentences, reader)
    for number, (chapter, table) in enumerate(zip(chapters, tables, strict=True)):
        subject = video_subject_title(sentences[:chapter.last_sentence + 1], reader.kit.code) if number == 0 else None
        if subject is not None and (reader.is_fragment(subject) or not reader.names_a_subject(subject)):
            subject = None
        chapter.title = context.take(subject or chapter_title(chapter, table, context))


VIDEO_SUBJECT_SENTENCES = 2  # where a video names its own subject ("Welcome to this video about ...")


def video_subject_title(sentences: Sequence[Sentence], code: str | None, most_words: int | None = None) -> str | None:
    """The subject the video names for itself in its first sentences, as a heading, when it makes a
    title ("Welcome to this video about heat pumps" -> "Heat pumps"; ``Language.video_subject``):
    the article's title, and its introduction's."""
    kit = language_of(code)
    for sentence in sentences[:VIDEO_SUBJECT_SENTENCES]:
        subject = kit.video_subject(sentence.text)
        if subject is not None and publishable(heading(subject), code, most_words):
            return heading(subject)
    return None


def _title_key(title: str, reader: PhraseReader) -> str:
    """What makes two titles the same: "Post css" and "PostCSS", "Isolée" and "Isolation"."""
    return " ".join(sorted(reader.stem(norm_token(w)) for w in words(title))).replace(" ", "") or fold(title)


def chapter_title(chapter: Chapter, table: PhraseTable | None, context: TitleContext) -> str:
    """The question the chapter opens with, when it names the chapter's subject; else the subject
    its opening announces by name ("Next, let's talk about battery storage"); else its best phrase
    (``ranked_phrases``); always a publishable heading that names a subject (no single common word:
    "Dots", "Columns"), unique in the talk, else the label of its part of the talk."""
    reader = context.reader
    if table is None:
        return _fallback_title(chapter, reader)
    announced, at = _announced_subject(chapter, context.sentences, table, reader, context.subject,
                                       context.aspect_tail)
    if announced is not None and not context.free(announced):
        announced = None
    # what the chapter opens with: a question asked after its own announcement ("Let's first talk about the
    # bin. [...] Then, what can go in the compost?") opens a part that the boundaries did not set apart
    question = _opening_question(chapter, context.sentences, table, reader,
                                 at + 1 if announced is not None and at >= 0 else OPENING_SENTENCES)
    if question and context.free(question):
        return question
    if announced is not None:
        return announced
    for _, key in ranked_phrases(chapter, table, context)[:40]:
        if reader.is_clause(table.tokens[key], table.counts[key]):
            continue
        title = heading(reader.plural_head(reader.label(table.surfaces[key]), table.surfaces[key]))
        if reader.ends_on_a_verb_form(tuple(norm_token(w) for w in words(title)), table.counts[key]):
            continue  # as shown: one key holds "uniform distribution" and "uniformly distributed"
        if context.free(title) and reader.publishable(title) and not reader.is_fragment(title) and (
                reader.names_a_subject(title)):
            return title
    return _fallback_title(chapter, reader)


def title_features(chapter: Chapter, table: PhraseTable, context: TitleContext) -> dict[tuple[str, ...], list[float]]:
    """Each candidate phrase of the chapter that may name a subject, with its ``TITLE_FEATURES``: its
    tf-idf against the other chapters (sentences saying it here x log(1 + chapters / chapters saying
    it), a phrase twice a word), whether it is of two words or three, how rare its rarest word is in
    the language (a share of the rarest), and whether the chapter's first two sentences say it (where
    a speaker names what comes). Measured and left out, held out on the development set: the count and
    the inverse frequency apart, a phrase of frequent words only, the first four sentences, where it is
    first said, a name, the share of the talk's mentions said here (docs/benchmarks.md)."""
    reader, sentences = context.reader, context.sentences
    lead = set(reader.table(sentences[chapter.first_sentence:min(chapter.last_sentence + 1,
                                                                  chapter.first_sentence + LEAD_SENTENCES)]).counts)
    rows = {}
    for key, count in table.counts.items():
        tokens = table.tokens[key]
        if not reader.describes(tokens):
            continue
        idf = math.log(1 + context.chapters / context.spread[key])
        rows[key] = [count * idf * (2.0 if len(key) > 1 else 1.0), float(len(key) == 2), float(len(key) == 3),
                     reader.rarity(tokens) / RARITY_SCALE, float(key in lead)]
    return rows


def ranked_phrases(chapter: Chapter, table: PhraseTable, context: TitleContext) -> list[tuple[float, tuple[str, ...]]]:
    """The chapter's candidate phrases, best first: the weighted sum of their ``title_features``; of two
    that weigh the same (a short chapter says each phrase once), the one of rarer words first."""
    weights = [context.weights.get(name, 0.0) for name in TITLE_FEATURES]
    scored = []
    for key, row in title_features(chapter, table, context).items():
        value = sum(w * x for w, x in zip(weights, row, strict=True))
        scored.append((-round(value, 9), -sum(context.reader.kit.rarity(t) for t in table.tokens[key]), key))
    scored.sort()
    return [(-value, key) for value, _, key in scored]


RARITY_SCALE = 3.5  # the rarest a word is (``language.RARITY_RANGE``): rarity as a share of it
LEAD_SENTENCES = 2  # a chapter's lead: where a speaker names what comes ("let's turn to continuous distributions")
OPENING_SENTENCES = 5


def _opening_question(chapter: Chapter, sentences: Sequence[Sentence], table: PhraseTable,
                      reader: PhraseReader, reach: int = OPENING_SENTENCES) -> str | None:
    """A question among the chapter's first sentences that is a publishable title and names a
    subject: one of the chapter's recurring words, or a word rare in the language said there once
    ("What happens inside a multilayer perceptron?", "What is an abstract group?"); a question put
    to a generic "you" as its heading ("How to choose the right installation")."""
    recurring = {t for key, count in table.counts.items() if count >= 2 for t in table.tokens[key]}
    for sentence in sentences[chapter.first_sentence:min(chapter.last_sentence + 1, chapter.first_sentence + reach)]:
        read_out = read_out_question(sentence.text, reader.kit.code)  # "Adam asks what makes...", unmarked
        if read_out is None and (not sentence.is_question or TAG_QUESTION_RE.search(sentence.text)):
            continue
        question = read_out or heading(strip_leading_fillers(sentence.text, reader.kit.code))
        if not reader.publishable(question):
            question = impersonal(question, reader.kit.code) or question
        tokens = content_tokens(question, reader.kit.code) if read_out else sentence.tokens
        names_subject = any(t in recurring or not reader.kit.is_frequent(t) for t in tokens)
        if len(words(question)) >= 3 and reader.publishable(question) and names_subject:
            return question
    return None


ANNOUNCING_SENTENCES = 2  # the boundary falls on the announcement, or one sentence off (either way)


def _announced_subject(chapter: Chapter, sentences: Sequence[Sentence], table: PhraseTable, reader: PhraseReader,
                       video_subject: str | None = None, tail: str | None = None) -> tuple[str | None, int]:
    """The subject the chapter's first sentences (or the sentence just before it, when the boundary
    could not fall on the announcement: a chapter of a short video is at least 10 s) announce by
    name ("Next, let's talk about battery storage" -> "Battery storage"; ``Language.announced``),
    when it is a publishable heading and the chapter says one of its content words again (not a
    figure of speech: "let's dive into the meat of the lesson"). One common word announced ("Let's
    talk about cost") names no subject alone: of a video that names its own ("a talk about home
    batteries"), it is that subject's aspect ("Cost of home batteries"; ``Language.aspect_title``),
    said again or not (the video's subject is). With it, where it is said: the position of its sentence in
    the chapter (-1: the sentence before it)."""
    recurring = {key[0] for key, count in table.counts.items() if len(key) == 1 and count >= 2}
    first = chapter.first_sentence
    own = sentences[first:min(chapter.last_sentence + 1, first + ANNOUNCING_SENTENCES)]
    for at, sentence in [*enumerate(own), *((-1, s) for s in sentences[max(0, first - 1):first])]:
        subject = reader.kit.announced(sentence.text)
        if not subject:
            continue
        title = heading(subject)
        if not reader.publishable(title):
            continue
        if reader.names_a_subject(title):
            if any(reader.stem(norm_token(w)) in recurring for w in words(title)):
                return title, at
            continue
        aspect = _aspect_of(title, video_subject, tail, reader)  # the video's subject is said again, not the word
        if aspect is not None:
            return aspect, at
    return None, 0


ASPECT_TITLES = language_table("aspect_title")
ASPECT_ARTICLES = language_table("aspect_articles")


def _aspect_of(word: str, video_subject: str | None, tail: str | None, reader: PhraseReader) -> str | None:
    """"Cost" of a video about home batteries: "Cost of home batteries" (``tail``: ``aspect_tail``), when
    the language writes it and the subject is not the word itself."""
    if tail is None or video_subject is None or reader.stem(norm_token(word)) in {
            reader.stem(norm_token(w)) for w in words(video_subject)}:
        return None  # "Battery" in a video about home batteries: the subject itself
    title = heading(f"{word} {tail}")
    return title if reader.publishable(title) and len(words(title)) <= QUESTION_TITLE_WORDS else None


def aspect_tail(video_subject: str | None, sentences: Sequence[Sentence], reader: PhraseReader) -> str | None:
    """What follows an aspect of the video's subject in a title: "of home batteries" (``Language.aspect_title``),
    "des pompes à chaleur", "de l'isolation" (``Language.aspect_articles``: the article the speakers say before
    the subject); None when the language has neither, or they never say the subject with an article."""
    if video_subject is None or HOW_TO_RE.match(video_subject):
        return None  # "How to bake a sourdough bread" names a task, which has no aspects
    code = reader.kit.code
    shown = video_subject if reader.names_a_subject(video_subject.split(" ")[0]) else (
        video_subject[:1].lower() + video_subject[1:])
    if code in ASPECT_TITLES:
        return str(ASPECT_TITLES[code]).format(subject=shown)
    joins = ASPECT_ARTICLES.get(code)
    article = definite_article(video_subject, [fold(s.text) for s in sentences], code) if joins else None
    if joins is None or article not in joins:
        return None
    join = joins[article]
    return f"{join}{shown}" if join.endswith("'") else f"{join} {shown}"


TAG_QUESTION_RE = re.compile(
    r"n['’]est-ce pas|\bright\s*\?|\bisn['’]t it|\bdon['’]t you think|\bnicht wahr|\boder\s*\?|\bverdad\s*\?|"
    r"\bno\s*\?|\bvero\s*\?|\bnão é|\bnè\s*\?|\btoch\s*\?|\bhein\s*\?|\bokay\s*\?|\bd['’]accord\s*\?", re.IGNORECASE)


def _fallback_title(chapter: Chapter, reader: PhraseReader) -> str:
    """A chapter with no phrase of its own: the label of its part of the talk and its time."""
    label = labels(reader.kit.code)
    if chapter.start_ms == 0:
        return label["introduction"]
    return f"{label['development'].capitalize()} {format_timestamp(chapter.start_ms)}"
