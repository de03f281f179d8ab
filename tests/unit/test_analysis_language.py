"""The rules of a publishable analysis, one small case each, in the seven languages: titles, topics,
cue phrases, sentence ends, numbers said in words, FAQ answers, the article in spoken order, and
chapters that follow the subject."""

from __future__ import annotations

import random
import re

import pytest

from domain.analysis import Segment, analyse, validate_chapters, write_article
from domain.analysis.language import LANGUAGES, guess_language, language
from domain.analysis.phrases import publishable
from domain.analysis.sentences import split_sentences
from domain.analysis.structure import COUNT_RULE, chapter_count_bounds, is_monologue
from domain.analysis.topics import extract_topics
from tests.support.caption_lines import _timed

# titles -----------------------------------------------------------------------------------------

REFUSED_TITLES = {
    "en": ["It's showing", "You're seeing and Fourier series", "Monday Monday", "Alphabetical and", "Love math and",
           "Here's the thing", "Um vectors", "Fifty companies"],
    "fr": ["C'est la fonction", "Il faut dériver", "Série de", "Euh les dérivées", "Cercle cercle"],
    "de": ["Wir rechnen", "Ableitung und", "Ähm Vektoren"],
    "es": ["Nosotros calculamos", "Derivada de", "Eh vectores"],
    "it": ["Noi calcoliamo", "Derivata di", "Ehm vettori"],
    "pt": ["Nós calculamos", "Derivada de", "Né vetores"],
    "nl": ["Wij rekenen", "Afgeleide van", "Uhm vectoren"],
}
ACCEPTED_TITLES = {
    "en": ["Partial derivatives", "Roots of unity", "Tabs vs spaces", "What is a group?", "Heat equation"],
    "fr": ["Règle de l'Hôpital", "Série de Taylor", "Dérivées partielles"],
    "de": ["Partielle Ableitungen", "Satz des Pythagoras"],
    "es": ["Derivadas parciales", "Serie de Taylor"],
    "it": ["Derivate parziali", "Serie di Taylor"],
    "pt": ["Derivadas parciais", "Série de Taylor"],
    "nl": ["Partiële afgeleiden", "Reeks van Taylor"],
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_title_with_a_pronoun_a_filler_a_dangling_or_repeated_word_is_refused(code: str) -> None:
    for title in REFUSED_TITLES[code]:
        assert not publishable(title, code), title
    for title in ACCEPTED_TITLES[code]:
        assert publishable(title, code), title


# topics -----------------------------------------------------------------------------------------

FREQUENT_AND_RARE = {
    # a word frequent in the language, a term, and sentences saying both as often
    "en": ("companies", "tokamak", "The companies build a tokamak. Many companies like the tokamak. "
                                   "Companies and the tokamak again. Companies want one tokamak."),
    "fr": ("projet", "tokamak", "Le projet construit un tokamak. Le projet aime le tokamak. "
                                "Le projet et le tokamak encore. Un projet veut un tokamak."),
    "de": ("zeit", "tokamak", "Die Zeit und der Tokamak. Mit der Zeit wächst der Tokamak. "
                              "Zeit für den Tokamak. Keine Zeit ohne Tokamak."),
    "es": ("tiempo", "tokamak", "El tiempo y el tokamak. Con el tiempo crece el tokamak. "
                                "Tiempo para el tokamak. Sin tiempo no hay tokamak."),
    "it": ("tempo", "tokamak", "Il tempo e il tokamak. Con il tempo cresce il tokamak. "
                               "Tempo per il tokamak. Senza tempo nessun tokamak."),
    "pt": ("tempo", "tokamak", "O tempo e o tokamak. Com o tempo cresce o tokamak. "
                               "Tempo para o tokamak. Sem tempo não há tokamak."),
    "nl": ("tijd", "tokamak", "De tijd en de tokamak. Met de tijd groeit de tokamak. "
                              "Tijd voor de tokamak. Geen tijd zonder tokamak."),
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_word_frequent_in_the_language_is_no_topic_but_a_term_is(code: str) -> None:
    frequent, term, text = FREQUENT_AND_RARE[code]
    sentences = split_sentences([Segment(0, 20_000, text)], code)
    names = [t.name.lower() for t in extract_topics(sentences, 20_000, language=code)]
    assert term in names, names
    assert frequent not in names, names


def test_a_frequent_word_inside_a_name_or_a_phrase_may_be_a_topic() -> None:
    text = ("The heat equation is simple. We write the heat equation. The heat equation again. "
            "Michael Jordan plays. Michael Jordan wins. Michael Jordan retires.")
    names = [t.name for t in extract_topics(split_sentences([Segment(0, 30_000, text)], "en"), 30_000,
                                            language="en")]
    assert "heat equation" in names and "Michael Jordan" in names, names


VERBS_AND_NOUNS = {
    # verbs said as often as the nouns, never after a determiner; the nouns always after one
    "fr": (("coûte", "parlons"), ("batteries", "panneaux"),
           "D'abord, parlons des panneaux solaires. Un panneau coûte deux cents euros. Ensuite, parlons des "
           "batteries. Une batterie coûte cinq mille euros. Les batteries stockent l'énergie des panneaux. Le "
           "stockage coûte cher."),
    "es": (("almacenan", "cuesta"), ("baterías", "paneles"),
           "Primero, hablamos de los paneles. Un panel cuesta doscientos euros. Luego, hablamos de las baterías. "
           "Una batería cuesta cinco mil euros. Las baterías almacenan la energía de los paneles. Los paneles "
           "almacenan poco."),
    "pt": (("falamos", "custa"), ("baterias", "painéis"),
           "Primeiro, falamos dos painéis. Um painel custa duzentos euros. Depois, falamos das baterias. Uma "
           "bateria custa cinco mil euros. As baterias guardam a energia dos painéis. O sistema custa muito."),
}


@pytest.mark.parametrize("code", sorted(VERBS_AND_NOUNS))
def test_a_verb_is_no_topic_in_a_language_whose_nouns_take_a_determiner(code: str) -> None:
    verbs, nouns, text = VERBS_AND_NOUNS[code]
    graph = analyse([Segment(0, 30_000, text, "A")], language=code)
    names = [t.name for t in graph.topics]
    assert set(nouns) <= set(names), names
    assert not set(verbs) & set(names), names
    assert not any(v in i.query for v in verbs for i in graph.intents), graph.intents


def test_a_verb_ends_no_title_and_a_name_keeps_its_capital_after_an_elided_article() -> None:
    lines = [("A", "Les batteries lithium-ion stockent l'électricité de la journée."),
             ("A", "Les batteries lithium-ion stockent l'énergie des panneaux."),
             ("A", "Les aides de l'État réduisent le coût."), ("A", "Les aides de l'État changent chaque année.")]
    graph = analyse(_timed(lines, ms_per_word=380, gap=600), language="fr")
    titles = [m.title for m in graph.moments] + [c.title for c in graph.chapters] + [t.name for t in graph.topics]
    assert not any(t.lower().endswith(("stockent", "réduisent", "changent")) for t in titles), titles
    assert not any("l'état" in t for t in titles) and any("l'État" in t for t in titles), titles


def test_the_intent_about_a_topic_takes_its_definite_article() -> None:
    text = ("Parlons des panneaux solaires. Des panneaux bon marché existent. Les prix des panneaux baissent. "
            "Des panneaux durent trente ans.")
    graph = analyse([Segment(0, 20_000, text, "A")], language="fr")
    assert any(i.query.endswith("les panneaux") for i in graph.intents), graph.intents


# cue phrases, sentence ends, numbers ------------------------------------------------------------

CUES = {
    "en": ("So, next we have semicolons.", "Semicolons are next to the brackets."),
    "fr": ("Alors, passons à la dérivée.", "La dérivée passe par zéro."),
    "de": ("Also, kommen wir zur Ableitung.", "Die Ableitung kommt danach."),
    "es": ("Bueno, pasemos a la derivada.", "La derivada pasa por cero."),
    "it": ("Allora, passiamo alla derivata.", "La derivata passa per zero."),
    "pt": ("Então, passemos à derivada.", "A derivada passa por zero."),
    "nl": ("Oké, laten we naar de afgeleide kijken.", "De afgeleide gaat door nul."),
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_cue_phrase_opens_a_part_in_each_language(code: str) -> None:
    opening, plain = CUES[code]
    kit = language(code)
    assert kit.opens_with_cue(opening)
    assert not kit.opens_with_cue(plain)


@pytest.mark.parametrize("opening", [
    "Uh, before we move on to other tools, did autoprefixer come first?",
    "So we're gonna move to the stack now.",
    "Okay, I'm going to talk about the favicon.",
    "One more thing I just want to say about that.",
])
def test_a_host_moving_on_opens_a_part(opening: str) -> None:
    kit = language("en")
    assert kit.opens_with_cue(opening)
    assert not kit.opens_with_cue("We moved to a new office and I'm going to miss the old one.")


@pytest.mark.parametrize(("code", "opening"), [
    ("en", "So, uh, yeah, let's, let's talk a little bit about PostCSS."),
    ("en", "So so next, next up is the database."),
    ("de", "Also, kommen, kommen wir zum nächsten Punkt."),
])
def test_a_cue_phrase_said_twice_as_the_speaker_restarts_still_opens_a_part(code: str, opening: str) -> None:
    kit = language(code)
    assert kit.opens_with_cue(opening)
    assert not kit.opens_with_cue("I, I think that that is fine.")


SENTENCE_ENDS = {
    "en": ("Dr. Smith met J. K. Rowling at noon. They talked.", 2),
    "fr": ("M. Dupont est arrivé, etc. puis il est parti. Ensuite oui.", 2),
    "de": ("Das kostet z. B. drei Euro. Herr Dr. Müller kommt.", 2),
    "es": ("El Sr. García llegó. Luego habló.", 2),
    "it": ("Il sig. Rossi è arrivato. Poi ha parlato.", 2),
    "pt": ("O Sr. Silva chegou. Depois falou.", 2),
    "nl": ("Dit is bijv. een test. Goed zo.", 2),
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_abbreviations_of_the_language_do_not_end_a_sentence(code: str) -> None:
    text, count = SENTENCE_ENDS[code]
    sentences = split_sentences([Segment(0, 8000, text)], code)
    assert len(sentences) == count, [s.text for s in sentences]


SPOKEN_FIGURES = {
    "en": "The magnet weighs twenty-three thousand tonnes according to the engineers.",
    "fr": "Le réacteur produira cinq cents mégawatts selon les ingénieurs du site.",
    "de": "Der Magnet wiegt dreiundzwanzigtausend Tonnen laut den Ingenieuren vor Ort.",
    "es": "El reactor producirá quinientos megavatios según los ingenieros del sitio.",
    "it": "Il reattore produrrà cinquecento megawatt secondo gli ingegneri del sito.",
    "pt": "O reator vai produzir quinhentos megawatts segundo os engenheiros do local.",
    "nl": "De magneet weegt drieëntwintigduizend ton volgens de ingenieurs ter plaatse.",
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_number_said_in_words_is_a_statistic(code: str) -> None:
    graph = analyse([Segment(0, 6000, SPOKEN_FIGURES[code], "A")], language=code)
    assert graph.claims and "statistic" in graph.claims[0].kinds, graph.claims
    assert any(e.type == "number" and re.search(r"\d{3}", e.name) for e in graph.entities), graph.entities
    # a small number said in words is no figure ("one idea", "deux fois")
    small = analyse([Segment(0, 4000, "We had one idea about the design of the magnet.", "A")], language="en")
    assert not any(e.type == "number" for e in small.entities)


# (definition, cause, a comparison with a cause, the definition hedged, the definition after a greeting):
# no figure, date or name in any of them, so only the language's own words can make a claim of the
# first three (a comparison alone is too little evidence for a claim).
CLAIM_SENTENCES = {
    "en": ("Entropy is a measure of how uncertain the outcome of a guess remains.",
           "The rod cools down quickly because the heat flows into the colder air.",
           "The engine needs more than the old one because the air up here is thin.",
           "Maybe entropy is a measure of how uncertain the outcome of a guess remains.",
           "Hello everyone, entropy is a measure of how uncertain the outcome of a guess remains."),
    "fr": ("L'entropie est une mesure de l'incertitude qui reste après chaque essai.",
           "La barre refroidit vite parce que la chaleur passe dans l'air froid.",
           "Le moteur consomme plus de carburant parce que l'air est froid en montagne.",
           "Je pense que l'entropie est une mesure de l'incertitude qui reste après chaque essai.",
           "Bonjour à tous, l'entropie est une mesure de l'incertitude qui reste après chaque essai."),
    "de": ("Die Entropie ist ein Maß für die Unsicherheit, die nach jedem Versuch bleibt.",
           "Der Stab kühlt schnell ab, weil die Wärme in die kalte Luft fließt.",
           "Der Motor braucht mehr als früher, weil die Luft hier oben kalt ist.",
           "Ich glaube, die Entropie ist ein Maß für die Unsicherheit, die nach jedem Versuch bleibt.",
           "Hallo zusammen, die Entropie ist ein Maß für die Unsicherheit, die nach jedem Versuch bleibt."),
    "es": ("La entropía es una medida de la incertidumbre que queda después de cada intento.",
           "La barra se enfría deprisa porque el calor pasa al aire frío.",
           "El motor gasta más de lo normal porque el aire está frío en la montaña.",
           "Quizás la entropía es una medida de la incertidumbre que queda después de cada intento.",
           "Hola a todos, la entropía es una medida de la incertidumbre que queda después de cada intento."),
    "it": ("L'entropia è una misura dell'incertezza che resta dopo ogni tentativo.",
           "La barra si raffredda in fretta perché il calore passa nell'aria fredda.",
           "Il motore consuma più del solito perché l'aria è fredda in montagna.",
           "Forse l'entropia è una misura dell'incertezza che resta dopo ogni tentativo.",
           "Ciao a tutti, l'entropia è una misura dell'incertezza che resta dopo ogni tentativo."),
    "pt": ("A entropia é uma medida da incerteza que resta depois de cada tentativa.",
           "A barra arrefece depressa porque o calor passa para o ar frio.",
           "O motor gasta mais do que o normal porque o ar está frio na montanha.",
           "Acho que a entropia é uma medida da incerteza que resta depois de cada tentativa.",
           "Olá a todos, a entropia é uma medida da incerteza que resta depois de cada tentativa."),
    "nl": ("Entropie is een maat voor de onzekerheid die na elke poging overblijft.",
           "De staaf koelt snel af omdat de warmte naar de koude lucht stroomt.",
           "De motor verbruikt meer dan normaal omdat de lucht in de bergen koud is.",
           "Ik denk: entropie is een maat voor de onzekerheid die na elke poging overblijft.",
           "Hallo allemaal, entropie is een maat voor de onzekerheid die na elke poging overblijft."),
}


def _claim_kinds(text: str, code: str) -> list[list[str]]:
    return [c.kinds for c in analyse([Segment(0, 6000, text, "A")], language=code).claims]


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_definition_a_cause_and_a_comparison_are_claims_in_the_words_of_the_language(code: str) -> None:
    definition, cause, comparison, hedged, greeting = CLAIM_SENTENCES[code]
    assert ["definition"] in _claim_kinds(definition, code)
    assert ["causal"] in _claim_kinds(cause, code)
    assert ["causal", "comparison"] in _claim_kinds(comparison, code)
    # an opinion or a greeting is no claim, though it says the same definition
    assert _claim_kinds(hedged, code) == []
    assert _claim_kinds(greeting, code) == []


def test_one_language_s_words_make_no_claim_in_another() -> None:
    # French "car" (because) is an English noun: once read in every language, it made this a claim
    assert _claim_kinds("We drove the old car along the coast road over the weekend.", "en") == []
    assert _claim_kinds("On a roulé le long de la côte parce qu'il faisait beau ce week-end.", "fr") == [["causal"]]


def test_a_generalisation_said_with_most_is_a_claim() -> None:
    # a short clip's plain factual sentence: a place and "most" (a quantity) make it a claim
    assert _claim_kinds("In Norway, most new homes now use a heat pump.", "en") == [["entity", "comparison"]]


# (a sentence opening with a connective, one referring back, one that stands alone): a clip moment
# or a detected clip should not start on the first two
OPENINGS = {
    "en": ("But the heat pump still needs power.", "It's the coldest month of the year.", "Heat pumps need power."),
    "fr": ("Mais la pompe à chaleur consomme encore.", "C'est le mois le plus froid.", "Les pompes consomment."),
    "de": ("Aber die Wärmepumpe braucht Strom.", "Es ist der kälteste Monat.", "Wärmepumpen brauchen Strom."),
    "es": ("Pero la bomba de calor necesita energía.", "Eso pasa en el mes más frío.", "La bomba necesita energía."),
    "it": ("Ma la pompa di calore consuma ancora.", "Ciò accade nel mese più freddo.", "La pompa consuma energia."),
    "pt": ("Mas a bomba de calor ainda consome.", "Isso acontece no mês mais frio.", "A bomba consome energia."),
    "nl": ("Maar de warmtepomp verbruikt nog stroom.", "Dat gebeurt in de koudste maand.", "De pomp verbruikt stroom."),
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_sentence_that_leans_on_the_one_before_is_known_in_every_language(code: str) -> None:
    connective, referring, alone = OPENINGS[code]
    kit = language(code)
    assert kit.opens_dependent(connective) and kit.opens_dependent(referring)
    assert not kit.opens_dependent(alone)
    assert kit.first_word(connective) in kit.connectives and kit.first_word(referring) not in kit.connectives


# A passage on how a thing works, and the word its "how" query opens with
HOW_IT_WORKS = {
    "de": (["Die Wärmepumpe nimmt Wärme aus der Luft auf.", "So funktioniert die Wärmepumpe im Winter mit wenig Strom.",
            "Die Wärmepumpe arbeitet in drei Schritten.", "Zuerst verdampft das Kältemittel in der Wärmepumpe.",
            "Dann verdichtet der Kompressor das Gas."], "wie"),
    "es": (["La bomba de calor toma calor del aire.", "Así funciona la bomba de calor en invierno con poca energía.",
            "La bomba de calor trabaja en tres pasos.", "Primero el refrigerante se evapora en la bomba de calor.",
            "Luego el compresor comprime el gas."], "cómo"),
    "it": (["La pompa di calore prende calore dall'aria.", "Così funziona la pompa di calore in inverno.",
            "La pompa di calore lavora in tre passaggi.", "Prima il refrigerante evapora nella pompa di calore.",
            "Poi il compressore comprime il gas."], "come"),
    "pt": (["A bomba de calor retira calor do ar.", "Assim funciona a bomba de calor no inverno.",
            "A bomba de calor trabalha em três passos.", "Primeiro o refrigerante evapora na bomba de calor.",
            "Depois o compressor comprime o gás."], "como"),
    "nl": (["De warmtepomp haalt warmte uit de lucht.", "Zo werkt de warmtepomp in de winter met weinig stroom.",
            "De warmtepomp werkt in drie stappen.", "Eerst verdampt het koudemiddel in de warmtepomp.",
            "Dan perst de compressor het gas samen."], "hoe"),
}


@pytest.mark.parametrize("code", sorted(HOW_IT_WORKS))
def test_a_passage_on_how_a_thing_works_asks_how_in_its_language(code: str) -> None:
    texts, how = HOW_IT_WORKS[code]
    graph = analyse([Segment(k * 6000, k * 6000 + 5500, t, "A") for k, t in enumerate(texts)], language=code)
    topic_queries = [i.query for i in graph.intents if i.source == "topic"]
    assert topic_queries and topic_queries[0].startswith(f"{how} "), topic_queries


def test_per_cent_said_after_a_number_is_the_unit_and_not_a_hundred() -> None:
    assert language("fr").digits("de quatre-vingts pour cent et trois cents euros") == "de 80 % et 300 euros"
    assert language("es").digits("ochenta por ciento") == "80 %"
    assert language("en").digits("fifty per cent of them") == "50 % of them"
    assert language("fr").digits("acheté pour cent euros") == "acheté pour 100 euros"  # a hundred euros
    graph = analyse([Segment(0, 6000, "Le prix a baissé de quatre-vingts pour cent en dix ans.", "A")], language="fr")
    assert "80 %" in [e.name for e in graph.entities], graph.entities


def test_a_french_organisation_keeps_the_lowercase_rest_of_its_name() -> None:
    said = {"Le prix a baissé, selon l'Agence internationale de l'énergie.": "Agence internationale de l'énergie",
            "L'Organisation mondiale de la santé publie un rapport.": "Organisation mondiale de la santé",
            "La Banque centrale européenne a monté ses taux.": "Banque centrale européenne",
            "La Commission européenne à Bruxelles décide.": "Commission européenne"}
    for text, name in said.items():
        graph = analyse([Segment(0, 6000, text, "A")], language="fr")
        assert [e.name for e in graph.entities if e.type == "organization"] == [name], graph.entities
    # a verb after the organisation word is no part of its name
    graph = analyse([Segment(0, 6000, "Hier, l'Agence indique que les prix montent.", "A")], language="fr")
    assert [e.name for e in graph.entities if e.type == "organization"] == ["Agence"], graph.entities


def test_an_indefinite_article_before_a_number_is_no_one() -> None:
    assert language("es").digits("cuesta unos doscientos euros") == "cuesta ~ 200 euros"
    assert language("pt").digits("custa uns duzentos euros") == "custa ~ 200 euros"
    assert language("es").digits("un millón de euros") == "1000000 de euros"  # before a scale: the number
    graph = analyse([Segment(0, 6000, "Hoy un panel cuesta unos doscientos euros.", "A")], language="es")
    assert [e.name for e in graph.entities if e.type == "number"] == ["200 euros"], graph.entities


@pytest.mark.parametrize(("code", "vague", "figure"), [
    ("en", "It costs several hundred dollars, or hundreds of dollars.", "two hundred dollars"),
    ("de", "Es kostet mehrere hundert Euro.", "zweihundert Euro"),
    ("es", "Cuesta varios cientos de euros.", "doscientos euros"),
    ("nl", "Het kost een paar honderd euro.", "tweehonderd euro"),
])
def test_several_hundred_is_no_figure_but_two_hundred_is(code: str, vague: str, figure: str) -> None:
    assert not re.search(r"\d", language(code).digits(vague)), language(code).digits(vague)
    assert "200" in language(code).digits(figure)


def test_names_with_two_connectors_and_organisation_words_of_each_language() -> None:
    text = "El precio bajó, según la Agencia Internacional de la Energía. Hablemos de las ayudas del Gobierno."
    graph = analyse([Segment(0, 9000, text, "A")], language="es")
    organisations = {e.name for e in graph.entities if e.type == "organization"}
    assert organisations == {"Agencia Internacional de la Energía", "Gobierno"}, graph.entities


def test_a_stem_shared_by_a_noun_and_a_verb_is_shown_as_the_noun() -> None:
    text = ("Pasemos al almacenamiento de la energía. Las baterías almacenan la electricidad del día. "
            "Las baterías duran diez años. Los paneles producen la energía.")
    graph = analyse([Segment(0, 20_000, text, "A")], language="es")
    labels = [t.name for t in graph.topics] + [c.title for c in graph.chapters]
    assert "almacenan" not in " ".join(labels).lower(), labels


@pytest.mark.parametrize(("code", "text", "query"), [
    ("es", "Los paneles solares son placas que producen electricidad. Los paneles duran. Los paneles cuestan "
           "poco. Hablemos de los paneles.", "qué son los paneles"),
    ("it", "I pannelli sono lastre che producono elettricità. I pannelli durano. I pannelli costano poco. "
           "Parliamo dei pannelli.", "cosa sono i pannelli"),
    ("en", "Solar panels are plates that produce electricity. The panels last. The panels cost little. "
           "Think of the panels.", "what are panels"),
    ("nl", "Subsidies maken zonnepanelen goedkoper. De subsidies dalen elk jaar. Een subsidie dekt een deel. "
           "Vraag de subsidies op tijd aan.", "wat zijn subsidies"),
])
def test_a_plural_topic_is_asked_about_in_the_plural(code: str, text: str, query: str) -> None:
    graph = analyse([Segment(0, 20_000, text, "A")], language=code)
    assert query in [i.query for i in graph.intents], graph.intents


def test_a_dutch_word_never_said_without_its_ending_is_asked_about_in_the_singular() -> None:
    text = ("Het rijexamen duurt een uur. Een rijexamen kost geld. Het rijexamen test de rijvaardigheid. "
            "Oefen voor het rijexamen met een instructeur.")  # "-en", but no "rijexam"
    queries = [i.query for i in analyse([Segment(0, 20_000, text, "A")], language="nl").intents]
    assert "wat is rijexamen" in queries and not any(q.startswith("wat zijn") for q in queries), queries


def test_an_english_word_said_before_its_object_is_a_verb_and_ends_no_title() -> None:
    lines = [("A", "The federal tax credit cuts the cost of the installation."),
             ("A", "The credit cuts the price by thirty percent."),
             ("A", "Solar panels last twenty years on a roof.")]
    graph = analyse(_timed(lines, ms_per_word=380, gap=600), language="en")
    titles = [c.title for c in graph.chapters] + [t.name for t in graph.topics] + [m.title for m in graph.moments]
    assert not any(t.lower().endswith("cuts") for t in titles), titles


def _monologue(lines: list[str], code: str):
    """The analysis of ``lines`` said in turn by one speaker."""
    return analyse(_timed([("A", line) for line in lines], ms_per_word=380, gap=600), language=code)


SOLAR_TALK = [
    "Bienvenue dans cette présentation sur l'énergie solaire en France.",
    "D'abord, parlons du prix des panneaux solaires.",
    "Le prix a baissé de quatre-vingts pour cent en dix ans, selon l'Agence internationale de l'énergie.",
    "Un panneau coûte aujourd'hui environ deux cents euros.",
    "Passons maintenant au stockage de l'énergie.",
    "Les batteries lithium-ion stockent l'électricité produite pendant la journée.",
    "Une batterie domestique de dix kilowattheures coûte environ cinq mille euros.",
    "Comment choisir son installation ?",
    "Il faut d'abord mesurer sa consommation annuelle.",
    "Ensuite, on compare l'orientation du toit et l'ensoleillement de la région.",
    "Enfin, parlons des aides de l'État.",
    "La prime à l'autoconsommation réduit le coût de l'installation de plusieurs centaines d'euros.",
    "Merci de votre attention et à bientôt.",
]


def test_no_title_is_a_piece_of_a_longer_name() -> None:
    graph = _monologue(SOLAR_TALK, "fr")
    names = [e.name.lower() for e in graph.entities if len(e.name.split()) > 1]
    assert "agence internationale de l'énergie" in names, graph.entities
    titles = [c.title.lower() for c in graph.chapters] + [m.title.lower() for m in graph.moments]
    assert not any(len(t.split()) > 1 and t in n and t != n for t in titles for n in names), titles


GERMAN_TALK = [
    "Zuerst sprechen wir über den Preis der Solarmodule.",
    "Der Preis ist laut der Internationalen Energieagentur in zehn Jahren um achtzig Prozent gefallen.",
    "Heute kostet ein Modul etwa zweihundert Euro.",
    "Kommen wir nun zur Speicherung der Energie.",
    "Eine Heimbatterie mit zehn Kilowattstunden kostet etwa fünftausend Euro.",
    "Zehn Kilowattstunden kostet die Batterie im Keller.",
    "Zum Schluss sprechen wir über die Förderung des Staates.",
    "Die Förderung senkt die Kosten der Anlage um mehrere hundert Euro.",
]


def test_german_nouns_are_no_names_and_a_german_title_ends_with_a_noun() -> None:
    graph = _monologue(GERMAN_TALK, "de")
    names = {e.name: e.type for e in graph.entities if e.type not in ("number", "date")}
    assert names == {"Internationalen Energieagentur": "organization"}, graph.entities
    titles = [c.title for c in graph.chapters] + [m.title for m in graph.moments]
    assert all(t.split()[-1][:1].isupper() for t in titles if not t.endswith("?")), titles


def test_an_italian_organisation_and_the_article_of_a_contraction() -> None:
    text = ("Il prezzo è sceso, secondo l'Agenzia internazionale dell'energia. Passiamo ora all'accumulo "
            "dell'energia. L'accumulo costa poco. L'accumulo dura dieci anni. Parliamo dell'accumulo.")
    graph = analyse([Segment(0, 20_000, text, "A")], language="it")
    assert [e.name for e in graph.entities if e.type == "organization"] == ["Agenzia internazionale dell'energia"]
    assert "cos'è l'accumulo" in [i.query for i in graph.intents], graph.intents


# the article ------------------------------------------------------------------------------------

LINES = [
    ("Alice", "Welcome to the show about nuclear fusion and the ITER project."),
    ("Alice", "How does a tokamak work?"),
    ("Bob", "A tokamak is a doughnut-shaped machine that confines the plasma with magnetic fields."),
    ("Bob", "The tokamak heats the plasma to 150 million degrees with microwaves and beams."),
    ("Alice", "Why does fusion matter?"),
    ("Bob", "Fusion matters because it could give clean energy without long-lived waste."),
    ("Bob", "The European Commission funds about 45 percent of the ITER project."),
    ("Alice", "How much does ITER cost?"),
    ("Bob", "The total cost of ITER is estimated at more than 20 billion euros."),
    ("Bob", "The first plasma of ITER is planned for 2033 in Cadarache."),
    ("Alice", "What limits the magnets?"),
    ("Bob", "The magnets are limited by the critical temperature of the superconducting cable."),
    ("Bob", "Superconducting magnets must be cooled with liquid helium to four kelvins."),
    ("Bob", "Thirty-nine countries take part in the project through seven members."),
    ("Alice", "When will a fusion plant deliver electricity?"),
    ("Bob", "A demonstration plant called DEMO should deliver electricity after 2050."),
    ("Bob", "DEMO will use the lessons of ITER on tritium breeding and materials."),
    ("Bob", "Private companies such as Commonwealth Fusion Systems promise earlier dates."),
    ("Bob", "Their compact tokamak uses high-temperature superconducting magnets."),
    ("Bob", "Such magnets allow a stronger field in a smaller machine."),
    ("Alice", "In conclusion, fusion is a long project with a clean promise."),
    ("Bob", "Thank you Alice, it was a pleasure to explain the tokamak."),
]


@pytest.fixture(scope="module")
def talk():
    return analyse(_timed(LINES, ms_per_word=380, gap=600), language="en")


def test_an_faq_answer_is_the_passage_right_after_its_question(talk) -> None:
    article = write_article(talk, "journalistic")
    by_question = {e["question"]: e["answer"] for e in article.faq}
    # the talk opens on "How does a tokamak work?", the first chapter's title: its section, which has no
    # other sentence but the greeting, takes the answer (it read "Welcome to the show..." under the
    # question, and the FAQ repeated the question with the answer)
    section = next(s for s in article.sections if s.heading == "How does a tokamak work?")
    assert section.paragraphs and section.paragraphs[0].sentences[0].startswith("A tokamak is"), section
    assert "How does a tokamak work?" not in by_question, by_question
    assert not any("Welcome" in text for s in article.sections for p in s.paragraphs for text in p.sentences)
    assert "How much does ITER cost?" in by_question, by_question
    for question, answer in by_question.items():
        asked = {w.lower() for w in re.findall(r"\w{3,}", question)}
        assert any(asked & {w.lower() for w in re.findall(r"\w{3,}", sentence)} for sentence in answer), question


def test_an_faq_answer_does_not_cross_into_the_next_part() -> None:
    lines = [("A", "Bienvenue dans cette présentation sur les panneaux solaires et les batteries."),
             ("A", "Comment choisir son installation solaire ?"),
             ("A", "Il faut mesurer sa consommation annuelle avec soin."),
             ("A", "Enfin, parlons des aides de l'État pour chaque installation."),
             ("A", "La prime réduit le coût de l'installation de plusieurs centaines d'euros."),
             ("A", "Les batteries stockent l'électricité produite pendant la journée."),
             ("A", "Une batterie domestique coûte environ cinq mille euros aujourd'hui."),
             ("A", "Les panneaux solaires coûtent environ deux cents euros chacun."),
             ("A", "Le rendement des panneaux baisse un peu chaque année."),
             ("A", "Un onduleur transforme le courant continu en courant alternatif."),
             ("A", "Le réseau rachète le surplus produit par les panneaux."),
             ("A", "Les batteries durent une dizaine d'années en moyenne."),
             ("A", "Merci de votre attention et à bientôt.")]
    graph = analyse(_timed(lines, ms_per_word=380, gap=600), language="fr")
    assert any(i.source == "question" for i in graph.intents[:2]), graph.intents
    article = write_article(graph, "tutorial", "fr")
    answers = {e["question"]: e["answer"] for e in article.faq}
    # the sentences that share "installation" come after "Enfin, parlons de...": another part
    assert not any("installation" in q.lower() for q in answers), answers


@pytest.mark.parametrize("style", ["journalistic", "narrative", "analytical", "tutorial", "documentary"])
def test_sections_follow_the_chapters_open_with_their_lead_and_keep_the_spoken_order(talk, style: str) -> None:
    article = write_article(talk, style)
    order = {s.text.strip(): s.index for s in talk.sentences}

    def position(quoted: str) -> int:
        bare = quoted.rstrip(".")
        return next(i for text, i in order.items() if text.rstrip(".?!").endswith(bare.rstrip(".?!")[-40:]))

    assert [s.start_ms for s in article.sections] == sorted(s.start_ms for s in article.sections)
    for section in article.sections:
        spoken = [position(q) for p in section.paragraphs for q in p.sentences]
        assert spoken[1:] == sorted(spoken[1:]), section.heading  # the lead first, then as said


@pytest.mark.parametrize("style", ["journalistic", "narrative", "analytical", "conversational", "interview"])
def test_no_sentence_is_printed_twice_outside_the_key_facts(talk, style: str) -> None:
    article = write_article(talk, style)
    prose = list(article.introduction) + [q for s in article.sections for p in s.paragraphs for q in p.sentences]
    prose += [q for e in article.faq for q in e["answer"]] + list(article.conclusion)
    assert len(prose) == len(set(prose)), prose


def test_section_headings_are_the_chapter_titles_and_publishable(talk) -> None:
    article = write_article(talk, "journalistic")
    assert [s.heading for s in article.sections] == [c.title for c in talk.chapters]
    assert all(publishable(c.title, "en") for c in talk.chapters), [c.title for c in talk.chapters]


# chapters that follow the subject ---------------------------------------------------------------

SUBJECTS = [
    ("derivative", "slope tangent derivative limit secant gradient steepness differentiation"),
    ("integral", "integral area antiderivative riemann accumulation summation rectangles"),
    ("matrix", "matrix determinant eigenvalue eigenvector transpose column row"),
    ("probability", "probability dice outcome distribution variance expectation sample"),
    ("fourier", "fourier frequency sine cosine harmonic spectrum oscillation"),
    ("entropy", "entropy information bits uncertainty surprise logarithm compression"),
]


def _lecture(seed: int = 5) -> tuple[list[Segment], list[int]]:
    """Six subjects of four minutes, each with its own vocabulary, opened by a cue phrase."""
    rng = random.Random(seed)
    common = "we see that this gives us the same idea again here and then".split()
    segments, changes, t = [], [], 0
    for number, (name, vocabulary) in enumerate(SUBJECTS):
        terms = vocabulary.split()
        changes.append(t)
        first = True
        start = t
        while t - start < 240_000:
            words = [rng.choice(terms) if rng.random() < 0.5 else rng.choice(common) for _ in range(12)]
            text = " ".join(words).capitalize() + "."
            if first and number:
                text = f"Now, let's talk about the {name}. " + text
            first = False
            segments.append(Segment(t, t + 5200, text))
            t += 5500
    return segments, changes[1:]


def test_a_lecture_gets_chapters_where_its_subject_changes() -> None:
    segments, changes = _lecture()
    graph = analyse(segments, language="en")
    assert validate_chapters(graph.chapters, graph.duration_ms) == []
    assert 5 <= len(graph.chapters) <= 12  # a 24-minute lecture: not 20
    starts = [c.start_ms for c in graph.chapters[1:]]
    found = [t for t in changes if any(abs(s - t) <= 15_000 for s in starts)]
    assert len(found) >= len(changes) - 1, (starts, changes)
    # each chapter is named by a term of the subject it covers
    for chapter in graph.chapters:
        middle = (chapter.start_ms + chapter.end_ms) // 2
        name, vocabulary = SUBJECTS[min(len(SUBJECTS) - 1, middle // 240_000)]
        assert set(chapter.title.lower().split()) & {name, *vocabulary.split()}, (chapter.title, name)
    assert all(publishable(c.title, "en") for c in graph.chapters)


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_language_gives_valid_chapters_and_publishable_labels(code: str) -> None:
    text = SPOKEN_FIGURES[code] + " " + FREQUENT_AND_RARE[code][2]
    segments = [Segment(k * 9000, k * 9000 + 8500, text, "A" if k % 2 else "B") for k in range(12)]
    graph = analyse(segments, language=code)
    assert validate_chapters(graph.chapters, graph.duration_ms) == []
    for label in [c.title for c in graph.chapters] + [m.title for m in graph.moments] + [t.name for t in
                                                                                            graph.topics]:
        assert publishable(label, code), (code, label)
    article = write_article(graph)
    assert article.labels["faq"] and article.sections


@pytest.mark.parametrize(("code", "said", "written"), [
    ("en", "between eight thousand and fifteen thousand euros", "between 8000 and 15000 euros"),
    ("fr", "entre huit mille et quinze mille euros", "entre 8000 et 15000 euros"),
    ("es", "entre ocho mil y quince mil euros", "entre 8000 y 15000 euros"),
    ("en", "one million and two million homes", "1000000 and 2000000 homes"),
    # "and" inside one number stays inside it
    ("en", "two hundred and fifty thousand people", "250000 people"),
    ("en", "three thousand and five", "3005"),
    ("en", "salt and pepper", "salt and pepper"),
])
def test_two_amounts_joined_by_and_stay_two_numbers(code: str, said: str, written: str) -> None:
    assert language(code).digits(said) == written


def test_now_and_so_open_no_part_by_themselves() -> None:
    """"Now", "so", "and", "okay" are leading words: set aside before a cue is looked for, never a
    cue of their own (made cues, they lowered the chapter boundaries' F1: docs/benchmarks.md)."""
    kit = language("en")
    for plain in ("Now, this toy example needs a couple of assumptions.", "And now we're still small.",
                  "Okay so the derivative is zero.", "So now the function grows."):
        assert not kit.opens_with_cue(plain), plain
    for opening in ("Now, let's talk about the heat equation.", "So now, moving on to the derivative.",
                    "Okay so next up is the derivative."):
        assert kit.opens_with_cue(opening), opening


def _announced_subjects(speakers: tuple[str | None, ...]) -> list[Segment]:
    """Fourteen subjects of 100 s (the six vocabularies in turn), each announced by a cue phrase; the
    sentences said in turn by ``speakers`` (one voice, or a host and a guest)."""
    rng = random.Random(11)
    segments, t = [], 0
    for number in range(14):
        name, vocabulary = SUBJECTS[number % len(SUBJECTS)]
        terms = vocabulary.split()
        for k in range(18):
            text = " ".join(rng.choice(terms) for _ in range(10)).capitalize() + "."
            if k == 0 and number:
                text = f"Next, let's talk about the {name}. " + text
            segments.append(Segment(t, t + 5200, text, speakers[k % len(speakers)]))
            t += 5500
    return segments


def test_a_lecture_counts_its_chapters_by_its_length_a_conversation_by_its_content() -> None:
    """Thirteen announced changes in 23 minutes: a podcast gets as many chapters as its boundaries that
    stand out (up to one per 2 minutes), a lecture as many as its length gives (docs/analysis.md)."""
    lecture = analyse(_announced_subjects((None,)), language="en")
    podcast = analyse(_announced_subjects(("HOST", "GUEST")), language="en")
    low, high = chapter_count_bounds(lecture.duration_ms)
    assert (low, high) == (3, 12)
    by_length = COUNT_RULE.count(lecture.duration_ms, 0, "monologue")
    assert by_length == COUNT_RULE.count(lecture.duration_ms, 14, "monologue") == 7  # the content moves it not
    longest = max(c.end_ms - c.start_ms for c in lecture.chapters)
    assert len(lecture.chapters) == by_length or longest <= COUNT_RULE.longest_ms  # more only from the split
    assert len(podcast.chapters) == high > len(lecture.chapters)  # fourteen parts said, twelve allowed
    for graph in (lecture, podcast):
        assert validate_chapters(graph.chapters, graph.duration_ms) == []


def test_one_named_voice_or_none_is_a_monologue() -> None:
    def said_by(*speakers: str | None) -> list:
        return split_sentences([Segment(k * 6000, k * 6000 + 5000, "The derivative is a slope.", who)
                                for k, who in enumerate(speakers)], "en")

    assert is_monologue(said_by(None, None, None))
    assert is_monologue(said_by("ALICE", "ALICE", None))
    assert not is_monologue(said_by("ALICE", "BOB", "ALICE"))


@pytest.mark.parametrize("text, expected", [
    ("Welcome to this short talk about heat pumps and how they can cut the energy bills of a family home. "
     "The key number is the coefficient of performance, which tells you how much heat you get for each unit "
     "of electricity. In 2023 they saved about eight million tonnes of carbon dioxide, and that is why we "
     "should think about them when we renovate our houses.", "en"),
    ("Bonjour à tous, aujourd'hui nous parlons de la rénovation énergétique des maisons. Quand on isole les "
     "murs, on réduit la facture de chauffage, mais il faut aussi penser à la ventilation parce que sinon "
     "l'humidité reste dans la maison et nous avons des problèmes.", "fr"),
    ("Heute sprechen wir über Wärmepumpen und warum sie für viele Häuser eine gute Wahl sind. Wenn man die "
     "Wände dämmt, sinkt die Rechnung, aber man muss auch an die Lüftung denken, weil sonst die Feuchtigkeit "
     "im Haus bleibt und wir nicht mehr wissen, was wir tun sollen.", "de"),
    ("Hoy hablamos de las bombas de calor y por qué son una buena opción para muchas casas. Cuando se aíslan "
     "las paredes, la factura baja, pero también hay que pensar en la ventilación, porque si no la humedad se "
     "queda en la casa y nosotros tenemos problemas.", "es"),
    ("Oggi parliamo delle pompe di calore e perché sono una buona scelta per molte case. Quando si isolano le "
     "pareti, la bolletta scende, ma bisogna anche pensare alla ventilazione, perché altrimenti l'umidità resta "
     "in casa e noi abbiamo dei problemi.", "it"),
    ("Hoje falamos das bombas de calor e porque são uma boa escolha para muitas casas. Quando se isolam as "
     "paredes, a conta baixa, mas também é preciso pensar na ventilação, porque senão a humidade fica em casa e "
     "nós temos problemas.", "pt"),
    ("Vandaag hebben we het over warmtepompen en waarom ze voor veel huizen een goede keuze zijn. Als je de "
     "muren isoleert, daalt de rekening, maar je moet ook aan ventilatie denken, want anders blijft het vocht "
     "in huis en hebben we problemen.", "nl"),
    ("Thank you.", "fr"),  # too little to tell: the default
    ("", "fr"),
])
def test_the_language_of_captions_is_guessed_from_the_stop_words_only_it_has(text, expected):
    assert guess_language(text) == expected


def test_a_guess_needs_a_clear_winner_else_the_default_given():
    assert guess_language("Thank you.", default="it") == "it"


def test_a_word_said_after_numbers_is_a_unit_and_no_topic() -> None:
    text = ("Ein Modul kostet zweihundert Euro. Die Batterie kostet fünftausend Euro. Die Förderung spart "
            "dreihundert Euro. Die Batterie hält zehn Jahre. Die Förderung gilt für jede Batterie.")
    graph = analyse([Segment(0, 30_000, text, "A")], language="de")
    topics = [t.name for t in graph.topics]
    assert "Euro" not in topics and "Batterie" in topics, topics


@pytest.mark.parametrize(("title", "code", "expected"), [
    ("Precio de los paneles solares", "es", True),  # "los" after "de": the article
    ("Kosten für die Anlage", "de", True),
    ("Los paneles", "es", False),  # an article first is refused anyway
    ("La compré", "es", False),  # the pronoun
])
def test_a_pronoun_that_spells_an_article_is_one_after_a_preposition(title: str, code: str, expected: bool) -> None:
    assert publishable(title, code) is expected


@pytest.mark.parametrize(("title", "expected"), [
    ("Wie wählt man die richtige Anlage?", True),  # "man": anyone, a heading as it stands
    ("Wie wählt er die richtige Anlage?", False),  # "er": someone said before
])
def test_a_german_question_put_to_anyone_is_a_title(title: str, expected: bool) -> None:
    assert publishable(title, "de") is expected


def test_the_steps_that_follow_a_question_are_its_answer() -> None:
    lines = [("A", "Welcome to this short guide to solar power for your home and its batteries."),
             ("A", "How do you choose the right installation?"),
             ("A", "Start by measuring your annual electricity use."),
             ("A", "Then compare the orientation of the roof and the sunshine in your region."),
             ("A", "An installer sizes the installation to the roof and the budget."),
             ("A", "The installation usually takes two days."),
             ("A", "A home battery costs around five thousand dollars today."),
             ("A", "Solar panels cost about two hundred dollars each."),
             ("A", "Panels lose a little of their output over time."),
             ("A", "An inverter turns direct current into alternating current."),
             ("A", "The grid buys back the surplus the panels produce."),
             ("A", "A battery lasts about a decade on average."),
             ("A", "Thank you for watching and see you next time.")]
    graph = analyse(_timed(lines, ms_per_word=380, gap=600), language="en")
    queries = [i.query for i in graph.intents]
    # the video asks "how" about the installation itself: no topic query "how does installation work"
    assert "How do you choose the right installation?" in queries, queries
    assert not any(q.startswith("how does installation") for q in queries), queries
    article = write_article(graph, "tutorial", "en")
    answers = {e["question"]: e["answer"] for e in article.faq}
    assert answers.get("How do you choose the right installation?") == [
        "Start by measuring your annual electricity use.",
        "Then compare the orientation of the roof and the sunshine in your region.",
        "An installer sizes the installation to the roof and the budget."], answers
    # its opening is only a greeting: no introduction, and no empty one printed
    assert not article.introduction and "\n\n\n" not in article.to_markdown()


# the video's own subject ----------------------------------------------------------------------

VIDEO_OPENINGS = {
    "en": ("Welcome to this video about home solar power.", "home solar power"),
    "fr": ("Bienvenue dans cette présentation sur l'énergie solaire en France.", "énergie solaire en France"),
    "de": ("Willkommen zu diesem Video über Solarenergie in Deutschland.", "Solarenergie in Deutschland"),
    "es": ("Bienvenidos a este vídeo sobre la energía solar en España.", "energía solar en España"),
    "it": ("Benvenuti in questo video sull'energia solare in Italia.", "energia solare in Italia"),
    "pt": ("Bem-vindos a este vídeo sobre energia solar em Portugal.", "energia solar em Portugal"),
    "nl": ("Welkom bij deze video over zonne-energie in Nederland.", "zonne-energie in Nederland"),
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_the_subject_a_video_names_for_itself_titles_its_article(code: str) -> None:
    opening, subject = VIDEO_OPENINGS[code]
    assert language(code).video_subject(opening) == subject
    _, _, rest = FREQUENT_AND_RARE[code]
    graph = analyse([Segment(0, 5_000, opening, "A"), Segment(5_000, 30_000, rest, "A")], language=code)
    assert write_article(graph, "tutorial", code).title == subject[0].upper() + subject[1:]


def test_a_video_subject_that_makes_no_title_leaves_the_topics_to_title_the_article() -> None:
    assert language("en").video_subject("I made this video to explain tokamaks.") is None
    opening = "Welcome to this short guide to solar power for your home."  # "your": no title
    assert language("en").video_subject(opening) == "solar power for your home"
    _, _, rest = FREQUENT_AND_RARE["en"]
    graph = analyse([Segment(0, 5_000, opening, "A"), Segment(5_000, 30_000, rest, "A")], language="en")
    assert write_article(graph, "tutorial", "en").title.startswith("Tokamak"), write_article(graph, "tutorial").title


@pytest.mark.parametrize(("title", "expected"), [
    ("Énergie solaire en France", True),  # "en" after a word: the preposition
    ("Vivre en ville", True),
    ("En parler", False),  # first: the pronoun
])
def test_french_en_is_a_preposition_after_a_word(title: str, expected: bool) -> None:
    assert publishable(title, "fr") is expected


def test_a_german_noun_said_after_an_article_is_no_name_and_frequent_is_no_topic() -> None:
    """German capitalises every noun: "der Preis" is a common noun, frequent in the language, so no
    topic; "Berlin", said bare, is a name and may be one."""
    text = ("Der Preis steigt in Berlin. Berlin baut die Photovoltaik aus. Der Preis der Photovoltaik sinkt. "
            "In Berlin zahlt man den Preis gern. Die Photovoltaik wächst in Berlin.")
    topics = [t.name for t in analyse([Segment(0, 30_000, text, "A")], language="de").topics]
    assert "Preis" not in topics and "Photovoltaik" in topics and "Berlin" in topics, topics


def test_a_talk_without_topics_takes_its_keywords_from_its_subject_and_its_names() -> None:
    text = ("Willkommen zu diesem Video über Solarenergie in Deutschland. Zuerst sprechen wir über den Preis der "
            "Solarmodule. Der Preis ist laut der Internationalen Energieagentur gefallen. Zum Schluss sprechen "
            "wir über die Förderung des Staates. Die Förderung senkt die Kosten der Anlage.")
    graph = analyse([Segment(0, 40_000, text, "A")], language="de")
    assert not graph.topics, [t.name for t in graph.topics]  # frequent nouns, and compounds said once
    keywords = write_article(graph, "tutorial", "de").keywords_primary
    assert keywords[0] == "Solarenergie in Deutschland" and "Internationalen Energieagentur" in keywords, keywords


HEAT_PUMP_TALK = [
    "Welcome to this video about heat pumps for the home.",
    "A heat pump moves heat from the outside air into your house.",
    "It uses electricity, but it delivers three to four times more heat than the energy it consumes.",
    "Next, let's talk about the cost of an installation.",
    "A typical air source heat pump costs between eight thousand and twelve thousand euros.",
    "According to the International Energy Agency, heat pumps could cut global heating emissions by half.",
    "How do you choose the right heat pump?",
    "Start by measuring the heat loss of your house, then compare the seasonal performance of each model.",
    "Finally, let's talk about government grants.",
    "In France, the MaPrimeRenov grant can cover up to forty percent of the price.",
    "Thank you for watching this video about heat pumps.",
]


def test_an_announcement_is_no_instruction_and_no_content_of_the_article() -> None:
    graph = _monologue(HEAT_PUMP_TALK, "en")
    article = write_article(graph)
    # two "let's talk about" and one set of steps: an explainer, not a tutorial of numbered steps
    assert article.writing_style != "tutorial"
    assert not any(s.heading.startswith("Step ") for s in article.sections), [s.heading for s in article.sections]
    printed = " ".join([*article.introduction, *(p for s in article.sections for par in s.paragraphs
                                                 for p in par.sentences), *article.conclusion])
    assert "let's talk about" not in printed, printed
    # a talk that does give steps is still a tutorial
    steps = [*HEAT_PUMP_TALK[:3], "First, check the insulation of your attic.", "Then make sure the radiators are "
             "large enough.", "Next, measure the heat loss of every room.", "You should also check the noise rules.",
             *HEAT_PUMP_TALK[9:]]
    assert write_article(_monologue(steps, "en")).writing_style == "tutorial"


def test_a_short_video_gets_a_chapter_for_each_part_its_speaker_announces() -> None:
    graph = _monologue(HEAT_PUMP_TALK, "en")
    starts = [c.start_ms for c in graph.chapters]
    duration = graph.sentences[-1].end_ms
    assert [c.title for c in graph.chapters] == ["Heat pumps for the home", "Cost of an installation",
                                                 "How to choose the right heat pump", "Government grants"]
    assert not validate_chapters(graph.chapters, duration)  # first at 0:00, each at least 10 s
    opening = {s.text: s.start_ms for s in graph.sentences}
    assert starts[1:] == [opening[HEAT_PUMP_TALK[3]] // 1000 * 1000, opening[HEAT_PUMP_TALK[6]] // 1000 * 1000,
                          opening[HEAT_PUMP_TALK[8]] // 1000 * 1000]
    # without the announcements, the length alone gives three
    plain = [HEAT_PUMP_TALK[k].replace("Next, let's talk about", "There is").replace(
        "How do you choose the right heat pump?", "People choose a heat pump with care.").replace(
        "Finally, let's talk about government grants.", "Government grants exist too.") for k in range(11)]
    assert len(_monologue(plain, "en").chapters) == 3


def _one_voice(lines: list[str], code: str):
    """The analysis of ``lines`` said by one speaker, 6 s each."""
    return analyse([Segment(k * 6000, k * 6000 + 5500, t, "A") for k, t in enumerate(lines)], language=code)


@pytest.mark.parametrize(("code", "lines", "query"), [
    # the indefinite article the speakers say before the topic: "what is a heat pump", not "what is heat pump"
    ("en", ["A heat pump is a device that moves heat from the outside air into the house.",
            "The heat pump gives three units of heat for every unit of electricity.",
            "A heat pump also cools the house in summer.", "Installers fit the heat pump outside."],
     "what is a heat pump"),
    # a mass noun is never said after one: it stays bare
    ("en", ["Entropy measures the uncertainty of a guess.", "Entropy grows as guesses multiply.",
            "With more entropy, each guess tells you less.", "Entropy is measured in bits."], "what is entropy"),
    # German: the nominative of the article said ("einen Kompressor" asks "was ist ein Kompressor")
    ("de", ["Eine Wärmepumpe ist ein Gerät, das Wärme aus der Außenluft holt.",
            "Die Wärmepumpe liefert drei Einheiten Wärme.", "Im Sommer kühlt eine Wärmepumpe.",
            "Installateure stellen die Wärmepumpe nach draußen."], "was ist eine Wärmepumpe"),
])
def test_a_topic_query_takes_the_indefinite_article_the_speakers_say(code: str, lines: list[str], query: str) -> None:
    graph = _one_voice(lines, code)
    queries = [i.query for i in graph.intents if i.source == "topic"]
    assert query in queries, queries
    if query.split()[2] in ("a", "eine"):  # as a question of the FAQ or a heading, the query reads as one
        article = write_article(graph, "journalistic", code)
        asked = [f["question"] for f in article.faq] + [s.heading for s in article.sections]
        assert query[:1].upper() + query[1:] + "?" in asked, asked


def test_the_indefinite_article_is_heard_before_a_verb_too() -> None:
    # "a home battery stores", "a home battery pays": the topic ends its phrase where a verb follows it, not
    # only a stop word ("a JavaScript developer" still asks no "what is a JavaScript")
    lines = ["Welcome to this talk about home batteries.",
             "A home battery stores the electricity your solar panels make during the day.",
             "Most home batteries today use lithium iron phosphate cells.",
             "So a home battery pays off when electricity in the evening is expensive."]
    graph = _one_voice(lines, "en")
    queries = [i.query for i in graph.intents if i.source == "topic"]
    assert "what is a home battery" in queries, queries


@pytest.mark.parametrize(("code", "lines", "query"), [
    ("en", ["Heat pumps cut heating bills because they move heat instead of making it.",
            "Heat pumps work in cold winters too.", "Many heat pumps run on cheap night power.",
            "Heat pumps lead to lower emissions in old houses."], "why do heat pumps matter"),
    ("de", ["Eine Wärmepumpe ist ein Gerät, das Wärme aus der Außenluft in das Haus bringt.",
            "Die meisten neuen Häuser in Norwegen nutzen heute eine Wärmepumpe.",
            "Aber im Winter sinkt die Leistung, wenn die Luft sehr kalt ist.",
            "Deshalb brauchen alte Häuser oft eine bessere Dämmung.",
            "Die Installation kostet mehr als zehntausend Euro, aber der Staat zahlt einen Teil."],
     "was macht Häuser wichtig"),
])
def test_why_a_topic_matters_is_asked_as_a_question(code: str, lines: list[str], query: str) -> None:
    # "why heat pump matters?" and "warum Häuser wichtig ist?" were asked; the question agrees with a plural
    # (German: "was macht ... wichtig" agrees with any number)
    graph = _one_voice(lines, code)
    assert query in [i.query for i in graph.intents], [i.query for i in graph.intents]


def test_german_nouns_side_by_side_are_no_name() -> None:
    # German capitalises every noun: "drei Einheiten Wärme", "Denken Sie" are words of the language,
    # while a span with a word the language does not hold may be a name ("Noethers Theorem")
    text = ("Sie liefert drei Einheiten Wärme für jede Einheit Strom. Denken Sie an die Quadratische Formel. "
            "Das folgt aus Noethers Theorem.")
    graph = analyse([Segment(0, 12_000, text, "A")], language="de")
    names = {e.name for e in graph.entities if e.type not in ("number", "date")}
    assert not names & {"Einheiten Wärme", "Einheit Strom", "Denken Sie", "Quadratische Formel"}, names
    assert "Noethers Theorem" in names, names


def test_a_common_word_capitalised_where_the_splitter_missed_a_sentence_is_no_name() -> None:
    # captions that run sentences together: "Download" opens a sentence the splitter did not see, and the
    # talk says "download" in lowercase elsewhere; "React", written both ways, is capitalised often
    text = ("you go to the site and download it Download the installer and run it. we download files and "
            "download more files. React is a library. React renders views. I use react and React daily.")
    graph = analyse([Segment(0, 20_000, text, "A")], language="en")
    names = {e.name for e in graph.entities}
    assert "Download" not in names and "React" in names, names


def test_a_german_plural_also_said_in_the_singular_asks_in_the_plural() -> None:
    # German articles do not tell ("die Symmetrien", "die Symmetrie"): "Symmetrien" is a plural because
    # "Symmetrie" is said too; "Größe" is no plural of "groß"
    lines = ["Die Symmetrien eines Würfels sind Drehungen des Würfels.",
             "Eine Symmetrie ist eine Drehung, die den Würfel gleich lässt.", "Die Symmetrien bilden eine Gruppe.",
             "Symmetrien lassen sich verketten.", "Jede Symmetrie hat eine Umkehrung.",
             "Die Symmetrien des Würfels sind vierundzwanzig."]
    graph = _one_voice(lines, "de")
    assert "was sind Symmetrien" in [i.query for i in graph.intents], [i.query for i in graph.intents]


def test_a_german_lead_takes_no_sentence_opening_with_sie() -> None:
    # "Sie liefert drei Einheiten Wärme...": "sie" refers back (or addresses the viewer); out of its
    # context it makes no lead
    lines = ["Eine Wärmepumpe ist ein Gerät, das Wärme aus der Außenluft in das Haus bringt.",
             "Sie liefert drei Einheiten Wärme für jede Einheit Strom, weil sie die Wärme nur verschiebt.",
             "Die meisten neuen Häuser in Norwegen nutzen heute eine Wärmepumpe.",
             "Die Installation kostet mehr als zehntausend Euro, aber der Staat zahlt einen Teil."]
    graph = _one_voice(lines, "de")
    article = write_article(graph, "journalistic", "de")
    assert not any(s.startswith("Sie ") for s in article.introduction), article.introduction


DATED_FIGURES = {
    "en": ("In March 2020 prices rose by 15 percent.", "March 2020", "15 percent"),
    "fr": ("En mars 2020 les prix ont monté de 15 pour cent.", "mars 2020", "15 pour cent"),
    "de": ("Im März 2020 stiegen die Preise um 15 Prozent.", "März 2020", "15 Prozent"),
    "es": ("El 3 de marzo de 2020 los precios subieron un 15 por ciento.", "3 de marzo de 2020", "15 por ciento"),
    "it": ("A marzo 2020 i prezzi sono saliti del 15 per cento.", "marzo 2020", "15 per cento"),
    "pt": ("Em março de 2020 os preços subiram 15 por cento.", "março de 2020", "15 por cento"),
    "nl": ("In maart 2020 stegen de prijzen met 15 procent.", "maart 2020", "15 procent"),
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_month_and_a_unit_of_the_language_make_a_date_and_a_figure(code: str) -> None:
    # the month names and unit words were English and French: "15 Prozent" was a bare 15, no figure
    text, date, figure = DATED_FIGURES[code]
    graph = analyse([Segment(0, 6000, text, "A")], language=code)
    found = [(e.type, e.name) for e in graph.entities]
    assert ("date", date) in found and ("number", figure) in found, found
    assert [n for t, n in found if t == "number"] == [figure], found  # said once, counted once


def test_a_topic_said_mostly_with_the_and_twice_with_a_is_asked_with_a() -> None:
    lines = ["The vector field assigns a vector to every point.", "The vector field here shows a fluid.",
             "Draw a vector field, then look at it.", "The vector field has a divergence.",
             "Any vector field has a curl too.", "Take a vector field, and its flow follows.",
             "The vector field is smooth.", "The vector field is drawn in blue.", "The vector field ends here.",
             "Gaussian integers are complex numbers.", "Gaussian integers factor into primes.",
             "Gaussian integers form a lattice."]
    graph = _one_voice(lines, "en")
    queries = [i.query for i in graph.intents if i.source == "topic"]
    assert "what is a vector field" in queries, queries
    assert "what are Gaussian integers" in queries, queries  # a name's adjective, a plural noun


@pytest.mark.parametrize("question", [
    "The dot product gives you a measure of how aligned two vectors are, right?",  # a statement with a tag
    "It's like, you know, if you get attached to something, you're like, okay, how can I make this thing just a "
    "little bit better and then a little bit faster than it was yesterday?",  # a turn of talk, 30 words
    "Like how, how do you define one of these dot products?",  # speech that restarts
    "It's like, well, what vectors give a dot product of zero?",  # a turn of talk (``speech_markers``)
    "I was like, how do I even compute a dot product by hand?",
    "I think this rule for dot products would feel pretty strange, don't you?",  # tags of every auxiliary
    "That was a long detour through dot products, wasn't it?",
])
def test_a_statement_with_a_tag_a_long_turn_or_a_restart_is_no_search_question(question: str) -> None:
    lines = [question, "The dot product of two vectors measures how aligned they are.",
             "Aligned vectors give a large dot product.", "Perpendicular vectors give a dot product of zero."]
    graph = _one_voice(lines, "en")
    assert not [i.query for i in graph.intents if i.source == "question"], graph.intents


def test_a_piece_of_a_longer_term_is_no_second_topic_and_how_much_asks_no_process() -> None:
    # "lithium iron phosphate cells": "lithium iron phosphate" is the topic, "phosphate cells" and "iron
    # phosphate cells", said only with it, are no others; "how much electricity" asks nothing about how
    # electricity works
    lines = ["Most home batteries use lithium iron phosphate cells today.",
             "Lithium iron phosphate cells do not catch fire easily.",
             "Lithium iron phosphate costs less than nickel.", "Lithium iron phosphate lasts for years.",
             "Measure how much electricity you use after sunset.", "Electricity in the evening is expensive."]
    graph = _one_voice(lines, "en")
    names = [t.name for t in graph.topics]
    assert "lithium iron phosphate" in names, names
    assert not {"phosphate cells", "iron phosphate cells"} & set(names), names
    assert not any(i.query.startswith("how does electricity") for i in graph.intents), graph.intents


@pytest.mark.parametrize(("code", "asked", "query"), [
    ("en", "The question for you is what does that new wave look like?", "What does that new wave look like?"),
    ("en", "The question, as always, is what should the distribution of the sum look like?",
     "What should the distribution of the sum look like?"),
    ("en", "So how does a heat pump, uh, work in the winter?", "How does a heat pump work in the winter?"),
    ("en", "What are, uh, what are the waves that slow down in glass?", "What are the waves that slow down in glass?"),
    ("fr", "La question est : comment la chaleur passe-t-elle du mur à la pièce ?",
     "Comment la chaleur passe-t-elle du mur à la pièce ?"),
])
def test_a_search_question_is_the_question_itself_without_its_lead_in_or_hesitations(code: str, asked: str,
                                                                                      query: str) -> None:
    lines = {"en": [asked, "A wave of light slows down in glass because the charges in the glass oscillate.",
                    "The distribution of a sum of two variables is their convolution.",
                    "A heat pump moves heat from the outside air into the house."],
             "fr": [asked, "La chaleur passe du mur à la pièce par conduction.",
                    "Le mur chaud rayonne vers la pièce froide.", "La pièce se réchauffe lentement."]}[code]
    graph = _one_voice(lines, code)
    assert [i.query for i in graph.intents if i.source == "question"] == [query]
    article = write_article(graph, "auto", code)
    assert all(e["question"] == query for e in article.faq if e["source"] == "question")
