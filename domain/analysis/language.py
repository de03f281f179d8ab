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

LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl")
STEMMER_NAMES = {"en": "english", "fr": "french", "de": "german", "es": "spanish", "it": "italian",
                 "pt": "portuguese", "nl": "dutch"}

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
SPOKEN_FILLERS = {
    "en": "um umm uh uhh er erm hmm mm mhm yeah yep yup nope gonna wanna gotta kinda sorta okay ok alright "
          "hello hi hey welcome thanks thank bye goodbye "
          "right yes stuff things thing guys lot lots basically actually literally really totally pretty "
          "like just gonna y'all ain't cool awesome super",
    "fr": "euh heu hum bah ben hein ouais ok okay bon voilà genre truc trucs machin bref enfin quoi "
          "bonjour bonsoir salut bienvenue merci revoir c'est-à-dire est-à-dire "
          "vraiment carrément effectivement justement tellement c'est j'ai y'a",
    "de": "äh ähm öhm hm mhm ja jo naja halt eben genau okay ok also quasi sozusagen irgendwie eigentlich "
          "hallo willkommen danke tschüss "
          "wirklich einfach mal",
    "es": "eh em ehm este pues bueno vale o sea tipo vamos verdad okay ok entonces digamos realmente "
          "hola bienvenidos gracias adiós",
    "it": "ehm eh uhm cioè allora insomma tipo praticamente diciamo okay ok beh vabbè ciao benvenuti grazie "
          "arrivederci",
    "pt": "é né tipo então pronto bem bom okay ok ah eh hum digamos realmente olá bem-vindos obrigado obrigada "
          "tchau",
    "nl": "eh uh uhm ehm nou zeg gewoon even eigenlijk dus oké okay ok ja nee hè toch hallo welkom bedankt dank "
          "doei",
}

# Cue phrases that open a new part, matched at the start of a sentence after the leading words
# (``LEADING_WORDS``) are set aside. "Now", "so", "and", "okay" and "all right" are leading words, so
# "Now, ...", "And now we're ...", "Okay so ..." open no part by themselves: made cues, they lowered
# the chapter boundaries' F1 on the lectures and podcasts measured (docs/benchmarks.md).
CUE_PHRASES = {
    "en": r"next(?:\s+(?:one|up|we|is|thing|step|topic|question|item|on))?|"
          r"let['’]?s\s+(?:now\s+)?(?:talk|move|turn|look|start|dive|get\s+into|switch|go\s+(?:on|back|to)|kick|jump|begin|finish|wrap|take\s+a\s+look|shift|"
          r"focus|think\s+about|zoom)|moving\s+on|the\s+next\s+(?:one|thing|topic|step|question|part|section|chapter|item|idea)|"
          r"first(?:ly)?(?:\s+(?:of\s+all|up|off))?|second(?:ly)?|third(?:ly)?|finally|lastly|to\s+(?:conclude|"
          r"wrap\s+up|sum\s+up|summari[sz]e|start)|in\s+conclusion|another\s+(?:thing|point|question|topic|one|"
          r"example|way)|turning\s+to|as\s+a\s+next\s+step|switching\s+gears|speaking\s+of|on\s+to|onto|"
          r"stepping\s+back|with\s+(?:all\s+of\s+)?(?:that|this|those)|at\s+this\s+point|before\s+we\s+(?:get|go|"
          r"dive|start|jump|move)|(?:we['’]re|we\s+are|i['’]m|i\s+am)\s+(?:gonna|going\s+to)\s+(?:now\s+)?"
          r"(?:move|talk|look|switch|turn|dive|get\s+into)|one\s+(?:more|last|other)\s+thing|"
          r"here['’]?s\s+(?:the\s+)?(?:next|second|first|last|thing)|alright|"
          r"the\s+(?:first|second|third|last|final)\s+(?:one|thing|step|part|question|topic)|"
          r"what\s+(?:is|are|about|happens)|how\s+(?:do|does|about|can)|why\s+(?:is|are|do|does)",
    "fr": r"(?:et\s+)?maintenant|passons|parlons|venons-en|abordons|ensuite|deuxième(?:ment)?|troisième(?:ment)?|"
          r"premièrement|d['’]abord|tout\s+d['’]abord|pour\s+commencer|pour\s+conclure|en\s+conclusion|pour\s+finir|"
          r"enfin|autre\s+(?:point|question|sujet|chose|exemple)|revenons|à\s+présent|voyons|regardons|"
          r"(?:la|le)\s+(?:prochaine?|suivante?)\s+(?:étape|question|point|sujet|partie)|"
          r"(?:la|le)\s+(?:première?|deuxième|dernière?)\s+(?:étape|question|chose|partie)|"
          r"qu['’]est-ce\s+(?:que|qui)|comment|pourquoi|jusqu['’]à\s+présent|avant\s+(?:de|d['’])",
    "de": r"jetzt|nun|als\s+nächstes|kommen\s+wir|lass(?:t)?\s+uns|sprechen\s+wir|reden\s+wir|zunächst|erstens|"
          r"zweitens|drittens|schließlich|zum\s+schluss|abschließend|zusammenfassend|ein\s+(?:anderes|weiteres)\s+"
          r"(?:thema|beispiel)|weiter\s+geht|(?:das|der|die)\s+nächste|was\s+(?:ist|sind|passiert)|wie\s+"
          r"(?:funktioniert|kann)|warum",
    "es": r"ahora|a\s+continuación|pasemos|hablemos|vamos\s+(?:a|con)|veamos|primero|segundo|tercero|"
          r"en\s+(?:primer|segundo|tercer)\s+lugar|finalmente|por\s+último|para\s+(?:terminar|concluir|empezar)|"
          r"en\s+conclusión|otro\s+(?:tema|punto|ejemplo)|(?:el|la)\s+siguiente|¿?\s*qué\s+es|¿?\s*cómo|¿?\s*por\s+qué",
    "it": r"ora|adesso|passiamo|parliamo|vediamo|prima\s+di\s+tutto|innanzitutto|per\s+prima\s+cosa|"
          r"in\s+(?:primo|secondo|terzo)\s+luogo|infine|per\s+(?:concludere|finire|iniziare)|in\s+conclusione|"
          r"un\s+altro\s+(?:punto|tema|esempio)|(?:il|la)\s+prossim[oa]|che\s+cos['’]è|come|perché",
    "pt": r"agora|a\s+seguir|em\s+seguida|passemos|vamos\s+(?:falar|passar|ver|agora)|falemos|primeiro|segundo|"
          r"terceiro|em\s+primeiro\s+lugar|finalmente|por\s+fim|para\s+(?:concluir|terminar|começar)|"
          r"em\s+conclusão|outro\s+(?:ponto|tema|assunto|exemplo)|(?:o|a)\s+próxim[oa]|o\s+que\s+é|como|por\s+que",
    "nl": r"nu|vervolgens|daarna|laten\s+we|we\s+gaan\s+(?:nu|verder)|eerst|ten\s+(?:eerste|tweede|derde|slotte)|"
          r"tot\s+slot|concluderend|samenvattend|een\s+ander\s+(?:punt|onderwerp|voorbeeld)|(?:het|de)\s+volgende|"
          r"wat\s+is|hoe\s+werkt|waarom",
}
# Words that may open an announcement ("First, let's talk about...", "Zuerst sprechen wir über...").
_OPENERS = {code: rf"(?:(?:{words})[\s,]+)?" for code, words in {
    "en": r"next|first|finally|lastly|then",
    "fr": r"d['’]abord|ensuite|enfin|maintenant|puis|pour\s+finir|pour\s+commencer",
    "de": r"zuerst|zunächst|dann|jetzt|nun|schließlich|zum\s+schluss|als\s+nächstes",
    "es": r"primero|luego|después|ahora|finalmente|por\s+último|para\s+terminar",
    "it": r"prima\s+di\s+tutto|innanzitutto|poi|ora|adesso|infine|per\s+finire",
    "pt": r"primeiro|depois|agora|finalmente|por\s+fim|para\s+terminar",
    "nl": r"eerst|dan|nu|daarna|tot\s+slot|ten\s+slotte",
}.items()}
# A subject announced by name as a part starts ("Next, let's talk about battery storage", "Passons
# maintenant au stockage de l'énergie"): the words after the phrase (its article or contraction
# left out) are the subject the speaker names, matched after the leading words.
ANNOUNCE_PHRASES = {
    "en": _OPENERS["en"] + r"(?:let['’]?s|let\s+us)\s+(?:now\s+)?(?:(?:talk|speak|think)\s+about|"
          r"(?:move\s+on|turn|switch|get|go\s+on)\s+to|(?:look|take\s+a\s+look)\s+at|dive\s+into)|"
          r"moving\s+on\s+to|turning\s+to|next\s+up\s+is|next\s+up,",
    "fr": _OPENERS["fr"] + r"(?:parlons|discutons)\s+(?:maintenant\s+|un\s+peu\s+|enfin\s+)?"
          r"(?:de\s+la|de\s+l['’]|du|des|de|d['’])|"
          + _OPENERS["fr"] + r"(?:passons|venons-en)\s+(?:maintenant\s+|enfin\s+)?(?:à\s+la|à\s+l['’]|au|aux)|"
          r"abordons\s+(?:maintenant\s+|enfin\s+)?(?:la|le|les|l['’])",
    "de": _OPENERS["de"] + r"(?:sprechen|reden)\s+wir\s+(?:jetzt\s+|nun\s+)?über(?:\s+(?:den|die|das))?|"
          + _OPENERS["de"] + r"kommen\s+wir\s+(?:jetzt\s+|nun\s+)?(?:zum|zur|zu(?:\s+den)?)",
    "es": _OPENERS["es"] + r"hablemos\s+(?:ahora\s+|un\s+poco\s+)?(?:de\s+la|de\s+los|de\s+las|del|de)|"
          + _OPENERS["es"] + r"pasemos\s+(?:ahora\s+)?(?:a\s+la|a\s+los|a\s+las|al)",
    "it": _OPENERS["it"] + r"parliamo\s+(?:ora\s+|adesso\s+)?(?:dello|della|dei|degli|delle|dell['’]|del|di)|"
          + _OPENERS["it"] + r"passiamo\s+(?:ora\s+|adesso\s+)?(?:allo|alla|ai|agli|alle|all['’]|al)",
    "pt": _OPENERS["pt"] + r"(?:vamos\s+falar|falemos)\s+(?:agora\s+)?(?:sobre\s+(?:o|a|os|as)|do|da|dos|das|de)|"
          + _OPENERS["pt"] + r"passemos\s+(?:agora\s+)?(?:aos|às|ao|à)",
    "nl": _OPENERS["nl"] + r"laten\s+we\s+het\s+(?:nu\s+)?(?:even\s+)?hebben\s+over(?:\s+(?:de|het))?",
}
# A sentence that opens the steps of an answer ("How do you choose? Start by measuring your use."):
# after a question, the steps that follow are its answer.
STEP_OPENERS = {
    "en": r"first(?:ly)?|start(?:ing)?\s+(?:by|with)|begin\s+(?:by|with)|to\s+start|step\s+one",
    "fr": r"d['’]abord|tout\s+d['’]abord|commence[zr]?\s+par|premièrement|il\s+faut\s+d['’]abord|"
          r"la\s+première\s+étape",
    "de": r"zuerst|zunächst|als\s+erstes|erstens|beginnen\s+sie\s+mit",
    "es": r"primero|para\s+empezar|empieza|comienza|en\s+primer\s+lugar",
    "it": r"prima\s+di\s+tutto|innanzitutto|per\s+prima\s+cosa|inizia|comincia|in\s+primo\s+luogo",
    "pt": r"primeiro|para\s+começar|comece|em\s+primeiro\s+lugar",
    "nl": r"eerst|begin\s+met|ten\s+eerste|om\s+te\s+beginnen",
}
# What the English phrases leave before the subject ("the price of...") and after it ("... for a moment").
# The subject a video names for itself in its opening ("Welcome to this video about home solar
# power", "Willkommen zu diesem Video über Solarenergie in Deutschland"): the words after the phrase,
# its article left out, are the video's subject (``Language.video_subject``).
VIDEO_SUBJECT_PHRASES = {
    "en": r"\b(?:this|today['’]s)\s+(?:(?:short|quick|brief|little)\s+)?(?:(?:video|episode|talk|lesson|lecture|"
          r"podcast|presentation|overview|tutorial)\s+(?:is\s+)?(?:about|on)|(?:guide|introduction)\s+to)\s+"
          r"(?:the\s+)?",
    "fr": r"\b(?:cette|cet|ce)\s+(?:petite?\s+)?(?:vidéo|épisode|cours|podcast|leçon|présentation|introduction|"
          r"guide|tutoriel)\s+(?:sur|consacrée?\s+à|à\s+propos\s+de)\s+(?:la\s+|le\s+|les\s+|l['’])?",
    "de": r"\b(?:diese[mnrs]?|unsere[mnrs]?)\s+(?:kurzen?\s+)?(?:Video|Folge|Episode|Vortrag|Podcast|Präsentation|"
          r"Einführung|Anleitung)\s+(?:über|zum\s+Thema|in)\s+(?:den\s+|die\s+|das\s+)?",
    "es": r"\b(?:este|esta)\s+(?:(?:breve|pequeño|pequeña)\s+)?(?:vídeo|video|episodio|clase|podcast|presentación|"
          r"guía|introducción)\s+(?:sobre|acerca\s+de|a)\s+(?:la\s+|el\s+|los\s+|las\s+)?",
    "it": r"\b(?:questo|questa)\s+(?:(?:breve|piccolo|piccola)\s+)?(?:video|episodio|lezione|podcast|presentazione|"
          r"guida|introduzione)\s+(?:sull['’]|(?:sul|sullo|sulla|sui|sugli|sulle|su)\s+)",
    "pt": r"\b(?:este|esta)\s+(?:(?:breve|pequeno|pequena)\s+)?(?:vídeo|video|episódio|aula|podcast|apresentação|"
          r"guia|introdução)\s+(?:sobre|acerca\s+de)\s+(?:o\s+|a\s+|os\s+|as\s+)?",
    "nl": r"\b(?:deze|dit)\s+(?:korte\s+)?(?:video|aflevering|les|podcast|presentatie|introductie|gids)\s+"
          r"(?:over|van)\s+(?:de\s+|het\s+)?",
}
ANNOUNCED_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
ANNOUNCED_TAIL_RE = re.compile(r"\s+(?:now|today|again|here|first|next|for\s+a\s+(?:moment|minute|second|bit)|"
                               r"a\s+(?:little\s+)?bit|briefly|quickly)$", re.IGNORECASE)
# Words that may stand before a cue phrase ("So, next ...", "Alors, passons ...").
LEADING_WORDS = {
    "en": "so and but okay ok alright well right um uh now yeah yes all",
    "fr": "alors bon donc et mais euh bien ok bah ben",
    "de": "also okay ok und aber gut so ähm naja",
    "es": "bueno pues y pero vale entonces bien eh",
    "it": "allora bene ok e ma dunque ehm",
    "pt": "então bom bem e mas ok",
    "nl": "oké okay ok goed dus en maar nou",
}
CONCLUSION_PHRASES = {
    "en": r"in\s+conclusion|to\s+conclude|to\s+sum\s+up|to\s+summari[sz]e|in\s+summary|wrapping\s+up|to\s+wrap\s+up|"
          r"final(?:ly)?\s+(?:thought|word)s?|that['’]?s\s+(?:it|all)\s+for",
    "fr": r"en\s+conclusion|pour\s+conclure|pour\s+résumer|en\s+résumé|pour\s+finir|en\s+somme|"
          r"le\s+mot\s+de\s+la\s+fin",
    "de": r"zusammenfassend|abschließend|zum\s+schluss|alles\s+in\s+allem|fazit",
    "es": r"en\s+conclusión|para\s+concluir|en\s+resumen|para\s+terminar|en\s+definitiva",
    "it": r"in\s+conclusione|per\s+concludere|riassumendo|in\s+sintesi|per\s+finire",
    "pt": r"em\s+conclusão|para\s+concluir|em\s+resumo|para\s+terminar|resumindo",
    "nl": r"tot\s+slot|concluderend|samenvattend|kortom|ten\s+slotte",
}
# A sponsor read or an advertisement in a podcast: a part of its own.
SPONSOR_PHRASES = {
    "en": r"\bsponsor(?:ed|s)?\b|\bbrought\s+to\s+you\s+by\b|\bpromo\s+code\b|\bcoupon\s+code\b|\bfree\s+trial\b",
    "fr": r"\bsponsor(?:isé|s)?\b|\bpartenaire\s+de\s+(?:cet|cette|l['’])|\bcode\s+promo\b|\bessai\s+gratuit\b",
    "de": r"\bsponsor(?:ed|s)?\b|\bpräsentiert\s+von\b|\bgutscheincode\b|\brabattcode\b",
    "es": r"\bpatrocina(?:dor|do|da)\b|\bcódigo\s+(?:promocional|de\s+descuento)\b",
    "it": r"\bsponsor\b|\bcodice\s+(?:sconto|promozionale)\b",
    "pt": r"\bpatrocina(?:dor|do|da)\b|\bcódigo\s+(?:promocional|de\s+desconto)\b",
    "nl": r"\bsponsor(?:s|ed)?\b|\bkortingscode\b",
}
# A sentence opening with one of these asks a question even without its question mark (captions drop it).
QUESTION_OPENERS = {
    "fr": ("pourquoi", "comment", "combien", "qu'est-ce", "est-ce que"),
    "en": (),
    "de": ("warum", "wieso", "weshalb"),
    "es": ("por qué", "cómo"),
    "it": ("perché", "come mai"),
    "pt": ("por que", "porque é que"),
    "nl": ("waarom", "hoe komt"),
}


@dataclass(frozen=True)
class Language:
    """The resources of one language (see the module's docstring for where each comes from)."""

    code: str
    stop_words: frozenset[str]
    frequencies: dict[str, float] = field(repr=False)
    cue_re: re.Pattern = field(repr=False)
    conclusion_re: re.Pattern = field(repr=False)
    sponsor_re: re.Pattern = field(repr=False)
    announce_re: re.Pattern = field(repr=False)
    video_subject_re: re.Pattern = field(repr=False)
    steps_re: re.Pattern = field(repr=False)
    leading_words: frozenset[str] = frozenset()
    question_openers: tuple[str, ...] = ()

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
        return _stemmer(self.code).stemWord(word)

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
def _stemmer(code: str):
    import Stemmer

    return Stemmer.Stemmer(STEMMER_NAMES[code])


# Two amounts joined by "and" ("between eight thousand and fifteen thousand euros") are read by
# text2num as one sum ("8015 1000"). The conjunction separates two numbers when the left one ends
# on a scale of a thousand or more and the right one reaches at least that scale within its first
# words: "eight thousand and fifteen thousand", "two million et trois millions". It stays inside
# one number otherwise: "two hundred and fifty thousand" (250,000), "three thousand and five".
CONJUNCTIONS = {"en": "and", "fr": "et", "de": "und", "es": "y", "it": "e", "pt": "e", "nl": "en"}
SCALES = {
    "en": {"thousand": 3, "million": 6, "millions": 6, "billion": 9, "billions": 9},
    "fr": {"mille": 3, "million": 6, "millions": 6, "milliard": 9, "milliards": 9},
    "de": {"tausend": 3, "million": 6, "millionen": 6, "milliarde": 9, "milliarden": 9},
    "es": {"mil": 3, "millón": 6, "millones": 6},
    "it": {"mila": 3, "mille": 3, "milione": 6, "milioni": 6, "miliardo": 9, "miliardi": 9},
    "pt": {"mil": 3, "milhão": 6, "milhões": 6, "bilhão": 9, "bilhões": 9},
    "nl": {"duizend": 3, "miljoen": 6, "miljard": 9},
}
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
    def sign(match: re.Match) -> str:
        number = match.group(1)
        return f"{number} %" if _is_number_word(number, code) else match.group(0)

    return PER_CENT_RE.sub(sign, text)


# An indefinite article before a number is "about" or "a", not one: "cuesta unos doscientos euros"
# (about 200), "un ochenta por ciento" (80 %), which the reading of numbers makes "1 200" and "1 80".
# Before a scale it is the number ("un millón", "um milhão"). Set aside before numbers are read.
INDEFINITE = {"es": "un una unos unas", "it": "un uno una", "pt": "um uma uns umas"}


def _indefinite_set_aside(code: str, text: str) -> str:
    articles = INDEFINITE.get(code)
    if not articles:
        return text
    scales = SCALES.get(code, {})

    def aside(match: re.Match) -> str:
        following = match.group(2).lower()
        if following in scales or not _is_number_word(following, code):
            return match.group(0)
        return f"~ {match.group(2)}"

    return re.sub(rf"\b({articles.replace(' ', '|')})\s+([\w-]+)", aside, text, flags=re.IGNORECASE)


# "Several hundred", "hundreds of", "mehrere hundert", "varios cientos": no figure, but the reading of
# numbers makes them 100 or 1000. The number word is set aside (read as no number).
VAGUE_AMOUNTS = {
    "en": (r"several|a few|some|many", r"hundred|thousand", r"hundreds|thousands"),
    "de": (r"mehrere|einige|ein paar|viele", r"hundert|tausend", r"hunderte|tausende"),
    "es": (r"varios|varias|algunos|algunas|muchos|muchas", r"cien|mil", r"cientos|miles|centenares"),
    "nl": (r"enkele|een paar|meerdere|vele", r"honderd|duizend", r"honderden|duizenden"),
}


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
        announce_re=re.compile(rf"(?:{ANNOUNCE_PHRASES[key]})(?:(?<=['’])|(?!\w))\s*", re.IGNORECASE),
        video_subject_re=re.compile(VIDEO_SUBJECT_PHRASES[key], re.IGNORECASE),
        leading_words=frozenset(LEADING_WORDS[key].split()),
        question_openers=QUESTION_OPENERS[key],
    )


GUESS_WORDS = 400  # words read to guess a text's language: a few minutes of speech
GUESS_MIN_HITS = 8  # stop words the best language must find (a 20-second clip has them), else the default


@lru_cache(maxsize=8)
def _own_stop_words(code: str) -> frozenset[str]:
    """``code``'s stop words that no other of the seven languages lists: what tells them apart
    ("de" or "a" are stop words of four languages and vote for none)."""
    others = set().union(*(_stop_words(other) for other in LANGUAGES if other != code))
    return _stop_words(code) - others


def guess_language(text: str, default: str = "fr") -> str:
    """The one of the seven languages ``text`` is most likely in, by the stop words of its first
    ``GUESS_WORDS`` words that only that language lists; ``default`` when no language finds
    ``GUESS_MIN_HITS`` of them or two tie."""
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower().replace("’", "'"))[:GUESS_WORDS]
    hits = sorted(((sum(w in _own_stop_words(code) for w in words), code) for code in LANGUAGES), reverse=True)
    (best, code), (second, _) = hits[0], hits[1]
    return code if best >= GUESS_MIN_HITS and best > second else default


def lang_code(code: str | None) -> str:
    """The two-letter code of one of the seven languages: French for none, English for any other."""
    key = (code or "fr").lower().split("-")[0].split("_")[0]
    return key if key in LANGUAGES else "en"
