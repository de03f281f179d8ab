"""Where a completed description goes: each platform's length limit, in the platform's own unit.

One table (``PLATFORMS``); its sources and the reasons behind the limits we chose are in
docs/revival.md ("Platforms"). Every limit is counted the way the platform counts it, because
each counts differently and a description that is one byte over is refused or cut by the site:

- ``utf8_bytes``: the bytes of the UTF-8 encoding (the video site: an accented letter is 2, a
  CJK ideograph 3, an emoji 4 or more);
- ``characters``: Unicode code points of the NFC-normalised text;
- ``utf16_code_units``: what a JavaScript ``String.length`` says (a character outside the Basic
  Multilingual Plane, most emoji, is 2);
- ``weighted_characters``: the microblog's weighted count. The text is normalised to NFC; a
  code point in U+0000-U+10FF (Latin and the other alphabetic scripts), U+2000-U+200D (general
  spaces), U+2010-U+201F or U+2032-U+2037 (punctuation) counts 1 and every other one 2; a link
  counts 23 whatever its length, as the site shortens every link it recognises. The site counts
  an emoji sequence as 2 in all; we count each of its code points, which can only count more, so
  what we produce always fits. For the same reason a token the site may or may not take for a link
  (a bare domain, a host whose top-level domain we do not know) counts the larger of 23 and its own
  weight.

``measure`` is the length of a text in a unit; the completion guarantees ``measure(text) <=
max_length`` for the text it returns (``domain.revival_completion``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

DESCRIPTION, CHAPTERS, GEO_SUMMARY = "description", "chapters", "geo_summary"
SECTIONS = (DESCRIPTION, CHAPTERS, GEO_SUMMARY)

UTF8_BYTES = "utf8_bytes"
CHARACTERS = "characters"
UTF16_CODE_UNITS = "utf16_code_units"
WEIGHTED_CHARACTERS = "weighted_characters"


@dataclass(frozen=True, slots=True)
class Platform:
    """One destination of a completed description.

    ``order`` is how its sections are joined: description first where the creator's own words
    lead (the video site, where chapters follow them), the answer-first summary first where a feed
    shows only the first lines before "more". ``shows_chapters``: timestamp lines become chapters
    there; elsewhere they would be dead text and are left out. ``forbidden``: characters the
    platform refuses in a description (replaced before measuring). ``nicknames``: the short names a
    person gives it in any language (a pattern, folded), besides its id; what a language calls it
    is in the language's module (``domain.languages``).
    """

    id: str
    display_name: str
    max_length: int
    unit: str
    order: tuple[str, ...]
    shows_chapters: bool = False
    forbidden: str = ""
    nicknames: str = ""


_DESCRIPTION_FIRST = (DESCRIPTION, CHAPTERS, GEO_SUMMARY)
_SUMMARY_FIRST = (GEO_SUMMARY, DESCRIPTION, CHAPTERS)

PLATFORMS: dict[str, Platform] = {p.id: p for p in (
    Platform("videosite_long", "Video site (long-form video)", 5000, UTF8_BYTES, _DESCRIPTION_FIRST,
             shows_chapters=True, forbidden="<>", nicknames="videosite"),
    Platform("videosite_shorts", "Video site (short video)", 5000, UTF8_BYTES, _DESCRIPTION_FIRST, forbidden="<>",
             nicknames="shorts"),
    Platform("professional_network_long", "Professional network (video post)", 3000, CHARACTERS, _SUMMARY_FIRST),
    Platform("social_network_a_video", "Social network A (video post)", 63206, CHARACTERS, _DESCRIPTION_FIRST),
    Platform("social_network_a_reels", "Social network A (reels)", 2200, CHARACTERS, _SUMMARY_FIRST),
    Platform("social_network_b_reels", "Social network B (reels)", 2200, CHARACTERS, _SUMMARY_FIRST),
    Platform("short_video_app", "Short video app", 2200, UTF16_CODE_UNITS, _SUMMARY_FIRST),
    Platform("microblog_video", "Microblog (video post)", 280, WEIGHTED_CHARACTERS, _SUMMARY_FIRST,
             nicknames="microblog"),
    Platform("pinboard_site", "Pinboard site (video pin)", 500, CHARACTERS, _SUMMARY_FIRST, nicknames="pinboard"),
    Platform("blog_embed", "Blog embed (text under an embedded video)", 5000, CHARACTERS, _DESCRIPTION_FIRST,
             shows_chapters=True, nicknames="blog"),
)}
PLATFORM_IDS = tuple(PLATFORMS)

# A premium analysis has the model write two descriptions (``domain.analysis.premium``): a short one
# for the platforms whose limit is under this many units (a microblog post, a pin), a long one for
# the others.
SHORT_DESCRIPTION_BELOW = 600


def description_kind(platform: Platform) -> str:
    """Which of the model's descriptions ``platform`` takes: ``short`` or ``long``."""
    return "short" if platform.max_length < SHORT_DESCRIPTION_BELOW else "long"

# ---------------------------------------------------------------------------- measuring

LINK_WEIGHT = 23
# Code points that count 1 on the microblog (its published counting configuration, version 3).
_LIGHT_RANGES = ((0x0000, 0x10FF), (0x2000, 0x200D), (0x2010, 0x201F), (0x2032, 0x2037))
# A link: a scheme, a host of labels, a top-level domain, then a path that does not end on
# punctuation (the site leaves a final full stop or closing bracket out of the link, and so do we:
# leaving a character out of a link can only make us count more). Written as one pattern
#   (?:https?://|\b)(?:LABEL\.)+TLD\b PORT? PATH?
# it is quadratic on a long dotted token ("a.a.a...", thousands of labels): the pattern is tried
# at every label and runs to the token's end from each. So the pieces are matched one at a time,
# each bounded (a label or a top-level domain is at most 63 characters) or matched once per link
# (the port and path), and what lies beyond a label is worked out once (``find_links``).
_LINK_START = re.compile(r"https?://|\b(?=[a-z0-9])", re.IGNORECASE)
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.", re.IGNORECASE)  # a host's label and its dot
_TLD = re.compile(r"[a-z]{2,63}\b", re.IGNORECASE)
_PORT_AND_PATH = re.compile(r"(?::\d{1,5})?(?:/(?:[\w\-.~%!$&'*+,;=:@/?#]*[\w\-~%$&*+=@/#])?)?")


@dataclass(frozen=True, slots=True)
class Link:
    """A link found in a text: ``text[start:end]``, whether it has a scheme, its top-level domain."""

    start: int
    end: int
    scheme: bool
    tld: str


def _furthest_tld(text: str, at: int, known: dict[int, tuple[int, int] | None]) -> tuple[int, int] | None:
    """The span of the furthest top-level domain that the chain of labels starting at ``at`` reaches
    (a host takes as many labels as it can), or None. ``known`` holds the answer for every label
    start already walked, so that a dotted token's labels are walked once however many of them a
    link is looked for at."""
    chain = []
    position = at
    while position not in known and (label := _LABEL.match(text, position)) is not None:
        chain.append(position)
        position = label.end()
    furthest = known.get(position)  # what lies beyond the label that ends here, when walked already
    for start in reversed(chain):  # the label at ``start`` ends at ``position``
        if furthest is None:
            tld = _TLD.match(text, position)
            furthest = tld.span() if tld is not None else None
        known[start] = furthest
        position = start
    return known.get(at)


def find_links(text: str) -> list[Link]:
    """The links of ``text``, left to right, in time linear in its length."""
    links: list[Link] = []
    known: dict[int, tuple[int, int] | None] = {}
    at = 0
    while (start := _LINK_START.search(text, at)) is not None:
        # a scheme (then the host follows it), or a word's start (then the host is there)
        tld = _furthest_tld(text, start.end(), known)
        if tld is None:
            at = start.start() + 1
            continue
        port_and_path = _PORT_AND_PATH.match(text, tld[1])
        assert port_and_path is not None  # every part of the pattern is optional: it always matches
        end = port_and_path.end()
        links.append(Link(start.start(), end, bool(start.group()), text[tld[0]:tld[1]]))
        at = end
    return links


# Generic top-level domains every link recogniser knows; two-letter ones are countries, all known.
_KNOWN_TLDS = frozenset("""com org net edu gov mil int info biz name pro app dev io ai co tv me fm ly gl
    blog shop online site store tech news media video live cloud page link xyz club""".split())


# Every code point outside the light ranges: each adds 1 to the code point count.
_HEAVY = re.compile("[^" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in _LIGHT_RANGES) + "]")


def _weight_of(text: str) -> int:
    return len(text) + len(_HEAVY.findall(text))


# What every link above has: a letter or digit, a dot, a letter (the host's last dot before its
# top-level domain). A text without one has no link, and the link pattern need not be tried.
_MAYBE_LINK = re.compile(r"[a-z0-9]\.[a-z]", re.IGNORECASE)


def weighted_length(text: str) -> int:
    """The microblog's count of ``text`` (see the module docstring)."""
    text = unicodedata.normalize("NFC", text)
    if _MAYBE_LINK.search(text) is None:
        return _weight_of(text)
    total, at = 0, 0
    for link in find_links(text):
        total += _weight_of(text[at:link.start])
        own = _weight_of(text[link.start:link.end])
        tld = link.tld.lower()
        certain = link.scheme and (len(tld) == 2 or tld in _KNOWN_TLDS)
        total += LINK_WEIGHT if certain else max(LINK_WEIGHT, own)
        at = link.end
    return total + _weight_of(text[at:])


def measure(text: str, unit: str) -> int:
    """The length of ``text`` in ``unit`` (one of the four units above)."""
    if unit == UTF8_BYTES:
        return len(text.encode("utf-8"))
    if unit == CHARACTERS:
        return len(unicodedata.normalize("NFC", text))
    if unit == UTF16_CODE_UNITS:
        return len(text.encode("utf-16-le")) // 2
    if unit == WEIGHTED_CHARACTERS:
        return weighted_length(text)
    raise ValueError(f"unknown length unit {unit!r}")
