"""libsodium's Ed25519 (``bot/approvals/sodium.py``): it signs byte for byte as ``cryptography`` does with the same
key (so seals are still recognised by re-signing, and every token verifies with any backend), it is used by the
deciding role only after it showed that on a test message, and a missing library falls back to OpenSSL."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.approvals import sodium
from bot.approvals.decisions import DecisionSigner, DecisionVerifier, verify_detached
from bot.approvals.verify_key import as_public_key


def test_libsodium_is_installed_where_the_tests_run() -> None:
    assert sodium.library() is not None, "the image and the dev machine install libsodium (Dockerfile)"


def test_signatures_are_byte_for_byte_cryptographys() -> None:
    for n in range(200):
        private = Ed25519PrivateKey.generate()
        sign = sodium.signer(private.private_bytes_raw(), private.sign)
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
    assert signer._sign != private.sign  # libsodium's
    seal = signer.sign_detached("proposal", {"call": "c1"})
    assert verify_detached("proposal", seal, {"call": "c1"}, as_public_key(private.public_key()))
    assert signer.made_detached("proposal", seal, {"call": "c1"})  # recognised by re-signing, as before
    assert not signer.made_detached("proposal", seal, {"call": "c2"})
    token = signer.sign(call_id="c1", tool="t", app="a", argv_hash="h", binary_digest="b", model_hash="m",
                        approvers=["U1"], verdict="approved", now=1e9)
    verifier = DecisionVerifier([private.public_key()], clock=lambda: 1e9 + 1)
    verifier.verify_ahead(token)
    assert token in verifier._ahead  # the signature verified (libsodium on the runner's side too)
