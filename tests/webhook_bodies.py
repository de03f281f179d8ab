"""What every webhook body a test receives must be: valid against the JSON Schema of its event type
(docs/webhooks.md, generated from ``domain.webhook_payloads``), and free of anything internal.

The internal names are spelled here on their own, not taken from the payload module, so a module
that lets one through is caught rather than agreed with.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from domain.webhook_payloads import json_schemas

# A field named like a storage key, a server path, the forced demuxer or a codec detail.
INTERNAL_NAME = re.compile(r"(^|_)(keys?|paths?)$|storage|demuxer|codec|caption_cues|subtitle_tracks|crossing",
                           re.I)
# A value that is a storage key (the storage's folders) or a server path rather than an absolute URL.
INTERNAL_VALUE = re.compile(r"^(videos|clips|articles|captions|staging|thumbnails)/|^/")

_VALIDATORS = {name: Draft202012Validator(schema, format_checker=FormatChecker())
               for name, schema in json_schemas().items()}


def internal_fields(value: Any, where: str = "") -> list[str]:
    """Every field (at any depth) named like an internal one or holding a storage key or a path."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if INTERNAL_NAME.search(str(k)):
                found.append(f"{where}.{k}")
            found += internal_fields(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += internal_fields(v, f"{where}[{i}]")
    elif isinstance(value, str) and INTERNAL_VALUE.search(value):
        found.append(f"{where} = {value!r}")
    return found


def check_body(body: dict[str, Any]) -> dict[str, Any]:
    """Raises unless ``body`` is a documented webhook body with nothing internal; returns its data."""
    validator = _VALIDATORS.get(body.get("type"))
    assert validator is not None, f"no schema for webhook event {body.get('type')!r}"
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    leaked = internal_fields(body)
    assert not leaked, f"internal fields in a {body['type']} payload: {leaked}"
    return body["data"]
