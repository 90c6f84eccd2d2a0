"""A decision signing key held without the ``cryptography`` package, where libsodium signs.

The deciding roles (slack, agent) sign with libsodium already (``sodium.py``); what still loaded ``cryptography``
was reading the key file: its Rust extension and statically linked OpenSSL stay in the process, +8 MiB of RSS
(bench/bench_rss.py), for one PEM parse at start. An unencrypted PKCS#8 Ed25519 key (what ``fisk-chatops keygen``,
``cryptography`` and ``openssl genpkey -algorithm ed25519`` write) is a fixed 16-byte DER header and the 32-byte
RFC 8032 seed (RFC 8410), so it is read here, and libsodium derives the public key from the seed.

libsodium is used only after it passed two checks: it signs RFC 8032's known answer byte for byte, and a
signature with this key verifies under the key it derived (with the process's verifier, which passed its own
known answer: ``verify_key.py``). Anything else (another key format, an encrypted key, no libsodium, a failed
check) goes to ``cryptography`` as before, with the same error messages.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable
from typing import Protocol

from bot.approvals import sodium
from bot.approvals.verify_key import InvalidSignature, PublicKey, RawPublicKey

#: RFC 8410 OneAsymmetricKey v1 for id-Ed25519: SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 },
#: OCTET STRING { OCTET STRING (32 bytes) } }; the seed follows
PKCS8_HEADER = bytes.fromhex("302e020100300506032b657004220420")
PEM_BEGIN, PEM_END = b"-----BEGIN PRIVATE KEY-----", b"-----END PRIVATE KEY-----"
# RFC 8032 section 7.1, test 2: the seed, and what signing the message with it must give
_KAT_SEED = bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
_KAT_MESSAGE = bytes.fromhex("72")
_KAT_SIGNATURE = bytes.fromhex(
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
)


class SigningKey(Protocol):
    """What a decision signer needs of its private key: ``cryptography``'s Ed25519PrivateKey, or ``SeedKey``."""

    def private_bytes_raw(self) -> bytes: ...

    def sign(self, data: bytes) -> bytes: ...

    def public_key(self) -> RawPublicKey: ...


class SeedKey:
    """An Ed25519 private key signed with by libsodium; built only by ``seed_key``, after its checks."""

    __slots__ = ("_public", "_seed", "_sign")

    def __init__(self, seed: bytes, public: PublicKey, sign: Callable[[bytes], bytes]) -> None:
        self._seed, self._public, self._sign = seed, public, sign

    def private_bytes_raw(self) -> bytes:
        return self._seed

    def sign(self, data: bytes) -> bytes:
        return self._sign(data)

    def public_key(self) -> PublicKey:
        return self._public

    def __repr__(self) -> str:  # never the seed
        return f"SeedKey(public={self._public.public_bytes_raw().hex()[:16]}...)"


def passes_known_answer(keypair: Callable[[bytes], tuple[bytes, Callable[[bytes], bytes]] | None]) -> bool:
    """True if ``keypair`` (``sodium.keypair``) makes RFC 8032's test 2 key and signature exactly."""
    made = keypair(_KAT_SEED)
    return made is not None and made[1](_KAT_MESSAGE) == _KAT_SIGNATURE


def seed_key(seed: bytes) -> SeedKey | None:
    """A libsodium key for ``seed``, or None without libsodium or when a check fails (the caller then loads the
    key with ``cryptography``)."""
    if sodium.library() is None or not passes_known_answer(sodium.keypair):
        return None
    made = sodium.keypair(seed)
    if made is None:
        return None
    raw, sign = made
    public = PublicKey(raw)
    probe = b"fisk-chatops signing key self-test"
    try:
        public.verify(sign(probe), probe)
    except InvalidSignature:
        return None
    return SeedKey(seed, public, sign)


def generate_seed_key() -> SeedKey | None:
    """A new key from 32 bytes of the kernel's randomness (what ``cryptography`` makes a key from), or None
    without libsodium."""
    return seed_key(os.urandom(sodium.KEY_BYTES))


def pkcs8_seed(data: bytes) -> bytes | None:
    """The seed of a file that is exactly one unencrypted PKCS#8 Ed25519 PEM block (whitespace around and inside
    allowed), else None: anything else is ``cryptography``'s to read or refuse with its own message."""
    text = data.strip()
    if not (text.startswith(PEM_BEGIN) and text.endswith(PEM_END)):
        return None
    body = b"".join(text[len(PEM_BEGIN):-len(PEM_END)].split())
    if b"-" in body:  # a second block, or headers: not the plain form
        return None
    try:
        der = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(der) != body:  # Python's decoder also takes '=' past the end, which cryptography refuses
        return None
    if len(der) != len(PKCS8_HEADER) + sodium.KEY_BYTES or not der.startswith(PKCS8_HEADER):
        return None
    return der[len(PKCS8_HEADER):]


def seed_pem(seed: bytes) -> bytes:
    """The PKCS#8 PEM of ``seed``: the bytes ``cryptography`` writes for the same key (one 64-character line)."""
    return PEM_BEGIN + b"\n" + base64.b64encode(PKCS8_HEADER + seed) + b"\n" + PEM_END + b"\n"
