"""What the analysis knows about each language it reads: en, fr, de, es, it, pt, nl.

Four well-kept libraries do what they already do well, each with its data inside its package
(nothing is fetched at run time):

- stop words: YAKE's per-language lists (``yake``), function words and contractions without the
  content words (computer, system, index, shell) that broader lists carry;
- word frequencies: ``wordfreq``'s small list of the language (about 30,000 words each), to tell
  a word common everywhere ("time", "companies", "allow") from a term ("laplacian", "tokamak");
- sentence boundaries: ``sentencex`` (abbreviations and punctuation per language);
- stems: the Snowball stemmers (``PyStemmer``), so "derivative" and "derivatives" or "dérivée"
  and "dérivées" are one word for lexical cohesion;
- numbers spoken as words: ``text2num`` ("twenty-three thousand" -> 23000, "cinq cents" -> 500).

What no library holds is written here, per language: the cue phrases that open a new part of a
talk ("let's talk about", "passons à", "kommen wir zu"), the phrases that close it, the spoken
fillers a transcript carries ("um", "euh", "ähm") and the labels the article prints.

A language outside the seven is read with the English resources; no language given means French,
the analysis' default. Everything is loaded once per process and language, on first use.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from domain.languages import CODES, DEFAULT_LANGUAGE, table

LANGUAGES = CODES  # the seven, each with its module in domain.languages
STEMMER_NAMES = table("stemmer")

# A word at least this frequent in the language (Zipf scale: log10 of occurrences per billion
# words; 4.5 is about one word in 30,000 of running text, the top ~2,500 words) is no topic on its
# own: "time", "change", "companies", "allow", "bet" are, "derivative" (3.7), "tokamak" (2.3) are not.
FREQUENT_ZIPF = 4.5
# Weight of a word for lexical cohesion, by its rarity in the language: a word of Zipf 6 ("time")
# weighs 0.5, of Zipf 3 or less (a term) 3.5; so a shared term binds two passages more than a shared
# common word.
RARITY_CEILING_ZIPF = 6.5
RARITY_RANGE = (0.5, 3.5)

# Spoken fillers, greetings and discourse words that stop lists written for text lack.
SPOKEN_FILLERS = table("spoken_fillers")

# Cue phrases that open a new part, matched at the start of a sentence after the leading words
# (``LEADING_WORDS``) are set aside. "Now", "so", "and", "okay" and "all right" are leading words, so
# "Now, ...", "And now we're ...", "Okay so ..." open no part by themselves: made cues, they lowered
# the chapter boundaries' F1 on the lectures and podcasts measured (docs/benchmarks.md).
CUE_PHRASES = table("cue_phrases")
# A subject announced by name as a part starts ("Next, let's talk about battery storage", "Passons
# maintenant au stockage de l'énergie"): the words after the phrase (its article or contraction
# left out) are the subject the speaker names, matched after the leading words.
ANNOUNCE_PHRASES = table("announce_phrases")
# A sentence that opens the steps of an answer ("How do you choose? Start by measuring your use."):
# after a question, the steps that follow are its answer.
STEP_OPENERS = table("step_openers")
# A sentence that tells the viewer what to do ("Click Save.", "Then make sure the radiators...", "Step two:
# ..."): how often a talk says them tells a tutorial from a lecture, whose imperatives ("imagine",
# "consider", "take") invite to think, not to do.
INSTRUCTION_PHRASES = table("instruction_phrases")
# What the English phrases leave before the subject ("the price of...") and after it ("... for a moment").
# The subject a video names for itself in its opening ("Welcome to this video about home solar
# power", "Willkommen zu diesem Video über Solarenergie in Deutschland"): the words after the phrase,
# its article left out, are the video's subject (``Language.video_subject``).
VIDEO_SUBJECT_PHRASES = table("video_subject_phrases")
ANNOUNCED_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
ANNOUNCED_TAIL_RE = re.compile(r"\s+(?:now|today|again|here|first|next|for\s+a\s+(?:moment|minute|second|bit)|"
                               r"a\s+(?:little\s+)?bit|briefly|quickly)$", re.IGNORECASE)
# Words that may stand before a cue phrase ("So, next ...", "Alors, passons ...").
LEADING_WORDS = table("leading_words")
CONCLUSION_PHRASES = table("conclusion_phrases")
# A sponsor read or an advertisement in a podcast: a part of its own.
SPONSOR_PHRASES = table("sponsor_phrases")
# A sentence opening with one of these asks a question even without its question mark (captions drop it).
QUESTION_OPENERS = table("question_openers")
# What makes a sentence a claim and what rules one out (domain.analysis.claims), in each language's words.
CLAIM_PHRASES = {name: table(f"{name}_phrases") for name in ("definition", "cause", "comparison", "hedge", "social")}
# Where a moment or a clip may start, and the queries a passage asks (domain.analysis.moments,
# domain.clip_detection, domain.analysis.intents), in each language's words.
CONNECTIVE_OPENERS = table("connective_openers")
ANAPHORA_OPENERS = table("anaphora_openers")
HOOK_OPENERS = table("hook_openers")
ATTRIBUTION_PHRASES = table("attribution_phrases")
TAG_QUESTIONS = table("tag_questions")
SPEECH_MARKERS = table("speech_markers")
QUESTION_LEADS = table("question_leads")
READ_QUESTIONS = table("read_questions")
PROCESS_WORDS = table("process_words")


@dataclass(frozen=True)
class Language:
    """The resources of one language (see the module's docstring for where each comes from)."""

    code: str
    stop_words: frozenset[str]
    frequencies: dict[str, float] = field(repr=False)
    cue_re: re.Pattern[str] = field(repr=False)
    conclusion_re: re.Pattern[str] = field(repr=False)
    sponsor_re: re.Pattern[str] = field(repr=False)
    announce_re: re.Pattern[str] = field(repr=False)
    video_subject_re: re.Pattern[str] = field(repr=False)
    steps_re: re.Pattern[str] = field(repr=False)
    instruction_re: re.Pattern[str] = field(repr=False)
    definition_re: re.Pattern[str] = field(repr=False)
    cause_re: re.Pattern[str] = field(repr=False)
    comparison_re: re.Pattern[str] = field(repr=False)
    hedge_re: re.Pattern[str] = field(repr=False)
    social_re: re.Pattern[str] = field(repr=False)
    hook_re: re.Pattern[str] = field(repr=False)
    attribution_re: re.Pattern[str] = field(repr=False)
    tag_question_re: re.Pattern[str] = field(repr=False)
    # a statement with a tag at its end ("The dot product measures alignment, right?"): it asks nothing
    tag_ending_re: re.Pattern[str] = field(repr=False)
    speech_re: re.Pattern[str] = field(repr=False)  # ``speech_markers``: a question that is a turn of talk
    question_lead_re: re.Pattern[str] = field(repr=False)  # ``question_leads``, at a question's start
    read_question_re: re.Pattern[str] = field(repr=False)  # ``read_questions``: where a read-out one starts
    process_re: re.Pattern[str] = field(repr=False)
    leading_words: frozenset[str] = frozenset()
    question_openers: tuple[str, ...] = ()
    connectives: frozenset[str] = frozenset()  # open a sentence that continues the one before
    dependent_openers: frozenset[str] = frozenset()  # the connectives and the words that refer back

    def first_word(self, text: str) -> str:
        """The first word of ``text``, lower case, its punctuation and quotes set aside ("c’est" -> "c'est")."""
        return (text.split() or [""])[0].lower().replace("’", "'").strip(",.;:!?\"'«»")

    def opens_dependent(self, text: str) -> bool:
        """``text`` opens with a word that leans on the sentence before: a connective ("but") or a word
        that refers back ("it", "that's", "c'est")."""
        word = self.first_word(text)
        return word in self.dependent_openers or word.split("'", 1)[0] in self.dependent_openers

    def zipf(self, word: str) -> float:
        """The word's frequency in the language on the Zipf scale (0 when the list lacks it)."""
        frequency = self.frequencies.get(word.lower().replace("’", "'"), 0.0)
        return math.log10(frequency) + 9 if frequency > 0 else 0.0

    def is_frequent(self, word: str) -> bool:
        return self.zipf(word) >= FREQUENT_ZIPF

    def rarity(self, word: str) -> float:
        low, high = RARITY_RANGE
        return min(high, max(low, RARITY_CEILING_ZIPF - self.zipf(word)))

    def stem(self, word: str) -> str:
        stemmed: str = _stemmer(self.code).stemWord(word)
        return stemmed

    def sentence_ends(self, text: str) -> list[int]:
        """Character offsets where the sentences of ``text`` end (after trailing spaces)."""
        import sentencex

        return [b["end_index"] for b in sentencex.get_sentence_boundaries(self.code, text)]

    def digits(self, text: str) -> str:
        """``text`` with numbers spoken as words written in digits ("cinq cents mégawatts" -> "500 mégawatts")."""
        return _numbers_in_digits(self.code, text)

    def opens_with_cue(self, text: str) -> bool:
        return bool(self.cue_re.match(_after_leading_words(text, self.leading_words)))

    def opens_steps(self, text: str) -> bool:
        """The sentence opens the steps of an answer ("Start by measuring...", "D'abord, il faut...")."""
        return bool(self.steps_re.match(_after_leading_words(text, self.leading_words)))

    def instructs(self, text: str) -> bool:
        """The sentence tells the viewer what to do (``INSTRUCTION_PHRASES``), and is no announcement of
        the next subject ("Next, let's look at the cost")."""
        return bool(self.instruction_re.match(_after_leading_words(text, self.leading_words))) and (
            self.announced(text) is None)

    def reports_question(self, text: str) -> bool:
        """Whether the sentence reports a question it reads out ("Adam says what makes...", "the next question
        is from Joel, how do you..."; ``read_questions``): a question, no claim nor prose of an article. Not a
        sentence that only opens as a question would ("How long should a workshop be, I think a day...")."""
        match = self.read_question_re.search(text)
        return match is not None and match.end() > match.start()

    def announced(self, text: str) -> str | None:
        """The subject a sentence announces by name ("Next, let's talk about battery storage." ->
        "battery storage"), up to its first comma or the end of the sentence; None when it
        announces none."""
        rest = _after_leading_words(text, self.leading_words)
        match = self.announce_re.match(rest)
        if match is None:
            return None
        subject = re.split(r"[,;:.!?…(]", rest[match.end():], maxsplit=1)[0]
        subject = ANNOUNCED_TAIL_RE.sub("", ANNOUNCED_ARTICLE_RE.sub("", subject.strip()))
        return subject or None

    def video_subject(self, text: str) -> str | None:
        """The subject a video names for itself ("Welcome to this video about home solar power." ->
        "home solar power"), up to the sentence's first comma or its end; None when it names none."""
        match = self.video_subject_re.search(text)
        if match is None:
            return None
        subject = re.split(r"[,;:.!?…(]", text[match.end():], maxsplit=1)[0].strip()
        return subject or None


# A word said twice as the speaker restarts ("let's, let's talk", "so so now", "je, je vais").
RESTART_RE = re.compile(r"([^\W\d_]+(?:['’][^\W\d_]+)?)[\s,.…—–-]+(?=\1\b)", re.IGNORECASE)


def _after_leading_words(text: str, leading: frozenset[str]) -> str:
    """``text`` without the fillers and connectors that open it, nor the words a speaker says twice
    as they restart ("So, uh, let's, let's talk ..." -> "let's talk ...")."""
    rest = text.lstrip(" ¿¡\"'«(-—–")
    for _ in range(6):
        restart = RESTART_RE.match(rest)
        if restart:
            rest = rest[restart.end():]
            continue
        match = re.match(r"([^\W\d_]+)[\s,.…!]+", rest)
        if not match or match.group(1).lower() not in leading:
            break
        rest = rest[match.end():]
    return rest


@lru_cache(maxsize=8)
def _stemmer(code: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(STEMMER_NAMES[code])


# Two amounts joined by "and" ("between eight thousand and fifteen thousand euros") are read by
# text2num as one sum ("8015 1000"). The conjunction separates two numbers when the left one ends
# on a scale of a thousand or more and the right one reaches at least that scale within its first
# words: "eight thousand and fifteen thousand", "two million et trois millions". It stays inside
# one number otherwise: "two hundred and fifty thousand" (250,000), "three thousand and five".
CONJUNCTIONS = table("conjunction")
SCALES = table("scales")
SCALE_LOOKAHEAD_WORDS = 4  # "fifteen thousand", "two hundred fifty thousand": a scale comes early


def _amounts(code: str, text: str) -> list[str]:
    """``text`` cut before each conjunction that joins two separate amounts (the rule above)."""
    scales = SCALES.get(code)
    if not scales:
        return [text]
    parts = re.split(rf"(\s+{CONJUNCTIONS[code]}\s+)", text, flags=re.IGNORECASE)
    pieces, current = [], parts[0]
    for joiner, right in zip(parts[1::2], parts[2::2], strict=True):
        left_words = re.findall(r"\w+", current.lower())
        left_scale = scales.get(left_words[-1], 0) if left_words else 0
        ahead = re.findall(r"\w+", right.lower())[:SCALE_LOOKAHEAD_WORDS]
        right_scale = max((scales.get(w, 0) for w in ahead), default=0)
        if left_scale >= 3 and right_scale >= left_scale:
            pieces.append(current + joiner)
            current = right
        else:
            current += joiner + right
    return [*pieces, current]


# "pour cent", "por ciento", "per cento", "por cento" after a number: the unit, which the reading of
# numbers would take for a hundred ("quatre-vingts pour cent" -> "80 pour 100", "vingt-trois pour
# cent et trois cents euros" -> "23 pour 103 100 euros"); read as the sign ("80 %"). After another
# word it stays a hundred ("pour cent euros").
NUMBER_RE = re.compile(r"\d")  # a digit: also what ``text`` and the modules reading it use
PER_CENT_RE = re.compile(r"([\w-]+)(\s+(?:pour|por|per)\s+(?:cent|ciento|cento))\b", re.IGNORECASE)


def _is_number_word(word: str, code: str) -> bool:
    """The language's number reader reads ``word`` alone as a number ("ochenta", "dix")."""
    from text_to_num import alpha2digit

    return bool(NUMBER_RE.search(alpha2digit(word, code)))


def _per_cent_signs(code: str, text: str) -> str:
    def sign(match: re.Match[str]) -> str:
        number = match.group(1)
        return f"{number} %" if _is_number_word(number, code) else match.group(0)

    return PER_CENT_RE.sub(sign, text)


# An indefinite article before a number is "about" or "a", not one: "cuesta unos doscientos euros"
# (about 200), "un ochenta por ciento" (80 %), which the reading of numbers makes "1 200" and "1 80".
# Before a scale it is the number ("un millón", "um milhão"). Set aside before numbers are read.
INDEFINITE = table("indefinite")


def _indefinite_set_aside(code: str, text: str) -> str:
    articles = INDEFINITE.get(code)
    if not articles:
        return text
    scales = SCALES.get(code, {})

    def aside(match: re.Match[str]) -> str:
        following = match.group(2).lower()
        if following in scales or not _is_number_word(following, code):
            return match.group(0)
        return f"~ {match.group(2)}"

    return re.sub(rf"\b({articles.replace(' ', '|')})\s+([\w-]+)", aside, text, flags=re.IGNORECASE)


# "Several hundred", "hundreds of", "mehrere hundert", "varios cientos": no figure, but the reading of
# numbers makes them 100 or 1000. The number word is set aside (read as no number).
VAGUE_AMOUNTS = table("vague_amounts")


def _vague_set_aside(code: str, text: str) -> str:
    vague = VAGUE_AMOUNTS.get(code)
    if not vague:
        return text
    quantifiers, after_one, always = vague
    text = re.sub(rf"\b({quantifiers})\s+(?:{after_one})\b", r"\1 ≈", text, flags=re.IGNORECASE)
    return re.sub(rf"\b(?:{always})\b", "≈", text, flags=re.IGNORECASE)


def _numbers_in_digits(code: str, text: str) -> str:
    from text_to_num import alpha2digit

    try:
        text = _vague_set_aside(code, _indefinite_set_aside(code, _per_cent_signs(code, text)))
        return "".join(alpha2digit(piece, code) for piece in _amounts(code, text))
    except (ValueError, RuntimeError):  # a string it cannot read is left as it was
        return text


def _stop_words(code: str) -> frozenset[str]:
    from yake import KeywordExtractor

    listed = {w.lower().replace("’", "'") for w in KeywordExtractor(lan=code).stopword_set}
    return frozenset(listed | set(SPOKEN_FILLERS[code].split()))


def _frequencies(code: str) -> dict[str, float]:
    from wordfreq import get_frequency_dict

    return get_frequency_dict(code, wordlist="small")


@lru_cache(maxsize=8)
def language(code: str | None) -> Language:
    """The resources of ``code`` (``fr``, ``en-GB``, ``pt_BR``...): English for a language outside the seven."""
    key = lang_code(code)
    return Language(
        code=key,
        stop_words=_stop_words(key),
        frequencies=_frequencies(key),
        cue_re=re.compile(rf"(?:{CUE_PHRASES[key]})(?!\w)", re.IGNORECASE),
        conclusion_re=re.compile(rf"\b(?:{CONCLUSION_PHRASES[key]})\b", re.IGNORECASE),
        sponsor_re=re.compile(SPONSOR_PHRASES[key], re.IGNORECASE),
        steps_re=re.compile(rf"(?:{STEP_OPENERS[key]})(?!\w)", re.IGNORECASE),
        instruction_re=re.compile(rf"(?:{INSTRUCTION_PHRASES[key]})", re.IGNORECASE),
        announce_re=re.compile(rf"(?:{ANNOUNCE_PHRASES[key]})(?:(?<=['’])|(?!\w))\s*", re.IGNORECASE),
        video_subject_re=re.compile(VIDEO_SUBJECT_PHRASES[key], re.IGNORECASE),
        definition_re=re.compile(CLAIM_PHRASES["definition"][key], re.IGNORECASE),
        cause_re=re.compile(CLAIM_PHRASES["cause"][key], re.IGNORECASE),
        comparison_re=re.compile(CLAIM_PHRASES["comparison"][key], re.IGNORECASE),
        hedge_re=re.compile(CLAIM_PHRASES["hedge"][key], re.IGNORECASE),
        social_re=re.compile(CLAIM_PHRASES["social"][key], re.IGNORECASE),
        hook_re=re.compile(rf"^(?:{HOOK_OPENERS[key]})\b", re.IGNORECASE),
        attribution_re=re.compile(rf"[«»“”\"]|\b(?:{ATTRIBUTION_PHRASES[key]})\b", re.IGNORECASE),
        tag_question_re=re.compile(rf"^(?:{TAG_QUESTIONS[key]})\s*\?*$", re.IGNORECASE),
        tag_ending_re=re.compile(rf"[,;]\s*(?:{TAG_QUESTIONS[key]})\s*\?+\s*$", re.IGNORECASE),
        speech_re=re.compile(SPEECH_MARKERS[key], re.IGNORECASE),
        question_lead_re=re.compile(rf"^(?:{QUESTION_LEADS[key]})\s*[,:]?\s+", re.IGNORECASE),
        read_question_re=re.compile(READ_QUESTIONS[key], re.IGNORECASE),
        process_re=re.compile(rf"\b(?:{PROCESS_WORDS[key]})\b", re.IGNORECASE),
        leading_words=frozenset(LEADING_WORDS[key].split()),
        question_openers=QUESTION_OPENERS[key],
        connectives=frozenset(CONNECTIVE_OPENERS[key].split()),
        dependent_openers=frozenset(CONNECTIVE_OPENERS[key].split()) | frozenset(ANAPHORA_OPENERS[key].split()),
    )


GUESS_WORDS = 400  # words read to guess a text's language: a few minutes of speech
GUESS_MIN_HITS = 8  # stop words the best language must find (a 20-second clip has them), else the default


@lru_cache(maxsize=8)
def _own_stop_words(code: str) -> frozenset[str]:
    """``code``'s stop words that no other of the seven languages lists: what tells them apart
    ("de" or "a" are stop words of four languages and vote for none)."""
    others = set().union(*(_stop_words(other) for other in LANGUAGES if other != code))
    return _stop_words(code) - others


def guess_language(text: str, default: str = DEFAULT_LANGUAGE, min_hits: int = GUESS_MIN_HITS) -> str:
    """The one of the seven languages ``text`` is most likely in, by the stop words of its first
    ``GUESS_WORDS`` words that only that language lists; ``default`` when no language finds
    ``min_hits`` of them or two tie."""
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower().replace("’", "'"))[:GUESS_WORDS]
    hits = sorted(((sum(w in _own_stop_words(code) for w in words), code) for code in LANGUAGES), reverse=True)
    (best, code), (second, _) = hits[0], hits[1]
    return code if best >= min_hits and best > second else default


def lang_code(code: str | None) -> str:
    """The two-letter code of one of the seven languages: French for none, English for any other."""
    key = (code or DEFAULT_LANGUAGE).lower().split("-")[0].split("_")[0]
    return key if key in LANGUAGES else "en"
