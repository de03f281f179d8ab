"""Where an article or its media are published: the rule of an address a page can print as it is.

An address given to an article (``PUT /articles/{id}``, ``published_urls``) or to one export
(``?url=``, ``?video_url=``, ...) is printed in every export of the article (HTML, Open Graph,
JSON-LD): ``https://``, a host of letters, digits, dots and hyphens (no userinfo: a password would
be printed in every page that links it; no backslash, which some parsers read as a slash), an
optional port from 1 to 65535, then a path, a query and one fragment of the characters a URL holds
as it is, percent escapes and non-ASCII text.

The non-ASCII text excludes every character that draws nothing or reorders what is around it,
since an address shown to a reader must read as what it is: the bidi controls (the marks U+061C,
U+200E and U+200F; the embeddings and overrides U+202A-U+202E; the isolates U+2066-U+2069), the
other invisible format characters (the soft hyphen, zero-width spaces and joiners, the word joiner
and invisible operators, the byte order mark, interlinear annotations, Arabic and Syriac
marks that stand alone), every space and line or paragraph separator, the fillers and variation
selectors that draw nothing, and noncharacters. The ranges are written out (not read from the
running Python's Unicode tables) so the published pattern does not change with the interpreter;
``tests/unit/test_published_urls.py`` checks them against the Unicode database.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# (first, last) code points of what an address's text never holds, beyond ASCII.
INVISIBLE = (
    (0x00A0, 0x00A0), (0x00AD, 0x00AD),  # no-break space, soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),  # Arabic and Syriac marks, ALM
    (0x0890, 0x0891), (0x08E2, 0x08E2),  # Arabic marks above and below
    (0x115F, 0x1160), (0x1680, 0x1680), (0x17B4, 0x17B5), (0x180B, 0x180F),  # fillers, ogham space, Mongolian
    (0x2000, 0x200F),  # spaces, zero-width space, joiners, LRM and RLM
    (0x2028, 0x202F),  # line and paragraph separators, embeddings and overrides, narrow no-break space
    (0x205F, 0x206F),  # medium space, word joiner, invisible operators, isolates, deprecated format
    (0x2800, 0x2800), (0x3000, 0x3000), (0x3164, 0x3164),  # braille blank, ideographic space, filler
    (0xD800, 0xDFFF),  # surrogates
    (0xFDD0, 0xFDEF), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0),  # noncharacters, selectors, BOM
    (0xFFF0, 0xFFFB), (0xFFFE, 0xFFFF),  # interlinear annotations, noncharacters
)


def _text_ranges() -> str:
    """The non-ASCII characters an address's text may hold (U+00A1 to U+FFFD), as a regex class body."""
    parts, start = [], 0x00A1
    for first, last in INVISIBLE:
        if first > start:
            parts.append(f"\\u{start:04x}-\\u{first - 1:04x}" if first - 1 > start else f"\\u{start:04x}")
        start = max(start, last + 1)
    if start <= 0xFFFD:
        parts.append(f"\\u{start:04x}-\\ufffd")
    return "".join(parts)


_TEXT = _text_ranges()
_UNRESERVED = "A-Za-z0-9\\-._~!$&'()*+,;=:@" + _TEXT
_PORT = "(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
PATTERN = (r"^https://[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,251}[A-Za-z0-9])?" + _PORT
           + rf"(?:/(?:[{_UNRESERVED}/]|%[0-9A-Fa-f]{{2}})*)?"
           rf"(?:\?(?:[{_UNRESERVED}/?]|%[0-9A-Fa-f]{{2}})*)?"
           rf"(?:#(?:[{_UNRESERVED}/?]|%[0-9A-Fa-f]{{2}})*)?$")
MIN_LENGTH, MAX_LENGTH = 10, 2048
_ADDRESS = re.compile(PATTERN)


def printable(value: Any) -> bool:
    """Whether ``value`` is an address the rule takes: what an export prints of an address stored
    before the rule was what it is (one it refuses is not printed)."""
    return isinstance(value, str) and MIN_LENGTH <= len(value) <= MAX_LENGTH and bool(_ADDRESS.fullmatch(value))


def published_url(what: str) -> Any:
    """The field of an address (None when not given), described as ``what``."""
    return Field(default=None, min_length=MIN_LENGTH, max_length=MAX_LENGTH, pattern=PATTERN,
                 description=f"the https address of {what}, without user or password")


class PublishedUrls(BaseModel):
    model_config = ConfigDict(extra="forbid")

    page_url: str | None = published_url("the page the article is published on (canonical link, og:url, "
                                         "JSON-LD url)")
    video_url: str | None = published_url("the video's file (og:video, JSON-LD contentUrl, chapter links)")
    embed_url: str | None = published_url("a player page of the video (JSON-LD embedUrl; og:video and the "
                                          "chapter links when no video_url)")
    thumbnail_url: str | None = published_url("the video's thumbnail (og:image, JSON-LD thumbnailUrl)")
