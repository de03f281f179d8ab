"""Captions as timed segments: English lines and the timing that turns lines into segments."""

from __future__ import annotations

from domain.analysis import Segment

EN_LINES = [
    ("Alice", "Welcome to the show. Today we talk about nuclear fusion and the ITER project."),
    ("Alice", "So, what is nuclear fusion exactly?"),
    ("Bob", "Nuclear fusion is a reaction where light nuclei combine and release energy."),
    ("Bob", "The Sun produces its energy through fusion, at about 15 million degrees."),
    ("Alice", "And why is ITER so important?"),
    ("Bob", "ITER is the largest fusion experiment in the world, built in Cadarache in France since 2010."),
    ("Bob", "It should produce 500 megawatts of fusion power, because the plasma is confined by magnets."),
    ("Alice", "How does a tokamak work?"),
    ("Bob", "A tokamak is a doughnut-shaped machine that confines the plasma with strong magnetic fields."),
    ("Bob", "The European Commission funds about 45 percent of the project."),
    ("Alice", "Let's move on to the costs. How much does it cost?"),
    ("Bob", "The total cost is estimated at more than 20 billion euros, according to the ITER Organization."),
    ("Bob", "Bernard Bigot led the project from 2015 to 2022. Bigot died in 2022."),
    ("Alice", "In conclusion, fusion could provide clean energy by 2050."),
    ("Bob", "Thank you Alice, it was a pleasure."),
]


def _timed(lines: list[tuple[str | None, str]], ms_per_word: int = 330, gap: int = 500) -> list[Segment]:
    segments, t = [], 0
    for speaker, text in lines:
        length = ms_per_word * len(text.split()) + 800
        segments.append(Segment(t, t + length, text, speaker))
        t += length + gap
    return segments
