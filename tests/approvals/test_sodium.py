"""libsodium's Ed25519 (``bot/approvals/sodium.py``): it signs byte for byte as ``cryptography`` does with the same
key (so seals are still recognised by re-signing, and every token verifies with any backend), it is used by the
deciding role only after it showed that on a test message, and a missing library falls back to OpenSSL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.approvals import sodium, verify_key
from bot.approvals.decisions import DecisionSigner, DecisionVerifier, verify_detached
from bot.approvals.verify_key import as_public_key


def test_a_library_without_libsodiums_functions_is_not_used() -> None:
    """An old or foreign library under one of the names (here the C library: none of the three functions) is
    passed over, as a missing one is."""
    assert sodium.load(("libc.so.6",)) is None
    found_after_it = sodium.load(("libc.so.6", *sodium.LIBRARY_NAMES))  # the next name is tried
    assert (found_after_it is None) == (sodium.library() is None)


def test_signatures_are_byte_for_byte_cryptographys() -> None:
    """Where libsodium is missing (a fresh CI machine; the image installs it) there is no libsodium signer: the
    key's own signing is used (``test_the_fallbacks_sign_and_verify_without_libsodium``)."""
    for n in range(200):
        private = Ed25519PrivateKey.generate()
        sign = sodium.signer(private.private_bytes_raw(), private.sign)
        if sodium.library() is None:
            assert sign is None
            continue
        assert sign is not None
        message = os.urandom(n)
        assert sign(message) == private.sign(message)
        private.public_key().verify(sign(message), message)  # raises if it did not verify


def test_a_signer_that_disagrees_with_the_keys_own_signing_is_not_used() -> None:
    private, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    assert sodium.signer(private.private_bytes_raw(), other.sign) is None  # the self-test compares signatures
    assert sodium.signer(b"short", private.sign) is None


def test_a_missing_library_is_none_and_its_callers_fall_back_to_openssl() -> None:
    assert sodium.load(("libsodium-not-installed.so.99",)) is None
    assert sodium.load(()) is None
    # a key whose libsodium signer fails its self-test signs with its own (cryptography's) signing
    private, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    assert sodium.signer(private.private_bytes_raw(), other.sign) is None


def test_decision_signer_signs_with_libsodium_and_every_backend_verifies_its_tokens() -> None:
    private = Ed25519PrivateKey.generate()
    signer = DecisionSigner(private)
    assert (signer._sign != private.sign) == (sodium.library() is not None)  # libsodium's where installed
    seal = signer.sign_detached("proposal", {"call": "c1"})
    assert verify_detached("proposal", seal, {"call": "c1"}, as_public_key(private.public_key()))
    assert signer.made_detached("proposal", seal, {"call": "c1"})  # recognised by re-signing, as before
    assert not signer.made_detached("proposal", seal, {"call": "c2"})
    token = signer.sign(call_id="c1", tool="t", app="a", argv_hash="h", binary_digest="b", model_hash="m",
                        approvers=["U1"], verdict="approved", now=1e9)
    verifier = DecisionVerifier([private.public_key()], clock=lambda: 1e9 + 1)
    verifier.verify_ahead(token)
    assert token in verifier._ahead  # the signature verified (libsodium on the runner's side too)


# A process in which libsodium cannot be loaded (as on a machine without it): the names are the only thing changed
NO_LIBSODIUM = """
import sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from bot.approvals import sodium, verify_key
sodium.LIBRARY_NAMES = ("libsodium-not-installed.so.99",)
from bot.approvals.decisions import DecisionSigner, DecisionVerifier, verify_detached
private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(sys.argv[1]))
signer = DecisionSigner(private)
assert signer._sign == private.sign, "cryptography's own signing"
token = signer.sign(call_id="c1", tool="t", app="a", argv_hash="h", binary_digest="b", model_hash="m",
                    approvers=["U1"], verdict="approved", now=1e9)
verifier = DecisionVerifier([private.public_key()], clock=lambda: 1e9 + 1)
verifier.verify_ahead(token)
assert token in verifier._ahead
assert verify_detached("seal", sys.argv[2], {"call": "c1"}, private.public_key())
assert not verify_detached("seal", sys.argv[2], {"call": "c2"}, private.public_key())
print(sodium.library(), verify_key.backend(), signer.sign_detached("seal", {"call": "c1"}))
"""


def test_the_fallbacks_sign_and_verify_without_libsodium() -> None:
    """CI's fresh machine may have no libsodium: signing falls back to ``cryptography``, verification to the
    process's libcrypto, and their tokens and seals are the same bytes as libsodium's (both directions)."""
    private = Ed25519PrivateKey.generate()
    seal = DecisionSigner(private).sign_detached("seal", {"call": "c1"})  # libsodium's here, where installed
    done = subprocess.run([sys.executable, "-c", NO_LIBSODIUM, private.private_bytes_raw().hex(), seal],
                          capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    library, backend, their_seal = done.stdout.split()
    assert (library, backend) == ("None", "libcrypto")
    assert their_seal == seal


def test_a_backend_that_fails_the_known_answer_is_not_used() -> None:
    """The known answer catches a library that accepts anything, refuses everything, or reads a C string (stops
    at a NUL byte: the altered message is the signed one followed by a NUL)."""
    genuine = verify_key._cryptography_verify

    def reads_a_c_string(raw: bytes, signature: bytes, data: bytes) -> bool:
        return genuine(raw, signature, data.split(b"\x00")[0])

    assert verify_key._passes_known_answer(genuine)
    for broken in (lambda *_: True, lambda *_: False, reads_a_c_string):
        assert not verify_key._passes_known_answer(broken)
    assert verify_key.backend() in ("libsodium", "libcrypto")  # this process's passed


def test_each_key_of_a_rotation_is_checked_and_signs_as_itself_and_no_key_shows_in_reprs() -> None:
    """A signer is made (and its libsodium signing checked) per key: a rotated-in key signs as itself, never with
    the key before it; neither the signer nor its signing function spells the private key in a repr."""
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    signers = [DecisionSigner(old), DecisionSigner(new)]
    message = b"fisk-chatops statement after rotation"
    assert [s._sign(message) for s in signers] == [old.sign(message), new.sign(message)]
    for signer, key in zip(signers, (old, new), strict=True):
        seed = key.private_bytes_raw()
        shown = f"{signer!r} {signer._sign!r} {vars(signer)!r}"
        for spelling in (seed.hex(), repr(seed), seed.hex().upper()):
            assert spelling not in shown
