"""Shapes shared by several resource modules (the error envelope, environments, text and language rules)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field
from pydantic_core import PydanticCustomError

from domain.languages import CODES, TAG_PATTERN, supported

Environment = Literal["production", "sandbox"]

# What a name or a text may hold, as patterns the OpenAPI document publishes, so that what the
# schema promises and what the API accepts are the same. PostgreSQL text and jsonb cannot hold
# U+0000; no other control character (C0, DEL, C1) belongs in a name either, and free text keeps
# only tab and line breaks. A name must show something: at least one character that is neither
# a control, a space nor one of the characters that draw nothing (format characters such as
# zero-width spaces and joiners, bidi marks, the BOM and the soft hyphen; variation selectors;
# combining diacritics on their own; the Hangul fillers and the braille blank).
_CONTROLS = r"\x00-\x1f\x7f-\x9f"
_DRAW_NOTHING = (_CONTROLS + r"\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                 r"\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\u0300-\u036f")
NAME_PATTERN = rf"^[^{_CONTROLS}]*[^{_DRAW_NOTHING}][^{_CONTROLS}]*$"  # not blank, no control character
TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"  # tab and line breaks, no other control
# Free text that must show something (a message to the assistant): TEXT_PATTERN's characters, at
# least one of them visible.
_TEXT_CONTROLS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
VISIBLE_TEXT_PATTERN = rf"^[^{_TEXT_CONTROLS}]*[^{_DRAW_NOTHING}][^{_TEXT_CONTROLS}]*$"
_SHOWS = re.compile(rf"[^{_DRAW_NOTHING}]")


def is_visible(ch: str) -> bool:
    return bool(_SHOWS.match(ch))


def Name(max_length: int, **kwargs: Any) -> Any:  # noqa: N802  (a type factory, used like a type)
    """A display name: 1 to ``max_length`` characters, at least one of them visible, no controls."""
    return Annotated[str, Field(min_length=1, max_length=max_length, pattern=NAME_PATTERN, **kwargs)]


def Text(max_length: int, **kwargs: Any) -> Any:  # noqa: N802
    """Free text: at most ``max_length`` characters, no control characters but tab and line breaks."""
    return Annotated[str, Field(max_length=max_length, pattern=TEXT_PATTERN, **kwargs)]


def _supported_language(tag: str) -> str:
    code = supported(tag)
    if code is None:
        raise PydanticCustomError("unsupported_language", "a language the service analyses and writes: "
                                  + ", ".join(CODES) + " (a tag such as en-US or EN names en)")
    return code


def Language(**kwargs: Any) -> Any:  # noqa: N802  (a type factory, used like a type)
    """A language the service analyses and writes, as a BCP 47 tag whose primary subtag is one of
    its codes, in any case; read as that code (``en-US`` and ``EN`` are ``en``). Anything else is a
    400 (rule ``unsupported_language``) before anything is charged or stored: the schema publishes
    the same rule as its pattern."""
    extra = {"pattern": TAG_PATTERN, "examples": list(CODES)}
    return Annotated[str, Field(min_length=2, max_length=35, json_schema_extra=extra, **kwargs),
                     AfterValidator(_supported_language)]


class ErrorBody(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. invalid_key, insufficient_scope")
    message: str
    details: dict[str, Any] = Field(description="what the code needs to be acted on; validation errors list "
                                                "`fields` with `field`, `rule` and `message`")


class ErrorEnvelope(BaseModel):
    """Every non-2xx answer."""

    error: ErrorBody
