"""Signed download URLs of stored files: ``<public base URL>/v1/files/<token>``.

A token is a capability: whoever holds the URL may read that one file until the token expires,
without an API key (a browser, a video player or a crawler fetches it). So the token carries
everything the download needs and nothing from the client is trusted:

- the payload is ``{"v": 1, "w": workspace id, "k": storage key, "x": expiry (Unix seconds)}``
  in compact JSON, URL-safe base64 without padding;
- the signature is HMAC-SHA256 over the payload's base64 text, with a key derived (HKDF-SHA256,
  its own salt and label) from the service key ``VAEO_SECRET_KEY``: it says nothing about the
  service key nor about the other keys derived from it (job-notification secrets), and rotating
  the service key invalidates every URL;
- the token is ``<payload>.<signature>``, both base64url.

``verify`` checks, in order, the shape, the signature (constant-time), the payload, the expiry,
that the key is a well-formed storage key and that it lies in the workspace's own folder
(``<kind>/<workspace id>/...``). Any failure is the one ``InvalidFileToken``: the download route
answers every one of them, and a file deleted since, with the same 404.

The storage key is readable by whoever holds the token (it is signed, not encrypted): keys are
service-made names (``videos/<workspace>/<id>/source.mp4``), never a client's file name.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from infra.settings import Settings
from infra.storage import StorageError, check_key, workspace_of_key

FILES_PATH = "/v1/files/"
TOKEN_VERSION = 1
MAX_TOKEN_LENGTH = 2048
_SALT = b"vaeo signed file urls"
_INFO = b"files/v1"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,2000}\.[A-Za-z0-9_-]{43}")


class InvalidFileToken(Exception):
    """A token that is malformed, tampered with, expired or names no file of its workspace."""


@dataclass(frozen=True)
class FileGrant:
    """What a valid token grants: one file of one workspace, until ``expires_at``."""

    workspace_id: UUID
    storage_key: str
    expires_at: datetime


@functools.lru_cache(maxsize=8)
def signing_key(service_key_hex: str) -> bytes:
    """The HMAC key of file tokens, derived from the service key (32 bytes as 64 hex characters)."""
    raw = bytes.fromhex(service_key_hex)
    if len(raw) != 32:
        raise ValueError("the secret key must be 32 bytes (64 hex characters)")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(raw)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(key: bytes, payload_b64: str) -> str:
    return _b64(hmac.digest(key, payload_b64.encode(), hashlib.sha256))


def encode_token(key: bytes, workspace_id: UUID | str, storage_key: str, expires_at_s: int) -> str:
    """The token of these values, signed with ``key``, as is: no check of the values
    (``signed_url`` checks them; tests forge tokens a client could never obtain with this)."""
    payload = _b64(orjson.dumps({"v": TOKEN_VERSION, "w": str(workspace_id), "k": storage_key, "x": expires_at_s}))
    return f"{payload}.{_signature(key, payload)}"


def _check_grantable(workspace_id: UUID | str, storage_key: str) -> None:
    check_key(storage_key)
    if workspace_of_key(storage_key) != str(workspace_id):
        raise StorageError("the storage key is not in the workspace's folder")


def issue_token(settings: Settings, workspace_id: UUID | str, storage_key: str,
                expires_in: float | None = None) -> str:
    """A token granting ``storage_key`` of ``workspace_id`` for ``expires_in`` seconds (default
    ``VAEO_FILE_URL_TTL_S``). ``StorageError`` when the key is malformed or outside the workspace's folder."""
    _check_grantable(workspace_id, storage_key)
    ttl = settings.file_url_ttl_s if expires_in is None else expires_in
    expires_at = int(settings.now().timestamp() + ttl)
    return encode_token(signing_key(settings.secret_key), workspace_id, storage_key, expires_at)


def public_base_url(settings: Settings) -> str:
    """Where clients reach the API: ``VAEO_PUBLIC_BASE_URL``, else the API's own address."""
    if settings.public_base_url:
        return settings.public_base_url.rstrip("/")
    host = settings.api_host
    if host in ("0.0.0.0", "::", ""):  # a wildcard bind is no address a client can use
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.api_port}"


def signed_url(settings: Settings, workspace_id: UUID | str, storage_key: str,
               expires_in: float | None = None) -> str:
    """The absolute URL that downloads ``storage_key`` of ``workspace_id`` without an API key,
    valid ``expires_in`` seconds (default ``VAEO_FILE_URL_TTL_S``, 24 h)."""
    return public_base_url(settings) + FILES_PATH + issue_token(settings, workspace_id, storage_key, expires_in)


def verify(settings: Settings, token: str) -> FileGrant:
    """The grant of a valid, unexpired token; ``InvalidFileToken`` otherwise (one error for every
    reason, so that the route cannot tell a client which)."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or not _TOKEN.fullmatch(token):
        raise InvalidFileToken("malformed")
    payload_b64, _, given = token.partition(".")
    if not hmac.compare_digest(_signature(signing_key(settings.secret_key), payload_b64), given):
        raise InvalidFileToken("bad signature")
    try:
        payload = orjson.loads(_unb64(payload_b64))
        if payload.get("v") != TOKEN_VERSION:
            raise InvalidFileToken("unknown version")
        workspace_id, storage_key, expires = UUID(payload["w"]), payload["k"], payload["x"]
        if not isinstance(storage_key, str) or type(expires) is not int:
            raise InvalidFileToken("malformed payload")
        _check_grantable(workspace_id, storage_key)
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error, StorageError) as exc:
        raise InvalidFileToken("malformed payload") from exc
    if settings.now().timestamp() >= expires:
        raise InvalidFileToken("expired")
    return FileGrant(workspace_id, storage_key, datetime.fromtimestamp(expires, UTC))
