"""libsodium's Ed25519, through ctypes, where the system has the library (the image installs ``libsodium23``).

On the way from a click to the child's start every call is signed three times by the deciding role (the seal
check by re-signing, the approval's seal, the decision) and verified once by the runner. libsodium does each in
about half the time OpenSSL takes on the bench machine (sign ~15 us against ~26, verify ~40 against ~90).
Ed25519 signing is deterministic (RFC 8032), so a signature made here is byte for byte the one ``cryptography``
makes with the same key; ``Signer`` checks that once, on a test message, before it is used.

Loaded by soname (no ``ldconfig`` subprocess, as ``ctypes.util.find_library`` would run); ``None`` wherever the
library is missing or unusable, and the callers then use OpenSSL as before.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

KEY_BYTES, SIGNATURE_BYTES, SECRET_KEY_BYTES = 32, 64, 64

#: libsodium's names on the systems we meet (Debian/Ubuntu 23, newer releases 26, a development symlink)
LIBRARY_NAMES = ("libsodium.so.26", "libsodium.so.23", "libsodium.so")

Verify = Callable[[bytes, bytes, bytes], bool]
Sign = Callable[[bytes], bytes]


@functools.cache
def library() -> ctypes.CDLL | None:
    """The initialised library, or None."""
    return load(LIBRARY_NAMES)


def load(names: tuple[str, ...]) -> ctypes.CDLL | None:
    """The first of ``names`` that loads and initialises, with the three functions used here typed."""
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            init = lib.sodium_init
            verify, sign = lib.crypto_sign_ed25519_verify_detached, lib.crypto_sign_ed25519_detached
            seed_keypair = lib.crypto_sign_ed25519_seed_keypair
        except (OSError, AttributeError):
            continue
        init.argtypes, init.restype = [], ctypes.c_int
        if init() < 0:  # 0 ready, 1 already initialised, -1 unusable
            continue
        verify.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p]
        verify.restype = ctypes.c_int
        sign.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p]
        sign.restype = ctypes.c_int
        seed_keypair.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
        seed_keypair.restype = ctypes.c_int
        return lib
    return None


def verifier(lib: ctypes.CDLL | None = None) -> Verify | None:
    """``verify(public_key, signature, data)``: True only for a valid signature; None without the library.

    Stricter than OpenSSL, never looser: small-order keys and R values are refused too (no genuine signature
    has them)."""
    lib = lib if lib is not None else library()
    if lib is None:
        return None
    verify_detached = lib.crypto_sign_ed25519_verify_detached

    def verify(raw: bytes, signature: bytes, data: bytes) -> bool:
        # the library reads exactly 64 signature bytes and 32 key bytes: shorter input is refused here, not read past
        if len(signature) != SIGNATURE_BYTES or len(raw) != KEY_BYTES:
            return False
        return bool(verify_detached(signature, data, len(data), raw) == 0)

    return verify


def keypair(seed: bytes, lib: ctypes.CDLL | None = None) -> tuple[bytes, Sign] | None:
    """The raw public key and ``sign(data)`` of the private key whose 32-byte RFC 8032 seed is ``seed``; None
    without the library or for a seed of another length. Unchecked: ``signer`` and ``signing_key.py`` check it."""
    lib = lib if lib is not None else library()
    if lib is None or len(seed) != KEY_BYTES:
        return None
    public, secret = ctypes.create_string_buffer(KEY_BYTES), ctypes.create_string_buffer(SECRET_KEY_BYTES)
    if lib.crypto_sign_ed25519_seed_keypair(public, secret, seed) != 0:
        return None
    sign_detached = lib.crypto_sign_ed25519_detached

    def sign(data: bytes) -> bytes:
        signature = ctypes.create_string_buffer(SIGNATURE_BYTES)  # one per call: signing may run in several threads
        if sign_detached(signature, None, data, len(data), secret) != 0:
            raise RuntimeError("libsodium refused to sign")
        return signature.raw

    return public.raw, sign


def signer(seed: bytes, reference: Sign, lib: ctypes.CDLL | None = None) -> Sign | None:
    """``sign(data)`` with the private key whose 32-byte RFC 8032 seed is ``seed``; None without the library, or
    when its signature of a test message is not ``reference``'s (the key's own ``cryptography`` signing)."""
    made = keypair(seed, lib)
    if made is None:
        return None
    sign = made[1]
    probe = b"fisk-chatops signer self-test"
    return sign if sign(probe) == reference(probe) else None
