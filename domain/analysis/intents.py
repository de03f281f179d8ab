"""Search intents: the queries a viewer would type that this video answers.

Two sources. Questions asked in the video (at least four words, not tag questions like "n'est-ce
pas ?"; read out and reported without their mark too: "Maria asks how do you choose a heat pump."):
relevance 0.55, plus up to 0.3 for the share of its words that are top topics, plus 0.15 when a claim
follows within ``ANSWER_WINDOW_MS`` (the question is answered). Then one templated
query per top topic (what / how / why / who, chosen from the evidence about the topic: a
definition, a process, a cause, a person): relevance 0.8 x the topic's relevance.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.analysis.claims import Claim
from domain.analysis.entities import Entity
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import (
    ARTICLE_RE,
    RESTART_RE,
    capitalise,
    clean_verbatim,
    definite_article,
    fold,
    labels,
    lang_key,
    read_out_question,
    strip_leading_fillers,
    words,
)
from domain.analysis.topics import Topic
from domain.languages import table

ANSWER_WINDOW_MS = 60_000
# A question of more words is a turn of talk that holds a question ("It's like, you know, if you get attached
# to something, you're like, okay, how can I make this thing..."), not one a person asks a search engine.
MAX_QUESTION_WORDS = 25


@dataclass(slots=True)
class SearchIntent:
    query: str
    relevance: float
    source: str  # "question" (asked in the video) or "topic"
    start_ms: int | None
    answered: bool

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "relevance": self.relevance, "source": self.source, "startMs": self.start_ms,
                "answered": self.answered}


def extract_intents(sentences: Sequence[Sentence], claims: Sequence[Claim], topics: Sequence[Topic],
                    entities: Sequence[Entity], language: str | None, limit: int = 20) -> list[SearchIntent]:
    kit = language_of(language)
    top_words = {w for t in topics[:10] for w in t.words}
    claim_starts = [c.start_ms for c in claims]
    intents: dict[str, SearchIntent] = {}

    for sentence in sentences:
        # a question reported without its mark ("Adam says what makes a software engineer senior.") is asked too
        read_out = read_out_question(sentence.text, language) if kit.reports_question(sentence.text) else None
        if not sentence.is_question and read_out is None:
            continue
        text = read_out or strip_leading_fillers(sentence.text, language)
        if not 4 <= len(words(text)) <= MAX_QUESTION_WORDS or kit.tag_question_re.match(text.strip()) or (
                kit.tag_ending_re.search(text) or RESTART_RE.search(text) or kit.speech_re.search(text)):
            continue  # "right?"; "..., right?" asks nothing; "Like how, how do you define...?" restarts;
            # "It's like, well, what browsers do we support?" is a turn of talk (``Language.speech_markers``)
        text = clean_verbatim(text, language)
        if RESTART_RE.search(text):
            continue  # "Run, uh, run it through...": a restart the hesitation hid
        lead = kit.question_lead_re.match(text)  # "The question for you is what does that wave look like?"
        if lead is not None and len(words(text[lead.end():])) >= 4:
            text = capitalise(text[lead.end():])
        tokens = set(sentence.tokens)
        overlap = len(tokens & top_words) / max(1, len(tokens))
        k = bisect.bisect_right(claim_starts, sentence.start_ms)
        answered = k < len(claim_starts) and claim_starts[k] - sentence.end_ms <= ANSWER_WINDOW_MS
        relevance = round(min(1.0, 0.55 + 0.3 * overlap + (0.15 if answered else 0.0)), 3)
        key = fold(text)
        if key not in intents or intents[key].relevance < relevance:
            intents[key] = SearchIntent(text, relevance, "question", sentence.start_ms, answered)

    label = labels(language)
    folded_claims = [(c, fold(c.text)) for c in claims]
    folded_sentences = [(s, fold(s.text)) for s in sentences]
    speaker_names = {fold(e.name) for e in entities if e.type == "person"}
    asked = [f" {key} " for key, intent in intents.items() if intent.source == "question"]
    for topic in topics[:4]:
        if topic.relevance < 0.3 or (topic.key in speaker_names and len(topic.words) == 1):
            continue
        evidence = [c for c, text in folded_claims if topic.key in text]
        subject, plural = _with_article(topic, folded_sentences, language)
        if topic.key in speaker_names:
            template = label["who"]
        elif any(kit.definition_re.search(c.text) for c in evidence):
            template = _template(label, "what", language, plural)
        elif any(kit.cause_re.search(c.text) for c in evidence):
            template = _template(label, "why", language, plural)
        elif any(kit.process_re.search(s.text) for s, text in folded_sentences if topic.key in text):
            template = _template(label, "how", language, plural)
        else:
            template = _template(label, "what", language, plural)
        query = template.format(t=subject)
        key = fold(query)
        opener = key.split(" ", 1)[0]
        if any(f" {topic.key} " in question and question.startswith(f" {opener} ") for question in asked):
            continue  # the video asks it in its own words ("How do you choose the right installation?")
        if key not in intents:
            intents[key] = SearchIntent(query, round(0.8 * topic.relevance, 3), "topic", topic.first_ms,
                                        bool(evidence))
    ranked = sorted(intents.values(), key=lambda i: (-i.relevance, i.start_ms or 0, i.query))
    return ranked[:limit]


PLURAL_ARTICLES = table("plural_articles")
QUERY_INDEFINITE: dict[str, dict[str, str]] = table("query_indefinite")
# A topic is asked with an indefinite article when the speakers say one before it at least twice and in a
# tenth of its mentions: "a heat pump", "a vector field" (said mostly as "the vector field") are; "git" said
# once as "a git" among a hundred mentions is not. A quarter kept "what is vector field", "what is sine
# wave" on the development set; a twentieth asked "what is a react".
INDEFINITE_SHARE = 0.1
# The topic queries for a plural subject: "what are solar panels", "qué son los paneles".
PLURAL_TEMPLATES: dict[str, dict[str, str]] = table("plural_templates")
# A Dutch or German plural: the word said also without one of its language's plural endings ("subsidie"
# and "subsidies", "batterij" and "batterijen", "Aktion" and "Aktionen"). Dutch articles do not tell
# (de is also singular), nor does German's "die".
PLURAL_ENDINGS = table("query_plural_endings")
ENGLISH_PLURAL_RE = re.compile(r"[a-z](?<!s)s$")  # "panels", "batteries"; not "glass" (nor "physics": below)


def _template(label: dict[str, Any], kind: str, language: str | None, plural: bool) -> str:
    template: str = PLURAL_TEMPLATES.get(lang_key(language), {}).get(kind, label[kind]) if plural else label[kind]
    return template


def _said_without_plural_ending(word: str, folded_sentences: list[Any], key: str) -> bool:
    """A plural in a language whose articles do not tell (Dutch) or whose nouns all look alike
    (German): the word is also said without one of the language's plural endings ("subsidie" and
    "subsidies", "Aktion" and "Aktionen"); a stem under four letters tells nothing."""
    singulars = {word[:-len(ending)] for ending in PLURAL_ENDINGS.get(key, ())
                 if word.endswith(ending) and len(word) - len(ending) >= 4}
    return bool(singulars) and any(w in singulars for _, text in folded_sentences for w in text.split())


def _english_plural(name: str) -> bool:
    """An English plural: its last word ends in "s" ("panels", "batteries"), not "ss", "us", "is", "ics"
    ("glass", "virus", "analysis", "physics") nor "news"."""
    last = name.rsplit(" ", 1)[-1]
    return bool(ENGLISH_PLURAL_RE.search(last)) and not last.endswith(("ics", "us", "is", "news"))


def _with_indefinite(topic: Topic, folded_sentences: list[Any], key: str) -> tuple[str, bool]:
    """English and German: the topic with the indefinite article the speakers say before it ("a heat
    pump", "eine Wärmepumpe": "what is a heat pump"), when they say one (``INDEFINITE_SHARE``) where the
    topic ends its phrase (``_ends_its_phrase``: "a JavaScript developer" asks no "what is a
    JavaScript"); a name (English: capitalised; an acronym or a word with capitals inside) or a mass
    noun ("entropy") is never said so and stays bare. A plural (English: its last word) takes none."""
    name = topic.name
    if (key == "en" and name[:1].isupper()) or any(c.isupper() for c in name[1:]):
        last = name.rsplit(" ", 1)[-1]
        # "Gaussian integers", "React hooks": a name's adjective before a common noun, whose number shows
        return name, key == "en" and " " in name and last.islower() and _english_plural(last)
    if key == "en":
        if _english_plural(name):
            return name, True
    elif _said_without_plural_ending(fold(name).rsplit(" ", 1)[-1], folded_sentences, key):
        return name, True  # German "Symmetrien" of "Symmetrie", "Aktionen" of "Aktion": "was sind ..."
    forms = QUERY_INDEFINITE[key]
    stop_words = language_of(key).stop_words
    pattern = re.compile(rf"\b({'|'.join(sorted(forms, key=len, reverse=True))})\s{re.escape(fold(name))}\b(\s*\w*)")
    mentions = re.compile(rf"\b{re.escape(fold(name))}\b")
    seen: Counter[str] = Counter()
    said = 0
    for _, text in folded_sentences:
        said += len(mentions.findall(text))
        seen.update(forms[m.group(1)] for m in pattern.finditer(text) if _ends_its_phrase(m.group(2).strip(),
                                                                                          stop_words, key))
    if sum(seen.values()) < max(2, INDEFINITE_SHARE * said):
        return name, False  # "git", "fluid flow": mostly said without one, a name or a mass noun
    return f"{max(seen, key=lambda a: (seen[a], a))} {name}", False


def _ends_its_phrase(after: str, stop_words: frozenset[str], key: str) -> bool:
    """The word said after "a <topic>" leaves the topic whole: none, a stop word, or in English a verb of
    the third person ("a home battery stores"; a noun after the article's noun is singular too: "a
    JavaScript developer")."""
    return not after or after in stop_words or (key == "en" and after.endswith("s") and not after.endswith("ss"))


def _with_article(topic: Topic, folded_sentences: list[Any], language: str | None) -> tuple[str, bool]:
    """The topic with the definite article the speakers use before it ("la rénovation"; "les panneaux"
    when they say "des panneaux"), when they use one, and whether it is plural (its article; in Dutch,
    its last word also said without its plural ending); English and German: ``_with_indefinite``."""
    key = lang_key(language)
    if key in QUERY_INDEFINITE:
        return _with_indefinite(topic, folded_sentences, key)
    if key == "nl":
        return topic.name, not topic.name[:1].isupper() and _said_without_plural_ending(
            fold(topic.name).rsplit(" ", 1)[-1], folded_sentences, key)
    if key not in ARTICLE_RE or topic.name[:1].isupper():
        return topic.name, False
    article = definite_article(topic.name, [text for _, text in folded_sentences], key)
    if article is None:
        return topic.name, False
    plural = article in PLURAL_ARTICLES[key]
    return (f"l'{topic.name}" if article == "l" else f"{article} {topic.name}"), plural
