"""Text primitives shared by the analysis: words, content words, fillers, labels, folding.

The per-language resources (stop words, word frequencies, stems, cue phrases) are in
``domain.analysis.language``; this module applies them to words and sentences.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from itertools import islice

from domain.analysis.language import NUMBER_RE, lang_code
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.languages import DEFAULT_LANGUAGE, LANGUAGES, table

# Disfluencies and loose connectors removed from the start of a quoted sentence (never from its middle).
LEADING_FILLERS = table("leading_fillers")
# The fillers of the analysis' first two languages, for a caller that names no language.
FILLERS = tuple(dict.fromkeys(LEADING_FILLERS[DEFAULT_LANGUAGE].split() + LEADING_FILLERS["en"].split()))
COMMA_OPENERS = {code: frozenset(w.split()) for code, w in table("comma_openers").items()}
OPENERS = COMMA_OPENERS[DEFAULT_LANGUAGE] | COMMA_OPENERS["en"]  # for a caller that names no language, as FILLERS
# A word or two said again at once ("I, I always thought", "how, how do you", "or the or the"): speech that
# restarts, which makes no lead of a section nor a question a person would type.
RESTART_RE = re.compile(r"\b(\w+(?:\s+\w+)?)[\s,.…-]+\1\b", re.IGNORECASE)
# Sounds of hesitation ("uh", "euh", "ähm"), with the commas around them: left out of a printed quote.
HESITATION_RES = {
    code: re.compile(r",?\s*\b(?:" + "|".join(map(re.escape, words.split())) + r")\b[\s,…]*", re.IGNORECASE)
    for code, words in table("hesitations").items()
}
# A word said again at once across a comma, a dash or an ellipsis ("the, the, the production", "and, and"), or
# two words said again at once ("what are, what are", "I built I built"): a stutter or a false start, printed
# once when it opens with a function word (``clean_verbatim``; "that that" may be grammar, "or the or the" is not).
STUTTER_RE = re.compile(r"\b(\w+(?:['’]\w+)?)(?:\s*[,…–—-]+\s*\1\b)+"
                        r"|\b(\w+(?:['’]\w+)?\s+\w+(?:['’]\w+)?)(?:[\s,…–—-]+\2\b)+", re.IGNORECASE)
# The definite article a contraction or a partitive stands for: "des panneaux" said, "les panneaux"
# asked about; "del precio", "el precio"; "all'accumulo", "l'accumulo".
DEFINITE = table("definite")
ARTICLE_RE = {
    code: r"\b(" + "|".join(sorted(set(articles) | set(DEFINITE[code]), key=len, reverse=True)) + r")\s{}\b"
    for code, articles in table("definite_articles").items()
}

WORD_RE = re.compile(r"[^\W_](?:[\w'’\-]*[^\W_])?", re.UNICODE)
# Elided articles and pronouns before a word: French (l'énergie, qu'il) and Italian (dell'acqua, un'idea).
ELISION_RE = re.compile(r"^(?:[ldjmntsc]|qu|jusqu|lorsqu|puisqu|dell|nell|all|dall|sull|quest|quell|un|po)['’]",
                        re.IGNORECASE)
POSSESSIVE_RE = re.compile(r"['’]s$", re.IGNORECASE)
SPACE_RE = re.compile(r"\s+")
FILLER_RE = re.compile(r"([^\W\d_]+)\s*[,.…]*\s+")

LABELS: dict[str, dict[str, str]] = table("labels")  # the one table of section labels


def lang_key(language: str | None) -> str:
    """One of the seven languages' codes: French for none, English for a language outside them."""
    return lang_code(language)


def labels(language: str | None) -> dict[str, str]:
    return LABELS[lang_key(language)]


def colon(language: str | None) -> str:
    """What stands between a label and its text: ": ", or " : " in French typography."""
    return LANGUAGES[lang_key(language)].colon


def question_mark(language: str | None) -> str:
    return LANGUAGES[lang_key(language)].question_mark


def clean_spaces(text: str) -> str:
    return SPACE_RE.sub(" ", text).strip()


def word_before(text: str, end: int) -> str:
    """The last whitespace-separated word of ``text[:end]`` ("" when none), found by scanning back
    from ``end``: splitting everything before each point made long sentences quadratic."""
    stop = end
    while stop > 0 and text[stop - 1].isspace():
        stop -= 1
    begin = stop
    while begin > 0 and not text[begin - 1].isspace():
        begin -= 1
    return text[begin:stop]


def word_after(text: str, start: int) -> str:
    """The first whitespace-separated word of ``text[start:]`` ("" when none), scanning forward."""
    begin, n = start, len(text)
    while begin < n and text[begin].isspace():
        begin += 1
    stop = begin
    while stop < n and not text[stop].isspace():
        stop += 1
    return text[begin:stop]


def words(text: str) -> list[str]:
    """Surface words in order (letters, digits, inner apostrophes and hyphens)."""
    return WORD_RE.findall(text)


def norm_token(word: str) -> str:
    """Lowercase, apostrophe unified, elision removed (``l'énergie`` -> ``énergie``, ``dell'acqua`` ->
    ``acqua``), possessive dropped (``Andrey's`` -> ``andrey``)."""
    low = word.lower().replace("’", "'")
    low = ELISION_RE.sub("", low) or low
    return POSSESSIVE_RE.sub("", low) or low


def is_content_token(token: str, language: str | None = None) -> bool:
    """A normalised word that carries meaning: three letters or more, no stop word or filler of the
    language, no digit, no contraction (``don't``, ``they're``: grammar, never a subject)."""
    return (len(token) >= 3 and "'" not in token and token not in language_of(language).stop_words
            and not NUMBER_RE.search(token))


def content_tokens(text: str, language: str | None = None) -> list[str]:
    """Normalised words that carry meaning, in order (see ``is_content_token``)."""
    stops = language_of(language).stop_words
    out = []
    for word in WORD_RE.findall(text):
        token = norm_token(word)
        if len(token) >= 3 and "'" not in token and token not in stops and not NUMBER_RE.search(token):
            out.append(token)
    return out


def is_stop(token: str, language: str | None = None) -> bool:
    return token in language_of(language).stop_words


def fold(text: str) -> str:
    """Accent-free lowercase with only letters, digits and single spaces: for matching and ids."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    ascii_like = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return clean_spaces(re.sub(r"[^\w]+", " ", ascii_like).replace("_", " "))


def strip_leading_fillers(text: str, language: str | None = None) -> str:
    """Drop disfluencies and loose connectors at the start ("Euh, alors, ...") and a word of sequence
    before a comma ("Finally, how do you choose...?": ``Language.comma_openers``), and capitalise; the
    fillers are the language's, or French and English ones when no language is named."""
    fillers = FILLERS if language is None else LEADING_FILLERS[lang_key(language)].split()
    openers = OPENERS if language is None else COMMA_OPENERS[lang_key(language)]
    text = text.strip()
    at = 0  # an index rather than a slice per filler: a long run of fillers stays linear
    while True:
        match = FILLER_RE.match(text, at)
        if not match or (match.group(1).lower() not in fillers
                         and not (match.group(1).lower() in openers and "," in match.group(0))):
            break
        if len(list(islice(WORD_RE.finditer(text, match.end()), 4))) < 4:
            break
        at = match.end()
    rest = text[at:]
    return rest[:1].upper() + rest[1:] if rest else rest


def clean_verbatim(text: str, language: str | None = None) -> str:
    """A quote as a clean verbatim transcript prints it, every other word as said and in its order:

    - the sounds of hesitation left out with the commas around them (``Language.hesitations``: "das ist,
      ähm, gut" -> "das ist gut", "a heat pump, uh, works" -> "a heat pump works");
    - a word said again at once across a comma, or two words said again, opening with a function word,
      printed once ("the, the, the production" -> "the production"; "I, I built, um, I built" -> "I built")."""
    kit = language_of(language)

    def stutter(match: re.Match[str]) -> str:
        said = match.group(1) or match.group(2)
        first = said.split()[0].lower().replace("’", "'")
        return said if first in kit.stop_words else match.group(0)

    cleaned = HESITATION_RES[kit.code].sub(" ", text)
    for _ in range(3):  # "I, I built, I built": the word, then the two
        cleaned, found = STUTTER_RE.subn(stutter, cleaned)
        if not found:
            break
    cleaned = re.sub(r"\s+([,.…])", r"\1", clean_spaces(cleaned))  # French keeps its space before "?", ";"
    cleaned = re.sub(r",(?:\s*,)+", ",", cleaned)
    cleaned = re.sub(r",(\s*[.!?…])", r"\1", cleaned).strip(" ,")
    if not any(ch.isalnum() for ch in cleaned):
        return text  # nothing but hesitation: left as said
    return capitalise(cleaned) if text[:1].isupper() else cleaned


def quote(sentence: Sentence, language: str | None = None) -> str:
    """The transcript sentence as printed: start cleaned, hesitations and stutters left out
    (``text.clean_verbatim``), final punctuation ensured (a sentence the captions closed at a comma,
    ``sentences._runs_long``, ends with a full stop instead)."""
    text = clean_verbatim(strip_leading_fillers(sentence.text, language), language)
    if text[-1:] in ".!?…»\"":
        return text
    return text.rstrip(" ,;:–—") + "."


def looks_like_question(text: str, language: str | None) -> bool:
    """A question mark ends it, an inverted one opens it, or (captions drop the mark) it opens with
    one of the language's question openers (``pourquoi``, ``warum``, ``por qué``...)."""
    stripped = text.strip()
    if stripped.endswith("?") or stripped.startswith("¿"):
        return True
    low = stripped.lower().replace("’", "'")
    return any(low.startswith(opener) and low[len(opener):len(opener) + 1] in (" ", ",", "")
               for opener in language_of(language).question_openers)


READ_QUESTION_END_RE = re.compile(r"[,;:.!?…]")


def read_out_question(text: str, language: str | None) -> str | None:
    """The question a sentence reads out, as a person would write it, with its question mark: what follows
    the words that report it (``Language.read_questions``) up to the first comma or the sentence's end.
    "Adam says what makes a software engineer senior." -> "What makes a software engineer senior?";
    "Next question is from Joel, how do you handle SVGs." -> "How do you handle SVGs?"; "How often do you
    make commits, I always hear..." -> "How often do you make commits?". Read clean verbatim, so that a
    hesitation between commas ends nothing ("How can we, uh, improve the API?"). None when it reads none out."""
    text = clean_verbatim(text, language)
    match = language_of(language).read_question_re.search(text)
    if match is None:
        return None
    rest = text[match.end():]
    end = READ_QUESTION_END_RE.search(rest)
    question = rest[:end.start() if end else len(rest)].strip()
    return as_question(question, language) if question else None


def as_question(query: str, language: str | None) -> str:
    """A query or a question read out as a heading: capitalised, with the language's question mark (and
    Spanish's opening one)."""
    text = capitalise(query.strip().rstrip("?？ ").strip())
    if lang_key(language) == "es" and not text.startswith("¿"):
        text = "¿" + text
    return text + question_mark(language)


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def definite_article(name: str, folded_texts: Sequence[str], language: str | None) -> str | None:
    """The definite article the speakers say most before ``name`` in ``folded_texts`` (``fold``ed), as the
    language's ``definite_articles`` spell it ("les" of "des pompes à chaleur", "l" of "l'isolation"); None
    when they say none, or the language has no such article here."""
    key = lang_key(language)
    if key not in ARTICLE_RE:
        return None
    pattern = re.compile(ARTICLE_RE[key].format(re.escape(fold(name))))
    seen: dict[str, int] = {}
    for text in folded_texts:
        for match in pattern.finditer(text):
            said = DEFINITE[key].get(match.group(1), match.group(1))
            seen[said] = seen.get(said, 0) + 1
    return max(seen, key=lambda a: (seen[a], a)) if seen else None


# "How do you choose...", "What should we look for...": a question put to anyone, said as a heading
# with "to" ("How to choose..."). "Why", and "what do you" (often "what do you think"), keep theirs.
IMPERSONAL_RE = {
    "en": re.compile(r"^(how|where|when|which \w+|what(?= +(?:should|can|could|must)\b))"
                     r" +(?:do|does|can|could|should|would|must|might) +(?:you|we|one|people) +"
                     r"(?!(?:think|mean|know|say|see|have to)\b)([a-z].*?)\s*\?*$", re.IGNORECASE),
}


def impersonal(question: str, code: str | None) -> str | None:
    """A question put to a generic "you" or "we" as a heading ("How to choose the right
    installation"), or None when it is not one (or the language has no rule)."""
    pattern = IMPERSONAL_RE.get(language_of(code).code)
    match = pattern.match(question.strip()) if pattern else None
    if match is None:
        return None
    return capitalise(f"{match.group(1).lower()} to {match.group(2)}")
