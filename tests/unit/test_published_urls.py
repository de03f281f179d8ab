"""The rule of a published address (``services/api/published_urls.py``): its written-out ranges
checked against the Unicode database, and the characters and ports it refuses."""

from __future__ import annotations

import re
import unicodedata

import pytest
from pydantic import ValidationError

from services.api.models import is_visible
from services.api.published_urls import _TEXT, PublishedUrls, printable

TEXT = re.compile(f"[{_TEXT}]")
BIDI_CONTROLS = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                 "\u2066", "\u2067", "\u2068", "\u2069"]
INVISIBLE = ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\u2063", "\ufeff", "\u180e", "\u034f", "\ufe0f",
             "\u3164", "\u2800", "\u00a0", "\u2003", "\u3000", "\u2028", "\ufff9", "\ufdd0"]


def test_the_text_of_an_address_holds_no_control_format_space_or_invisible_character():
    allowed = [chr(c) for c in range(0xA0, 0x10000) if TEXT.fullmatch(chr(c))]
    assert len(allowed) > 50_000
    for ch in allowed:
        category = unicodedata.category(ch)
        assert category not in ("Cc", "Cf", "Cs", "Zs", "Zl", "Zp"), (hex(ord(ch)), category)
        # What draws nothing by the API's name rule, but a combining accent (a decomposed é).
        assert is_visible(ch) or 0x0300 <= ord(ch) <= 0x036F, hex(ord(ch))
        assert not (0xFDD0 <= ord(ch) <= 0xFDEF or ord(ch) & 0xFFFE == 0xFFFE), hex(ord(ch))


@pytest.mark.parametrize("ch", BIDI_CONTROLS + INVISIBLE, ids=lambda ch: f"U+{ord(ch):04X}")
@pytest.mark.parametrize("where", ["path", "query", "fragment"])
def test_a_bidi_control_or_an_invisible_character_is_refused_anywhere(ch, where):
    address = {"path": f"https://cdn.example.com/v/a{ch}b.mp4", "query": f"https://cdn.example.com/v.mp4?t=a{ch}b",
               "fragment": f"https://cdn.example.com/v.mp4#a{ch}b"}[where]
    with pytest.raises(ValidationError):
        PublishedUrls(video_url=address)
    assert not printable(address)


@pytest.mark.parametrize("port", ["0", "00", "080", "65536", "99999", "100000", ""])
def test_a_port_outside_1_to_65535_is_refused(port):
    address = f"https://cdn.example.com:{port}/v.mp4"
    with pytest.raises(ValidationError):
        PublishedUrls(video_url=address)
    assert not printable(address)


@pytest.mark.parametrize("address", [
    "https://cdn.example.com:1/v.mp4", "https://cdn.example.com:443/v.mp4", "https://cdn.example.com:8080",
    "https://cdn.example.com:65535/v.mp4?t=1#x", "https://blog.example.com/vidéo/été", "https://example.com/视频/一",
    "https://example.com/مقال/فيديو", "https://example.com/מאמר", "https://example.com/e\u0301t\u0301e\u0301",
    "https://example.com/%D8%9C/ok",  # an escaped mark is an escape, printed as such
])
def test_an_address_of_printable_text_and_a_port_in_range_is_taken(address):
    assert PublishedUrls(page_url=address).page_url == address
    assert printable(address)
