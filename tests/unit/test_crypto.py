"""Secrets: AES-GCM secret box, API key generation, digests and HMAC."""

from __future__ import annotations

import base64
import re

import pytest
from cryptography.exceptions import InvalidTag

from infra.crypto import (
    KEY_PREFIX_SHOWN,
    LIVE_PREFIX,
    TEST_PREFIX,
    SecretBox,
    environment_of_key,
    hmac_sha256_hex,
    key_digest,
    key_display_prefix,
    new_api_key,
)

KEY_HEX = "0f" * 32
WEBHOOK = "webhook:5b0e"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def box() -> SecretBox:
    return SecretBox(KEY_HEX)


def sealed_bytes(token: str) -> bytes:
    return base64.urlsafe_b64decode(token.partition(".")[2])


def reseal(raw: bytes) -> str:
    return "v1." + base64.urlsafe_b64encode(raw).decode()


# ---- SecretBox


def test_secret_box_round_trip(box: SecretBox) -> None:
    token = box.encrypt(SECRET, WEBHOOK)

    assert token.startswith("v1.")
    assert SECRET not in token
    assert box.decrypt(token, WEBHOOK) == SECRET


def test_secret_box_round_trips_unicode(box: SecretBox) -> None:
    assert box.decrypt(box.encrypt("clé-secrète-✓", WEBHOOK), WEBHOOK) == "clé-secrète-✓"


def test_another_box_with_the_same_key_decrypts(box: SecretBox) -> None:
    """The key comes from settings: a restarted process must read what an earlier one sealed."""
    assert SecretBox(KEY_HEX).decrypt(box.encrypt(SECRET, WEBHOOK), WEBHOOK) == SECRET


def test_nonce_differs_each_time(box: SecretBox) -> None:
    first, second = box.encrypt(SECRET, WEBHOOK), box.encrypt(SECRET, WEBHOOK)

    assert first != second
    assert sealed_bytes(first)[:12] != sealed_bytes(second)[:12]
    assert box.decrypt(first, WEBHOOK) == box.decrypt(second, WEBHOOK) == SECRET


@pytest.mark.parametrize("index", [0, 12, -1])  # in the nonce, the ciphertext, the tag
def test_tampered_token_fails(box: SecretBox, index: int) -> None:
    raw = bytearray(sealed_bytes(box.encrypt(SECRET, WEBHOOK)))
    raw[index] ^= 0x01

    with pytest.raises(InvalidTag):
        box.decrypt(reseal(bytes(raw)), WEBHOOK)


def test_truncated_token_fails(box: SecretBox) -> None:
    raw = sealed_bytes(box.encrypt(SECRET, WEBHOOK))

    with pytest.raises(InvalidTag):
        box.decrypt(reseal(raw[:-1]), WEBHOOK)


def test_ciphertext_moved_to_another_record_fails(box: SecretBox) -> None:
    token = box.encrypt(SECRET, WEBHOOK)

    with pytest.raises(InvalidTag):
        box.decrypt(token, "webhook:other")


def test_another_key_cannot_decrypt(box: SecretBox) -> None:
    token = box.encrypt(SECRET, WEBHOOK)

    with pytest.raises(InvalidTag):
        SecretBox("f0" * 32).decrypt(token, WEBHOOK)


def test_unknown_token_version_is_refused(box: SecretBox) -> None:
    token = box.encrypt(SECRET, WEBHOOK)

    with pytest.raises(ValueError, match="unknown secret format"):
        box.decrypt("v2." + token.partition(".")[2], WEBHOOK)


@pytest.mark.parametrize("key_hex", ["00" * 16, "00" * 33, ""])
def test_secret_key_must_be_32_bytes(key_hex: str) -> None:
    with pytest.raises(ValueError):
        SecretBox(key_hex)


def test_generated_keys_are_fresh_and_usable() -> None:
    first, second = SecretBox.generate_key_hex(), SecretBox.generate_key_hex()

    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert first != second
    assert SecretBox(first).decrypt(SecretBox(first).encrypt(SECRET, WEBHOOK), WEBHOOK) == SECRET


# ---- API keys


@pytest.mark.parametrize(("environment", "prefix"), [("production", "service_live_"), ("sandbox", "service_test_")])
def test_new_api_key_has_the_environment_prefix_and_256_random_bits(environment: str, prefix: str) -> None:
    key = new_api_key(environment)

    assert key.startswith(prefix)
    random_part = key[len(prefix):]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", random_part)
    assert len(base64.urlsafe_b64decode(random_part + "=")) == 32


def test_new_api_keys_differ() -> None:
    keys = {new_api_key("production") for _ in range(50)}

    assert len(keys) == 50


def test_environment_of_key() -> None:
    assert environment_of_key(new_api_key("production")) == "production"
    assert environment_of_key(new_api_key("sandbox")) == "sandbox"
    assert environment_of_key(LIVE_PREFIX + "x") == "production"
    assert environment_of_key(TEST_PREFIX + "x") == "sandbox"
    assert environment_of_key("sk_live_abc") is None
    assert environment_of_key("") is None


def test_key_digest_is_sha256_hex() -> None:
    # FIPS 180-2 test vector for "abc".
    assert key_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_key_digest_differs_per_key_and_hides_it() -> None:
    key = new_api_key("production")

    digest = key_digest(key)

    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert digest != key_digest(new_api_key("production"))
    assert key[len(LIVE_PREFIX):] not in digest


def test_display_prefix_shows_the_environment_and_a_few_random_characters() -> None:
    key = new_api_key("production")

    shown = key_display_prefix(key)

    assert len(shown) == KEY_PREFIX_SHOWN
    assert shown.startswith(LIVE_PREFIX) and key.startswith(shown)
    assert len(key) - len(shown) >= 32  # most of the key's randomness is never shown


def test_hmac_sha256_hex_matches_rfc_4231() -> None:
    # RFC 4231, test case 2.
    assert hmac_sha256_hex(b"Jefe", b"what do ya want for nothing?") == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
