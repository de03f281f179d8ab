"""Shapes shared by several resource modules (the error envelope, environments, text rules)."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field
from pydantic_core import PydanticCustomError

Environment = Literal["production", "sandbox"]

# PostgreSQL text and jsonb cannot hold U+0000, so no string input may carry it (400, not 500).
NAME_PATTERN = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"  # not blank, no NUL
TEXT_PATTERN = r"^[^\u0000]*$"  # no NUL

# Characters that draw nothing: controls, format characters (zero-width spaces and joiners, bidi
# marks, the BOM, the soft hyphen), separators, unassigned and private code points, lone
# combining marks, and the few letters and symbols that are blank by design (Hangul fillers,
# the braille blank). A name made only of these would show as nothing in a list.
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def is_visible(ch: str) -> bool:
    return ch not in _BLANK_GLYPHS and unicodedata.category(ch) not in _UNSEEN_CATEGORIES


def _visible_name(value: str) -> str:
    """A name shows at least one character and holds no control character (tab, newline, escape...)."""
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise PydanticCustomError("control_characters", "a name may not contain control characters")
    if not any(is_visible(ch) for ch in value):
        raise PydanticCustomError("blank", "a name must show at least one visible character")
    return value


def _no_controls(value: str) -> str:
    """Free text keeps its tabs and line breaks; other control characters are refused."""
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n\r" for ch in value):
        raise PydanticCustomError("control_characters", "the text may not contain control characters "
                                                        "other than tab and line breaks")
    return value


def Name(max_length: int, **kwargs: Any) -> Any:  # noqa: N802  (a type factory, used like a type)
    """A display name: 1 to ``max_length`` characters, at least one of them visible, no controls."""
    return Annotated[str, Field(min_length=1, max_length=max_length, pattern=NAME_PATTERN, **kwargs),
                     AfterValidator(_visible_name)]


def Text(max_length: int, **kwargs: Any) -> Any:  # noqa: N802
    """Free text: at most ``max_length`` characters, no control characters but tab and line breaks."""
    return Annotated[str, Field(max_length=max_length, pattern=TEXT_PATTERN, **kwargs), AfterValidator(_no_controls)]


class ErrorBody(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. invalid_key, insufficient_scope")
    message: str
    details: dict[str, Any] = Field(description="what the code needs to be acted on; validation errors list "
                                                "`fields` with `field`, `rule` and `message`")


class ErrorEnvelope(BaseModel):
    """Every non-2xx answer."""

    error: ErrorBody
