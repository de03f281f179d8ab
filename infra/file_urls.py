"""File URLs: signed download URLs ``<public base URL>/v1/files/<token>`` that expire, and public
links ``<public base URL>/v1/public/<link>`` that do not (a workspace revokes them).

A token is a capability: whoever holds the URL may read that one file, without an API key (a
browser, a video player or a crawler fetches it). So the token carries everything the download
needs and nothing from the client is trusted, and it shows nothing of what it carries:

- the grant ``{"v": 2, "w": workspace id, "k": storage key, "x": expiry (Unix seconds)}`` (a
  signed URL) or ``{"v": 2, "w": ..., "k": ..., "p": video id, "g": link generation}`` (a public
  link) in compact JSON is encrypted with AES-256-GCM, the purpose (``file`` or ``public``) as
  associated data, so a token of one kind is nothing on the other's route;
- the cipher key and the nonce key are derived (HKDF-SHA256, their own salt and label) from the
  service key ``VAEO_SECRET_KEY``: they say nothing about it nor about the other keys derived from
  it, and rotating the service key invalidates every URL and link;
- the nonce is synthetic: the first 12 bytes of HMAC-SHA256(nonce key, purpose and grant), so the
  same grant gives the same token (an export made twice within its hour is the same bytes) and two
  grants never share a nonce;
- the token is ``base64url(nonce || ciphertext || tag)``: random-looking bytes, no workspace id
  nor storage key to read, and any change of a character fails the tag.

``verify`` (and ``verify_public_link``) checks, in order, the shape, the tag (the decryption), the
grant, the expiry (a signed URL), that the key is a well-formed storage key and that it lies in the
workspace's own folder (``<kind>/<workspace id>/...``). Any failure is the one
``InvalidFileToken``: the download routes answer every one of them, and a file deleted since, with
the same 404. A public link is also checked against its video's current link generation by the
public route: revoking a video's links bumps the generation, and every earlier link is a 404.
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
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from infra.settings import Settings
from infra.storage import StorageError, check_key, workspace_of_key

FILES_PATH = "/v1/files/"
PUBLIC_PATH = "/v1/public/"
TOKEN_VERSION = 2
MAX_TOKEN_LENGTH = 2048
_SALT = b"vaeo signed file urls"
_INFO = b"files/v2"
_NONCE = 12
_TAG = 16
_TOKEN = re.compile(r"[A-Za-z0-9_-]{40,2000}")
_FILE, _PUBLIC = b"file", b"public"  # the purposes: associated data of the cipher


class InvalidFileToken(Exception):
    """A token that is malformed, tampered with, expired or names no file of its workspace."""


@dataclass(frozen=True)
class FileGrant:
    """What a valid token grants: one file of one workspace, until ``expires_at``."""

    workspace_id: UUID
    storage_key: str
    expires_at: datetime


@dataclass(frozen=True)
class PublicLink:
    """What a valid public link grants: one file of one workspace, while its video's link
    generation is still ``generation`` (no expiry)."""

    workspace_id: UUID
    storage_key: str
    video_id: int
    generation: int


@functools.lru_cache(maxsize=8)
def signing_key(service_key_hex: str) -> bytes:
    """The key material of file tokens, derived from the service key (32 bytes as 64 hex
    characters): 32 bytes of AES-256-GCM key, then 32 bytes of nonce key."""
    raw = bytes.fromhex(service_key_hex)
    if len(raw) != 32:
        raise ValueError("the secret key must be 32 bytes (64 hex characters)")
    return HKDF(algorithm=hashes.SHA256(), length=64, salt=_SALT, info=_INFO).derive(raw)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _seal(key: bytes, purpose: bytes, grant: dict) -> str:
    plain = orjson.dumps(grant)
    nonce = hmac.digest(key[32:], purpose + b"\x00" + plain, hashlib.sha256)[:_NONCE]
    return _b64(nonce + AESGCM(key[:32]).encrypt(nonce, plain, purpose))


def _open(settings: Settings, purpose: bytes, token: str) -> dict:
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or not _TOKEN.fullmatch(token):
        raise InvalidFileToken("malformed")
    key = signing_key(settings.secret_key)
    try:
        raw = _unb64(token)
        if len(raw) <= _NONCE + _TAG:
            raise InvalidFileToken("malformed")
        grant = orjson.loads(AESGCM(key[:32]).decrypt(raw[:_NONCE], raw[_NONCE:], purpose))
    except (InvalidTag, ValueError, binascii.Error) as exc:
        raise InvalidFileToken("not a token of this service") from exc
    if not isinstance(grant, dict) or grant.get("v") != TOKEN_VERSION:
        raise InvalidFileToken("unknown version")
    return grant


def encode_token(key: bytes, workspace_id: UUID | str, storage_key: str, expires_at_s: int) -> str:
    """The token of these values, sealed with ``key`` (``signing_key``), as is: no check of the
    values (``signed_url`` checks them; tests forge tokens a client could never obtain with this)."""
    return _seal(key, _FILE, {"v": TOKEN_VERSION, "w": str(workspace_id), "k": storage_key, "x": expires_at_s})


def encode_public_link(key: bytes, workspace_id: UUID | str, storage_key: str, video_id: int, generation: int) -> str:
    """A public link's token of these values, as is (``public_link`` checks them)."""
    return _seal(key, _PUBLIC, {"v": TOKEN_VERSION, "w": str(workspace_id), "k": storage_key, "p": video_id,
                                "g": generation})


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


def public_link(settings: Settings, workspace_id: UUID | str, storage_key: str, video_id: int,
                generation: int) -> str:
    """The absolute, non-expiring URL of ``storage_key`` (a file of the video ``video_id``) while
    the video's link generation is ``generation``. ``StorageError`` as ``issue_token``."""
    _check_grantable(workspace_id, storage_key)
    token = encode_public_link(signing_key(settings.secret_key), workspace_id, storage_key, video_id, generation)
    return public_base_url(settings) + PUBLIC_PATH + token


def _grant_of(grant: dict) -> tuple[UUID, str]:
    try:
        workspace_id, storage_key = UUID(grant["w"]), grant["k"]
        if not isinstance(storage_key, str):
            raise InvalidFileToken("malformed grant")
        _check_grantable(workspace_id, storage_key)
    except (ValueError, TypeError, KeyError, AttributeError, StorageError) as exc:
        raise InvalidFileToken("malformed grant") from exc
    return workspace_id, storage_key


def verify(settings: Settings, token: str) -> FileGrant:
    """The grant of a valid, unexpired token; ``InvalidFileToken`` otherwise (one error for every
    reason, so that the route cannot tell a client which)."""
    grant = _open(settings, _FILE, token)
    workspace_id, storage_key = _grant_of(grant)
    expires = grant.get("x")
    if type(expires) is not int:
        raise InvalidFileToken("malformed grant")
    if settings.now().timestamp() >= expires:
        raise InvalidFileToken("expired")
    return FileGrant(workspace_id, storage_key, datetime.fromtimestamp(expires, UTC))


def verify_public_link(settings: Settings, token: str) -> PublicLink:
    """What a public link names (the caller checks the generation against the video's current one);
    ``InvalidFileToken`` for anything that is not a public link of this service."""
    grant = _open(settings, _PUBLIC, token)
    workspace_id, storage_key = _grant_of(grant)
    video_id, generation = grant.get("p"), grant.get("g")
    if type(video_id) is not int or type(generation) is not int:
        raise InvalidFileToken("malformed grant")
    return PublicLink(workspace_id, storage_key, video_id, generation)
