"""An offline article that reads as one: each section opens with the sentence that states its point,
a section that answers a search intent is headed by the question, every quoted paragraph keeps its time,
numbered steps only for a talk that is a tutorial (in the seven languages), and a title that names the
talk's subject. Small texts written here, one case each."""

from __future__ import annotations

import pytest

from domain.analysis import analyse, write_article
from domain.analysis.article import is_tutorial
from domain.analysis.language import language
from domain.analysis.phrases import publishable
from domain.analysis.text import fold, labels
from tests.support.caption_lines import _timed

# Three parts of about a minute each; the second part opens with an aside, and states its point later.
TALK = [
    "Welcome everyone.",
    "Heat pumps move heat from the outside air into the house.",
    "A heat pump uses one unit of electricity to move three units of heat.",
    "Heat pumps work well in mild winters and in cold ones.",
    "The heat pump needs a yearly check of its fluid.",
    "Installers size each heat pump to the house.",
    "Next, let's talk about solar panels.",
    "My neighbour asked me about this last week over coffee.",
    "Solar panels turn sunlight into electricity with silicon cells.",
    "A solar panel is a set of silicon cells behind glass that turns sunlight into current.",
    "Solar panels facing south produce the most electricity in a year.",
    "Solar panels last about thirty years on a roof.",
    "Finally, let's talk about battery storage.",
    "Battery storage keeps the electricity of the day for the evening.",
    "A home battery stores ten kilowatt hours of electricity.",
    "Battery storage costs about five thousand euros today.",
    "Battery storage pays for itself in ten years.",
    "Thank you for watching.",
]


@pytest.fixture(scope="module")
def talk():
    return analyse(_timed([("A", line) for line in TALK], ms_per_word=380, gap=600), language="en")


def test_a_section_opens_with_the_sentence_that_states_its_point(talk) -> None:
    article = write_article(talk, "narrative")
    solar = next(s for s in article.sections if "solar" in s.heading.lower())
    first = solar.paragraphs[0].sentences[0]
    assert first.startswith("A solar panel is a set of silicon cells"), first  # the definition, not the aside
    assert not any("neighbour" in q for p in solar.paragraphs for q in p.sentences[:1])


def test_every_quoted_paragraph_keeps_the_time_it_was_said(talk) -> None:
    article = write_article(talk, "journalistic")
    said = {s.text.rstrip("."): s.start_ms for s in talk.sentences}
    for section in article.sections:
        for paragraph in section.paragraphs:
            assert paragraph.to_dict()["startMs"] == said[paragraph.sentences[0].rstrip(".")]
            assert section.start_ms <= paragraph.start_ms < section.end_ms + 1000
    markdown = article.to_markdown()
    first = article.sections[0].paragraphs[0]
    minutes, seconds = divmod(first.start_ms // 1000, 60)
    assert f"{' '.join(first.sentences)} ({minutes}:{seconds:02d})" in markdown


def test_a_section_that_answers_a_search_intent_is_headed_by_the_question() -> None:
    lines = [
        "This talk is about the tokamak and fusion power.",
        "Fusion power is the energy released when light atoms join into heavier ones.",
        "The sun makes its light by fusion power.",
        "Fusion power releases four million times more energy than burning coal.",
        "Next, let's talk about the tokamak itself.",
        "A tokamak is a machine that holds a hot plasma in a ring of magnets.",
        "The tokamak uses strong magnets around the plasma.",
        "Every tokamak has a ring shaped chamber.",
        "The tokamak heats the plasma to one hundred fifty million degrees.",
        "Now let's talk about the plasma.",
        "A plasma is a gas so hot that its atoms lose their electrons.",
        "The plasma must stay away from the walls.",
        "The plasma glows pink in photographs.",
        "Finally, let's talk about the cost of fusion power.",
        "A fusion plant costs about twenty billion euros.",
        "The cost of fusion power falls with larger plants.",
    ]
    graph = analyse(_timed([("A", line) for line in lines], ms_per_word=380, gap=600), language="en")
    article = write_article(graph, "journalistic")
    queries = {fold(i.query) for i in graph.intents}
    questions = [s.heading for s in article.sections if s.heading.endswith("?")]
    assert questions, [s.heading for s in article.sections]
    for heading in questions:
        assert fold(heading) in queries and publishable(heading, "en"), heading
    faq = {fold(e["question"]) for e in article.faq}
    assert not faq & {fold(q) for q in questions}  # a question heads a section or the FAQ, not both
    plasma = next(s for s in article.sections if s.heading == "What is plasma?")
    assert plasma.paragraphs[0].sentences[0].startswith("A plasma is a gas")  # the answer leads


TUTORIALS = {
    "en": ["Open the settings page.", "Click the account tab.", "Then type your new password.",
           "Make sure the two passwords match.", "Press save.", "Your password is now changed."],
    "fr": ["Ouvrez la page des réglages.", "Cliquez sur l'onglet du compte.", "Ensuite tapez le nouveau mot de passe.",
           "Assurez-vous que les deux mots de passe sont identiques.", "Enregistrez.", "Le mot de passe a changé."],
    "de": ["Öffnen Sie die Einstellungen.", "Klicken Sie auf das Konto.", "Dann geben Sie das neue Passwort ein.",
           "Stellen Sie sicher, dass beide Passwörter gleich sind.", "Speichern Sie.", "Das Passwort ist neu."],
    "es": ["Abre la página de ajustes.", "Haz clic en la pestaña de la cuenta.", "Luego escribe la nueva contraseña.",
           "Asegúrate de que las dos contraseñas coinciden.", "Guarda los cambios.", "La contraseña ha cambiado."],
    "it": ["Apri la pagina delle impostazioni.", "Clicca sulla scheda dell'account.", "Poi digita la nuova password.",
           "Assicurati che le due password coincidano.", "Salva le modifiche.", "La password è cambiata."],
    "pt": ["Abra a página de configurações.", "Clique na aba da conta.", "Depois digite a nova senha.",
           "Certifique-se de que as duas senhas são iguais.", "Salve as alterações.", "A senha mudou."],
    "nl": ["Ga naar de pagina met instellingen.", "Klik op het tabblad van je account.",
           "Typ dan het nieuwe wachtwoord.", "Zorg ervoor dat beide wachtwoorden gelijk zijn.",
           "Sla de wijzigingen op.", "Het wachtwoord is nu anders."],
}


@pytest.mark.parametrize("code", sorted(TUTORIALS))
def test_a_talk_that_tells_what_to_do_is_a_tutorial_in_each_language(code: str) -> None:
    kit = language(code)
    assert sum(kit.instructs(s) for s in TUTORIALS[code]) >= 4, [s for s in TUTORIALS[code] if not kit.instructs(s)]
    lines = [("A", line) for line in TUTORIALS[code] * 6]
    graph = analyse(_timed(lines, ms_per_word=380, gap=600), language=code)
    assert is_tutorial(graph)
    article = write_article(graph, "auto", code)
    assert article.writing_style == "tutorial"
    step = labels(code)["step"]
    assert all(s.heading.startswith(f"{step} {k}") for k, s in enumerate(article.sections, start=1))


def test_a_lecture_that_asks_to_imagine_is_no_tutorial(talk) -> None:
    lecture = [
        "Imagine a ball rolling down a hill.", "Consider the speed at the bottom.", "Take the height as h.",
        "Now add the two energies together.", "Notice that the mass cancels out.", "Think of the hill as a ramp.",
        "Let the angle be theta.", "The speed only depends on the height.",
    ] * 4
    graph = analyse(_timed([(None, line) for line in lecture], ms_per_word=380, gap=600), language="en")
    assert not is_tutorial(graph)
    assert write_article(graph, "auto").writing_style != "tutorial"
    # the tutorial style asked of a talk that is no tutorial keeps its instructions first, without numbers
    assert not any(s.heading.startswith("Step ") for s in write_article(talk, "tutorial").sections)


def test_the_title_names_the_talk_subject_not_a_detail() -> None:
    lines = [
        "The physicist Richard Feynman once told a story about a teacher.",
        "Differential equations describe how things change.",
        "A differential equation links a function to its derivatives.",
        "The heat equation is a differential equation for temperature.",
        "Differential equations appear in every part of physics.",
        "The heat equation spreads temperature over time.",
        "Solving differential equations by hand is hard.",
        "Partial derivatives measure change along one direction.",
        "The heat equation uses partial derivatives in space.",
        "Differential equations also model populations.",
    ] * 2
    graph = analyse(_timed([(None, line) for line in lines], ms_per_word=380, gap=600), language="en")
    title = write_article(graph, "journalistic").title
    assert title.startswith("Differential equations"), title
    assert "Feynman" not in title


def test_an_article_title_is_one_a_person_would_publish(talk) -> None:
    title = write_article(talk, "journalistic").title
    assert title[:1].isupper() and not title.rstrip().endswith((":", ",", " and"))
    head = title.split(":")[0]
    assert publishable(head, "en"), title


# A questions show: a host reads each listener's question as the captions write it, without its mark.
QUESTIONS_SHOW = [
    ("A", "Welcome to the show, where we answer questions about web development."),
    ("A", "Web development questions came from all over the world this week."),
    ("B", "Every web developer asks us something about their job."),
    ("A", "We love web development questions."),
    ("A", "Okay, next question is from Adam."),
    ("A", "Adam says what makes a software engineer senior."),
    ("B", "A senior engineer has been promoted into the role of senior engineer."),
    ("B", "A senior engineer knows how to manage a team and picks software responsibly."),
    ("A", "A senior engineer also breaks a project down into the pieces it needs."),
    ("B", "Senior engineers explain to managers why the pieces matter."),
    ("A", "Next question is from Joel."),
    ("A", "Joel asks how do you handle SVG icons in React."),
    ("B", "SVG icons can be inlined in a React component."),
    ("B", "An SVG loader turns each SVG file into a React component."),
    ("A", "Some people inline every SVG icon by hand."),
    ("B", "Inlining SVG icons lets you set their colour with CSS."),
]


def test_a_question_read_out_titles_its_section_and_is_neither_prose_nor_a_claim() -> None:
    graph = analyse(_timed(QUESTIONS_SHOW, ms_per_word=380, gap=600), language="en")
    assert [c.title for c in graph.chapters][1:] == ["What makes a software engineer senior?",
                                                     "How to handle SVG icons in React"]
    read_out = {"Adam says what makes a software engineer senior.", "Joel asks how do you handle SVG icons in React.",
                "Okay, next question is from Adam.", "Next question is from Joel."}  # the question and its announcement
    assert not read_out & {c.text for c in graph.claims}  # a question states no fact
    article = write_article(graph)
    senior = next(s for s in article.sections if s.heading == "What makes a software engineer senior?")
    body = [t for p in senior.paragraphs for t in p.sentences]
    # what answers it (the FAQ took the first answer), not the question read again
    assert body and body[0].startswith(("A senior engineer", "Senior engineers")), body
    assert not read_out & set(article.body_sentences())  # nor printed anywhere as prose, a key fact or an answer


# A short questions show: the host reads each listener's question, without its mark, after announcing it.
ENERGY_SHOW = [
    ("Host", "Welcome to the show, where we answer your questions about home energy."),
    ("Guest", "Questions about home energy came from all over the country this week."),
    ("Host", "We read every home energy question you send us."),
    ("Host", "Okay, next question is from Maria."),
    ("Host", "Maria asks how do you choose the right heat pump for an old house."),
    ("Guest", "A heat pump for an old house must match the heat loss of the walls and the roof."),
    ("Guest", "An installer measures the heat loss of the house before choosing the heat pump."),
    ("Host", "An old house often needs larger radiators for a heat pump."),
    ("Guest", "A heat pump works best with low water temperatures in the radiators."),
    ("Host", "Next question is from Tom."),
    ("Host", "Tom says what makes solar panels lose their power over time."),
    ("Guest", "Solar panels lose about half a percent of their power every year."),
    ("Guest", "Heat and ultraviolet light slowly age the cells of solar panels."),
    ("Host", "Cracks in the cells of solar panels also cost power."),
    ("Guest", "A good solar panel keeps more than eighty percent of its power after twenty five years."),
    ("Host", "That's all for today, thank you for listening.")]


def test_no_section_is_left_empty_by_the_introduction() -> None:
    """A short opening chapter whose sentences the introduction took gets them back: no heading stands over
    nothing, and the introduction, left with none, is not printed."""
    graph = analyse(_timed(ENERGY_SHOW, ms_per_word=330, gap=400), language="en")
    assert len(graph.chapters) >= 3
    for style in ("auto", "narrative", "conversational"):
        article = write_article(graph, style)
        assert all(section.paragraphs for section in article.sections), (style, article.to_markdown())
        assert not article.introduction or "## Introduction\n\n\n" not in article.to_markdown()
        printed = set(article.body_sentences())
        assert not {"Okay, next question is from Maria.", "Next question is from Tom."} & printed  # transitions


def test_a_question_read_out_is_a_search_question_that_the_faq_answers() -> None:
    graph = analyse(_timed(ENERGY_SHOW, ms_per_word=330, gap=400), language="en")
    asked = {i.query: i for i in graph.intents if i.source == "question"}
    assert set(asked) == {"How do you choose the right heat pump for an old house?",
                          "What makes solar panels lose their power over time?"}, asked
    faq = {e["question"]: e["answer"] for e in write_article(graph).faq}
    assert faq["How do you choose the right heat pump for an old house?"][0] == (
        "A heat pump for an old house must match the heat loss of the walls and the roof.")
    assert faq["What makes solar panels lose their power over time?"][0] == (
        "Solar panels lose about half a percent of their power every year.")
