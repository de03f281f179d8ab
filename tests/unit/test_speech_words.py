"""Recognised words joined as the recogniser spaced them, and the text each window is told came
before it (pure parts: the engine's reading of Whisper's words, the provider's reading of bare
words against its text, segments, prompts).

The word lists are shaped as faster-whisper gives them (``faster_whisper.transcribe.Word``: the
text with the space Whisper wrote before it), as the base model wrote them for espeak-ng voices
of these sentences: an elision is two words (" l", "'eau"), a hyphenated word one per part
(" arc", "-en", "-ciel")."""

from __future__ import annotations

import pytest
from faster_whisper.transcribe import Word as WhisperWord

from domain.analysis.model import Segment
from domain.analysis.speech import (
    MAX_JOINED_WORDS,
    MAX_SEGMENT_WORDS,
    PROMPT_MAX_CHARS,
    prompt_for,
    segments_from_words,
    words_text,
)
from infra.asr import Word, whisper_words
from infra.asr_provider import spaced_words


def whisper(*texts: str, step: float = 0.3) -> list[WhisperWord]:
    """Words as faster-whisper gives them, one every ``step`` seconds."""
    return [WhisperWord(k * step, k * step + step * 0.8, text, 0.9) for k, text in enumerate(texts)]


def transcript(found: list[WhisperWord]) -> list[str]:
    """The segments' texts, through the engine's reading and the transcript's segments."""
    return [s.text for s in segments_from_words([w.to_list() for w in whisper_words(found)])]


LANGUAGES = {
    "en": (whisper(" It's", " a", " well", "-known", " fact", " that", " the", " children's", " toys", " aren't",
                   " broken."),
           ["It's a well-known fact that the children's toys aren't broken."]),
    "fr": (whisper(" Aujourd", "'hui,", " l", "'eau", " est", " claire.", " C", "'est", " l", "'arc", "-en",
                   "-ciel", " qu", "'on", " voit,", " n", "'est", "-ce", " pas", " ?"),
           ["Aujourd'hui, l'eau est claire.", "C'est l'arc-en-ciel qu'on voit, n'est-ce pas ?"]),
    "de": (whisper(" Das", " ist", " ein", " E", "-Mail", "-Programm", " für", " Nord", "-", " und",
                   " Süddeutschland.", " Gibt", "'s", " das", " noch?"),
           ["Das ist ein E-Mail-Programm für Nord- und Süddeutschland.", "Gibt's das noch?"]),
    "es": (whisper(" ¿Qué", " tal?", " Es", " un", " coche", " franco", "-alemán", " del", " 1", ",5", " %."),
           ["¿Qué tal?", "Es un coche franco-alemán del 1,5 %."]),
    "it": (whisper(" Dell", "'acqua,", " l", "'amico", " dell", "'arte.", " Quell", "'uomo", " c", "'è", " già,",
                   " un", " po'", " stanco;", " l", "'anno", " scorso", " è", " andato", " all", "'estero."),
           ["Dell'acqua, l'amico dell'arte.", "Quell'uomo c'è già, un po' stanco; l'anno scorso è andato all'estero."]),
    "pt": (whisper(" Diga", "-me", " onde", " está", " a", " água", "-de", "-colónia.", " Ele", " deu", "-lhe",
                   " o", " guarda", "-chuva", " d", "'água."),
           ["Diga-me onde está a água-de-colónia.", "Ele deu-lhe o guarda-chuva d'água."]),
    "nl": (whisper(" Het", " is", " 's", " morgens", " koud.", " Zo", "'n", " auto", "'s", " rijden", " op", " de",
                   " A", "-weg,", " da", "'s", " waar."),
           ["Het is 's morgens koud.", "Zo'n auto's rijden op de A-weg, da's waar."]),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_words_are_joined_as_whisper_spaced_them(language):
    found, expected = LANGUAGES[language]
    assert transcript(found) == expected


def test_the_words_keep_their_times_and_say_which_join_the_one_before():
    words = whisper_words(whisper(" l", "'eau", " claire"))
    assert [(w.start_ms, w.end_ms, w.text, w.joins) for w in words] == [
        (0, 240, "l", False), (300, 540, "'eau", True), (600, 840, "claire", False)]
    assert [Word.from_list(w.to_list()) for w in words] == list(words)


def test_the_first_word_of_a_window_never_joins_anything():
    """A window starts after a pause: even a word Whisper wrote without a space starts a word."""
    [word] = whisper_words(whisper("'eau"))
    assert not word.joins
    assert words_text([[0, 100, "l", 1, 0], [200, 300, "'eau", 1, 0]]) == "l 'eau"


def test_words_recorded_before_the_mark_are_joined_with_spaces():
    """A word list of four values (recorded by an earlier version) has a space before each word."""
    assert segments_from_words([[0, 300, "Solar", 1], [300, 600, "works.", 1]]) == [Segment(0, 600, "Solar works.")]


def test_a_cue_is_never_cut_inside_an_elision():
    """The cue's bound of 16 words falls between " l" and "'eau", and a sentence's end between
    "3." and "5": both stay whole."""
    filler = [f" mot{k}" for k in range(MAX_SEGMENT_WORDS - 1)]
    texts = transcript(whisper(*filler, " l", "'eau", " coule."))
    assert texts[0].endswith("mot14 l'eau") and texts[1] == "coule."
    assert transcript(whisper(" Il", " y", " a", " 3.", "5", " litres.")) == ["Il y a 3.5 litres."]
    paused = [WhisperWord(0.0, 0.2, " d", 0.9), WhisperWord(1.8, 2.1, "'eau", 0.9)]
    assert transcript(paused) == ["d'eau"]  # a pause over 1 s, but Whisper wrote one word


def test_a_run_of_joined_words_is_still_bounded():
    """A provider that writes every word onto the one before cannot make one endless cue."""
    found = whisper(" a", *["b"] * 200)
    segments = segments_from_words([w.to_list() for w in whisper_words(found)])
    assert len(segments) > 1 and max(len(s.text) for s in segments) <= MAX_JOINED_WORDS + 1


# ---- a provider's words, with or without their own spacing


def test_a_providers_words_with_leading_spaces_keep_whisper_spacing():
    assert spaced_words([" l", "'eau", " claire"], "l'eau claire") == [("l", False), ("'eau", True),
                                                                     ("claire", False)]


def test_a_providers_bare_words_are_read_against_its_text():
    text = "Aujourd'hui, c'est l'arc-en-ciel ! ¿Qué? 1,5 %."
    words = ["Aujourd'hui", "c'est", "l", "'arc", "en", "ciel", "Qué", "1", "5", "%"]
    got = spaced_words(words, text)
    assert got == [("Aujourd'hui,", False), ("c'est", False), ("l", False), ("'arc", True), ("-en", True),
                   ("-ciel !", True), ("¿Qué?", False), ("1", False), (",5", True), ("%.", False)]
    assert words_text([[0, 1, w, 1, int(j)] for w, j in got]) == "Aujourd'hui, c'est l'arc-en-ciel ! ¿Qué? 1,5 %."


def test_bare_words_that_the_text_does_not_hold_keep_their_spaces():
    assert spaced_words(["bonjour", "monde"], "quelque chose d'autre") == [("bonjour", False), ("monde", False)]
    assert spaced_words(["bonjour", "monde"], None) == [("bonjour", False), ("monde", False)]
    # a word the text skips ahead to past the bound is not searched for further
    far = "bonjour " + "x" * 500 + " monde"
    assert spaced_words(["bonjour", "monde"], far) == [("bonjour", False), ("monde", False)]


# ---- the text a window is told came before it


def words_of(text: str, start: int = 0) -> list[list]:
    return [[start + k * 300, start + k * 300 + 250, w, 0.9, 0] for k, w in enumerate(text.split())]


def test_a_window_is_told_the_text_of_the_windows_before_it():
    first, second = words_of("Bonjour à tous."), words_of("Aujourd'hui nous parlons", 30_000)
    second[0][4] = 0
    assert prompt_for([]) == ""
    assert prompt_for([first]) == "Bonjour à tous."
    assert prompt_for([first, second]) == "Bonjour à tous. Aujourd'hui nous parlons"
    assert prompt_for([first, []]) == "Bonjour à tous."  # a window where nothing was said tells nothing new
    elided = [[0, 100, "l", 1, 0], [100, 200, "'eau", 1, 1]]
    assert prompt_for([elided]) == "l'eau"


def test_the_prompt_is_the_tail_of_what_was_said_cut_at_a_word():
    windows = [words_of(" ".join(f"w{n}x{k}" for k in range(60)), n * 30_000) for n in range(20)]
    prompt = prompt_for(windows)
    assert len(prompt) <= PROMPT_MAX_CHARS and prompt.endswith("w19x59")
    assert prompt.split()[0] in words_text(windows[-2] + windows[-1]).split()  # whole words only
    assert prompt == prompt_for(windows)  # the same windows, the same prompt
    assert prompt_for(windows, 0) == "" and prompt_for(windows, 40) == "w19x55 w19x56 w19x57 w19x58 w19x59"
