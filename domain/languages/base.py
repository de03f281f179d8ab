"""What the service knows of one language, as one value (``Language``), and the assistant's way of
speaking it (``AssistantWords``, for the languages the assistant answers in).

Every language the service supports is one module of this package declaring one ``Language``;
``domain.languages`` finds it by code. Nothing else in the service writes a word of a language
out: the analysis reads its stop words and cue phrases here, the article and its export their
section labels, the assistant its sentences. So a language is added by adding one module, and a
test that walks the registry finds any field left empty.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any


def fold(text: str) -> str:
    """Lower case without accents, one character for one (``é`` -> ``e``), so that positions in
    the folded text are positions in the original."""
    lower = text.lower()
    if lower.isascii():  # nothing to fold: every message is read, most are plain ASCII
        return lower
    return "".join(map(_fold_character, lower)).replace("\u2019", "'").replace("\u02bc", "'")


@cache
def _fold_character(ch: str) -> str:
    base = unicodedata.normalize("NFKD", ch)
    kept = "".join(c for c in base if not unicodedata.combining(c))
    return kept if len(kept) == 1 else ch


class _Blank(dict[str, Any]):
    """Format values where a placeholder without a value reads ``?`` (an argument not given)."""

    def __missing__(self, key: str) -> str:
        return "?"


# A sentence about an action that answered: ``(say, action name, result, arguments) -> str``.
Found = Callable[["Say", str, dict[str, Any], dict[str, Any]], str]
# A label: a template of the arguments ("show video {id}"), or a function choosing one by them.
Label = str | Callable[[dict[str, Any]], str]


@dataclass(frozen=True, kw_only=True)
class AssistantWords:
    """Everything the assistant says and reads in one language.

    Keyed by the assistant action's name (``domain.agent.actions``): ``labels`` (what the action
    does, in a sentence's middle: "read your balance"), ``found`` (the sentence about what it
    found) and, for the actions that write, ``asks`` (the words of a message that ask for that
    kind of change; accents and case ignored). The rest is the reply's frame: refusals, notes,
    the help text and the sentences about actions left undone."""

    quotes: tuple[str, str]  # around a name or a title
    zero_is_singular: bool  # "0 vidéo" in French, "0 videos" in English
    statuses: Mapping[str, str]  # a resource's status as the reply writes it
    and_more: str  # after a list that has more than it shows
    labels: Mapping[str, Label]
    label_unknown: str  # an operation without a label ({name})
    found: Mapping[str, Found]
    asks: Mapping[str, tuple[str, ...]]  # action that writes -> the word patterns that ask for it
    kind_words: Mapping[str, tuple[str, ...]]  # kind of resource -> the word patterns that name it
    done: Found  # an action without a sentence of its own (its scalar facts)
    lacks_scope: Callable[[str, str], str]  # (what, scope)
    refused: Callable[[str, str], str]  # (what, why)
    failed: Callable[[str, str], str]  # (what, why)
    notes: Mapping[str, Callable[[Say, dict[str, Any]], str]]  # a plan's note, by its code
    unresolved: Mapping[str, str]  # why an argument was not found in the earlier answers, by reason
    performed: Callable[[int, int], str]  # (actions, succeeded)
    not_understood: Callable[[str], str]
    missing_scopes: Callable[[str], str]
    model_failed: str  # before the language model provider's error, when it failed mid-turn
    left_undone: Mapping[str, Callable[[int, int, int | None], str]]  # reason -> (count, cap, retry_after_s)
    help: str


@dataclass(frozen=True)
class Say:
    """The assistant's helpers in one language: quoting, plurals, statuses, lists and labels."""

    words: AssistantWords

    def q(self, text: Any) -> str:
        return f"{self.words.quotes[0]}{text}{self.words.quotes[1]}"

    def n(self, count: Any, one: str, many: str) -> str:
        """``count`` and its noun, singular for one (and for zero where the language says so)."""
        singular = count == 1 or (self.words.zero_is_singular and count == 0)
        return f"{count} {one if singular else many}"

    def status(self, value: Any) -> str:
        return self.words.statuses.get(str(value), str(value))

    def listing(self, items: list[Any], fmt: Callable[[dict[str, Any]], str], has_more: Any = False) -> str:
        return "; ".join(fmt(i) for i in items) + (self.words.and_more if has_more else "")

    def label(self, name: str, arguments: dict[str, Any]) -> str:
        entry = self.words.labels.get(name)
        if entry is None:
            return self.words.label_unknown.format_map({"name": name})
        text = entry(arguments) if callable(entry) else entry
        return text.format_map(_Blank(arguments))

    def found(self, name: str, result: dict[str, Any], arguments: dict[str, Any]) -> str:
        return self.words.found.get(name, self.words.done)(self, name, result, arguments)


@dataclass(frozen=True, kw_only=True)
class RequestWords:
    """How a message to the assistant asks for things in one language: the words the offline
    planner (``domain.agent.planner``) reads. Each is a regular expression of alternatives, folded
    (lower case, no accents: ``fold``). The planner reads every language's words at once, as a
    person may ask in any of them, and the reply follows the language the message is in."""

    verbs: str  # verbs that open a request: after "and" or a comma, one starts a new clause
    sequence: str  # words of sequence that end a clause ("then", "after that")
    conjunction: str  # "and": between two requests, or two objects of different kinds
    also: str  # "also": a new clause when a verb follows
    polite: str  # said before a verb ("please")
    determiners: str  # may stand before the name of a kind of object, each with its space or apostrophe
    kinds: Mapping[str, str]  # a kind of object (video, article, job, media, template, clip) -> its names
    numbered: str  # between the name of a kind and its id ("number")
    joins: str  # between the ids of a list ("and", "or")
    ranges: str  # between the two ends of a range of ids ("to")
    this: str  # the object named last ("this", "that", "it")
    counted: str  # a count of these lists items ("5 videos")
    limit_before: str  # before the count of items a list shows ("last 5")
    limit_after: str  # after it ("5 latest")
    seconds: str  # a unit of seconds, after a number
    minutes: str  # a unit of minutes, after a number
    time_from: str  # opens a time range ("from", "between")
    time_to: str  # between the two ends of a time range ("to", "until")
    language_word: str  # before a language's code ("language: de")
    languages: Mapping[str, str]  # a language's code -> how the language names it, besides ``Language.called``
    without_article: str  # asks for no article ("without an article")
    styles: Mapping[str, str]  # writing style -> its words
    statuses: Mapping[str, str]  # a revival candidate's status -> its words
    platforms: Mapping[str, str]  # platform id -> what the language calls it (besides its id)
    all_platforms: str  # every platform ("all platforms")
    asks: Mapping[str, str]  # what a clause asks for, by the planner's name (``domain.agent.planner.ASKS``)
    account: Mapping[str, str]  # an account read (an assistant action's name) -> the words that ask for it
    video_reads: Mapping[str, str]  # a read of a video's analysis (an action's name) -> the words that ask for it
    help: str  # a whole message that only greets, thanks or asks what the assistant does


def optional_words(words: str) -> str:
    """A pattern for ``words`` (alternatives) said before a phrase, with their comma, or nothing."""
    return rf"(?:(?:{words})[\s,]+)?"


@dataclass(frozen=True, kw_only=True)
class Language:
    """One language the service supports: everything it knows of it (see the module's text).

    The texts of words are space-separated lists; the phrases are regular expressions (matched
    without case). Where each is read, and the policy behind it, is said where it is read (the
    module named beside it). A field that is None is a feature the language does not have (a
    German noun takes no determiner rule of the Romance kind, English has no contraction of a
    preposition and an article); ``OPTIONAL`` and ``MAY_BE_EMPTY`` name those, and why."""

    code: str  # ISO 639-1
    # words (folded) frequent in a message written in the language and rare in the others: they tell
    # the assistant which language a message is in (domain.agent.planner)
    markers: frozenset[str]
    letters: str  # letters of the language that the others rarely write, each worth two markers
    name: str  # in English: what a translation prompt names it (domain.translation)
    locale: str  # Open Graph's og:locale (domain.exports)
    stemmer: str  # the Snowball stemmer's name (domain.analysis.language)
    called: str  # how a message to the assistant names it, folded (domain.agent.planner: "translate into German")
    # domain.analysis.language: the analysis' reading of speech
    spoken_fillers: str  # stop words that lists written for text lack
    leading_words: str  # words that may stand before a cue phrase
    cue_phrases: str  # open a new part of a talk
    announce_phrases: str  # open a part that the speaker names ("let's talk about X")
    step_openers: str  # open the steps of an answer
    instruction_phrases: str  # a sentence telling the viewer what to do: a tutorial's (domain.analysis.article)
    video_subject_phrases: str  # a video naming its own subject
    conclusion_phrases: str
    sponsor_phrases: str
    question_openers: tuple[str, ...]  # ask a question without its question mark
    # domain.analysis.claims: what makes a sentence a claim, and what rules one out (each a regular
    # expression with its own word boundaries, since some of its phrases end inside a word: "parce qu")
    definition_phrases: str  # "is a", "means", "refers to"
    cause_phrases: str  # "because", "leads to", "due to"
    comparison_phrases: str  # "more than", "the largest", "most", "for every"
    hedge_phrases: str  # "I think", "maybe": an opinion, not a fact
    social_phrases: str  # greetings, thanks, "subscribe": never a claim
    # domain.analysis.entities: dates and figures (a transcript is read for those of all seven languages)
    month_names: str  # lower case, with the unaccented spellings captions use ("février fevrier")
    unit_words: str  # after a number, make it a figure ("15 Prozent", "3 veces"); symbols (%, €, km) are everyone's
    # domain.analysis.moments and domain.clip_detection: where a moment or a clip may start
    connective_openers: str  # a sentence opening with one of these words continues the one before ("and", "but")
    anaphora_openers: str  # ... or refers back to it ("it", "they", "this")
    hook_openers: str  # a formula that opens a hook ("did you know", "imagine"), at a sentence's start
    attribution_phrases: str  # a quotation's attribution ("according to", "said")
    # domain.analysis.intents: search queries
    tag_questions: str  # a whole question that only checks the listener ("right?", "you know?")
    # words of talk that make a question a turn of speech, not one a person types ("you know", "I mean", "is
    # like", "like,"): a regular expression, searched anywhere in the question
    speech_markers: str
    # what leads into the question itself ("The question for you is what does...", "La question est, ..."):
    # left out of a search question; a regular expression's alternatives, matched at its start
    question_leads: str
    # what reports a question read out, which captions often leave without its mark ("Adam says what makes a
    # senior engineer", "the next question is from Joel, how do you handle SVGs"): a regular expression searched
    # in a sentence, its match ending where the question starts, which a lookahead checks opens as a question
    # does (domain.analysis.text.read_out_question: a chapter's title); or a whole sentence that says a question
    # follows ("Next question is from Tom."): no claim, no prose of an article, like the question itself
    read_questions: str
    process_words: str  # a passage about how something is done ("how", "steps", "works"): a "how" query
    conjunction: str  # "and": where two spoken amounts are told apart
    scales: Mapping[str, int]  # number words of a thousand and more, by their power of ten
    indefinite: str | None = None  # an indefinite article that may stand for "about" before a number
    vague_amounts: tuple[str, str, str] | None = None  # (quantifiers, a number word after one, always vague)
    # domain.analysis.text: quotes and labels
    # sounds of hesitation, no words ("uh", "euh", "ähm"): left out of a printed quote (as a clean verbatim
    # transcript does), and counted by the behavioural profile
    hesitations: str
    leading_fillers: str  # removed from the start of a quoted sentence
    # words of sequence that open a sentence before a comma ("Finally, how do you choose...?", "Next, ..."):
    # removed with the comma from the start of a quote, a question or a title
    comma_openers: str
    # domain.analysis.phrases: titles and topics
    connectors: str
    # a quantity or a manner, or the noun of a compound preposition ("with respect to", "in Bezug auf"),
    # not a subject: open no title ("Couple of people", "Sorte d'oscillation", "Respect to time")
    vague_heads: str
    # adjectives of judgement or feeling, not of kind ("good", "weird", "bizarre"): with one noun they say what
    # the speaker thinks of it, not what the part is about ("Good question", "Weird constraint"): no title
    judgement_words: str
    pronouns: str
    dangling: str  # may not end a title
    verb_signals: str
    plural_endings: tuple[str, ...]
    article_pronouns: str | None = None
    preposition_pronouns: str | None = None
    # verbs that take an object and then a verb bare ("let the dough rest", "helps the crust expand"): the
    # word after their object is a verb; None: the language says no verb so
    causative_verbs: str | None = None
    determiners: str | None = None
    articles_of_nouns: str | None = None
    noun_rule: int | None = None  # which word of a phrase must be a noun (0 first, -1 last); None: no rule
    verb_endings: tuple[str, ...] | None = None
    # a part announced by one common word ("Let's talk about cost") of a video that names its subject ("a talk
    # about home batteries"): its title is the word and then this ("of {subject}": "Cost of home batteries")
    aspect_title: str | None = None
    # ... or, in a language that joins them with the article the speakers say before the subject: that
    # article (as ``definite_articles`` spells it) -> the words that join ("les" -> "des": "Coût des pompes
    # à chaleur"; "l" -> "de l'": "Coût de l'isolation")
    aspect_articles: Mapping[str, str] | None = None
    # the forms of a verb that, before a word with the ending, make a verb of it (English "are generating",
    # "was worrying"; "is important" says nothing): (those forms, the ending); None: no such form
    progressive: tuple[str, str] | None = None
    # the ending of a verb's participle, which a word never said after a determiner and alone is ("squared",
    # "installed"): no topic or title alone; None: the language's nouns take a determiner (``noun_rule``)
    participle_ending: str | None = None
    # verbs in nearly every use ("make", "gets"): in no topic or title unless said after a determiner; None:
    # the language's nouns take a determiner or a capital, which tells its verbs apart (``noun_rule``)
    common_verbs: str | None = None
    # a word this long and rare in the language is a compound, a phrase in one word ("Wärmepumpe",
    # "Batteriespeicher"), so it may title a chapter alone; None: the language writes phrases apart
    compound_letters: int | None = None
    # the endings that make an adverb of a word of the language ("conceptually" of "conceptual"): a title
    # ends with none; None: the language's adverb ending also ends nouns (French "-ment": "changement")
    adverb_endings: tuple[str, ...] | None = None
    contractions: str | None = None
    # domain.analysis.intents: search queries
    definite: Mapping[str, str] | None = None  # a contraction -> the definite article it stands for
    definite_articles: tuple[str, ...] | None = None
    # a topic asked about with the indefinite article the speakers say before it ("what is a heat pump",
    # "was ist eine Wärmepumpe"): each form said -> the form a query takes (German "einen" -> "ein")
    query_indefinite: Mapping[str, str] | None = None
    # endings that make a plural of a noun also said without them ("subsidies" of "subsidie", "Aktionen" of
    # "Aktion"): a query's number where the articles do not tell it (domain.analysis.intents)
    query_plural_endings: tuple[str, ...] | None = None
    plural_articles: frozenset[str] | set[str] | None = None
    plural_templates: Mapping[str, str] | None = None  # the queries of a plural subject (those that differ)
    # domain.analysis.entities: the lowercase rest of an organisation's name
    org_tail: tuple[str, str, str] | None = None  # (adjective endings, complements, words a verb follows)
    # The one table of section labels: the article (domain.analysis.article), its exports
    # (domain.exports) and a revived video's description (domain.revival_completion) print these.
    labels: Mapping[str, str]
    colon: str  # between a label and its text ("Titre : sous-titre" in French)
    question_mark: str  # after a question (" ?" in French)
    requests: RequestWords | None = None  # None: the assistant does not read requests in the language
    assistant: AssistantWords | None = None  # None: the assistant answers in English


# The fields a language may leave None (the feature is not one of the language), and those that
# may be empty (the language has none of them), with the reason.
OPTIONAL = ("indefinite", "vague_amounts", "article_pronouns", "preposition_pronouns", "causative_verbs", "determiners",
            "articles_of_nouns", "noun_rule", "verb_endings", "aspect_title", "aspect_articles", "progressive",
            "participle_ending", "common_verbs", "compound_letters", "adverb_endings", "contractions", "definite",
            "definite_articles", "query_indefinite", "query_plural_endings", "plural_articles", "plural_templates",
            "org_tail", "requests", "assistant")
MAY_BE_EMPTY = {
    "question_openers": "English asks with the word order, which a sentence's start does not show",
    "plural_endings": "Italian makes a plural by changing the last vowel, not by an ending",
    "letters": "English and Dutch write their words with letters the other languages write too",
}
