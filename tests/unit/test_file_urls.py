"""Signed file URLs (sign, verify, tamper, expiry, workspace binding), the Range parser, content
types and the storage's key checks: the pure parts of ``GET /v1/files/{token}``."""

from __future__ import annotations

import base64
import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from infra.file_urls import (
    FILES_PATH,
    InvalidFileToken,
    PublicLink,
    encode_token,
    issue_token,
    public_base_url,
    public_link,
    signed_url,
    signing_key,
    verify,
    verify_public_link,
)
from infra.settings import Settings
from infra.storage import STAGING, LocalStorage, Storage, StorageError, check_key, storage_for
from services.api.files import ByteRange, Unsatisfiable, content_type_of, parse_range

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WS = uuid.UUID("6f2b6c1e-1111-4222-8333-944445555666")
OTHER_WS = uuid.UUID("0a0b0c0d-1111-4222-8333-944445555666")
KEY = f"videos/{WS}/7/source.mp4"


def settings_at(when: datetime = NOW, **kw) -> Settings:
    return Settings(secret_key="11" * 32, clock_fixed=when.isoformat(), **kw)


def flip(text: str, index: int) -> str:
    """``text`` with one base64url character changed."""
    c = text[index]
    return text[:index] + ("A" if c != "A" else "B") + text[index + 1:]


# ------------------------------------------------------------------------------ tokens


def test_a_token_grants_its_file_of_its_workspace_until_it_expires():
    settings = settings_at()
    grant = verify(settings, issue_token(settings, WS, KEY))
    assert (grant.workspace_id, grant.storage_key) == (WS, KEY)
    assert grant.expires_at == NOW + timedelta(seconds=settings.file_url_ttl_s) == NOW + timedelta(hours=24)


def test_expiry_default_24h_configurable_and_per_call():
    token = issue_token(settings_at(), WS, KEY)
    assert verify(settings_at(NOW + timedelta(hours=23, minutes=59)), token)
    with pytest.raises(InvalidFileToken):
        verify(settings_at(NOW + timedelta(hours=24)), token)
    short = issue_token(settings_at(file_url_ttl_s=60), WS, KEY)
    assert verify(settings_at(NOW + timedelta(seconds=59)), short)
    with pytest.raises(InvalidFileToken):
        verify(settings_at(NOW + timedelta(seconds=60)), short)
    explicit = issue_token(settings_at(), WS, KEY, expires_in=5)
    with pytest.raises(InvalidFileToken):
        verify(settings_at(NOW + timedelta(seconds=5)), explicit)


def test_every_tampered_character_is_refused():
    settings = settings_at()
    token = issue_token(settings, WS, KEY)
    for index in range(len(token)):
        tampered = flip(token, index)
        if tampered == token:
            continue
        with pytest.raises(InvalidFileToken):
            verify(settings, tampered)


def test_a_token_shows_neither_the_workspace_nor_the_storage_key():
    """The token is opaque: base64url of random-looking bytes, in which no part of the workspace id
    nor of the storage key can be read, whatever alphabet or offset one decodes it with."""
    settings = settings_at()
    for token in (issue_token(settings, WS, KEY), public_link(settings, WS, KEY, 7, 0).rsplit("/", 1)[1]):
        assert re.fullmatch(r"[A-Za-z0-9_-]+", token)
        readable = [base64.urlsafe_b64decode(token[i:][:len(token[i:]) // 4 * 4]) for i in range(4)]
        for needle in (str(WS).encode(), WS.hex.encode(), WS.bytes, b"videos/", b"source.mp4", b"7/source"):
            assert not any(needle in raw for raw in readable), needle
        for part in (str(WS), "videos", "source", "mp4"):
            assert part not in token
        assert len({raw[:12] for raw in readable}) == 4  # no plain header either


def test_a_grant_sealed_with_another_key_is_refused():
    """Another workspace's key (or a later expiry) sealed without the service key: refused."""
    settings = settings_at()
    wrong = signing_key("33" * 32)
    for forged in (encode_token(wrong, OTHER_WS, f"videos/{OTHER_WS}/9/source.mp4", int(NOW.timestamp()) + 60),
                   encode_token(wrong, WS, KEY, int(NOW.timestamp()) + 86400 * 365)):
        with pytest.raises(InvalidFileToken):
            verify(settings, forged)


def test_the_same_grant_is_the_same_token_and_the_purposes_do_not_mix():
    settings = settings_at()
    assert issue_token(settings, WS, KEY) == issue_token(settings, WS, KEY)
    assert issue_token(settings, WS, KEY) != issue_token(settings, WS, KEY, expires_in=5)
    link = public_link(settings, WS, KEY, 7, 3).rsplit("/", 1)[1]
    assert verify_public_link(settings, link) == PublicLink(WS, KEY, 7, 3)
    with pytest.raises(InvalidFileToken):
        verify(settings, link)  # a public link is no signed URL
    with pytest.raises(InvalidFileToken):
        verify_public_link(settings, issue_token(settings, WS, KEY))
    later = settings_at(NOW + timedelta(days=3650))
    assert verify_public_link(later, link).storage_key == KEY  # no expiry: revocation is the route's check


def test_a_token_signed_under_another_service_key_is_refused():
    token = issue_token(Settings(secret_key="22" * 32, clock_fixed=NOW.isoformat()), WS, KEY)
    with pytest.raises(InvalidFileToken):
        verify(settings_at(), token)


def test_the_signing_key_is_derived_not_the_service_key():
    assert signing_key("11" * 32) != bytes.fromhex("11" * 32)
    assert signing_key("11" * 32) != signing_key("22" * 32)
    with pytest.raises(ValueError):
        signing_key("11" * 8)


@pytest.mark.parametrize("token", ["", ".", "abc", "abc.def", "a" * 5000, "abc." + "A" * 43 + "/x",
                                   "../../etc/passwd", "%2e%2e%2fetc", "abc\x00." + "A" * 43, "A" * 60,
                                   "A" * 45])
def test_malformed_tokens_are_refused(token):
    with pytest.raises(InvalidFileToken):
        verify(settings_at(), token)


@pytest.mark.parametrize("storage_key", [
    "../../etc/passwd", f"videos/{WS}/../../../etc/passwd", "/etc/passwd", f"videos/{WS}//x",
    f"{STAGING}/{WS}/upload.part", f"videos/{OTHER_WS}/1/source.mp4", f"videos/{WS}", "a\\b/c/d",
])
def test_a_signed_token_for_a_bad_key_is_still_refused(storage_key):
    """Even signed with the real key (which ``signed_url`` never does for these), a key that leaves
    the root, names the staging folder or lies outside the workspace's folder grants nothing."""
    settings = settings_at()
    token = encode_token(signing_key(settings.secret_key), WS, storage_key, int(NOW.timestamp()) + 60)
    with pytest.raises(InvalidFileToken):
        verify(settings, token)
    with pytest.raises(StorageError):
        signed_url(settings, WS, storage_key)


def test_signed_url_is_absolute_on_the_public_base_url():
    default = settings_at(api_host="127.0.0.1", api_port=8123)
    assert public_base_url(default) == "http://127.0.0.1:8123"
    assert signed_url(default, WS, KEY).startswith("http://127.0.0.1:8123" + FILES_PATH)
    assert public_base_url(settings_at(api_host="0.0.0.0", api_port=80)) == "http://127.0.0.1:80"
    configured = settings_at(public_base_url="https://media.example.com/")
    url = signed_url(configured, WS, KEY)
    assert url.startswith("https://media.example.com/v1/files/")
    assert verify(configured, url.rsplit("/", 1)[1]).storage_key == KEY


# ------------------------------------------------------------------------------ ranges


@pytest.mark.parametrize(("header", "expected"), [
    ("bytes=0-99", ByteRange(0, 99)),
    ("bytes=100-199", ByteRange(100, 199)),
    ("bytes=900-", ByteRange(900, 999)),
    ("bytes=-100", ByteRange(900, 999)),
    ("bytes=-5000", ByteRange(0, 999)),
    ("bytes=990-5000", ByteRange(990, 999)),
    ("bytes=999-999", ByteRange(999, 999)),
    (None, None),
    ("bytes=5-1", None),  # invalid: ignored, the whole file
    ("bytes=0-1,5-6", None),  # several ranges: ignored
    ("items=0-1", None),
    ("bytes=-", None),
    ("bytes=a-b", None),
])
def test_parse_range(header, expected):
    assert parse_range(header, 1000) == expected


@pytest.mark.parametrize(("header", "size"), [("bytes=1000-", 1000), ("bytes=1000-2000", 1000), ("bytes=-0", 1000),
                                              ("bytes=0-", 0), ("bytes=-1", 0)])
def test_unsatisfiable_ranges(header, size):
    with pytest.raises(Unsatisfiable):
        parse_range(header, size)


def test_content_types_by_kind():
    assert content_type_of(KEY) == "video/mp4"
    assert content_type_of("x/y/a.WEBM") == "video/webm"
    assert content_type_of("x/y/a.mp3") == "audio/mpeg"
    assert content_type_of("x/y/a.jpg") == "image/jpeg"
    assert content_type_of("x/y/a.png") == "image/png"
    assert content_type_of("x/y/a.json") == "application/json"
    assert content_type_of("x/y/a.html").startswith("text/html")
    assert content_type_of("x/y/a.md").startswith("text/markdown")
    assert content_type_of("x/y/a.txt").startswith("text/plain")
    assert content_type_of("x/y/noext") == "application/octet-stream"


# ------------------------------------------------------------------------------ storage


def test_storage_refuses_keys_that_leave_its_root(tmp_path):
    root = tmp_path / "root"
    storage = LocalStorage(root)
    storage.write_bytes("a/b/c.txt", b"hello")
    (root / "a" / "b" / "link").symlink_to(tmp_path)  # a link out of the root
    (tmp_path / "secret.txt").write_bytes(b"secret")
    for key in ("../secret.txt", "a/../../secret.txt", "/etc/passwd", "a/b/link/secret.txt", f"{STAGING}/x", "",
                "a//c.txt", "a\\b"):
        with pytest.raises(StorageError):
            storage.open(key)
        with pytest.raises(StorageError):
            check_key(key) if "link" not in key else storage.path(key)
    opened = storage.open("a/b/c.txt")
    try:
        assert opened.info.size == 5 and opened.reader.read() == b"hello"
    finally:
        opened.close()
    assert storage.read_range("a/b/c.txt", 1, 3) == b"ell"
    assert storage.size("a/b/c.txt") == 5
    first = storage.stat("a/b/c.txt").etag
    storage.write_bytes("a/b/c.txt", b"hello, again")
    assert storage.stat("a/b/c.txt").etag != first
    with pytest.raises(FileNotFoundError):
        storage.open("a/b/missing.txt")
    with pytest.raises(FileNotFoundError):
        storage.stat("a/b")  # a folder is no file


def test_the_local_directory_is_the_default_storage(tmp_path):
    storage = storage_for(Settings(storage_dir=str(tmp_path)))
    assert isinstance(storage, LocalStorage) and isinstance(storage, Storage)
    assert storage.root == tmp_path
