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


# A short talk that names its subject and announces its parts, one line a caption: a cost, a safety and a
# "how do you choose" part (the chapters, their titles and the article's sections are read on it).
BATTERY_TALK = [
    "Welcome to this talk about home batteries.",
    "A home battery stores the electricity your solar panels make during the day.",
    "Most home batteries today use lithium iron phosphate cells, which last for about six thousand cycles.",
    "A typical battery holds ten kilowatt hours, enough to run a house through the evening.",
    "Let's talk about cost.",
    "In 2024 a ten kilowatt hour battery cost about seven thousand dollars installed.",
    "The price fell by forty percent since 2019, mostly because cell factories in China grew.",
    "A tax credit of thirty percent cuts the cost further in the United States.",
    "Next, let's talk about safety.",
    "Lithium iron phosphate cells do not catch fire as easily as nickel cells.",
    "Installers put the battery in a garage or outside, away from living rooms.",
    "A battery management system watches every cell and stops charging when a cell gets too warm.",
    "Finally, how do you choose the right battery?",
    "First, measure how much electricity you use after sunset.",
    "Then compare the warranty, the usable capacity and the power the battery can deliver at once.",
    "So a home battery pays off when electricity in the evening is expensive and your solar panels make more.",
    "Thanks for watching.",
]

LONG_PUNCTUATED = [  # a lecture's captions, punctuated, cut where the lines were full
    "This formula is central to scientific discovery, it's a core tool in machine learning and AI, and",
    "it's even been used for treasure hunting, when in the 1980s a small team led by Tommy Thompson,",
    "and I'm not making up that name, used Bayesian search tactics to help uncover a",
    "ship that had sunk a century and a half earlier,",
    "and the ship was carrying what in today's terms amounts to $700 million worth of gold.",
    "At the simplest there's just knowing what each part means.",
]
