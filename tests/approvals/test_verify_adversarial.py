"""Every verification backend against ``cryptography``'s verdict on hostile input (``bot/approvals/verify_key.py``,
``bot/approvals/sodium.py``): truncated and over-long signatures and keys, non-canonical and small-order
encodings, mixed-order keys, NUL bytes anywhere (ctypes' ``c_char_p`` must pass the bytes, not a C string),
input that is not bytes, and threads verifying while the sanitizer's threads run. A ctypes backend may refuse more
than ``cryptography`` (libsodium refuses small-order points), never accept more, and never raise where
``cryptography`` answers."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest
from cryptography.exceptions import InvalidSignature as CryptographyRefused
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bot.approvals import verify_key
from bot.approvals.verify_key import InvalidSignature, PublicKey
from bot.sanitize import build_redactor, clean_text
from tests.support import ed25519_points as ed

CRYPTOGRAPHY = verify_key._cryptography_verify
CTYPES_BACKENDS = {name: verify for name, verify in (("libsodium", verify_key._libsodium_verifier()),
                                                     ("libcrypto", verify_key._libcrypto_verifier()))
                   if verify is not None}
ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
IDENTITY = bytes.fromhex("01" + "00" * 31)


def hostile_cases() -> Iterator[tuple[str, bytes, bytes, bytes]]:
    """(what, key, signature, message): genuine ones and every kind of alteration."""
    seed = bytes(range(32))
    private = Ed25519PrivateKey.from_private_bytes(seed)
    key = private.public_key().public_bytes_raw()
    for n, message in enumerate((b"", b"a\x00b", b"\x00" * 40, os.urandom(1000), b"m" * 70000)):
        signature = private.sign(message)
        yield f"genuine {n}", key, signature, message
        if message:  # a NUL-cut C string would read these as the signed message
            yield f"after a NUL {n}", key, signature, message[:-1] + bytes([message[-1] ^ 1])
            yield f"cut at its first NUL {n}", key, signature, message.split(b"\x00")[0]
        yield f"truncated {n}", key, signature[:63], message
        yield f"over-long {n}", key, signature + b"\x00", message
        yield f"empty signature {n}", key, b"", message
        yield f"short key {n}", key[:31], signature, message
        yield f"long key {n}", key + b"\x00", signature, message
        s = int.from_bytes(signature[32:], "little")
        if s + ed.L < 2**256:
            yield f"S + L {n}", key, signature[:32] + (s + ed.L).to_bytes(32, "little"), message
        yield f"S with its top bits {n}", key, signature[:63] + bytes([signature[63] | 0xE0]), message
        yield f"R's sign flipped {n}", key, signature[:31] + bytes([signature[31] ^ 0x80]) + signature[32:], message
    # signatures whose bytes hold NULs, under a key with NULs: the whole 64 and 32 bytes must be read
    for n in range(300):
        seed = os.urandom(32)
        private = Ed25519PrivateKey.from_private_bytes(seed)
        key, message = private.public_key().public_bytes_raw(), b"nul %d" % n
        signature = private.sign(message)
        if b"\x00" in signature[:-1] or b"\x00" in key[:-1]:
            yield f"genuine with NULs {n}", key, signature, message
            if b"\x00" in signature[:-1]:  # the bytes after the NUL zeroed: what a C string would not see
                cut = signature.index(b"\x00")
                altered = signature[:cut + 1] + bytes(63 - cut)
                if altered != signature:
                    yield f"altered after a NUL {n}", key, altered, message
    # small-order keys and R values, canonical or not, with S = 0: forgeries without a private key
    small = [bytes.fromhex(y) for y in sorted(y.hex() for y in verify_key._SMALL_ORDER_Y)]
    for point in small + [p[:31] + bytes([p[31] | 0x80]) for p in small]:
        for r in small:
            for n in range(16):
                yield f"small-order forgery {point.hex()[:4]}/{r.hex()[:4]} {n}", point, r + bytes(32), b"%d" % n
    # non-canonical keys (y >= p) and points off the curve
    for extra in range(19):
        y = (ed.P + extra).to_bytes(32, "little")
        for sign in (0, 0x80):
            raw = y[:31] + bytes([y[31] | sign])
            yield f"key y = p + {extra} sign {sign}", raw, IDENTITY + bytes(32), b"m"
    # a mixed-order key (a genuine key plus a point of order 8), signed with the genuine key's scalar: cofactorless
    # verification accepts one message in eight under it
    seed = b"\x07" * 32
    genuine = ed.decode(Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw())
    torsion = ed.decode(ORDER_8)
    assert genuine is not None and torsion is not None
    mixed = ed.encode(ed.add(genuine, torsion))
    for n in range(64):
        message = b"mixed %d" % n
        yield f"mixed-order key {n}", mixed, ed.sign_as(seed, mixed, message), message


CASES = list(hostile_cases())


def _cryptography_verdict(key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        return CRYPTOGRAPHY(key, signature, message)
    except ValueError:  # a key that is not 32 bytes
        return False


@pytest.mark.parametrize("name", sorted(CTYPES_BACKENDS))
def test_a_ctypes_backend_never_accepts_what_cryptography_refuses(name: str) -> None:
    verify = CTYPES_BACKENDS[name]
    accepted_by_both = 0
    for what, key, signature, message in CASES:
        theirs = _cryptography_verdict(key, signature, message)
        ours = verify(key, signature, message) if len(key) == 32 else False  # PublicKey takes 32 bytes only
        assert ours in (True, False), what
        assert not ours or theirs, f"{name} accepted what cryptography refuses: {what}"
        if what.startswith("genuine"):
            assert ours and theirs, what
        if name == "libcrypto":  # the same routine as cryptography's OpenSSL: the same verdict every time
            assert ours == theirs, what
        accepted_by_both += ours and theirs
    assert accepted_by_both > 5  # the genuine cases, at least: the comparison compared something


def test_public_key_verify_refuses_every_case_cryptography_refuses_and_raises_nothing_else() -> None:
    for what, key, signature, message in CASES:
        if len(key) != 32:
            with pytest.raises(ValueError):
                PublicKey(key)
            continue
        try:
            ours = PublicKey(key)
        except ValueError:
            assert verify_key.is_small_order(key), what  # the only 32-byte keys refused when built
            continue
        try:
            ours.verify(signature, message)
            accepted = True
        except InvalidSignature:
            accepted = False
        assert not accepted or _cryptography_verdict(key, signature, message), what


@pytest.mark.parametrize("form", ["bytearray", "memoryview"])
def test_bytes_like_signatures_and_data_verify_as_cryptography_verifies_them(form: str) -> None:
    """``cryptography`` takes any bytes-like object; a ctypes ``c_char_p`` argument takes only ``bytes`` and raised
    ``ctypes.ArgumentError`` (no ``TypeError``, no ``InvalidSignature``) for the rest."""
    private = Ed25519PrivateKey.generate()
    key = PublicKey(private.public_key().public_bytes_raw())
    convert = bytearray if form == "bytearray" else memoryview
    signature = private.sign(b"message")
    key.verify(convert(signature), convert(b"message"))  # type: ignore[arg-type]
    private.public_key().verify(convert(signature), convert(b"message"))
    with pytest.raises(InvalidSignature):
        key.verify(convert(signature), convert(b"messagf"))  # type: ignore[arg-type]
    with pytest.raises(CryptographyRefused):
        private.public_key().verify(convert(signature), convert(b"messagf"))


@pytest.mark.parametrize("bad", ["text", "\udc80" * 64, None, 5], ids=["str", "lone surrogates", "None", "int"])
def test_input_that_is_not_bytes_is_a_type_error_as_in_cryptography(bad: object) -> None:
    private = Ed25519PrivateKey.generate()
    key = PublicKey(private.public_key().public_bytes_raw())
    signature = private.sign(b"m")
    for args in ((bad, b"m"), (signature, bad)):
        with pytest.raises(TypeError):
            private.public_key().verify(*args)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            key.verify(*args)  # type: ignore[arg-type]


def test_threads_verifying_beside_the_sanitizers_threads_get_every_verdict_right() -> None:
    """ctypes releases the GIL during the call: verifications in several threads, while others sanitize, share
    no buffer (the arguments are immutable ``bytes``)."""
    private = Ed25519PrivateKey.generate()
    key = PublicKey(private.public_key().public_bytes_raw())
    messages = [os.urandom(64) for _ in range(32)]
    signatures = [private.sign(m) for m in messages]
    wrong: list[str] = []
    redactor = build_redactor([], [])
    text = "token=ghp_" + "a" * 36 + " Bearer abcdefgh\n" * 2000

    def verifying(offset: int) -> None:
        for i in range(400):
            n = (i + offset) % len(messages)
            expected = i % 3 != 0
            message = messages[n] if expected else messages[(n + 1) % len(messages)]
            try:
                key.verify(signatures[n], message)
                verdict = True
            except InvalidSignature:
                verdict = False
            if verdict != expected:
                wrong.append(f"{offset}/{i}")

    def sanitizing() -> None:
        for _ in range(5):
            clean_text(redactor, text)

    threads = [threading.Thread(target=verifying, args=(k,)) for k in range(4)]
    threads += [threading.Thread(target=sanitizing) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    assert Ed25519PublicKey.from_public_bytes(key.raw)  # the key itself is still cryptography's
