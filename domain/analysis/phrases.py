"""Key phrases of a stretch of transcript, and the rules a published title follows.

A candidate is a run of content words inside a sentence: one word, two, or three whose middle word
may be a connector ("rate of change", "roots of unity", "pompe à chaleur"). Content words are those
the language's stop list and fillers leave, three letters or more (two for an acronym: "AI"),
never a number said in words ("fifty", "cinq"). Candidates are keyed by the Snowball stems of their
words, so "derivative" and "derivatives" are one phrase; they are shown in their most frequent
form, lowercase except the words always capitalised (names) and short acronyms.

A word frequent in the language (``language.FREQUENT_ZIPF``) is no topic on its own unless it is a
name: "time", "change", "companies" never are, "heat equation" or "Michael Jordan" may be.

A title (chapter, clip moment, topic label) is 1 to 6 words, none a pronoun, a contraction, a
filler or a number said in words, no word twice, no conjunction, article or preposition at either
end; a question asked in the video may be one, when it names its subject (no pronoun either). An
English question asked of a generic "you" or "we" is said as a heading without them ("How do you
choose the right installation?" -> "How to choose the right installation"; ``text.impersonal``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.language import NUMBER_RE, Language, language
from domain.analysis.text import ELISION_RE, WORD_RE, capitalise, fold, norm_token
from domain.languages import table

# Words that may join two content words inside a three-word phrase, per language.
CONNECTORS = table("connectors")
# Words of quantity or manner that open a phrase without naming its subject ("couple of people", "kind of
# sponsor", "sorte d'oscillation", "paar Beispiele"): such a phrase is no title nor topic.
VAGUE_HEADS = table("vague_heads")
# Adjectives of judgement or feeling ("good", "weird", "bizarre", "seltsam"): a phrase of two words with one
# says what the speaker thinks of a thing, not what the part is about ("Good question", "Weird constraint",
# "Question intéressante"); a name keeps them ("Good Friday", "Super Bowl" are names). Matched as said, each
# form listed: their stems would also refuse "Interest rates", "Cooling systems", "Excel spreadsheets".
JUDGEMENT_WORDS = table("judgement_words")
COMPOUND_LETTERS = table("compound_letters")  # where a long rare word is a compound (German, Dutch)
# Where an ending makes an adverb of a word ("conceptually"): a title ends with none.
ADVERB_ENDINGS = table("adverb_endings")
# The frequency (Zipf) of the word an adverb is made of, above which a word with the ending is an adverb
# even when the transcript never says it in lowercase: "intuitive" 3.6, "perfect" 5.2; "kel", "emi" none.
ADVERB_BASE_ZIPF = 3.0
# The letters of the word an adverb is made of, from which it is an adverb of manner (its word an adjective:
# "inherent", "perfect", "shameless") and not an adjective made of a noun ("early", "tingly", "daily").
ADVERB_OF_ADJECTIVE_LETTERS = 6
# Pronouns and determiners that make a title depend on what was said before it. German "man" is not
# one: it names anyone, never something said before ("Wie wählt man die richtige Anlage?" is a
# heading as it stands, as "How to choose the right installation" is in English).
PRONOUNS = table("pronouns")
# Pronouns that are also definite articles: after a preposition they are the article ("precio de
# los paneles", "Kosten für die Anlage").
ARTICLE_PRONOUNS = table("article_pronouns")
# Pronouns that are also prepositions: after a word they are the preposition ("Énergie solaire en
# France"); first, the pronoun ("En parler").
PREPOSITION_PRONOUNS = table("preposition_pronouns")
# What separates two clauses between two words: a phrase never spans it (``_read_candidates``).
CLAUSE_MARK_RE = re.compile(r"[,;:!?()\[\]{}\"“”«»—–…]|\.(?=\s)")
# Words that may not end a title (a conjunction, an article, a preposition: "Ideas and", "Speed of").
DANGLING = table("dangling")
# Words after which a verb comes: subject pronouns, modals, infinitive markers. A word said after
# them in at least ``VERB_SHARE`` of its uses is taken for a verb ("it represents", "to plug", "on
# calcule"), and a verb opens or closes no title or topic ("Directions represents", "Love math").
VERB_SIGNALS = table("verb_signals")
CAUSATIVE_VERBS = table("causative_verbs")  # "let the dough rest": the word after their object is a verb
VERB_SHARE = 0.3
PARTICIPLE_ENDINGS = table("participle_ending")
# Verbs in nearly every use ("make", "gets", "took"), which a short talk may never say after a pronoun or a
# modal: a verb, unless the talk says it after a determiner ("the make of the car").
COMMON_VERBS = {code: frozenset(words.split()) for code, words in table("common_verbs").items()}
PARTICIPLE_MIN_LETTERS = 6
# A participle that ends a phrase of several words ("Satisfying added", of "satisfying added color"),
# where a noun of five letters ending so ("speed", "greed") is said after a determiner elsewhere.
LAST_PARTICIPLE_MIN_LETTERS = 5
# The forms of a verb that, before a word of the language's progressive ending, make a verb of it ("are
# generating", "was worrying"; "is important" says nothing): (those forms, the ending).
PROGRESSIVE = {code: (frozenset(forms.split()), ending) for code, (forms, ending) in table("progressive").items()}
# A word said at least ``BOUND_MIN`` times, before one same word in ``BOUND_SHARE`` of its uses, is the
# first half of a name or a term ("post" of "post css", "bike" of "bike shedding"): it ends no title.
BOUND_MIN = 3
BOUND_SHARE = 0.6
# A word said after a number in half of its uses or more is a unit ("zweihundert Euro", "ten
# percent", "cinq ans"): it counts the subject, it is not one.
UNIT_SHARE = 0.5
# Determiners, per language whose nouns are said after one (the Romance languages: "les batteries",
# "l'installation", "el precio", "la batteria", "os painéis"). In those languages a word never said
# after one, nor capitalised inside a sentence (a name), is no noun: a verb ("coûte", "parlons",
# "stockent") or an adjective said alone ("solaires"). Such a word opens no title or topic
# (``NOUN_RULE``). English and Dutch say nouns bare too ("batteries store energy"), so they have no
# such rule; German capitalises every noun, and a word capitalised inside a sentence is its noun.
# Elided determiners (l', dell', un') count. A
# word said before one of these determiners that is no preposition's contraction (French "le", not
# "du") in ``VERB_SHARE`` of its uses, and never after one, is a verb taking its object ("stockent
# l'électricité", "réduit le coût", "cuts the cost": English too).
DETERMINERS = table("determiners")
# Articles of the languages that capitalise every noun (German): there a capital is no sign of a
# name, and a word said after an article ("der Preis", "die Anlage", "eine Frage") is a common noun;
# names are said bare ("Berlin", "Tesla", "Fraunhofer").
ARTICLES_OF_NOUNS = table("articles_of_nouns")
# The languages whose nouns take a determiner, where a word never said after one opens no title or
# topic. English says nouns bare too: its determiners only tell a verb before its object ("the tax
# credit cuts the cost") from a noun said after one ("the cuts").
NOUN_RULE = table("noun_rule")
# (the word of a phrase that must be a noun: the first in the Romance languages, "panneaux
# solaires"; the last in German, whose nouns are the capitalised words and end a noun phrase:
# "jährlicher Verbrauch", never "Kilowattstunden kostet")
# Endings of the plural persons of verbs ("disons", "parlons", "voyez", "hablamos", "diciamo"): a word
# with one, never said after a determiner, is a verb ("Exemple disons" is no title).
VERB_ENDINGS = table("verb_endings")
CONTRACTIONS = table("contractions")
# Endings that make a noun plural, per language (Italian changes the last vowel instead: none).
PLURAL_ENDINGS = table("plural_endings")
MAX_TITLE_WORDS = 6
QUESTION_TITLE_WORDS = 8
ACRONYM_RE = re.compile(r"^[A-Z][A-Z0-9]{1,5}s?$")
LETTER_RUN_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


@dataclass(slots=True)
class PhraseTable:
    """Occurrences of every candidate in a set of sentences, with the forms they were said in."""

    counts: Counter[tuple[str, ...]] = field(default_factory=Counter)
    surfaces: dict[tuple[str, ...], Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    tokens: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)

    def add(self, key: tuple[str, ...], surface: str, tokens: tuple[str, ...]) -> None:
        self.counts[key] += 1
        self.surfaces[key][surface] += 1
        self.tokens.setdefault(key, tokens)


class PhraseReader:
    """Candidates of sentences in one language, with the per-word facts cached for the transcript."""

    def __init__(self, code: str | None) -> None:
        self.kit: Language = language(code)
        self.connectors = frozenset(CONNECTORS[self.kit.code].split())
        self.vague_heads = frozenset(VAGUE_HEADS[self.kit.code].split())
        self.judgements = frozenset(JUDGEMENT_WORDS[self.kit.code].split())  # as said: "interest" is no "interesting"
        self._content: dict[str, bool] = {}
        self._stems: dict[str, str] = {}
        self._numbers: dict[str, bool] = {}
        self._candidates: dict[str, tuple[Any, ...]] = {}
        self.verbs: frozenset[str] = frozenset()
        self.units: frozenset[str] = frozenset()  # stems of words said after a number (``UNIT_SHARE``)
        self.names: frozenset[str] = frozenset()
        self.common: frozenset[str] = frozenset()  # words said after an article (``ARTICLES_OF_NOUNS``)
        self.nouns: frozenset[str] | None = None  # words said as nouns (``DETERMINERS``); None: no such rule
        self.long_names: tuple[str, ...] = ()  # folded names of several words (``know_names``)
        self.lowercase: frozenset[str] = frozenset()  # words the transcript says in lowercase somewhere
        self.said_as_nouns: frozenset[str] = frozenset()  # after a determiner, or capitalised inside a sentence
        self.bound: frozenset[str] = frozenset()  # words mostly said before one same word (``BOUND_SHARE``)

    def learn(self, sentences: Sequence[Any], speakers: Iterable[str] = ()) -> None:
        """What the transcript says about its words: which are used as verbs (see ``VERB_SIGNALS``),
        which as nouns (``DETERMINERS``) and which are the speakers' names (a chapter is not named
        after its host)."""
        signals = frozenset(VERB_SIGNALS[self.kit.code].split())
        causatives = frozenset(CAUSATIVE_VERBS.get(self.kit.code, "").split())
        determiners = frozenset(DETERMINERS.get(self.kit.code, "").split())
        objects = determiners - frozenset(CONTRACTIONS.get(self.kit.code, "").split())
        articles = frozenset(ARTICLES_OF_NOUNS.get(self.kit.code, "").split())
        progressive = PROGRESSIVE.get(self.kit.code)
        common: set[str] = set()
        after_signal: Counter[str] = Counter()
        after_number: Counter[str] = Counter()
        before_object: Counter[str] = Counter()
        total: Counter[str] = Counter()
        nouns: set[str] = set()
        lowercase: set[str] = set()
        following: dict[str, Counter[str]] = defaultdict(Counter)
        for sentence in sentences:
            previous = said = last = ""
            told: deque[str] = deque(maxlen=3)  # the last words said, as said
            counted = False  # the word before was a number
            for n, word in enumerate(WORD_RE.findall(sentence.text)):
                token = norm_token(word)
                total[token] += 1
                if word.islower():
                    lowercase.add(token)
                if previous in signals or (progressive and previous in progressive[0]
                                           and token.endswith(progressive[1])):
                    after_signal[token] += 1
                if counted:
                    after_number[token] += 1
                counted = self._is_number(token)
                before, said = said, word.lower().replace("’", "'")
                if len(told) == 3 and told[0] in causatives and told[1] in determiners:
                    after_signal[token] += 1  # "let the dough rest": a verb after the object
                told.append(said)
                elided = said.split("'")[0] if "'" in said else ""
                if before in determiners or elided in determiners or (n and word[:1].isupper()):
                    nouns.add(token)
                if before in articles:
                    common.add(token)
                if last and (said in objects or elided in objects):
                    before_object[last] += 1
                if last:
                    following[last][token] += 1
                last = token
                previous = said
                if elided and previous not in signals:  # j'ai, l'énergie: the elided word
                    previous = elided
        endings = VERB_ENDINGS.get(self.kit.code, ())
        self.verbs = frozenset(
            [t for t, c in after_signal.items() if c >= VERB_SHARE * total[t]]
            + [t for t, c in before_object.items() if t not in nouns and c >= VERB_SHARE * total[t]]
            + [t for t in total if endings and t.endswith(endings) and t not in nouns]
            + [t for t in total if t in COMMON_VERBS.get(self.kit.code, ()) and t not in nouns])
        self.said_as_nouns = frozenset(nouns)
        self.nouns = self.said_as_nouns if self.kit.code in NOUN_RULE else None
        self.common = frozenset(common)
        self.lowercase = frozenset(lowercase)
        self.bound = frozenset(t for t, after in following.items() if total[t] >= BOUND_MIN
                               and after.most_common(1)[0][1] >= BOUND_SHARE * total[t])
        stem_total: Counter[str] = Counter()
        stem_after: Counter[str] = Counter()
        for token, count in total.items():
            stem_total[self.stem(token)] += count
        for token, count in after_number.items():
            stem_after[self.stem(token)] += count
        self.units = frozenset(t for t, c in stem_after.items() if c >= UNIT_SHARE * stem_total[t])
        self.names = frozenset(norm_token(part) for name in speakers for part in WORD_RE.findall(name or ""))

    def know_names(self, names: Iterable[str]) -> None:
        """The transcript's names of several words ("International Energy Agency"): a title is never a
        piece of one ("Energy Agency"), which names nothing the talk said."""
        self.long_names = tuple(f" {fold(n)} " for n in names if len(n.split()) > 1)

    def is_clause(self, tokens: tuple[str, ...], count: int) -> bool:
        """Three words said once in a chapter, side by side, or joined by a connector before a word
        frequent in the language: a piece of a clause, a subject and its verb ("Arrays hold values",
        "Solar panels turn", "Atomen besteht Jupiter", "Consumption and add"), not the name of
        something; a term said again ("stolen necklace problem") or a phrase ending in a rarer word
        ("Security and accessibility", "Number of parameters") may be."""
        if len(tokens) != 3 or count > 1:
            return False
        if tokens[1] not in self.connectors:
            return True
        return self.kit.is_frequent(tokens[2])

    def ends_on_a_verb_form(self, tokens: tuple[str, ...], count: int) -> bool:
        """A phrase of several words whose last word is a verb form cut from what it was said of: a
        participle never said as a noun (``participle_ending``: "Satisfying added", "Uniformly
        distributed"), or, in a phrase said once in the chapter, a word of the progressive ending after
        a word of another ending ("Files and worrying", "Motives for mentioning", "People generating",
        of "people generating code"). A term said again ("Bike shedding"), two such words ("Stretching
        and morphing") or one the talk says as a noun ("Dev tooling", of "the tooling") may be a title."""
        last = tokens[-1]
        if len(tokens) < 2 or last in self.said_as_nouns:
            return False
        ending = PARTICIPLE_ENDINGS.get(self.kit.code)
        if ending is not None and last.endswith(ending) and len(last) >= LAST_PARTICIPLE_MIN_LETTERS:
            return True
        progressive = PROGRESSIVE.get(self.kit.code)
        return (progressive is not None and count == 1 and last.endswith(progressive[1])
                and not tokens[0].endswith(progressive[1]))

    def is_adverb(self, token: str) -> bool:
        """A word with the language's adverb ending whose rest is a word of the language
        ("conceptually" of "conceptual", "supposedly"; not "family", "assembly"). A word never said in
        lowercase may be a name ("Kelly"), or an adverb said only where it opens a sentence
        ("Intuitively, there's a reason"): then its rest must be a common word of five letters or more
        (``ADVERB_BASE_ZIPF``; "tingly" is no adverb of "ting")."""
        for ending in ADVERB_ENDINGS.get(self.kit.code, ()):
            rest = token[:-len(ending)]
            if not token.endswith(ending) or len(rest) < 3:
                continue
            base = max(self.kit.zipf(word) for word in (rest, rest + "e"))
            if base > 0 and (not self.is_proper(token) or (base >= ADVERB_BASE_ZIPF and len(rest) >= 5)):
                return True
        return False

    def _adverb_of_an_adjective(self, token: str) -> bool:
        """An adverb made of a long word (``ADVERB_OF_ADJECTIVE_LETTERS``: "inherently", "perfectly",
        "shamelessly"): an adverb of manner, which says how, not what. A short one is often an adjective
        made of a noun, which may open a name of a thing ("Early days", "Tingly sensation", "Daily
        standup")."""
        return any(token.endswith(e) and len(token) - len(e) >= ADVERB_OF_ADJECTIVE_LETTERS
                   for e in ADVERB_ENDINGS.get(self.kit.code, ())) and self.is_adverb(token)

    def _participle(self, token: str) -> bool:
        """A word with the language's participle ending (``Language.participle_ending``: English "-ed"), six
        letters or more ("speed", "seed" are nouns), never said after a determiner: a verb's participle."""
        ending = PARTICIPLE_ENDINGS.get(self.kit.code)
        return (ending is not None and token.endswith(ending) and len(token) >= PARTICIPLE_MIN_LETTERS
                and token not in self.said_as_nouns)

    def is_proper(self, token: str) -> bool:
        """Never said in lowercase, nor (German) after an article: a name."""
        return token not in self.lowercase and token not in self.common

    def names_a_subject(self, title: str) -> bool:
        """A title of two words or more, a question, or a single word that is a name: an acronym, a
        word with capitals inside (JavaScript), one the transcript never says in lowercase nor, in
        German, after an article, or in German and Dutch a compound (``COMPOUND_LETTERS``). A single
        common word ("Dots", "Columns", "Größe") names no subject of its own."""
        found = WORD_RE.findall(title)
        if len(found) != 1 or title.rstrip().endswith("?"):
            return bool(found)
        word = found[0]
        token = norm_token(word)
        if ACRONYM_RE.match(word) or any(c.isupper() for c in word[1:]):
            return True
        if COMPOUND_LETTERS.get(self.kit.code) and len(token) >= COMPOUND_LETTERS[self.kit.code] and (
                not self.kit.is_frequent(token)):
            return True  # "Wärmepumpen", "Batteriespeicher": a phrase in one word
        if self.is_adverb(token):
            return False  # "Intuitively": never said in lowercase, as it only opens sentences
        return word[:1].isupper() and self.is_proper(token)

    def is_fragment(self, label: str) -> bool:
        """``label``, of several words, is a strict piece of one of the transcript's longer names
        ("Energy Agency"; a single word such as "CSS" may name a subject of its own)."""
        folded = f" {fold(label)} "
        return folded.count(" ") > 2 and any(folded in name and folded != name for name in self.long_names)

    def _is_number(self, token: str) -> bool:
        """A number in digits or in words ("200", "zweihundert"); not a word that is also an article
        ("un", "ein", "een": stop words)."""
        known = self._numbers.get(token)
        if known is None:
            known = self._numbers[token] = bool(NUMBER_RE.search(token)) or (
                token not in self.kit.stop_words and self.kit.digits(token) != token)
        return known

    def describes(self, tokens: tuple[str, ...]) -> bool:
        """The phrase can name a subject: no verb in it, no unit first (``UNIT_SHARE``) nor a word of
        quantity or manner (``VAGUE_HEADS``: "Couple of people"), not two words of which one says what the
        speaker thinks (``JUDGEMENT_WORDS``: "Good question") or the first is an adverb ("Inherently
        slow", "Shamelessly plugs"; "Circularly polarized light" may be a term), in a language whose nouns take a
        determiner its first word said as a noun, not only the speakers' names; no last word mostly said
        before one same word (``bound``: "Plugins for post" of "post css"), no adverb last, nor first
        before a connector (``is_adverb``: "Unrelated conceptually", "Minimally with ASTs"); no common
        word right before a name ("Physicist Eugene Wigner": the name is the candidate; "aides de l'État"
        is a phrase)."""
        if any(t in self.verbs and t not in self.connectors for t in tokens) or self.stem(tokens[0]) in self.units:
            return False
        if tokens[0] in self.vague_heads:
            return False
        if len(tokens) == 1 and self._participle(tokens[0]):
            return False  # "squared", "installed": what is done, not what it is done to
        if len(tokens) == 2 and not all(self.is_proper(t) for t in tokens) and (
                any(t in self.judgements for t in tokens)
                or (ADVERB_ENDINGS.get(self.kit.code) and self._adverb_of_an_adjective(tokens[0]))):
            return False  # "Good question", "Huge distraction"; an adverb and its word: "Inherently slow"
        if tokens[-1] in self.bound or (ADVERB_ENDINGS.get(self.kit.code) and (self.is_adverb(tokens[-1]) or (
                len(tokens) == 3 and tokens[1] in self.connectors and self.is_adverb(tokens[0])))):
            # "Plugins for post" (of "post css"), "Unrelated conceptually", "Minimally with ASTs"; an adverb
            # before an adjective and its noun may make a term ("Circularly polarized light"), and an "-ly"
            # word before a noun is often an adjective ("Tingly sensation", "Early days")
            return False
        if (len(tokens) > 1 and tokens[0] in self.lowercase and self.is_proper(tokens[-1])
                and not any(t in self.connectors for t in tokens)):
            return False  # "Physicist Eugene Wigner", "Called Athena Crisis": the name alone says it
        if self.nouns is not None and tokens[NOUN_RULE[self.kit.code]] not in self.nouns:
            return False
        if (self.nouns is not None and NOUN_RULE[self.kit.code] == -1 and len(tokens) == 3
                and tokens[1] in self.connectors and tokens[0] not in self.nouns):
            return False  # German "X der Y" opens with a noun too: not "Erfasst die Multiplikationstabelle"
        return not all(t in self.names or t in self.connectors for t in tokens)

    def is_content(self, token: str, raw: str) -> bool:
        known = self._content.get(token)
        if known is None:
            known = ((len(token) >= 3 or bool(ACRONYM_RE.match(raw))) and "'" not in token
                     and token not in self.kit.stop_words and not NUMBER_RE.search(token)
                     and not INVERSION_RE.search(token) and self.kit.digits(token) == token)
            self._content[token] = known
        return known

    def stem(self, token: str) -> str:
        stem = self._stems.get(token)
        if stem is None:
            stem = self._stems[token] = self.kit.stem(token)
        return stem

    def candidates(self, text: str) -> tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...]:
        """(stem key, surface form, normalised words) of every candidate of a sentence, read once per
        sentence text: the topics, the chapter titles and the clip moments all read them."""
        found = self._candidates.get(text)
        if found is None:
            found = self._candidates[text] = tuple(self._read_candidates(text))
        return found

    def _read_candidates(self, text: str) -> Iterable[tuple[tuple[str, ...], str, tuple[str, ...]]]:
        found = list(WORD_RE.finditer(text))
        raw = [m.group() for m in found]
        # a phrase never runs over a comma or another mark between clauses ("And finally, zeta to the
        # fourth": no "Finally zeta"); a dot inside a name ("Node.js") is no such mark
        cut = [CLAUSE_MARK_RE.search(text, a.end(), b.start()) is not None
               for a, b in zip(found, found[1:], strict=False)]
        toks = [norm_token(w) for w in raw]
        content = [self.is_content(t, w) for t, w in zip(toks, raw, strict=True)]
        n = len(toks)
        for i in range(n):
            if not content[i]:
                continue
            head = ELISION_RE.sub("", raw[i]) or raw[i]
            yield (self.stem(toks[i]),), head, (toks[i],)
            for length in (2, 3):
                j = i + length
                if j > n or not content[j - 1] or any(cut[i:j - 1]):
                    continue
                if length == 2 and not content[i + 1]:
                    continue
                if length == 3 and not content[i + 1] and toks[i + 1] not in self.connectors:
                    continue
                key = tuple(self.stem(t) if content[i + k] else t for k, t in enumerate(toks[i:j]))
                if len(set(key)) < len(key):
                    continue  # "Monday Monday": a stutter, not a phrase
                yield key, " ".join([head, *raw[i + 1:j]]), tuple(toks[i:j])

    def table(self, sentences: Sequence[Any]) -> PhraseTable:
        table = PhraseTable()
        for sentence in sentences:
            for key, surface, tokens in self.candidates(sentence.text):
                table.add(key, surface, tokens)
        return table

    def is_name(self, surfaces: Counter[str], tokens: tuple[str, ...] = ()) -> bool:
        """Every form of the candidate starts with a capital: a name (Fourier, JavaScript, ITER).
        In German, where every noun starts with one, a single word said after an article is a
        common noun ("der Preis"), whatever its capital."""
        if len(tokens) == 1 and tokens[0] in self.common:
            return False
        return all(s[:1].isupper() for s in surfaces)

    def rarity(self, tokens: tuple[str, ...]) -> float:
        """How rare the phrase's rarest content word is in the language (``Language.rarity``)."""
        return max(self.kit.rarity(tokens[0]), self.kit.rarity(tokens[-1]))  # the ends are content words

    def usable(self, tokens: tuple[str, ...], surfaces: Counter[str]) -> bool:
        """May name a topic or a title: it describes something (``describes``) and is not a single
        word frequent in the language (``is_frequent_word``)."""
        return self.describes(tokens) and not self.is_frequent_word(tokens, surfaces)

    def is_frequent_word(self, tokens: tuple[str, ...], surfaces: Counter[str]) -> bool:
        """A single word frequent in the language, and no name: never a topic or a title alone."""
        return len(tokens) == 1 and self.kit.is_frequent(tokens[0]) and not self.is_name(surfaces, tokens)

    def is_vague(self, tokens: tuple[str, ...], surfaces: Counter[str]) -> bool:
        """Made only of words frequent in the language, and no name: "Couple of people", "Small
        change", "Simple question" name no subject of their own (a single frequent word included)."""
        return (all(self.kit.is_frequent(t) for t in tokens if t not in self.connectors)
                and not self.is_name(surfaces, tokens))

    def plural_head(self, label: str, surfaces: Counter[str]) -> str:
        """``label`` with its last word in the plural when the plural is among the forms said:
        "Function" said once as "functions" gives "Functions". A heading names the kind of thing a
        part treats ("Arrays", "Phase kicks", "Favorite plugins"), and a noun said in the plural is
        one that has instances; a word never said in the plural (a name, "entropy") stays as said."""
        shown = label.split(" ")
        last = shown[-1]
        said = {s.rsplit(" ", 1)[-1].lower() for s in surfaces}
        for ending in PLURAL_ENDINGS[self.kit.code]:
            if (last + ending).lower() in said:
                return " ".join([*shown[:-1], last + ending])
        return label

    def publishable(self, title: str) -> bool:
        return publishable(title, self.kit.code)

    def label(self, surfaces: Counter[str]) -> str:
        """How a candidate is shown (``display``), from the forms said as nouns when the language
        has the rule (``DETERMINERS``): "almacenamiento" and "almacenan" share a stem, and the
        verb is no label; nor is an adverb where another form says its adjective ("shamelessly plug" of
        "shameless plugs": the same stems)."""
        said = {w.lower() for form in surfaces for w in WORD_RE.findall(form)}
        adverbs = {w for w in said for e in ADVERB_ENDINGS.get(self.kit.code, ())
                   if w.endswith(e) and w[:-len(e)] in said}
        surfaces = Counter({s: n for s, n in surfaces.items()
                            if not adverbs & set(WORD_RE.findall(s.lower()))}) or surfaces
        if self.nouns is not None:
            at = NOUN_RULE[self.kit.code]
            nominal = Counter({s: n for s, n in surfaces.items()
                               if norm_token((WORD_RE.findall(s) or [""])[at]) in self.nouns})
            if nominal:
                return display(nominal)
        return display(surfaces)


# A verb with its subject pronoun after it (est-il, produira-t-il, peut-on): grammar, not a topic.
INVERSION_RE = re.compile(r"-(?:t-)?(?:il|elle|ils|elles|on|je|tu|nous|vous|ce)$")


def display(surfaces: Counter[str]) -> str:
    """The most frequent surface form, word by word: a word keeps its capitals when it always has
    them (a name: Cadarache) or is a short acronym always in capitals (ITER); the others are
    lowercase. So "construit à Cadarache" and "organisation ITER" keep their names, and "aides de
    l'État" its name after the elided article."""
    form, _ = max(surfaces.items(), key=lambda item: (item[1], item[0]))
    columns = list(zip(*(s.split(" ") for s in surfaces), strict=False))
    shown = []
    for position, word in enumerate(form.split(" ")):
        column = columns[position] if position < len(columns) else (word,)
        if all((ELISION_RE.sub("", w) or w)[:1].isupper() for w in column) and not all(w.isupper() for w in column):
            shown.append(word)
        elif all(w.isupper() for w in column) and len(word) <= 6:
            shown.append(word)
        else:
            shown.append(word.lower())
    return " ".join(shown)


def publishable(title: str, code: str | None, most_words: int | None = None) -> bool:
    """A title an editor would publish (see the module's docstring). A question, or a heading said
    as one ("How to choose the right installation"), may have up to ``QUESTION_TITLE_WORDS`` words
    (``most_words`` when given: an article's title) and words said in figures; a filler ("right", "like")
    refuses it only where speech puts one: first, or after a comma ("So, ..."; "the right installation")."""
    kit = language(code)
    text = title.strip()
    question = text.endswith("?") or bool(HOW_TO_RE.match(text))
    tokens = [w.lower().replace("’", "'") for w in WORD_RE.findall(text)]
    if not tokens or len(tokens) > (most_words or (QUESTION_TITLE_WORDS if question else MAX_TITLE_WORDS)):
        return False
    pronouns = _word_set("pronouns", kit.code)
    dangling = _word_set("dangling", kit.code)
    fillers = _word_set("fillers", kit.code)
    if question:
        spoken = {tokens[0], *(w.lower() for w in AFTER_COMMA_RE.findall(text))}
        fillers = fillers & spoken
    articles = _word_set("articles", kit.code)
    prepositions = _word_set("prepositions", kit.code)
    for n, token in enumerate(tokens):
        # "precio de los paneles": an article after a preposition, not the pronoun it also spells;
        # "énergie solaire en France": a preposition after a word
        pronoun = token in pronouns and not (n and (token in articles and tokens[n - 1] in dangling
                                                    or token in prepositions))
        if pronoun or token in fillers or ("'" in token and not _is_elision(token)):
            return False
        parts = LETTER_RUN_RE.findall(token)  # "penseriez-vous": "vous" is a pronoun
        if len(parts) > 1 and any(part in pronouns or part in fillers for part in parts):
            return False
        if not question and kit.digits(token) != token:
            return False
    if tokens[0] in dangling and not question or tokens[-1] in dangling:
        return False
    return len({fold(t) for t in tokens}) == len(tokens)


AFTER_COMMA_RE = re.compile(r",\s*(\w+)")
HOW_TO_RE = re.compile(r"^(?:how|where|when|what|which(?: \w+)?) to \w", re.IGNORECASE)


ARTICLE_ELISION_RE = re.compile(r"^(?:l|d|dell|nell|all|dall|sull|un)'[^\W\d_]", re.IGNORECASE)


def _is_elision(token: str) -> bool:
    """``l'hôpital``, ``d'échelle``, ``dell'acqua``: an elided article or preposition; not a pronoun
    (``s'appelle``, ``j'ai``, ``qu'il``) nor a contraction (``don't``)."""
    return bool(ARTICLE_ELISION_RE.match(token))


_SETS: dict[tuple[str, str], frozenset[str]] = {}


def _word_set(kind: str, code: str) -> frozenset[str]:
    found = _SETS.get((kind, code))
    if found is None:
        if kind == "pronouns":
            words = PRONOUNS[code].split()
        elif kind == "articles":
            words = ARTICLE_PRONOUNS.get(code, "").split()
        elif kind == "prepositions":
            words = PREPOSITION_PRONOUNS.get(code, "").split()
        elif kind == "dangling":
            words = DANGLING[code].split()
        else:
            from domain.analysis.language import SPOKEN_FILLERS

            words = SPOKEN_FILLERS[code].split()
        found = _SETS[(kind, code)] = frozenset(words)
    return found


def heading(text: str) -> str:
    """Capitalised like a heading: the first letter upper, the rest as said (names keep theirs)."""
    return capitalise(text.strip())
