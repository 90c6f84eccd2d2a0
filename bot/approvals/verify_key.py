"""Ed25519 public keys that only verify: what a runner holds, without loading the ``cryptography`` package.

A runner verifies decisions and never signs. ``cryptography`` brings its own statically linked OpenSSL and
initialises it (+7.7 MiB of RSS per runner, 40 modules), while the interpreter has already mapped the system's
libcrypto for ``hashlib`` and ``ssl``. ``PublicKey.verify`` calls, in this order of preference, each only if it
passes a known-answer self-test:

1. libsodium's ``crypto_sign_ed25519_verify_detached`` where the system has libsodium (Debian's ``libsodium23``,
   installed in the image): ~40 us a verification against OpenSSL's ~90 us on the bench machine, and every call
   verifies one on the way from approve to the child's start. It is stricter than OpenSSL, never looser: it also
   refuses small-order keys and R values, which no genuine signature has;
2. OpenSSL's ``EVP_DigestVerify`` (the same routine ``cryptography`` calls for Ed25519) in the libcrypto found
   among the process's mappings;
3. ``cryptography`` (no /proc, a Python without OpenSSL, OpenSSL older than 1.1.1).

Signing (slack and agent roles) reads its key without ``cryptography`` and signs with libsodium where libsodium
passes its checks (``signing_key.py``), else holds a ``cryptography`` key (``sodium.signer`` still signs for it
where it matches that key's own signatures).

Public keys come from PEM ``SubjectPublicKeyInfo`` blocks (RFC 8410: a fixed 12-byte header, then the 32 bytes).
"""

from __future__ import annotations

import base64
import binascii
import ctypes
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from bot.approvals import sodium

# RFC 8410 SubjectPublicKeyInfo for id-Ed25519 (1.3.101.112): SEQUENCE { SEQUENCE { OID }, BIT STRING (33 bytes) }
_SPKI_HEADER = bytes.fromhex("302a300506032b6570032100")
_NID_ED25519 = 1087  # EVP_PKEY_ED25519
KEY_BYTES, SIGNATURE_BYTES = 32, 64
# RFC 8032 section 7.1, test 2: a known answer the loaded library must accept (and refuse once altered)
_KAT_KEY = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
_KAT_MESSAGE = bytes.fromhex("72")
_KAT_SIGNATURE = bytes.fromhex(
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
)


# The points of order 1, 2, 4 and 8 (and the encodings y = p, p + 1 of two of them), by their y coordinate: the
# sign bit (bit 255) is ignored when comparing. Verification is cofactorless (RFC 8032 5.1.7, as OpenSSL does it),
# so under such a key the signature (R = identity, S = 0) verifies for every message whose hash is a multiple of
# the point's order: one in 1 (identity) to one in 8 messages, a forgery at will. Both backends accept it; a key
# made by a key generator is never one of them, so one of them is a broken or planted key file.
_SMALL_ORDER_Y = frozenset(bytes.fromhex(y) for y in (
    "00" * 32,  # order 4
    "01" + "00" * 31,  # the identity, order 1
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
    "ec" + "ff" * 30 + "7f",  # y = p - 1: order 2
    "ed" + "ff" * 30 + "7f",  # y = p, i.e. 0: order 4 (not canonical)
    "ee" + "ff" * 30 + "7f",  # y = p + 1, i.e. 1: the identity (not canonical)
))


def is_small_order(raw: bytes) -> bool:
    """True for an encoding of a point of small order (see ``_SMALL_ORDER_Y``), whichever its sign bit."""
    return raw[:31] + bytes([raw[31] & 0x7F]) in _SMALL_ORDER_Y if len(raw) == KEY_BYTES else False


class InvalidSignature(Exception):
    """The signature is not the key holder's signature of these bytes."""


class KeyFormatError(ValueError):
    """Not a PEM Ed25519 public key; ``other_algorithm`` when it is a well-formed key of another algorithm."""

    def __init__(self, message: str, *, other_algorithm: bool = False) -> None:
        super().__init__(message)
        self.other_algorithm = other_algorithm


class RawPublicKey(Protocol):
    """What both this module's keys and ``cryptography``'s ``Ed25519PublicKey`` offer."""

    def public_bytes_raw(self) -> bytes: ...


class PublicKey:
    """An Ed25519 public key (its 32 raw bytes) that verifies signatures."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:
        if len(raw) != KEY_BYTES:
            raise KeyFormatError(f"an Ed25519 public key is {KEY_BYTES} bytes, not {len(raw)}")
        if is_small_order(raw):  # a signature "by" such a key can be forged without any private key
            raise KeyFormatError("a point of small order, under which anyone can forge signatures: not a key")
        self.raw = bytes(raw)

    @classmethod
    def from_pem(cls, block: bytes) -> PublicKey:
        """The key of one ``-----BEGIN PUBLIC KEY-----`` block."""
        lines = block.strip().splitlines()
        if len(lines) < 3 or lines[0].strip() != b"-----BEGIN PUBLIC KEY-----" \
                or lines[-1].strip() != b"-----END PUBLIC KEY-----":
            raise KeyFormatError("no complete PEM PUBLIC KEY block")
        try:
            der = base64.b64decode(b"".join(line.strip() for line in lines[1:-1]), validate=True)
        except (binascii.Error, ValueError):
            raise KeyFormatError("the PEM block is not valid base64") from None
        if len(der) == len(_SPKI_HEADER) + KEY_BYTES and der.startswith(_SPKI_HEADER):
            return cls(der[len(_SPKI_HEADER):])
        if der[:1] == b"\x30":  # a SubjectPublicKeyInfo, of another algorithm (RSA, EC, Ed448, ...)
            raise KeyFormatError("not an Ed25519 key", other_algorithm=True)
        raise KeyFormatError("the PEM block holds no SubjectPublicKeyInfo")

    def public_bytes_raw(self) -> bytes:
        return self.raw

    def to_pem(self) -> bytes:
        body = base64.b64encode(_SPKI_HEADER + self.raw)
        return b"-----BEGIN PUBLIC KEY-----\n" + body + b"\n-----END PUBLIC KEY-----\n"

    def verify(self, signature: bytes, data: bytes) -> None:
        """Return if ``signature`` is this key's signature of ``data``; raise ``InvalidSignature`` otherwise.

        Takes what ``cryptography`` takes (any bytes-like object; anything else is a ``TypeError``): the ctypes
        backends' ``c_char_p`` arguments take ``bytes`` only and raised ``ctypes.ArgumentError`` for the rest."""
        signature, data = _as_bytes(signature, "signature"), _as_bytes(data, "data")
        if len(signature) != SIGNATURE_BYTES or not _verifier()(self.raw, signature, data):
            raise InvalidSignature()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicKey) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"PublicKey({self.raw.hex()[:16]}...)"


def _as_bytes(value: object, what: str) -> bytes:
    if type(value) is bytes:
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"the {what} to verify must be bytes-like, not {type(value).__name__}")


def as_public_key(key: RawPublicKey) -> PublicKey:
    """This module's key for ``key`` (one of ours, or a ``cryptography`` Ed25519PublicKey)."""
    return key if isinstance(key, PublicKey) else PublicKey(key.public_bytes_raw())


Verify = Callable[[bytes, bytes, bytes], bool]


@functools.cache
def _verifier() -> Verify:
    """The process's Ed25519 verification: the mapped libcrypto when it passes the known answer, else
    ``cryptography``."""
    for make in (_libsodium_verifier, _libcrypto_verifier):
        verify = make()
        if verify is not None and _passes_known_answer(verify):
            return verify
    return _cryptography_verify


def backend() -> str:
    """Which library verifies in this process: ``libsodium``, ``libcrypto`` or ``cryptography``."""
    return getattr(_verifier(), "backend", "cryptography")


def _passes_known_answer(verify: Verify) -> bool:
    altered = _KAT_SIGNATURE[:-1] + bytes([_KAT_SIGNATURE[-1] ^ 1])
    return verify(_KAT_KEY, _KAT_SIGNATURE, _KAT_MESSAGE) and not verify(_KAT_KEY, altered, _KAT_MESSAGE) \
        and not verify(_KAT_KEY, _KAT_SIGNATURE, _KAT_MESSAGE + b"\x00")


def _cryptography_verify(raw: bytes, signature: bytes, data: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature as Refused
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, data)
    except Refused:
        return False
    return True


def mapped_libcrypto() -> str | None:
    """The path of the libcrypto this process has mapped (``hashlib``'s and ``ssl``'s OpenSSL), if any."""
    import _hashlib  # noqa: F401  (maps libcrypto where the interpreter links OpenSSL dynamically)

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if "/libcrypto.so" in path:
            return path.strip()
    return None


def _libcrypto_verifier() -> Verify | None:
    try:
        path = mapped_libcrypto()
        if path is None:
            return None
        lib = ctypes.CDLL(path)  # already mapped: dlopen returns the loaded library
        new_key = lib.EVP_PKEY_new_raw_public_key
        free_key = lib.EVP_PKEY_free
        new_context = lib.EVP_MD_CTX_new
        free_context = lib.EVP_MD_CTX_free
        init = lib.EVP_DigestVerifyInit
        digest_verify = lib.EVP_DigestVerify
        clear_errors = lib.ERR_clear_error
    except (ImportError, OSError, AttributeError):
        return None
    pointer, size = ctypes.c_void_p, ctypes.c_size_t
    new_key.argtypes, new_key.restype = [ctypes.c_int, pointer, ctypes.c_char_p, size], pointer
    free_key.argtypes, free_key.restype = [pointer], None
    new_context.argtypes, new_context.restype = [], pointer
    free_context.argtypes, free_context.restype = [pointer], None
    init.argtypes, init.restype = [pointer, pointer, pointer, pointer, pointer], ctypes.c_int
    digest_verify.argtypes = [pointer, ctypes.c_char_p, size, ctypes.c_char_p, size]
    digest_verify.restype = ctypes.c_int
    clear_errors.argtypes, clear_errors.restype = [], None

    def verify(raw: bytes, signature: bytes, data: bytes) -> bool:
        key = new_key(_NID_ED25519, None, raw, len(raw))
        context = new_context() if key else None
        try:
            if not key or not context or init(context, None, None, None, key) != 1:
                return False
            # 1 is a valid signature; 0 a wrong one, a negative value an error: only 1 is accepted
            return bool(digest_verify(context, signature, len(signature), data, len(data)) == 1)
        finally:
            if context:
                free_context(context)
            if key:
                free_key(key)
            clear_errors()  # a refused signature leaves errors queued: never let ssl or hashlib read them later

    verify.backend = "libcrypto"  # type: ignore[attr-defined]
    return verify


def _libsodium_verifier() -> Verify | None:
    """libsodium's detached Ed25519 verification (``sodium.py``), or None where the library is not installed."""
    verify = sodium.verifier()
    if verify is not None:
        verify.backend = "libsodium"  # type: ignore[attr-defined]
    return verify
