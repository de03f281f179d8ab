"""Secrets: API key generation and digests, AES-GCM for secrets that must be recoverable.

API keys are never stored: only their SHA-256 digest (a lookup index) and a short display
prefix. Webhook secrets must be recoverable to sign deliveries, so they are encrypted with
AES-256-GCM under the service key (``VAEO_SECRET_KEY``), with a fresh 96-bit nonce each time
and the owning record's id as associated data (a ciphertext moved to another record fails).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

LIVE_PREFIX = "service_live_"
TEST_PREFIX = "service_test_"
KEY_PREFIX_SHOWN = 20  # characters of the key shown as keyPrefix (the fixed prefix plus 7-8 random)


def new_api_key(environment: str) -> str:
    """A new key: the environment prefix and 32 random bytes (256 bits) in URL-safe base64."""
    prefix = LIVE_PREFIX if environment == "production" else TEST_PREFIX
    return prefix + secrets.token_urlsafe(32)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_display_prefix(key: str) -> str:
    return key[:KEY_PREFIX_SHOWN]


def environment_of_key(key: str) -> str | None:
    if key.startswith(LIVE_PREFIX):
        return "production"
    if key.startswith(TEST_PREFIX):
        return "sandbox"
    return None


class SecretBox:
    """AES-256-GCM with a random nonce; output is ``v1.<base64(nonce || ciphertext+tag)>``."""

    def __init__(self, key_hex: str) -> None:
        key = bytes.fromhex(key_hex)
        if len(key) != 32:
            raise ValueError("the secret key must be 32 bytes (64 hex characters)")
        self._aead = AESGCM(key)

    @staticmethod
    def generate_key_hex() -> str:
        return secrets.token_hex(32)

    def encrypt(self, plaintext: str, associated: str) -> str:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, plaintext.encode(), associated.encode())
        return "v1." + base64.urlsafe_b64encode(nonce + sealed).decode()

    def decrypt(self, token: str, associated: str) -> str:
        version, _, body = token.partition(".")
        if version != "v1":
            raise ValueError("unknown secret format")
        raw = base64.urlsafe_b64decode(body)
        return self._aead.decrypt(raw[:12], raw[12:], associated.encode()).decode()


def hmac_sha256_hex(secret: bytes, body: bytes) -> str:
    return hmac.new(secret, body, hashlib.sha256).hexdigest()
