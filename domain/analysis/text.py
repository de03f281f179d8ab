"""Language resources and text primitives shared by the analysis: words, stop words, sentence cues.

French and English are covered; any other language falls back to both lists (stop words are only
ever removed, so the union is safe) and English wording for generated labels.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import islice

STOP_FR = frozenset("""
a à ai aie ainsi alors as au aucun aucune aujourd aujourd'hui auquel aura aurait aussi autre autres aux avait avant
avec avez avoir avons ayant bah ben bien bon c ça car ce ceci cela celle celles celui cependant certains certaines
ces cet cette ceux chaque chez ci comme comment contre d dans de des deux donc dont du elle elles en encore entre
es est et étaient était été être eu eux fait faire fais faut font fois hein ici il ils j je jusqu l la là le les
leur leurs lui m ma mais me même mêmes mes moi moins mon n ne ni non nos notre nous on ont ou où oui par parce pas
peu peut peuvent plus plutôt pour pourquoi puis qu quand que quel quelle quelles quels qui quoi s sa sans se sera
ses si sien soit son sont sous suis sur t ta te tes toi ton tous tout toute toutes très tu un une unes uns vers
voilà vos votre vous vraiment y euh hum bref enfin après avant déjà toujours jamais rien quelque quelques chose
choses beaucoup trop tellement mettre mets met prendre prend prends donner donne trouver trouve utiliser
utilise passer passe falloir devoir doit doivent pouvoir pouvez pouvons savoir sais sait savez crois croit pense
penser appelle appelé appelée dû fallait avait ont eu été fait faits faite grand grande petit petite nouveau
nouvelle vrai vraie certain certaine autre autres simplement justement effectivement exactement surtout
assez vais va vont allez allons aller dit dire disait dis etc cas fin peu parce
voici veut veux voulez voir vu parler parle fois exemple truc trucs gens genre quoi donc ok okay merci bonjour
bienvenue aujourd'hui environ souvent presque notamment également d'ailleurs bientôt plusieurs certains
zéro un deux trois quatre cinq six sept huit neuf dix onze douze vingt trente quarante cinquante cent cents mille
est-ce qu'est-ce c'est-à-dire peut-être pendant depuis selon sauf entre près contre malgré parmi durant
moitié tiers quart premier première second seconde dernier dernière ceux
celle d'accord tant lorsque lors leurs avons aurons serait seraient sommes êtes
""".split())

STOP_EN = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being below between
both but by can cannot could couldn did didn do does doesn doing don down during each few for from further get gets
got had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it its
itself just let like ll me more most much must my myself no nor not now of off on once only or other our ours
ourselves out over own re really right same say says said she should so some such than that the their theirs them
themselves then there these they thing things think this those through to too under until up us ve very was wasn
we well were weren what when where which while who whom why will with won would wouldn yeah yes you your yours
yourself yourselves okay ok oh um uh hmm actually basically lot lots kind sort going gonna want wanna know mean
maybe thanks thank hello hi welcome today one two way many even still back go see look make made take come
use used uses using work need needs start started give gives given find found put call called tell told try tried
zero three four five six seven eight nine ten twenty hundred thousand half first second last around
almost often usually keep let's lets
getting got new good great big little long really pretty quite every another something
anything everything nothing someone people part according produces produce produced built build show shows
""".split())

STOP_ALL = STOP_FR | STOP_EN

# Disfluencies removed from the start of a sentence when it is quoted (never from its middle).
FILLERS = ("euh", "heu", "hum", "ben", "bah", "um", "uh", "er", "erm", "hmm", "so", "alors", "donc", "et", "and",
           "well", "bon", "voilà", "ok", "okay", "oui", "yeah", "yes", "mais", "but")

WORD_RE = re.compile(r"[^\W_](?:[\w'’\-]*[^\W_])?", re.UNICODE)
ELISION_RE = re.compile(r"^(?:[ldjmntsc]|qu|jusqu|lorsqu|puisqu)['’]", re.IGNORECASE)
NUMBER_RE = re.compile(r"\d")
SPACE_RE = re.compile(r"\s+")
FILLER_RE = re.compile(r"([^\W\d_]+)\s*[,.…]*\s+")

QUESTION_WORDS = {
    "fr": ("comment", "pourquoi", "qu'est-ce", "qu’est-ce", "quel", "quelle", "quels", "quelles", "quand", "où",
           "qui", "combien", "est-ce", "que", "faut-il", "peut-on", "doit-on", "lequel", "laquelle"),
    "en": ("how", "what", "why", "when", "where", "who", "which", "can", "could", "should", "is", "are", "do",
           "does", "did", "will", "would", "whose"),
}

LABELS = {
    "fr": {
        "introduction": "Introduction", "key_facts": "Points clés", "faq": "Questions fréquentes",
        "conclusion": "Conclusion", "step": "Étape", "in_short": "En bref", "analysis": "Analyse",
        "figures": "Chiffres et faits", "timeline": "Chronologie", "and": "et", "what": "qu'est-ce que {t}",
        "how": "comment fonctionne {t}", "why": "pourquoi {t} est important", "how_to": "comment {t}",
        "who": "qui est {t}", "hook": "accroche", "context": "contexte", "development": "développement",
        "conclusion_part": "conclusion",
    },
    "en": {
        "introduction": "Introduction", "key_facts": "Key facts", "faq": "Frequently asked questions",
        "conclusion": "Conclusion", "step": "Step", "in_short": "In short", "analysis": "Analysis",
        "figures": "Facts and figures", "timeline": "Timeline", "and": "and", "what": "what is {t}",
        "how": "how does {t} work", "why": "why {t} matters", "how_to": "how to {t}", "who": "who is {t}",
        "hook": "hook", "context": "context", "development": "development", "conclusion_part": "conclusion",
    },
}


def lang_key(language: str | None) -> str:
    code = (language or "fr").lower().split("-")[0].split("_")[0]
    return code if code in LABELS else "en"


def labels(language: str | None) -> dict[str, str]:
    return LABELS[lang_key(language)]


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
    """Lowercase, apostrophe unified, French elision removed (``l'énergie`` -> ``énergie``)."""
    low = word.lower().replace("’", "'")
    return ELISION_RE.sub("", low) or low


def content_tokens(text: str) -> list[str]:
    """Normalised words that carry meaning: no stop word, no number, at least three letters."""
    out = []
    for word in WORD_RE.findall(text):
        token = norm_token(word)
        if len(token) >= 3 and token not in STOP_ALL and not NUMBER_RE.search(token):
            out.append(token)
    return out


def is_stop(token: str) -> bool:
    return token in STOP_ALL


def fold(text: str) -> str:
    """Accent-free lowercase with only letters, digits and single spaces: for matching and ids."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    ascii_like = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return clean_spaces(re.sub(r"[^\w]+", " ", ascii_like).replace("_", " "))


def strip_leading_fillers(text: str) -> str:
    """Drop disfluencies and loose connectors at the start ("Euh, alors, ...") and capitalise."""
    text = text.strip()
    at = 0  # an index rather than a slice per filler: a long run of fillers stays linear
    while True:
        match = FILLER_RE.match(text, at)
        if not match or match.group(1).lower() not in FILLERS:
            break
        if len(list(islice(WORD_RE.finditer(text, match.end()), 4))) < 4:
            break
        at = match.end()
    rest = text[at:]
    return rest[:1].upper() + rest[1:] if rest else rest


def looks_like_question(text: str, language: str | None) -> bool:
    stripped = text.strip()
    if stripped.endswith("?"):
        return True
    first = words(stripped[:40])
    if not first:
        return False
    head = first[0].lower().replace("’", "'")
    key = lang_key(language)
    if key == "fr":
        return head in ("pourquoi", "comment", "combien") or stripped.lower().startswith(("qu'est-ce", "est-ce que"))
    return False


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
