"""domain.analysis: each pure step, on short French and English samples and the 20-minute fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.analysis import (
    AudioSegment,
    Loudness,
    MediaFacts,
    SceneChange,
    Segment,
    TimeRange,
    analyse,
    chapters_text,
    format_timestamp,
    validate_chapters,
)
from domain.analysis.chapters import Chapter
from domain.analysis.sentences import MAX_WORDS, split_sentences
from domain.analysis.structure import COUNT_RULE, build_chapters, chapter_count_bounds
from infra.captions import read_captions
from tests.support.caption_lines import EN_LINES, LONG_PUNCTUATED, _timed

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"

@pytest.fixture(scope="module")
def english() -> list[Segment]:
    return _timed(EN_LINES)


@pytest.fixture(scope="module")
def podcast_segments() -> list[Segment]:
    return read_captions(FIXTURE)


@pytest.fixture(scope="module")
def podcast(podcast_segments: list[Segment]):
    return analyse(podcast_segments, language="fr")


# sentences -----------------------------------------------------------------------------------

def test_sentences_are_rebuilt_across_cues_and_start_inside_their_first_cue() -> None:
    segments = [Segment(0, 2000, "La fusion nucléaire est une", "A"),
                Segment(2000, 4000, "réaction physique. Elle libère", "A"),
                Segment(4000, 6000, "de l'énergie. Mais comment ?", "A"),
                Segment(6000, 8000, "Grâce à J. K. Rowling et M. Dupont.", "B")]
    sentences = split_sentences(segments, "fr")
    assert [s.text for s in sentences] == [
        "La fusion nucléaire est une réaction physique.", "Elle libère de l'énergie.", "Mais comment ?",
        "Grâce à J. K. Rowling et M. Dupont."]
    assert sentences[1].first_segment == 1 and 2000 <= sentences[1].start_ms < 4000
    assert sentences[2].is_question and not sentences[0].is_question
    assert sentences[3].speaker == "B"


def test_a_speaker_change_or_a_long_pause_closes_an_unpunctuated_sentence() -> None:
    segments = [Segment(0, 1000, "sans ponctuation ici", "A"), Segment(1000, 2000, "et la suite", "B"),
                Segment(6000, 7000, "après une longue pause", "B")]
    assert [s.text for s in split_sentences(segments)] == [
        "sans ponctuation ici", "et la suite", "après une longue pause"]


def test_a_capital_letter_and_a_dot_ends_a_sentence_outside_a_name() -> None:
    sentences = split_sentences([Segment(0, 5000, "Les logements classés F ou G. Ces logements coûtent cher.")])
    assert len(sentences) == 2


def _cues(lines: list[str], seconds: float = 2.5) -> list[Segment]:
    step = int(seconds * 1000)
    return [Segment(k * step, (k + 1) * step, line, "A") for k, line in enumerate(lines)]


def test_a_long_punctuated_sentence_ends_at_its_own_punctuation_never_after_an_article() -> None:
    sentences = split_sentences(_cues(LONG_PUNCTUATED), "en")
    # 51 words at "...help uncover a": not cut there; at 60 the cue ends a clause ("...earlier,")
    assert [s.text.split()[0] for s in sentences] == ["This", "and", "At"]
    assert sentences[0].text.endswith("uncover a ship that had sunk a century and a half earlier,")


def test_an_unpunctuated_track_is_cut_when_long_at_a_cue_that_ends_on_a_content_word() -> None:
    lines = [line.replace(",", "").replace(".", "").lower() for line in LONG_PUNCTUATED]
    sentences = split_sentences(_cues(lines), "en")
    # 51 words after the third cue, but it ends on "a"; the fourth ends on "earlier": cut there
    assert [s.text.split()[-1] for s in sentences] == ["earlier", "means"]
    # a sentence never outgrows three times the long mark, whatever its cues end on
    endless = split_sentences(_cues(["and the cost of the"] * 60), "en")
    assert len(endless) > 1 and max(len(s.text.split()) for s in endless) <= 3 * MAX_WORDS + 5


# diarisation ---------------------------------------------------------------------------------

def test_speakers_turns_and_talk_time_match_the_captions(podcast_segments: list[Segment], podcast) -> None:
    expected: dict[str, int] = {}
    for s in podcast_segments:
        expected[s.speaker] = expected.get(s.speaker, 0) + s.end_ms - s.start_ms
    speakers = {s.name: s for s in podcast.diarisation.speakers}
    assert {n: s.talk_time_ms for n, s in speakers.items()} == expected
    assert podcast.diarisation.diarised
    assert abs(sum(s.share for s in speakers.values()) - 1) < 0.001
    turns = podcast.diarisation.turns
    assert all(a.speaker != b.speaker or b.start_ms - a.end_ms > 5000 for a, b in zip(turns, turns[1:], strict=False))
    assert len(speakers["Claire Martin"].turns) >= 15


def test_without_tags_there_is_one_unknown_speaker() -> None:
    graph = analyse(_timed([(None, "Une phrase sans locuteur qui parle de Paris en 2020.")]), language="fr")
    assert not graph.diarisation.diarised
    assert [s.name for s in graph.diarisation.speakers] == ["unknown"]


# claims and entities -------------------------------------------------------------------------

def test_every_claim_starts_inside_the_caption_it_came_from(podcast) -> None:
    assert len(podcast.claims) >= 30
    for claim in podcast.claims:
        cue = podcast.segments[podcast.sentences[claim.sentence].first_segment]
        assert cue.start_ms <= claim.start_ms < cue.end_ms
        assert 0.5 <= claim.confidence <= 0.97
        assert claim.id.startswith("clm_")
    assert len({c.id for c in podcast.claims}) == len(podcast.claims)


def test_claims_are_factual_sentences_not_questions_or_greetings(english: list[Segment]) -> None:
    graph = analyse(english, language="en")
    texts = [c.text for c in graph.claims]
    assert "ITER is the largest fusion experiment in the world, built in Cadarache in France since 2010." in texts
    assert not any(t.endswith("?") for t in texts)
    assert not any(t.startswith(("Welcome", "Thank you")) for t in texts)
    kinds = {k for c in graph.claims for k in c.kinds}
    assert {"statistic", "date", "entity", "definition", "causal"} <= kinds
    # "So, what is..." kept out; the definition is a claim with its kind
    definition = next(c for c in graph.claims if c.text.startswith("Nuclear fusion is"))
    assert "definition" in definition.kinds


def test_entities_are_typed_and_counted(english: list[Segment]) -> None:
    graph = analyse(english, language="en")
    by_name = {e.name: e for e in graph.entities}
    assert by_name["Bernard Bigot"].type == "person"
    assert by_name["Bernard Bigot"].mentions == 2  # "Bigot" alone counts for the full name
    assert by_name["France"].type == "place"
    assert by_name["European Commission"].type == "organization"
    assert by_name["2010"].type == "date"
    assert by_name["45 percent"].type == "number"
    assert by_name["ITER"].mentions >= 3
    assert all(e.type in ("person", "organization", "place", "product", "date", "number", "other")
               for e in graph.entities)


def test_french_entities_dates_and_figures(podcast) -> None:
    by_name = {e.name: e for e in podcast.entities}
    assert by_name["France"].type == "place" and by_name["France"].mentions >= 10
    assert by_name["Paul Lefèvre"].type == "person"
    assert by_name["1er juillet 2021"].type == "date"
    assert by_name["5,2 millions"].type == "number"
    assert "Villeurbanne" in by_name and "Lyon" in by_name


# topics and intents --------------------------------------------------------------------------

def test_topics_are_ranked_phrases_and_words(podcast) -> None:
    names = [t.name for t in podcast.topics]
    assert "rénovation" in names[:3]
    assert "pompe à chaleur" in names
    relevances = [t.relevance for t in podcast.topics]
    assert relevances == sorted(relevances, reverse=True) and relevances[0] == 1.0
    assert not {"environ", "souvent", "est-ce"} & set(names)


def test_phrase_labels_keep_the_capitals_of_names_and_acronyms() -> None:
    from domain.analysis.topics import topics_in

    sentences = split_sentences([
        Segment(0, 4000, "Le chantier est construit à Cadarache. Il est construit à Cadarache depuis 2010."),
        Segment(4000, 8000, "L'organisation ITER le dit : l'organisation ITER publie le calendrier."),
        Segment(8000, 9000, "La fusion nucléaire, puis encore la fusion nucléaire."),
    ])
    labels = topics_in(sentences, limit=3)
    # Word by word: a name (always capitalised) and an acronym (always in capitals) keep their
    # capitals inside a phrase; the other words are lowercase.
    assert "construit à Cadarache" in labels and "organisation ITER" in labels, labels
    assert "fusion nucléaire" in labels, labels


def test_inverted_verbs_are_not_topics() -> None:
    from domain.analysis.topics import extract_topics

    sentences = split_sentences([
        Segment(0, 3000, "Pourquoi le tokamak est-il si important ? Le tokamak est-il financé ?"),
        Segment(3000, 6000, "Quand produira-t-il du plasma ? Peut-on y croire ? Le plasma est chaud."),
    ])
    names = [t.name for t in extract_topics(sentences, 6000)]
    assert "tokamak" in names and "plasma" in names, names
    assert not {"est-il", "produira-t-il", "peut-on"} & set(names), names


def test_search_intents_from_questions_and_topics(podcast, english: list[Segment]) -> None:
    queries = {i.query: i for i in podcast.intents}
    assert "Comment fonctionne une pompe à chaleur ?" in queries
    assert queries["Comment fonctionne une pompe à chaleur ?"].answered
    assert "qu'est-ce que la rénovation" in queries  # the determiner the speakers use
    assert all(0 <= i.relevance <= 1 for i in podcast.intents)
    en = analyse(english, language="en")
    assert "What is nuclear fusion exactly?" in {i.query for i in en.intents}
    assert any(i.source == "topic" and i.query.startswith(("what is", "how does", "why")) for i in en.intents)


# chapters and narrative ----------------------------------------------------------------------

def test_chapters_obey_the_video_site_rules(podcast) -> None:
    assert validate_chapters(podcast.chapters, podcast.duration_ms) == []
    assert 3 <= len(podcast.chapters) <= 20
    assert podcast.chapters[0].start_ms == 0
    lengths = [c.end_ms - c.start_ms for c in podcast.chapters]
    assert max(lengths) <= COUNT_RULE.longest_ms  # no chapter holds half the video
    low, high = chapter_count_bounds(podcast.duration_ms)
    assert low <= len(podcast.chapters) <= high
    assert len({c.title for c in podcast.chapters}) == len(podcast.chapters)
    assert all(c.title and c.title[0].isupper() for c in podcast.chapters)
    assert chapters_text(podcast.chapters).splitlines()[0].startswith("0:00 ")


def test_chapter_validator_states_each_broken_rule() -> None:
    def ch(*starts: int) -> list[Chapter]:
        return [Chapter(s, 0, f"T{s}", 0, 0) for s in starts]

    assert validate_chapters(ch(0, 20_000, 40_000), 60_000) == []
    assert any("first chapter" in p for p in validate_chapters(ch(5000, 20_000, 40_000), 60_000))
    assert any("at least 3" in p for p in validate_chapters(ch(0, 20_000), 60_000))
    assert any("under 10 s" in p for p in validate_chapters(ch(0, 5_000, 40_000), 60_000))
    assert any("does not start after" in p for p in validate_chapters(ch(0, 40_000, 20_000), 60_000))
    assert any("last chapter" in p for p in validate_chapters(ch(0, 20_000, 55_000), 60_000))
    assert any("no title" in p for p in validate_chapters([{"startMs": 0, "title": ""},
                                                           {"startMs": 20_000, "title": "b"},
                                                           {"startMs": 40_000, "title": "c"}], 60_000))


def test_short_transcripts_get_three_chapters_or_none(english: list[Segment]) -> None:
    graph = analyse(english, language="en")
    assert graph.duration_ms >= 33_000
    assert validate_chapters(graph.chapters, graph.duration_ms) == []
    tiny = split_sentences([Segment(0, 20_000, "Trop court pour des chapitres.")])
    assert build_chapters(tiny, 20_000) == []
    few = split_sentences([Segment(0, 60_000, "Une seule phrase très longue pour une minute entière.")])
    chapters = build_chapters(few, 60_000)
    assert validate_chapters(chapters, 60_000) == []


def test_timestamps_as_video_sites_print_them() -> None:
    assert [format_timestamp(ms) for ms in (0, 65_000, 3_723_000)] == ["0:00", "1:05", "1:02:03"]


def test_narrative_parts_cover_the_video_in_order(podcast) -> None:
    parts = podcast.narrative
    assert [p.part for p in parts] == ["hook", "context", "development", "conclusion"]
    assert parts[0].start_ms == 0 and parts[-1].end_ms == podcast.duration_ms
    assert all(a.end_ms == b.start_ms for a, b in zip(parts, parts[1:], strict=False))
    assert all(p.end_ms > p.start_ms for p in parts)
    assert "Pour conclure" in podcast.sentences[[s.start_ms for s in podcast.sentences].index(
        parts[-1].start_ms)].text


def test_a_short_videos_context_holds_the_sentence_after_the_hook() -> None:
    lines = [(0, 4000, "Bonjour et bienvenue."), (5000, 8000, "Aujourd'hui, la fusion nucléaire."),
             (8400, 15000, "La fusion libère une énergie considérable."),
             (15300, 19000, "ITER est construit à Cadarache depuis 2010."),
             (19300, 22700, "Le projet réunit trente-cinq pays."), (23000, 25500, "Il coûte vingt milliards."),
             (25700, 30000, "Le premier plasma est prévu en 2035."), (30200, 34600, "Merci, c'était passionnant.")]
    graph = analyse([Segment(a, b, text) for a, b, text in lines], MediaFacts(duration_ms=34_640))
    parts = {p.part: p for p in graph.narrative}
    # Without the floor, the context was a 300 ms range holding no sentence and no summary.
    assert parts["context"].sentences >= 1 and parts["context"].summary, graph.narrative
    assert parts["development"].sentences >= 1
    assert [p.end_ms for p in graph.narrative][:-1] == [p.start_ms for p in graph.narrative][1:]


# clip moments --------------------------------------------------------------------------------

def test_clip_moments_inside_the_video_on_sentence_boundaries(podcast) -> None:
    starts = {s.start_ms for s in podcast.sentences}
    ends = {s.end_ms for s in podcast.sentences}
    assert len(podcast.moments) >= 3
    for moment in podcast.moments:
        assert 0 <= moment.start_ms < moment.end_ms <= podcast.duration_ms
        assert moment.start_ms in starts and moment.end_ms in ends
        assert 15_000 <= moment.end_ms - moment.start_ms <= 60_000
        assert 0 <= moment.geo_score <= 100 and moment.title
    spans = sorted((m.start_ms, m.end_ms) for m in podcast.moments)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


# scores --------------------------------------------------------------------------------------

def test_rubric_reports_every_criterion_and_the_composite(podcast) -> None:
    scores = podcast.scores
    assert sum(c.weight for c in scores.geo_criteria) == 100
    assert sum(c.weight for c in scores.aeo_criteria) == 100
    assert all(0 <= c.value <= 1 and c.detail for c in scores.geo_criteria + scores.aeo_criteria)
    assert scores.geo_score == round(sum(c.weight * c.value for c in scores.geo_criteria))
    assert scores.composite_score == round(0.7 * scores.geo_score + 0.3 * scores.aeo_score, 1)
    assert podcast.to_dict()["summary"]["geoReadinessScore"] == scores.geo_score
    summary = scores.geo_summary
    assert set(summary) == {"main_entities", "main_topics", "user_intents_answered", "key_facts"}
    assert all(isinstance(x, str) for v in summary.values() for x in v)
    assert summary["key_facts"] and all(f in {c.text for c in podcast.claims} for f in summary["key_facts"])


def test_a_thin_transcript_scores_low() -> None:
    graph = analyse(_timed([("A", "Bon, euh, voilà quoi, on verra bien."), ("A", "Je ne sais pas trop.")]))
    assert graph.scores.geo_score < 40 and graph.claims == []


# media elements and behavioral mode ----------------------------------------------------------

def test_media_facts_become_visual_and_audio_elements(english: list[Segment]) -> None:
    facts = MediaFacts(duration_ms=80_000, scene_changes=(SceneChange(4000, 0.8), SceneChange(30_000, 0.5)),
                       silences=(TimeRange(3000, 5000),),
                       audio_segments=(AudioSegment(0, 3000, "music", 0.9), AudioSegment(5000, 80_000, "speech", 0.7)),
                       loudness=Loudness(-18.2, 6.1, -1.5), has_audio=True, has_video=True)
    graph = analyse(english, facts, language="en")
    shots = [e for e in graph.visual if e["type"] == "shot"]
    assert [(s["startMs"], s["endMs"]) for s in shots] == [(0, 4000), (4000, 30_000), (30_000, 80_000)]
    assert shots[1]["changeScore"] == 0.8 and shots[1]["transcriptExcerpt"]
    types = [e["type"] for e in graph.audio]
    assert types.count("silence") == 1 and "music" in types and "speech" in types and "loudness" in types
    assert graph.duration_ms == 80_000
    assert validate_chapters(graph.chapters, graph.duration_ms) == []


def test_fast_cutting_sequence_is_reported() -> None:
    facts = MediaFacts(duration_ms=40_000, scene_changes=tuple(SceneChange(t, 0.6) for t in
                                                               (10_000, 11_000, 12_000, 13_000, 14_000)))
    graph = analyse(_timed([("A", "Une phrase pour la forme.")]), facts)
    assert any(e["type"] == "fast_cutting" and e["shotCount"] >= 3 for e in graph.visual)


def test_behavioral_mode_measures_voice_and_turns_and_says_what_it_cannot(podcast_segments) -> None:
    graph = analyse(podcast_segments, language="fr", mode="behavioral")
    profile = graph.to_dict()["behavioral"]
    assert profile["turnTaking"]["speakerChanges"] >= 30
    assert profile["turnTaking"]["questionAnswerExchanges"] >= 10
    assert 80 <= profile["speakingRate"]["overallWordsPerMinute"] <= 200
    assert set(profile["unavailable"]) == {"gestures", "posture", "facial_expressions", "gaze_direction",
                                          "laterality", "proxemics"}
    assert "behavioral" not in analyse(podcast_segments[:10]).to_dict()
    with pytest.raises(ValueError):
        analyse(podcast_segments[:3], mode="vision")


# determinism ---------------------------------------------------------------------------------

def test_the_same_input_gives_the_same_graph(podcast_segments: list[Segment]) -> None:
    first = analyse(podcast_segments, language="fr").to_dict()
    second = analyse(list(reversed(podcast_segments)), language="fr").to_dict()
    assert first == second


def test_spec_shapes_of_the_content_graph(podcast) -> None:
    data = podcast.to_dict()
    assert {"id", "text", "confidence", "startMs"} <= set(data["claims"][0])
    assert {"id", "name", "type", "mentions"} <= set(data["entities"][0])
    assert {"query", "relevance"} <= set(data["searchIntents"][0])
    assert {"title", "startMs", "endMs", "geoScore"} <= set(data["clipMoments"][0])
    assert isinstance(data["summary"]["geoReadinessScore"], float)
    assert isinstance(data["claims"][0]["startMs"], int)


def test_a_change_of_subject_inside_the_first_window_weighs_by_the_words_it_was_compared_with() -> None:
    """At the edges the words before (or after) a point are fewer than the window: the same change
    of vocabulary 30 s in, with half a window said before it, is not as deep a valley as that change
    said in the middle of the talk (on fewer words, the cosine is lower by chance)."""
    from domain.analysis.model import Segment
    from domain.analysis.phrases import PhraseReader
    from domain.analysis.structure import lexical_depth, word_bags

    subjects = ["The volcano spills lava during the eruption.", "The pianist plays a melody at the concert.",
                "The tennis player swings the racket in the match."]
    spans = [(0, 30_000), (30_000, 300_000), (300_000, 600_000)]
    segments = [Segment(t, t + 4_500, text) for text, (start, end) in zip(subjects, spans, strict=True)
                for t in range(start, end, 5_000)]
    sentences = split_sentences(segments, "en")
    reader = PhraseReader("en")
    depth = lexical_depth(sentences, word_bags(sentences, reader), 60_000)
    starts = [s.start_ms for s in sentences]
    early, middle = depth[starts.index(30_000)], depth[starts.index(300_000)]
    assert middle > 0 and early < middle / 2, (early, middle)
