"""Shapes shared by several resource modules (the error envelope, environments)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Environment = Literal["production", "sandbox"]

# PostgreSQL text and jsonb cannot hold U+0000, so no string input may carry it (400, not 500).
NAME_PATTERN = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"  # not blank, no NUL
TEXT_PATTERN = r"^[^\u0000]*$"  # no NUL


class ErrorBody(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. invalid_key, insufficient_scope")
    message: str
    details: dict[str, Any] = Field(description="what the code needs to be acted on; validation errors list "
                                                "`fields` with `field`, `rule` and `message`")


class ErrorEnvelope(BaseModel):
    """Every non-2xx answer."""

    error: ErrorBody
