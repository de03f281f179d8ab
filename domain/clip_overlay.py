"""What a clip template draws over the picture: the captions at the bottom, the title at the top,
the cover's title in the middle of the thumbnail, as an ASS script (libass burns it), sized in the
output's pixels. Pure: the font's advance widths (``domain.clips.Font``) are given by the caller
(``infra.media.clips.caption_font`` reads them from the font file)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.clips import Caption, Font, Template, drawable, title_lines

FONT_NAME = "DejaVu Sans"  # the caption font's family (its bold face: infra.provision.CAPTION_FONT)
# The burned text's styles: pixels kept clear at each side, and the width of the box around a
# title (the cover's in a thumbnail), which is drawn beyond the letters.
TEXT_MARGIN_X = 40
TITLE_BOX, COVER_BOX = 8, 10


def title_box(t: Template, *, cover: bool = False) -> tuple[int, int]:
    """(font size, width in pixels) a title of ``t`` has, in the clip or on its cover (thumbnail)."""
    size, box = (t.thumbnail_font_size, COVER_BOX) if cover else (t.title_font_size, TITLE_BOX)
    return size, t.width - 2 * (TEXT_MARGIN_X + box)


def title_layout(t: Template, text: str, font: Font, *, cover: bool = False) -> tuple[str, ...]:
    """A client's title as the lines burned into a clip of ``t`` (``domain.clips.title_lines``),
    measured with the caption font's own advance widths, so that it stays inside the frame."""
    size, width = title_box(t, cover=cover)
    return title_lines(text, font, size, width)


_ASS_AFTER_BACKSLASH = frozenset("Nnh")  # \N, \n and \h are line breaks and a hard space to libass


def _ass_text(text: str, font: Font) -> str:
    """Text as an ASS event shows it and nothing more: control and bidi characters and characters
    the font lacks dropped (``domain.clips.drawable``), braces escaped (libass draws ``\\{`` and
    ``\\}`` as braces: no override block), and a backslash before N, n or h followed by a word
    joiner (U+2060, zero-width and in the font), so that it is drawn as a backslash, not a break."""
    text = drawable(text, font)
    out = []
    for k, ch in enumerate(text):
        if ch in "{}":
            out.append("\\" + ch)
        elif ch == "\\" and text[k + 1:k + 2] in _ASS_AFTER_BACKSLASH:
            out.append("\\\u2060")
        else:
            out.append(ch)
    return "".join(out)


def _ass_time(ms: int) -> str:
    cs = max(0, ms) // 10
    return f"{cs // 360000}:{cs // 6000 % 60:02d}:{cs // 100 % 60:02d}.{cs % 100:02d}"


# One colour per speaker in a clip (white, light yellow, light cyan), as ASS writes them (&HBBGGRR).
_SPEAKER_COLOURS = ("&H00FFFFFF", "&H0080FFFF", "&H00FFFF80")


def ass_script(t: Template, captions: Sequence[Caption], title: Sequence[str] = (), *, font: Font, title_ms: int = 0,
               centre: Sequence[str] = ()) -> str:
    """The ASS script burned into a render (``captions`` at the bottom, ``title`` at the top for
    ``title_ms``) or a thumbnail (``centre``: its title in the middle), sized in the output's pixels.
    Lines are the domain's (``domain.clips``): wrapping is off (``WrapStyle: 2``), so libass never
    breaks a word the layout kept whole."""
    speakers: dict[str | None, str] = {}
    for c in captions:
        speakers.setdefault(c.speaker, _SPEAKER_COLOURS[len(speakers) % len(_SPEAKER_COLOURS)])
    fields = ("Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, "
              "Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, "
              "Alignment, MarginL, MarginR, MarginV, Encoding")

    def style(name: str, size: int, colour: str, border: int, outline: int, align: int, margin_v: int) -> str:
        return (f"Style: {name},{FONT_NAME},{size},{colour},&H00FFFFFF,&H00000000,&H99000000,-1,0,0,0,100,100,0,0,"
                f"{border},{outline},1,{align},{TEXT_MARGIN_X},{TEXT_MARGIN_X},{margin_v},1")

    lines = ["[Script Info]", "ScriptType: v4.00+", f"PlayResX: {t.width}", f"PlayResY: {t.height}",
             "WrapStyle: 2", "ScaledBorderAndShadow: yes", "", "[V4+ Styles]", fields,
             style("Caption", t.caption_font_size, "&H00FFFFFF", 1, 4, 2, t.caption_margin),
             style("Title", t.title_font_size, "&H0000D6FF", 3, TITLE_BOX, 8, t.title_font_size * 2),
             style("Thumb", t.thumbnail_font_size, "&H00FFFFFF", 3, COVER_BOX, 5, 0),
             "", "[Events]", "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text"]
    if title and title_ms > 0:
        lines.append(f"Dialogue: 1,{_ass_time(0)},{_ass_time(title_ms)},Title,,0,0,0,,"
                     + r"\N".join(_ass_text(x, font) for x in title))
    if centre:
        lines.append(f"Dialogue: 1,{_ass_time(0)},{_ass_time(3_600_000)},Thumb,,0,0,0,,"
                     + r"\N".join(_ass_text(x, font) for x in centre))
    for c in captions:
        colour = speakers[c.speaker]
        tint = "" if colour == _SPEAKER_COLOURS[0] else "{\\c" + colour.replace("&H00", "&H") + "&}"
        lines.append(f"Dialogue: 0,{_ass_time(c.start_ms)},{_ass_time(c.end_ms)},Caption,,0,0,0,,"
                     + tint + r"\N".join(_ass_text(x, font) for x in c.lines))
    return "\n".join(lines) + "\n"
