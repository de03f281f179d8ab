"""The offline article engine on the 20-minute interview: structure, sources, grounding, styles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain.analysis import WRITING_STYLES, MediaFacts, Segment, analyse, write_article
from domain.analysis.article import quote
from domain.analysis.language import language
from domain.analysis.sentences import split_sentences
from domain.analysis.text import fold
from infra.captions import read_captions
from tests.support.caption_lines import LONG_PUNCTUATED

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"


def normalise(text: str) -> str:
    """Independent of the engine: lowercase words and digits only, single spaces."""
    return " ".join(re.findall(r"\w+", text.lower().replace("’", "'")))


@pytest.fixture(scope="module")
def graph():
    return analyse(read_captions(FIXTURE), language="fr")


@pytest.fixture(scope="module")
def transcript(graph) -> str:
    return normalise(" ".join(s.text for s in graph.segments))


# Sounds a clean verbatim quote may leave out, in the languages of these tests (the test's own list).
HESITATIONS = {"uh", "um", "euh", "heu"}


def said_in_order(sentence: str, transcript: str) -> bool:
    """The sentence's words are said in the transcript in its order, with nothing between two of them but
    sounds of hesitation or the words just printed said again (a stutter, a false start)."""
    printed, said = normalise(sentence).split(), transcript.split()
    for start in (k for k, word in enumerate(said) if word == printed[0]):
        i, j = 1, start + 1
        while i < len(printed) and j < len(said):
            if said[j] == printed[i]:
                i += 1
            elif said[j] not in HESITATIONS and said[j] not in printed[max(0, i - 2):i]:
                break
            j += 1
        if i == len(printed):
            return True
    return False


def assert_grounded(article, transcript: str) -> None:
    body = article.body_sentences()
    assert body
    for sentence in body:
        assert said_in_order(sentence, transcript), f"not in the transcript: {sentence}"


@pytest.mark.parametrize("style", WRITING_STYLES)
def test_every_body_sentence_is_taken_from_the_transcript(graph, transcript: str, style: str) -> None:
    article = write_article(graph, style)
    assert_grounded(article, transcript)
    # the question side of the FAQ: asked in the video, or a topic query
    for entry in article.faq:
        assert entry["source"] in ("question", "topic")
        if entry["source"] == "question":
            assert normalise(entry["question"]) in transcript


def test_structure_title_introduction_sections_key_facts_faq(graph) -> None:
    article = write_article(graph, "journalistic")
    assert article.title and article.title[0].isupper()
    assert len(article.introduction) >= 2
    assert len(article.sections) == len(graph.chapters)
    # each heading is its chapter's title, or the question of the graph's search intents the section answers
    asked = {fold(i.query) for i in graph.intents}
    for section, chapter in zip(article.sections, graph.chapters, strict=True):
        assert section.heading == chapter.title or (section.heading.endswith("?") and fold(section.heading) in asked)
    assert any(s.heading != c.title for s, c in zip(article.sections, graph.chapters, strict=True))
    assert all(s.paragraphs for s in article.sections)
    claim_texts = {c.text.rstrip(".") for c in graph.claims}
    assert len(article.key_facts) == 5
    assert all(f["text"].rstrip(".") in claim_texts for f in article.key_facts)
    intents = {i.query for i in graph.intents}
    assert len(article.faq) >= 3
    for entry in article.faq:
        assert entry["answer"]
        source = entry["question"] if entry["source"] == "question" else entry["question"].rstrip(" ?")
        assert source in intents or source[:1].lower() + source[1:] in intents
    assert article.conclusion
    markdown = article.to_markdown()
    assert markdown.startswith(f"# {article.title}\n")
    assert "## Points clés" in markdown and "## Questions fréquentes" in markdown
    assert article.word_count > 400


def test_no_sentence_is_used_twice_in_the_body(graph) -> None:
    for style in WRITING_STYLES:
        article = write_article(graph, style)
        prose = list(article.introduction) + [s for sec in article.sections for p in sec.paragraphs
                                              for s in p.sentences] + list(article.conclusion)
        assert len(prose) == len(set(prose)), style


def test_styles_change_structure_deterministically(graph) -> None:
    rendered = {style: write_article(graph, style).to_markdown() for style in WRITING_STYLES}
    assert len({rendered[s] for s in WRITING_STYLES if s != "auto"}) == len(WRITING_STYLES) - 1
    assert rendered == {style: write_article(graph, style).to_markdown() for style in WRITING_STYLES}
    # a conversation about a renovation tells nobody what to do, step by step: no numbered steps even when
    # the tutorial style is asked for
    tutorial = write_article(graph, "tutorial")
    assert not any(s.heading.startswith("Étape") for s in tutorial.sections)
    documentary = write_article(graph, "documentary")
    assert documentary.sections[0].heading.startswith("[0:00] ")
    interview = write_article(graph, "interview")
    roles = [p.role for s in interview.sections for p in s.paragraphs]
    assert roles.count("question") >= 5 and "answer" in roles
    journalistic = write_article(graph, "journalistic")
    strongest = max(graph.claims, key=lambda c: (c.confidence, -c.start_ms))
    assert strongest.text.rstrip(".") in " ".join(journalistic.introduction)
    narrative = write_article(graph, "narrative")
    assert sum(len(p.sentences) for s in narrative.sections for p in s.paragraphs) > sum(
        len(p.sentences) for s in journalistic.sections for p in s.paragraphs)
    # two named speakers who ask and answer: auto picks the interview form
    assert write_article(graph, "auto").writing_style == "interview"
    with pytest.raises(ValueError):
        write_article(graph, "poetic")


def test_english_article_labels_and_questions() -> None:
    lines = [
        ("Host", "Welcome. Today we look at heat pumps and home insulation."),
        ("Host", "What is a heat pump?"),
        ("Guest", "A heat pump is a device that moves heat from the outside air into the house."),
        ("Guest", "For one kilowatt hour of electricity, it delivers about 3 kilowatt hours of heat."),
        ("Host", "Why should you insulate first?"),
        ("Guest", "Because a house that loses heat through the roof needs a bigger and costlier heat pump."),
        ("Guest", "The roof accounts for 25 to 30 percent of heat losses in an old house."),
        ("Host", "How much does insulation cost?"),
        ("Guest", "External insulation costs between 120 and 200 euros per square metre in France."),
        ("Guest", "The Anah agency has funded more than 560,000 projects since 2020."),
        ("Host", "In conclusion, insulate first and then choose the heat pump."),
    ]
    segments, t = [], 0
    for speaker, text in lines:
        length = 420 * len(text.split()) + 600
        segments.append(Segment(t, t + length, text, speaker))
        t += length + 700
    graph = analyse(segments, language="en")
    article = write_article(graph, "auto", "en")
    markdown = article.to_markdown()
    assert "## Key facts" in markdown and "## Frequently asked questions" in markdown
    assert "### What is a heat pump?" in markdown
    transcript = normalise(" ".join(s.text for s in segments))
    assert_grounded(article, transcript)
    assert len(article.sections) == len(graph.chapters) >= 3


def test_key_facts_and_the_lead_take_the_claims_that_stand_alone_first() -> None:
    # the strongest claim opens with "It": out of its context it says nothing of what "it" is
    lines = ["Norway is a country that heats its homes with heat pumps.",
             "It installed more than 600000 heat pumps in 2020.",
             "A heat pump is a device that moves heat from the outside air into the house.",
             "A ground source pump is a pump that takes heat from the soil.",
             "An air source pump is a pump that takes heat from the air.",
             "A water source pump is a pump that takes heat from a lake.",
             "A hybrid pump is a pump that works beside a gas boiler."]
    graph = analyse([Segment(k * 7000, k * 7000 + 6500, t, "A") for k, t in enumerate(lines)], language="en")
    strongest = max(graph.claims, key=lambda c: c.confidence)
    assert strongest.text.startswith("It installed"), [c.text for c in graph.claims]
    article = write_article(graph, "journalistic", "en")
    assert not any(f["text"].startswith("It ") for f in article.key_facts)
    assert not any(s.startswith("It ") for s in article.introduction), article.introduction
    # the key facts go on where the lead stops: none repeats the introduction printed just above them
    standing = [c for c in graph.claims if not c.text.startswith("It ")]
    assert len(article.introduction) == 2 and len(article.key_facts) == min(5, len(standing) - 2)
    assert not {f["text"] for f in article.key_facts} & set(article.introduction), article.key_facts


def test_a_short_talks_sections_each_answer_their_heading_and_none_is_a_greeting() -> None:
    from tests.support.caption_lines import BATTERY_TALK
    graph = analyse([Segment(i * 5300, i * 5300 + 4900, text) for i, text in enumerate(BATTERY_TALK)],
                    language="en")
    article = write_article(graph, "auto", "en")
    bodies = {s.heading: " ".join(t for p in s.paragraphs for t in p.sentences) for s in article.sections}
    assert all(bodies.values()), bodies  # every section has a body
    assert not any(text.startswith(("Welcome", "Thanks")) for text in bodies.values()), bodies
    # the steps that answer "how do you choose the right battery?" are under its heading (the FAQ took them,
    # and the section read "Thanks for watching.")
    assert "Measure how much electricity you use after sunset." in bodies["How to choose the right battery"], bodies
    prose = [t for s in article.sections for p in s.paragraphs for t in p.sentences] + [
        t for e in article.faq for t in e["answer"]] + list(article.introduction)
    assert len(prose) == len(set(prose))  # no sentence twice


@pytest.mark.parametrize(("question", "body", "expected"), [
    ("What is probability?", "It was the probability that the hypothesis holds.", True),  # "probably" is a stop
    ("What are phosphate cells?", "Welcome to this talk about home batteries.", False),   # word of the same stem
])
def test_a_question_heads_a_section_only_when_its_body_answers_it(question: str, body: str, expected: bool) -> None:
    from domain.analysis.headings import answers
    from domain.analysis.language import language
    assert answers(question, [body], language("en")) is expected


def test_a_sentence_the_captions_closed_at_a_comma_is_printed_with_a_full_stop() -> None:
    segments = [Segment(k * 2500, (k + 1) * 2500, line, "A") for k, line in enumerate(LONG_PUNCTUATED)]
    sentences = split_sentences(segments, "en")
    assert sentences[0].text.endswith("earlier,")  # 61 words: closed where a cue ends a clause
    assert quote(sentences[0], "en").endswith("half earlier.")


@pytest.mark.parametrize(("code", "said", "printed"), [
    ("en", "Eric is the CEO of Modal Labs, which we're excited to talk about, uh, before that he led engineering.",
     "Eric is the CEO of Modal Labs, which we're excited to talk about before that he led engineering."),
    ("en", "I mean, initially I, I built, um, I built the first version and, and, and scaled it up.",
     "I mean, initially I built the first version and scaled it up."),
    ("en", "When, when the, the, the production and the cloud were the same, it was fast.",
     "When the production and the cloud were the same, it was fast."),
    ("fr", "Et la pompe, euh, chauffe l'eau, euh ?", "La pompe chauffe l'eau ?"),
    ("en", "What are, uh, what are the parts you liked most?", "What are the parts you liked most?"),
    ("de", "Das ist, ähm, gut, äh, und wir gehen um acht.", "Das ist gut und wir gehen um acht."),
    ("en", "The cost, the cost is high.", "The cost is high."),  # a false start that opens with "the"
    ("en", "Prices, prices everywhere went up, uh.", "Prices, prices everywhere went up."),  # no function word
])
def test_a_quote_leaves_out_hesitations_and_stutters_and_keeps_every_other_word(code: str, said: str,
                                                                                printed: str) -> None:
    sentence = split_sentences([Segment(0, 5000, said)], code)[0]
    assert quote(sentence, code) == printed
    # every word printed is said, in the order said
    said_words = normalise(said).split()
    position = 0
    for word in normalise(printed).split():
        position = said_words.index(word, position) + 1


def test_an_interviews_article_prints_no_hesitation_and_every_quote_is_said_in_order() -> None:
    lines = [("Host", "Welcome back to the show, today we talk about, uh, heat pumps with our guest."),
             ("Guest", "Thanks, I, I built, um, I built heat pumps for ten years at a big, uh, company."),
             ("Host", "So how does a heat pump, uh, work in winter?"),
             ("Guest", "The, the, the pump moves heat from the outside air into the house, even at minus ten."),
             ("Guest", "A heat pump uses, um, about a third of the electricity of a heater for the same heat."),
             ("Host", "And what does a heat pump cost to install in a house?"),
             ("Guest", "Installing a heat pump costs, uh, between eight and fifteen thousand euros in a house."),
             ("Guest", "And, and the grants pay part of the cost of the heat pump for most people.")]
    segments = [Segment(k * 6000, k * 6000 + 5500, text, speaker) for k, (speaker, text) in enumerate(lines)]
    graph = analyse(segments, language="en")
    article = write_article(graph, "auto", "en")
    assert_grounded(article, normalise(" ".join(s.text for s in segments)))
    printed = article.to_markdown()
    assert not re.search(r"\b(?:uh|um)\b", printed) and not re.search(r"\b(\w+), \1\b", printed), printed


# A recipe as a new user made it (espeak-ng, one cue per line, timed as spoken: start and end in ms).
SOURDOUGH = [
    (0, 5529, "Hi everyone, in this video I will show you how to bake a simple sourdough bread at home."),
    (5829, 11855, "You only need four ingredients: flour, water, salt and an active sourdough starter."),
    (12155, 18761, "First, mix five hundred grams of bread flour with three hundred and fifty grams of warm water."),
    (19061, 23373, "Let the dough rest for thirty minutes so the flour absorbs the water."),
    (23673, 30247, "Next, add one hundred grams of starter and ten grams of salt, and knead for five minutes."),
    (30547, 34786, "Then leave the dough to rise for about six hours at room temperature."),
    (35086, 39151, "Every hour, stretch and fold the dough to build its strength."),
    (39451, 47255, "Why does the dough need folding? Folding aligns the gluten strands, which traps the gas and gives "
                   "an open crumb."),
    (47555, 52752, "After the rise, shape the dough into a tight ball and put it in a floured basket."),
    (53052, 59152, "Finally, bake it in a preheated Dutch oven at two hundred and fifty degrees for forty minutes."),
    (59452, 65239, "Keep the lid on for the first twenty minutes, because the steam helps the crust expand."),
    (65539, 71759, "Let the bread cool for one hour before you cut it. Thanks for watching, and happy baking!"),
]


def quote_of(text: str) -> str:
    return quote(split_sentences([Segment(0, 1000, text)], "en")[0], "en")  # as the article prints a sentence


def test_a_recipe_is_written_as_a_tutorial_whose_steps_keep_their_order() -> None:
    # a 74-second recipe, as a new user made one with espeak-ng: its article was "analytical", titled "Dough and
    # flour", its steps out of order ("Then leave the dough to rise" before "Next, add the starter"), one headed
    # "What is flour?", its first step in the introduction and "Let the dough rest" in the FAQ under "How does
    # dough work?"
    graph = analyse([Segment(a, b, t) for a, b, t in SOURDOUGH], MediaFacts(duration_ms=74_000), language="en")
    article = write_article(graph, "auto", "en")
    assert article.writing_style == "tutorial"
    assert article.title == "How to bake a simple sourdough bread at home"
    order = {s.text: s.start_ms for s in graph.sentences}
    for section in article.sections:
        said = [order[t] for p in section.paragraphs for t in p.sentences if t in order]
        assert said == sorted(said), section  # each step where it is done
    steps = [s.heading for s in article.sections if s.heading.startswith("Step ")]
    assert not article.sections[0].heading.startswith("Step ")  # the opening says what will be made
    assert [h.split(":")[0] for h in steps] == [f"Step {n}" for n in range(1, len(steps) + 1)] and len(steps) >= 3
    assert not any(h.split(": ", 1)[-1].startswith(("What is", "How does")) for h in steps), steps
    kit = language("en")
    body = [t for section in article.sections for p in section.paragraphs for t in p.sentences]
    instructions = [s.text for s in graph.sentences if kit.instructs(s.text)]
    assert len(instructions) >= 5 and not [t for t in instructions if quote_of(t) not in body], body  # no step lost
    assert not any(kit.instructs(t) for entry in article.faq for t in entry["answer"]), article.faq
    assert not any(kit.instructs(t) for t in article.introduction), article.introduction
