"""Chapter titles closer to what people write: the head in the plural when the chapter says the
plural, the subject the chapter's opening names, no phrase made only of common words, and the
question a chapter opens with when it names a rare term once. One small case each."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.analysis import Segment
from domain.analysis.chapters import Chapter
from domain.analysis.language import language
from domain.analysis.phrases import PhraseReader, publishable
from domain.analysis.sentences import split_sentences
from domain.analysis.text import read_out_question
from domain.analysis.titles import title_chapters
from tests.support.caption_lines import BATTERY_TALK


def _titles(parts: list[list[str]], code: str = "en") -> list[str]:
    """Titles of chapters made of the given sentences (one list per chapter), 5 s a sentence."""
    segments, bounds, t = [], [], 0
    for sentences in parts:
        first = len(segments)
        for text in sentences:
            segments.append(Segment(t, t + 4800, text))
            t += 5000
        bounds.append((first, len(segments) - 1))
    sentences = split_sentences(segments, code)
    assert len(sentences) == len(segments)  # one sentence a cue: the chapters' indices hold
    reader = PhraseReader(code)
    reader.learn(sentences)
    chapters = [Chapter(sentences[a].start_ms, sentences[b].end_ms, "", a, b) for a, b in bounds]
    title_chapters(chapters, sentences, reader)
    assert all(publishable(c.title, code) for c in chapters)
    return [c.title for c in chapters]


@pytest.mark.parametrize(("code", "label", "said", "expected"), [
    ("en", "function", {"function": 3, "functions": 1}, "functions"),
    ("en", "phase kick", {"phase kick": 2, "phase kicks": 1}, "phase kicks"),
    ("en", "class", {"class": 2, "classes": 1}, "classes"),
    ("en", "entropy", {"entropy": 4}, "entropy"),  # never said in the plural: stays as said
    ("en", "Fourier", {"Fourier": 3}, "Fourier"),
    ("fr", "problème de convergence", {"problème de convergence": 2, "problèmes": 1}, "problème de convergence"),
    ("fr", "dérivée", {"dérivée": 3, "dérivées": 2}, "dérivées"),
    ("fr", "tuyau", {"tuyau": 1, "tuyaux": 1}, "tuyaux"),
    ("de", "Ableitung", {"Ableitung": 2, "Ableitungen": 1}, "Ableitungen"),
    ("it", "funzione", {"funzione": 2, "funzioni": 2}, "funzione"),  # the last vowel changes: left as said
])
def test_a_title_head_is_plural_when_the_chapter_says_the_plural(code: str, label: str, said: dict, expected: str):
    assert PhraseReader(code).plural_head(label, Counter(said)) == expected


@pytest.mark.parametrize(("said", "shown"), [
    ({"shamelessly plug": 2, "shameless plugs": 1}, "shameless plugs"),  # an adverb and a verb: no label
    ({"uniformly distributed": 3, "uniform distribution": 1}, "uniform distribution"),
    ({"uniformly distributed variables": 2}, "uniformly distributed variables"),  # no other form: as said
    ({"family plan": 3, "families plans": 1}, "family plan"),  # "fami" is said nowhere: no adverb
])
def test_a_label_says_no_adverb_where_another_form_says_its_adjective(said: dict, shown: str) -> None:
    assert PhraseReader("en").label(Counter(said)) == shown


def test_a_chapter_that_treats_several_instances_is_titled_in_the_plural() -> None:
    titles = _titles([
        ["Sorted arrays hold values in order.", "A sorted array has a length.", "You can search a sorted array.",
         "Each sorted array is an object."],
        ["Pending promises wait for results.", "A pending promise resolves later.", "A pending promise can reject.",
         "Chain one pending promise."],
        ["The garbage collector frees memory.", "The garbage collector runs often.", "Memory leaks hurt.",
         "The garbage collector is automatic."],
    ])
    assert titles[:2] == ["Sorted arrays", "Pending promises"]
    assert titles[2] == "Garbage collector"  # never said in the plural


def test_a_phrase_of_common_words_weighs_less_than_a_term() -> None:
    # "couple of people" is said as often as "load balancer", but names no subject of its own
    titles = _titles([
        ["A couple of people asked about the load balancer.", "The load balancer spreads requests.",
         "A couple of people use one.", "Our load balancer is simple.", "A couple of people build it."],
        ["Caching keeps answers.", "A cache expires.", "The cache is warm.", "Caching saves time."],
    ])
    assert titles[0] == "Load balancer"


def _chapter_opening_on(subject: str, other: str) -> list[str]:
    """Each term said three times; the opening two sentences name only ``subject``."""
    return [f"Let's now turn to the {subject}.", f"A {subject} has its rules.", "It has rows.", "It has columns.",
            f"A {other} has a direction.", f"Each {other} has a length.", f"The {other} points away.",
            f"Then the {subject} stretches space."]


def test_the_subject_named_in_a_chapter_opening_is_preferred_for_its_title() -> None:
    first = ["Scalars are plain numbers.", "A scalar scales.", "Scalars commute.", "One more scalar."]
    assert _titles([first, _chapter_opening_on("rotation matrix", "vector field")])[1] == "Rotation matrix"
    assert _titles([first, _chapter_opening_on("vector field", "rotation matrix")])[1] == "Vector field"


def test_a_chapter_opening_question_naming_a_rare_term_once_is_its_title() -> None:
    titles = _titles([
        ["Transformers read tokens.", "Each token becomes a vector.", "Vectors flow through layers.",
         "Layers add up."],
        ["With that, let's dive in.", "What happens inside a multilayer perceptron?",
         "Each vector goes through a short series of operations.", "The operations happen in parallel.",
         "Then another vector is added."],
    ])
    assert titles[1] == "What happens inside a multilayer perceptron?"
    # a question made only of common words is no title
    titles = _titles([
        ["Transformers read tokens.", "Each token becomes a vector.", "Vectors flow through layers.",
         "Layers add up."],
        ["With that, let's dive in.", "What does that mean for us?", "Each neuron sums its inputs.",
         "The neuron fires.", "Every neuron has a bias."],
    ])
    assert titles[1] != "What does that mean for us?"


def test_a_question_put_to_a_generic_you_is_its_heading_with_to() -> None:
    first = ["Solar panels turn light into power.", "Panels face south.", "A panel lasts decades.",
             "Panels need little care."]
    titles = _titles([first, ["How do you choose the right installation?", "Installers size it to the roof.",
                              "An installation needs a permit.", "The installation takes two days."]])
    assert titles[1] == "How to choose the right installation"
    titles = _titles([first, ["What should you look for in an inverter?", "An inverter converts current.",
                              "Inverters fail first.", "Pick an inverter with a warranty."]])
    assert titles[1] == "What to look for in an inverter"


def test_a_question_read_out_without_its_mark_titles_its_chapter() -> None:
    """A listener's question, read out by the host as the captions write it (no question mark): its
    chapter's title is the question, as a person would write it."""
    first = ["Welcome to the show about web development.", "Today we answer your questions.",
             "Questions came from all over.", "We love the questions."]
    titles = _titles([first, ["Okay, next question is from Adam.", "Adam says what makes a software engineer senior.",
                              "A senior engineer manages a team.", "A senior engineer picks software responsibly."]])
    assert titles[1] == "What makes a software engineer senior?"
    titles = _titles([first, ["Next question is from Joel, how do you handle SVGs in React.",
                              "SVGs can be inlined.", "An SVG loader helps.", "Some people inline every SVG."]])
    assert titles[1] == "How to handle SVGs in React"


@pytest.mark.parametrize(("code", "said", "question"), [
    ("en", "Adam says what makes a software engineer senior.", "What makes a software engineer senior?"),
    ("en", "How often do you make commits, I always hear commit often.", "How often do you make commits?"),
    ("en", "He asks, first, thanks for the amazing podcast.", None),  # no question follows
    ("en", "She says what she thinks.", None),  # what she thinks: a thing, not a question
    ("en", "Research says what happens is complicated.", None),  # what happens: a thing named
    ("en", "He says what is important is the roof.", None),
    ("en", "What happens is that the heat moves.", None),
    ("en", "How can we, uh, improve the API?", "How can we improve the API?"),  # read clean verbatim
    ("fr", "La question vient de Paul, comment choisir une pompe à chaleur.", "Comment choisir une pompe à chaleur ?"),
    ("es", "Ana pregunta cómo se instala una bomba de calor.", "¿Cómo se instala una bomba de calor?"),
    ("es", "Ana dice que la bomba funciona.", None),
    ("it", "Marco chiede perché il cielo è blu.", "Perché il cielo è blu?"),
    ("pt", "A próxima pergunta é de Ana, como funciona uma bomba de calor.", "Como funciona uma bomba de calor?"),
    ("pt", "Ele escreve porque gosta.", None),  # "porque": because
    ("de", "Die nächste Frage ist von Anna, warum ist der Himmel blau.", "Warum ist der Himmel blau?"),
    ("de", "Er fragt, wie man das macht.", None),  # a clause, its verb last: no question as written
    ("nl", "Piet vraagt: hoe werkt een warmtepomp.", "Hoe werkt een warmtepomp?"),
])
def test_the_question_a_sentence_reads_out(code: str, said: str, question: str | None) -> None:
    assert read_out_question(said, code) == question


@pytest.mark.parametrize(("code", "said", "reports"), [
    ("en", "Adam says what makes a software engineer senior.", True),
    ("en", "Next question is from Tom.", True),  # it announces one: no claim, no prose
    ("en", "Next question we have here is from Sam.", True),
    ("en", "How often do you make commits, I always hear commit often.", False),  # opens as one: may hold content
    ("en", "The question is what makes it work.", False),
    ("fr", "La question suivante vient de Marie.", True),
    ("fr", "C'est une question de temps.", False),  # "a matter of time"
    ("es", "La pregunta viene de Ana.", True),
    ("it", "La domanda successiva viene da Marco.", True),
    ("pt", "A pergunta seguinte vem de Ana.", True),
    ("de", "Die nächste Frage kommt von Anna.", True),
    ("nl", "De volgende vraag komt van Piet.", True),
])
def test_a_sentence_that_reports_a_question(code: str, said: str, reports: bool) -> None:
    assert language(code).reports_question(said) is reports


@pytest.mark.parametrize(("title", "expected"), [
    ("How to choose the right installation", True),  # "right" as an adjective, not the filler
    ("What does a heat pump look like?", True),
    ("Right, what is a heat pump?", False),  # the filler where speech puts it
    ("What is a heat pump, right?", False),
    ("How to", False),
    ("Why do you need a battery?", False),  # no heading without its "you": the pronoun refuses it
])
def test_fillers_refuse_a_question_only_where_speech_puts_them(title: str, expected: bool) -> None:
    assert publishable(title, "en") is expected


def test_the_subject_a_chapter_opening_announces_by_name_is_its_title() -> None:
    first = ["Solar panels turn light into power.", "Panels face south.", "A panel lasts decades.",
             "Panels need little care."]
    titles = _titles([first, ["Next, let's talk about battery storage.",
                              "Lithium ion batteries store the electricity produced during the day.",
                              "A home battery costs five thousand dollars.", "The battery pays for itself."]])
    assert titles[1] == "Battery storage"  # not "Electricity produced", said once in the opening
    titles = _titles([["Les panneaux solaires produisent de l'électricité.", "Un panneau dure longtemps.",
                       "Les panneaux coûtent moins cher.", "Le panneau se pose vite."],
                      ["Passons maintenant au stockage de l'énergie.", "Les batteries stockent l'électricité.",
                       "Le stockage coûte cher.", "Une batterie dure dix ans."]], code="fr")
    assert titles[1] == "Stockage de l'énergie"


@pytest.mark.parametrize("opening", [
    "Let's now dive into the meat of the lesson.",  # "meat" said once: not the chapter's subject
    "Let's talk about it.",  # a pronoun
])
def test_an_announcement_that_names_no_subject_of_the_chapter_is_no_title(opening: str) -> None:
    first = ["Solar panels turn light into power.", "Panels face south.", "A panel lasts decades.",
             "Panels need little care."]
    titles = _titles([first, [opening, "Batteries store the power of the day.", "A battery costs money.",
                              "Batteries last ten years."]])
    assert titles[1] not in ("Meat of the lesson", "It"), titles


@pytest.mark.parametrize(("code", "sentence", "subject"), [
    ("en", "So, first, let's talk about the price of solar panels.", "price of solar panels"),
    ("en", "Moving on to tabs versus spaces, which is a classic.", "tabs versus spaces"),
    ("en", "Let's look at the heat equation for a moment.", "heat equation"),
    ("fr", "Passons maintenant au stockage de l'énergie.", "stockage de l'énergie"),
    ("fr", "Enfin, parlons des aides de l'État.", "aides de l'État"),
    ("de", "Zuerst sprechen wir über den Preis der Solarmodule.", "Preis der Solarmodule"),
    ("de", "Kommen wir nun zur Speicherung der Energie.", "Speicherung der Energie"),
    ("es", "Primero, hablemos del precio de los paneles solares.", "precio de los paneles solares"),
    ("it", "Infine, parliamo degli incentivi dello Stato.", "incentivi dello Stato"),
    ("pt", "Passemos agora ao armazenamento da energia.", "armazenamento da energia"),
    ("nl", "Laten we het hebben over de subsidies.", "subsidies"),
    ("en", "Let's go.", None),
    ("en", "We talked about panels.", None),
])
def test_the_subject_a_sentence_announces(code: str, sentence: str, subject: str | None) -> None:
    from domain.analysis.language import language

    assert language(code).announced(sentence) == subject


def test_an_announcement_just_before_the_chapter_names_it() -> None:
    """A short video's chapter lasts 10 s at least, so its boundary may fall one sentence after the
    announcement: the subject announced there is still the chapter's title."""
    first = ["Solar panels turn light into power.", "Panels face south.", "A panel lasts decades.",
             "Next, let's talk about battery storage."]
    titles = _titles([first, ["Lithium ion cells keep the electricity produced during the day.",
                              "A home battery costs five thousand dollars.", "The battery pays for itself."]])
    assert titles[1] == "Battery storage", titles
    assert titles[0] != "Battery storage"


def test_of_two_phrases_said_once_the_one_of_rarer_words_is_the_title() -> None:
    first = ["Solar panels turn light into power.", "Panels face south.", "A panel lasts decades.",
             "Panels need little care."]
    titles = _titles([first, ["Take your evening consumption and add twenty percent.",
                              "Lithium ferrophosphate cells do not catch fire easily."]])
    assert titles[1] == "Lithium ferrophosphate", titles  # not "Consumption and add", first in the alphabet


# Three chapters a language, each about one subject said in a phrase and around it in single words: the
# titles name the subjects, in a phrase (a single common word never: "Pumps", "Panneaux"), each once.
TALKS = {
    "en": [["Heat pumps move heat from outside air.", "A heat pump uses some electricity.",
            "Heat pumps work in winter.", "The heat pump is quiet."],
           ["Solar panels produce electricity.", "Solar panels face south.", "Each solar panel lasts decades.",
            "Panels need cleaning."],
           ["Battery storage keeps the energy.", "Battery storage costs money.", "Home battery storage grows.",
            "Batteries last years."]],
    "fr": [["Les pompes à chaleur prennent la chaleur de l'air.", "Une pompe à chaleur consomme peu.",
            "Les pompes à chaleur marchent en hiver.", "La pompe à chaleur reste silencieuse."],
           ["Les panneaux solaires produisent de l'électricité.", "Les panneaux solaires regardent le sud.",
            "Un panneau solaire dure longtemps.", "Les panneaux demandent peu d'entretien."],
           ["Le stockage d'énergie garde le courant.", "Le stockage d'énergie coûte cher.",
            "Le stockage d'énergie progresse.", "Les batteries durent dix ans."]],
    "de": [["Die Wärmepumpe holt Wärme aus der Luft.", "Eine Wärmepumpe braucht wenig Strom.",
            "Die Wärmepumpe läuft im Winter.", "Die Wärmepumpe ist leise."],
           ["Die Solarmodule erzeugen Strom.", "Die Solarmodule zeigen nach Süden.", "Jedes Solarmodul hält lange.",
            "Die Module brauchen Pflege."],
           ["Der Batteriespeicher speichert Energie.", "Der Batteriespeicher kostet Geld.",
            "Ein Batteriespeicher wächst mit.", "Die Batterien halten Jahre."]],
    "es": [["Las bombas de calor toman el calor del aire.", "Una bomba de calor consume poco.",
            "Las bombas de calor funcionan en invierno.", "La bomba de calor es silenciosa."],
           ["Los paneles solares producen electricidad.", "Los paneles solares miran al sur.",
            "Un panel solar dura décadas.", "Los paneles necesitan limpieza."],
           ["El almacenamiento de energía guarda la corriente.", "El almacenamiento de energía cuesta dinero.",
            "El almacenamiento de energía crece.", "Las baterías duran años."]],
    "it": [["Le pompe di calore prendono il calore dall'aria.", "Una pompa di calore consuma poco.",
            "Le pompe di calore funzionano in inverno.", "La pompa di calore è silenziosa."],
           ["I pannelli solari producono elettricità.", "I pannelli solari guardano a sud.",
            "Un pannello solare dura decenni.", "I pannelli chiedono pulizia."],
           ["L'accumulo di energia conserva la corrente.", "L'accumulo di energia costa denaro.",
            "L'accumulo di energia cresce.", "Le batterie durano anni."]],
    "pt": [["As bombas de calor tiram o calor do ar.", "Uma bomba de calor consome pouco.",
            "As bombas de calor funcionam no inverno.", "A bomba de calor é silenciosa."],
           ["Os painéis solares produzem eletricidade.", "Os painéis solares olham para o sul.",
            "Um painel solar dura décadas.", "Os painéis pedem limpeza."],
           ["O armazenamento de energia guarda a corrente.", "O armazenamento de energia custa dinheiro.",
            "O armazenamento de energia cresce.", "As baterias duram anos."]],
    "nl": [["De warmtepompen halen warmte uit de lucht.", "Een warmtepomp gebruikt weinig stroom.",
            "De warmtepompen werken in de winter.", "De warmtepomp is stil."],
           ["De zonnepanelen maken stroom.", "De zonnepanelen liggen op het zuiden.", "Elk zonnepaneel gaat lang mee.",
            "De panelen vragen onderhoud."],
           ["De thuisbatterij bewaart energie.", "De thuisbatterij kost geld.", "Een thuisbatterij groeit mee.",
            "De batterijen gaan jaren mee."]],
}
SUBJECTS = {
    "en": ("heat pump", "solar panel", "battery storage"), "fr": ("pompe", "panneaux solaires", "stockage"),
    "de": ("wärmepumpe", "solarmodul", "batteriespeicher"), "es": ("bomba", "paneles solares", "almacenamiento"),
    "it": ("pomp", "pannelli solari", "accumulo"), "pt": ("bomba", "painéis solares", "armazenamento"),
    "nl": ("warmtepomp", "zonnepane", "thuisbatterij"),
}


@pytest.mark.parametrize("code", sorted(TALKS))
def test_titles_name_each_chapter_subject_in_a_publishable_phrase_once(code: str) -> None:
    titles = _titles(TALKS[code], code)  # every title publishable (checked there)
    reader = PhraseReader(code)
    reader.learn(split_sentences([Segment(5000 * k, 5000 * k + 4800, text) for k, text in
                                  enumerate(t for part in TALKS[code] for t in part)], code))
    assert len({t.lower() for t in titles}) == len(titles), titles
    for title, subject in zip(titles, SUBJECTS[code], strict=True):
        assert subject in title.lower(), (title, subject)
        assert title[:1].isupper() and reader.names_a_subject(title), title


@pytest.mark.parametrize(("code", "title", "said", "expected"), [
    ("en", "Dots", "We draw dots. The dots move.", False),  # a common word, said in lowercase
    ("en", "Heat pumps", "Heat pumps work.", True),
    ("en", "JavaScript", "JavaScript runs here.", True),  # capitals inside: a name
    ("en", "Wordle", "I play Wordle. Wordle is a game.", True),  # never said in lowercase: a name
    ("en", "CSS", "We write css and CSS.", True),  # an acronym
    ("en", "What is a group?", "What is a group?", True),  # a question
    # an adverb said only where it opens a sentence is never lowercase, and still no name; "-ly" words whose
    # rest is no common word of five letters or more may be names
    ("en", "Intuitively", "Intuitively, there is a reason. Intuitively, it works.", False),
    ("en", "Kelly", "Kelly wrote it. Kelly was right.", True),
    ("fr", "Panneaux", "Les panneaux produisent.", False),
    ("de", "Größe", "Die Größe zählt. Eine Größe wächst.", False),  # a common noun, said after an article
    ("de", "Wärmepumpen", "Die Wärmepumpen laufen.", True),  # a compound: a phrase in one word
    ("nl", "Zonnepanelen", "De zonnepanelen werken.", True),
    ("it", "Pannelli", "I pannelli producono.", False),
])
def test_a_single_word_titles_a_chapter_only_when_it_names_something(code: str, title: str, said: str,
                                                                      expected: bool) -> None:
    reader = PhraseReader(code)
    reader.learn(split_sentences([Segment(0, 5000, said)], code))
    assert reader.names_a_subject(title) is expected


@pytest.mark.parametrize(("code", "chapters", "refused"), [
    # a clause said once ("Arrays hold values"), a word of quantity first ("Couple of people"), a common
    # word before a name ("Physicist Eugene Wigner"), a word mostly said before one same word ("post" of
    # "post css"), an adverb before a connector ("Minimally with ASTs")
    ("en", [["Arrays hold values in order.", "Sorted arrays are fast.", "Sorted arrays need care.",
             "Search sorted arrays."]], "Arrays hold values"),
    ("en", [["A couple of people asked about caching.", "A couple of people use caching layers.",
             "Caching layers keep answers.", "A couple of people build caching layers."]], "Couple of people"),
    ("en", [["The physicist Eugene Wigner wrote a paper.", "Eugene Wigner liked mathematics.",
             "The paper by Eugene Wigner is famous.", "Wigner was right."]], "Physicist Eugene Wigner"),
    ("en", [["Plugins for post css are small.", "Post css runs plugins.", "We love post css.",
             "Post css plugins transform styles."]], "Plugins for post"),
    ("en", [["Minimally with ASTs you can parse code.", "Minimally with ASTs the tools agree.",
             "Parsers build trees.", "Minimally with ASTs we lint."]], "Minimally with ASTs"),
    ("fr", [["Une sorte d'oscillation amortie apparaît.", "Une sorte d'oscillation amortie revient.",
             "L'oscillation amortie décroît.", "Une oscillation amortie finit."]], "Sorte d'oscillation amortie"),
])
def test_a_phrase_that_names_no_subject_is_no_title(code: str, chapters: list[list[str]], refused: str) -> None:
    other = {"en": ["Heat pumps move heat.", "A heat pump is quiet.", "Heat pumps work.", "The heat pump lasts."],
             "fr": ["Les pompes à chaleur marchent.", "Une pompe à chaleur dure.", "Les pompes à chaleur chauffent.",
                    "La pompe à chaleur est calme."]}[code]
    titles = _titles([other, *chapters], code)
    assert refused not in titles, titles


@pytest.mark.parametrize(("code", "said", "phrase"), [
    ("fr", "Une fois l'énergie rendue, la fois suivante commence. L'énergie monte.", ("fois", "énergie")),
    ("es", "Una vez la energía lista, la vez siguiente empieza. La energía sube.", ("vez", "energía")),
    ("nl", "Een keer de energie klaar, de keer daarna begint. De energie stijgt.", ("keer", "energie")),
])
def test_a_phrase_opening_with_the_word_for_times_names_no_subject(code: str, said: str, phrase: tuple) -> None:
    # "Fois l'analyse", "Fois x-a" (of "deux fois x-a"): a count of times, like "couple of", opens no title
    reader = PhraseReader(code)
    reader.learn(split_sentences([Segment(0, 9000, said)], code))
    assert not reader.describes(phrase)
    assert reader.describes(phrase[1:])


@pytest.mark.parametrize(("code", "said", "refused", "kept"), [
    # two words of which one says what the speaker thinks of a thing, in either order
    ("en", "That is a good question about caching. Caching layers keep answers.", ("good", "question"),
     ("caching", "layers")),
    ("en", "A huge distraction came from the linter. The linter rules changed.", ("huge", "distraction"),
     ("linter", "rules")),
    ("fr", "C'est une question intéressante sur le cache. Le cache garde les réponses.", ("question", "intéressante"),
     ("cache",)),
    ("de", "Das ist eine gute Frage zum Speicher. Der Speicher hält Daten.", ("gute", "frage"), ("speicher",)),
    ("es", "Es una pregunta interesante sobre la memoria. La memoria guarda datos.", ("pregunta", "interesante"),
     ("memoria",)),
    ("it", "È una domanda strana sulla memoria. La memoria tiene i dati.", ("domanda", "strana"), ("memoria",)),
    ("pt", "É uma pergunta estranha sobre a memória. A memória guarda dados.", ("pergunta", "estranha"),
     ("memória",)),
    ("nl", "Dat is een goede vraag over geheugen. Het geheugen houdt data.", ("goede", "vraag"), ("geheugen",)),
    # an adverb of manner first: it says how, not what ("Inherently slow"); an adjective made of a noun
    # may open a term ("Tingly sensation", "Early days")
    ("en", "Python is inherently slow. The tingly sensation stays. The early days were fun.",
     ("inherently", "slow"), ("tingly", "sensation")),
    ("en", "Python is inherently slow. The tingly sensation stays. The early days were fun.",
     ("inherently", "slow"), ("early", "days")),
    ("es", "El método extraordinariamente útil. Un método sencillo.", ("método", "extraordinariamente"),
     ("método", "sencillo")),
    # a verb with its pronoun or a gerund, never said after a determiner ("traducirlo", "diciéndonos")
    ("es", "Tomamos el punto y traducirlo es fácil. El método diciéndonos algo. El punto fijo existe.",
     ("punto", "traducirlo"), ("punto", "fijo")),
    ("es", "Tomamos el punto y traducirlo es fácil. El método diciéndonos algo. El punto fijo existe.",
     ("método", "diciéndonos"), ("punto", "fijo")),
    ("it", "Il metodo e farlo bene. Il metodo guardandolo cambia. Il metodo nuovo esiste.", ("metodo", "guardandolo"),
     ("metodo", "nuovo")),
])
def test_a_judgement_an_adverb_of_manner_or_a_verb_names_no_subject(code: str, said: str, refused: tuple,
                                                                     kept: tuple) -> None:
    reader = PhraseReader(code)
    reader.learn(split_sentences([Segment(0, 9000, said)], code))
    assert not reader.describes(refused)
    assert reader.describes(kept)


def test_a_name_keeps_its_word_of_judgement() -> None:
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, "We watched the Super Bowl. The Super Bowl was late. "
                                                   "Good Friday came. Good Friday is a holiday.")], "en"))
    assert reader.describes(("super", "bowl"))
    assert reader.describes(("good", "friday"))


def test_an_ing_word_said_after_a_form_of_be_is_a_verb() -> None:
    # "the loop is rotating back", "we are rotating back": a verb, so no title ("Rotating back"); a talk that
    # never says it after a form of "be" keeps its term ("Generating functions")
    said = "The loop is rotating back. We were rotating back again. Rotating back works. Generating functions count."
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, said)], "en"))
    assert not reader.describes(("rotating", "back"))
    assert reader.describes(("generating", "functions"))




def _battery_chapters() -> tuple[list[Chapter], list]:
    from domain.analysis.structure import build_chapters
    segments = [Segment(i * 5300, i * 5300 + 4900, text) for i, text in enumerate(BATTERY_TALK)]
    sentences = split_sentences(segments, "en")
    reader = PhraseReader("en")
    reader.learn(sentences)
    return build_chapters(sentences, len(BATTERY_TALK) * 5300, language="en", reader=reader), sentences


def test_a_part_announced_by_one_common_word_is_that_aspect_of_the_videos_subject() -> None:
    # "Let's talk about cost" in a talk about home batteries: "Cost" alone names no subject, "Cost of home
    # batteries" does, said again or not; a question opening a part after "Finally," is its title without it
    chapters, _ = _battery_chapters()
    titles = [c.title for c in chapters]
    assert "Cost of home batteries" in titles, titles
    assert "Safety of home batteries" in titles, titles
    assert "How to choose the right battery" in titles, titles


def test_a_question_that_announces_a_part_starts_it_not_the_first_step_of_its_answer() -> None:
    # "Finally, how do you choose the right battery? First, measure...": both open with a cue; the part
    # starts on the question
    chapters, sentences = _battery_chapters()
    question = next(s for s in sentences if s.text.startswith("Finally"))
    assert question.start_ms // 1000 * 1000 in [c.start_ms for c in chapters], [c.start_ms for c in chapters]


@pytest.mark.parametrize(("code", "said", "expected"), [
    ("en", "Finally, how do you choose the right battery?", "How do you choose the right battery?"),
    ("en", "First impressions matter a lot here.", "First impressions matter a lot here."),  # no comma: a word
    ("fr", "Enfin, comment choisir la bonne batterie ?", "Comment choisir la bonne batterie ?"),
    ("de", "Schließlich, wie wählt man die richtige Batterie?", "Wie wählt man die richtige Batterie?"),
    ("es", "Finalmente, ¿cómo elegir la batería correcta?", "¿cómo elegir la batería correcta?"),
])
def test_a_word_of_sequence_before_a_comma_leaves_a_quote_or_a_question(code: str, said: str, expected: str) -> None:
    from domain.analysis.text import strip_leading_fillers
    assert strip_leading_fillers(said, code) == expected[:1].upper() + expected[1:]


def test_an_aspect_joins_the_subject_as_the_language_does() -> None:
    from domain.analysis.titles import _aspect_of, aspect_tail

    def tail(code: str, subject: str, said: str) -> str | None:
        reader = PhraseReader(code)
        sentences = split_sentences([Segment(0, 9000, said)], code)
        reader.learn(sentences)
        return aspect_tail(subject, sentences, reader)

    english = tail("en", "Home batteries", "The home batteries cost a lot. Tesla makes home batteries.")
    assert english == "of home batteries"
    assert _aspect_of("Cost", "Home batteries", english, PhraseReader("en")) == "Cost of home batteries"
    assert _aspect_of("Battery", "Home batteries", english, PhraseReader("en")) is None  # the subject itself
    assert tail("en", "Tesla batteries", "Tesla batteries cost a lot. Tesla batteries last.") == "of Tesla batteries"
    # the Romance languages join with the article the speakers say before the subject
    assert tail("fr", "Pompes à chaleur", "Les pompes à chaleur chauffent. Une pompe à chaleur dure.") == (
        "des pompes à chaleur")
    assert tail("fr", "Isolation", "L'isolation coûte cher. Une bonne isolation dure.") == "de l'isolation"
    assert tail("es", "Bombas de calor", "Las bombas de calor calientan la casa.") == "de las bombas de calor"
    assert tail("it", "Pompe di calore", "Le pompe di calore scaldano la casa.") == "delle pompe di calore"
    assert tail("pt", "Bombas de calor", "As bombas de calor aquecem a casa.") == "das bombas de calor"
    assert tail("fr", "Pompes à chaleur", "Pompes à chaleur partout.") is None  # never said with an article
    assert tail("de", "Wärmepumpen", "Die Wärmepumpen heizen.") is None  # German: a genitive, not written here
    # a task has no aspects: never "Cost of how to bake a sourdough bread"
    assert tail("en", "How to bake a sourdough bread", "Bake a sourdough bread. The bread costs little.") is None


def test_a_participle_alone_is_no_topic_nor_title() -> None:
    # "x squared", "the package is installed": what is done, not a subject; "the speed" is said as a noun
    said = ("Take x squared and add it. Then x squared grows. The package is installed. It was installed twice. "
            "The speed grows. The speed of light is fixed.")
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, said)], "en"))
    assert not reader.describes(("squared",))
    assert not reader.describes(("installed",))
    assert reader.describes(("speed",))


def test_a_spoken_equation_and_a_filler_are_no_topics() -> None:
    # a lecture reads its equations aloud ("x equals two x") and a podcast says "and whatnot", "cuz": none
    # of them is what the talk is about, however often it is said (they were topics of seven development talks)
    from domain.analysis.topics import extract_topics

    def topics(said: str) -> list[str]:
        sentences = split_sentences([Segment(0, 60_000, said)], "en")
        reader = PhraseReader("en")
        reader.learn(sentences)  # as the analysis reads a transcript: its verbs first
        return [t.name for t in extract_topics(sentences, 60_000, language="en", reader=reader)]

    lecture = topics("The function f of x equals x squared. The derivative equals two x. The slope equals two x "
                     "too. The sum equals four. The derivative is the slope.")
    assert "derivative" in lecture and "slope" in lecture and "equals" not in lecture, lecture
    podcast = topics("We use git for commits and whatnot. Git keeps commits and whatnot, cuz commits matter. "
                     "Git is fast, cuz git is local.")
    assert "git" in podcast and not {"whatnot", "cuz"} & {w for name in podcast for w in name.split()}, podcast


def test_like_before_a_comma_leaves_a_question() -> None:
    from domain.analysis.text import strip_leading_fillers
    assert strip_leading_fillers("Like, have you made any commits?", "en") == "Have you made any commits?"
    assert strip_leading_fillers("Like most people, I use git every day.", "en") == (
        "Like most people, I use git every day.")  # no comma after it: a word of the sentence


def test_a_french_talk_announcing_its_parts_titles_each_as_an_aspect_of_its_subject() -> None:
    from domain.analysis import analyse
    lines = ["Bienvenue dans cette vidéo sur les pompes à chaleur.",
             "Une pompe à chaleur prend la chaleur de l'air extérieur pour chauffer la maison.",
             "Les pompes à chaleur donnent trois unités de chaleur pour une unité d'électricité.",
             "Elles remplacent souvent une vieille chaudière au fioul.", "Parlons maintenant du coût.",
             "En 2024, une pompe à chaleur coûte environ douze mille euros posée.",
             "L'État rembourse une partie du coût avec une prime.", "Le prix baisse chaque année depuis 2020.",
             "Ensuite, parlons du bruit.",
             "Une pompe à chaleur moderne fait moins de bruit qu'un lave-vaisselle.",
             "Les installateurs la placent loin des chambres.", "Enfin, comment choisir la bonne pompe à chaleur ?",
             "D'abord, mesurez la surface de la maison.", "Puis comparez la garantie et la puissance.",
             "Merci de votre attention."]
    graph = analyse([Segment(i * 5300, i * 5300 + 4900, t) for i, t in enumerate(lines)], language="fr")
    assert [c.title for c in graph.chapters] == ["Pompes à chaleur", "Coût des pompes à chaleur",
                                                 "Bruit des pompes à chaleur",
                                                 "Comment choisir la bonne pompe à chaleur ?"]


def test_a_part_announced_by_name_keeps_its_title_over_a_later_question_of_another_part() -> None:
    # a 46-second talk announces three parts; it is long enough for three chapters, so the second one holds
    # the bin and what goes in it: it is titled by what it opens with ("Parlons d'abord du bac à compost"),
    # not by the question three sentences on, which opens the next part; that question (French "on" is
    # anyone, as German "man") is still a heading and a search question of its own
    from domain.analysis import analyse
    lines = ["Bonjour et bienvenue dans cette vidéo sur le compostage domestique.",
             "Le compost transforme les déchets de cuisine en engrais pour le jardin.",
             "Un foyer jette chaque année environ quatre-vingts kilos de déchets organiques.",
             "Parlons d'abord du bac à compost.",
             "Un bac en bois de trois cents litres suffit pour une famille de quatre personnes.",
             "Il faut le placer à l'ombre, directement sur la terre.",
             "Ensuite, que peut-on mettre dans le compost ?",
             "Les épluchures de légumes, le marc de café et les feuilles mortes se décomposent bien.",
             "La viande et le poisson attirent les rats, il vaut mieux les éviter.",
             "Enfin, comment savoir si le compost est prêt ?",
             "Un compost mûr sent la terre de forêt et il est sombre.",
             "Il faut compter entre six et neuf mois.", "Merci d'avoir regardé cette vidéo."]
    starts = [0, 3450, 7480, 11220, 13510, 18410, 22000, 24600, 29500, 33200, 36300, 40100, 42900]
    ends = [*[s - 200 for s in starts[1:]], 45500]
    graph = analyse([Segment(a, b, t) for a, b, t in zip(starts, ends, lines, strict=True)], language="fr")
    assert [(c.start_ms, c.title) for c in graph.chapters] == [
        (0, "Compostage domestique"), (11000, "Bac à compost"), (33000, "Comment savoir si le compost est prêt ?")]
    assert "Que peut-on mettre dans le compost ?" in [i.query for i in graph.intents]
    assert publishable("Que peut-on mettre dans le compost ?", "fr")
    assert not publishable("Il en parle", "fr")  # a pronoun that stands for what was said before


def test_a_verb_after_the_object_of_let_or_help_ends_no_title() -> None:
    # a recipe's chapters were titled "Dough rest" and "Crust expand", of "let the dough rest" and "the steam
    # helps the crust expand"
    said = ("Let the dough rest for thirty minutes. The steam helps the crust expand. The dough needs time. "
            "The crust turns brown.")
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, said)], "en"))
    assert not reader.describes(("dough", "rest")) and not reader.describes(("crust", "expand"))
    assert reader.describes(("dough",)) and reader.describes(("crust",))


def test_a_verb_in_nearly_every_use_ends_no_topic() -> None:
    # "your solar panels make...": a short talk may never say "make" after a pronoun; "the make" is a noun
    said = "Your solar panels make power. Solar panels make more in summer. Solar panels last. Solar panels age."
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, said)], "en"))
    assert not reader.describes(("panels", "make"))
    assert reader.describes(("solar", "panels"))
    noun = PhraseReader("en")
    noun.learn(split_sentences([Segment(0, 9000, "The make of the car matters. Car make counts.")], "en"))
    assert noun.describes(("car", "make"))


@pytest.mark.parametrize("phrase", [("interest", "rates"), ("cooling", "systems"), ("excel", "spreadsheets"),
                                    ("happiness", "research")])
def test_a_word_that_shares_a_stem_with_a_judgement_is_no_judgement(phrase: tuple[str, str]) -> None:
    # "interesting", "cool", "excellent", "happy" are judgements; "interest rates", "cooling systems" are subjects
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, "The interest rates rose. The cooling systems work. "
                                                   "The excel spreadsheets help. The happiness research grows.")],
                                 "en"))
    assert reader.describes(phrase)


def test_a_verb_form_cut_from_its_object_ends_no_title() -> None:
    said = ("Hopefully that gives some satisfying added color. I have two selfish motives for mentioning it. "
            "Bike shedding is fun, and bike shedding again. Stretching and morphing the sphere. The tooling "
            "is good. Dev tooling matters. We bought speed. The speed of light is fixed.")
    reader = PhraseReader("en")
    reader.learn(split_sentences([Segment(0, 9000, said)], "en"))
    assert reader.ends_on_a_verb_form(("satisfying", "added"), 1)  # a participle said as no noun
    assert reader.ends_on_a_verb_form(("motives", "for", "mentioning"), 1)  # an -ing word after a noun, once
    assert not reader.ends_on_a_verb_form(("bike", "shedding"), 2)  # a term said again
    assert not reader.ends_on_a_verb_form(("stretching", "and", "morphing"), 1)  # two -ing words
    assert not reader.ends_on_a_verb_form(("dev", "tooling"), 1)  # "the tooling": a noun
    assert not reader.ends_on_a_verb_form(("light", "speed"), 1)  # "the speed": a noun
    assert not reader.ends_on_a_verb_form(("added",), 1)  # one word: the participle rule of ``describes``


def test_a_chapter_title_is_no_verb_form_cut_from_its_object() -> None:
    # "Motives for mentioning", of three words, outranks "Ulterior motives": it was the title
    lines = ["Okay, one more thing before we go.", "I have two ulterior motives for mentioning it.",
             "Well, that is all for today."]
    sentences = split_sentences([Segment(k * 4000, k * 4000 + 3900, line) for k, line in enumerate(lines)], "en")
    reader = PhraseReader("en")
    reader.learn(sentences)
    chapters = [Chapter(0, 16_000, "", 0, len(sentences) - 1)]
    title_chapters(chapters, sentences, reader)
    assert chapters[0].title == "Ulterior motives"


def test_a_phrase_never_runs_over_a_comma() -> None:
    reader = PhraseReader("en")
    said = "And finally, zeta to the fourth squares. The roots of unity. Heat pumps (water heaters) cost less."
    reader.learn(split_sentences([Segment(0, 9000, said)], "en"))
    found = {tokens for sentence in split_sentences([Segment(0, 9000, said)], "en")
             for _, _, tokens in reader.candidates(sentence.text)}
    assert ("finally", "zeta") not in found and ("roots", "of", "unity") in found
    assert ("heat", "pumps") in found and ("pumps", "water") not in found and ("water", "heaters") in found


@pytest.mark.parametrize(("code", "said", "phrase"), [
    ("en", "The heat flows with respect to the time.", ("respect", "to", "time")),
    ("de", "Die Wärme fließt in Bezug auf die Zeit.", ("bezug", "auf", "zeit")),
    ("fr", "La chaleur varie à l'égard du temps et le temps passe.", ("égard", "du", "temps")),
    ("nl", "De warmte stroomt ten opzichte van de tijd.", ("opzichte", "van", "tijd")),
])
def test_the_noun_of_a_compound_preposition_opens_no_title(code: str, said: str, phrase: tuple[str, ...]) -> None:
    # "with respect to time" (a lecture's chapter was titled "Respect to time"), "in Bezug auf die Zeit";
    # in Spanish, Italian and Portuguese the noun rule refuses "respecto al tiempo" already
    reader = PhraseReader(code)
    reader.learn(split_sentences([Segment(0, 4000, said)], code))
    assert not reader.describes(phrase)
    assert reader.describes(phrase[-1:])  # the noun after it may
