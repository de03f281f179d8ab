"""The speakers of a recognised talk from its segments' voice embeddings: how many there are is
found (never asked), and where the voices cannot be told apart the talk has one speaker and no
turns are invented."""

from __future__ import annotations

import numpy as np

from domain.analysis.voices import MIN_CLUSTER_MS, speakers_of

DIM = 256


def voice(rng, centre, n, spread=0.15):
    """``n`` embeddings around ``centre`` (cosine distance to it about spread**2 / 2)."""
    return [centre + rng.normal(0, spread / np.sqrt(DIM), DIM) for _ in range(n)]


def unit(rng):
    v = rng.normal(size=DIM)
    return v / np.linalg.norm(v)


def test_two_well_separated_voices_are_two_speakers_in_order_of_appearance():
    rng = np.random.default_rng(1)
    a, b = unit(rng), unit(rng)
    va, vb = voice(rng, a, 8), voice(rng, b, 8)
    embeddings = [va.pop() if k % 2 == 0 else vb.pop() for k in range(16)]
    names = speakers_of([3000] * 16, embeddings)
    assert names == ["Speaker 1" if k % 2 == 0 else "Speaker 2" for k in range(16)]


def test_one_voice_is_one_speaker_and_no_names():
    rng = np.random.default_rng(2)
    names = speakers_of([3000] * 12, voice(rng, unit(rng), 12, spread=0.4))
    assert names == [None] * 12


def test_noise_is_one_speaker():
    rng = np.random.default_rng(3)
    names = speakers_of([3000] * 20, [unit(rng) for _ in range(20)])
    assert names == [None] * 20


def test_too_little_speech_is_one_speaker():
    rng = np.random.default_rng(4)
    a, b = unit(rng), unit(rng)
    assert speakers_of([3000, 3000], [a, b]) == [None, None]


def test_a_voice_heard_too_briefly_is_folded_into_the_nearest_speaker():
    rng = np.random.default_rng(5)
    a, b, c = unit(rng), unit(rng), unit(rng)
    embeddings = voice(rng, a, 6) + voice(rng, b, 6) + [c]
    durations = [3000] * 12 + [MIN_CLUSTER_MS // 2]
    names = speakers_of(durations, embeddings)
    assert names[:12] == ["Speaker 1"] * 6 + ["Speaker 2"] * 6 and names[12] in ("Speaker 1", "Speaker 2")


def test_short_and_silent_segments_take_the_nearest_voice_or_the_previous_speaker():
    rng = np.random.default_rng(6)
    a, b = unit(rng), unit(rng)
    va, vb = voice(rng, a, 7), voice(rng, b, 7)
    embeddings = va[:6] + vb[:6] + [va[6], None]
    durations = [3000] * 12 + [600, 0]
    names = speakers_of(durations, embeddings)
    assert names[12] == "Speaker 1"  # short, but its voice is clearly the first speaker's
    assert names[13] == "Speaker 1"  # nothing to hear: the speaker before it


def test_a_short_word_goes_to_the_voice_it_is_clearly_nearer():
    """A word too short for a clean embedding (0.3 s) is still much nearer one voice than the
    other: it goes to that voice, not to whoever spoke before it."""
    rng = np.random.default_rng(7)
    a, b, c = unit(rng), unit(rng), unit(rng)
    c = c - (c @ a) * a
    blurred = 0.5 * a + np.sqrt(0.75) * c / np.linalg.norm(c)  # cosine distance 0.5 to a, about 1 to b
    embeddings = voice(rng, a, 6) + voice(rng, b, 6) + [blurred]
    durations = [3000] * 12 + [300]
    d_a, d_b = 1 - blurred @ a / np.linalg.norm(blurred), 1 - blurred @ b / np.linalg.norm(blurred)
    assert d_a > 0.45 and d_b - d_a > 0.2  # beyond the threshold, but clearly nearer a
    assert speakers_of(durations, embeddings)[12] == "Speaker 1"
