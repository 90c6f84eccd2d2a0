"""Verify-only Ed25519 keys (``bot/approvals/verify_key.py``): the process's libcrypto gives the same answers as
``cryptography`` on RFC 8032's vectors, on random keys and on every kind of altered input, reads and writes the
same PEM, leaves no OpenSSL error behind, and a runner verifying a decision never loads ``cryptography``'s OpenSSL.
"""

from __future__ import annotations

import base64
import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bot.approvals import sodium, verify_key
from bot.approvals.decision_keys import load_public_keys, public_pem
from bot.approvals.decisions import DecisionKeyError
from bot.approvals.verify_key import InvalidSignature, PublicKey, as_public_key

ROOT = Path(__file__).resolve().parents[2]

# RFC 8032 section 7.1, tests 1, 2 and 3: (public key, message, signature)
RFC8032 = [
    ("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe"
     "24655141438e7a100b"),
    ("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302a"
     "eeb00d291612bb0c00"),
    ("fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed2"
     "8dc027beceea1ec40a"),
]
BACKENDS = {"process libcrypto": verify_key._libcrypto_verifier(), "cryptography": verify_key._cryptography_verify}
#: libsodium where the system has it (the image installs it): stricter than the two OpenSSL backends
SODIUM = verify_key._libsodium_verifier()
EVERY_BACKEND = {**BACKENDS, **({"libsodium": SODIUM} if SODIUM is not None else {})}
PREFERRED = "libsodium" if SODIUM is not None else "libcrypto"


def test_this_process_verifies_with_libsodium_where_installed_else_its_mapped_libcrypto() -> None:
    assert verify_key.mapped_libcrypto() is not None
    assert BACKENDS["process libcrypto"] is not None
    assert verify_key.backend() == PREFERRED


def test_libsodium_is_found_by_its_soname_and_a_missing_library_falls_back() -> None:
    assert sodium.load(("libsodium-not-installed.so.99",)) is None  # then the next backend (libcrypto) is used
    assert (sodium.library() is not None) == (SODIUM is not None)


@pytest.mark.parametrize("name", sorted(EVERY_BACKEND))
def test_rfc8032_vectors_verify_and_every_alteration_is_refused(name: str) -> None:
    verify = EVERY_BACKEND[name]
    assert verify is not None
    for key_hex, message_hex, signature_hex in RFC8032:
        key, message, signature = bytes.fromhex(key_hex), bytes.fromhex(message_hex), bytes.fromhex(signature_hex)
        assert verify(key, signature, message)
        assert not verify(key, signature, message + b"\x00")
        for i in (0, 31, 32, 63):  # R and S, both ends
            assert not verify(key, signature[:i] + bytes([signature[i] ^ 0x01]) + signature[i + 1:], message)
        other = bytes.fromhex(RFC8032[(RFC8032.index((key_hex, message_hex, signature_hex)) + 1) % 3][0])
        assert not verify(other, signature, message)


def test_random_keys_and_messages_agree_with_cryptography() -> None:
    for n in range(200):
        private = Ed25519PrivateKey.generate()
        message = os.urandom(n)
        signature = private.sign(message)
        ours = as_public_key(private.public_key())
        ours.verify(signature, message)
        tampered = message + b"x"
        with pytest.raises(InvalidSignature):
            ours.verify(signature, tampered)
        assert BACKENDS["process libcrypto"](ours.raw, signature, tampered) is False  # type: ignore[misc]


def test_wrong_lengths_and_a_key_off_the_curve_are_refused_not_crashed() -> None:
    private = Ed25519PrivateKey.generate()
    key = as_public_key(private.public_key())
    signature = private.sign(b"m")
    for bad in (b"", signature[:63], signature + b"\x00"):
        with pytest.raises(InvalidSignature):
            key.verify(bad, b"m")
    with pytest.raises(ValueError, match="32 bytes"):
        PublicKey(b"\x01" * 31)
    not_a_point = PublicKey(bytes.fromhex("02" + "00" * 31))  # y = 2: x^2 = (y^2 - 1) / (d y^2 + 1) has no root
    with pytest.raises(InvalidSignature):
        not_a_point.verify(signature, b"m")


def test_a_refused_signature_leaves_no_openssl_error_queued() -> None:
    path = verify_key.mapped_libcrypto()
    assert path is not None
    peek = ctypes.CDLL(path).ERR_peek_error
    peek.restype = ctypes.c_ulong
    key = PublicKey(bytes.fromhex("02" + "ff" * 30 + "7f"))
    with pytest.raises(InvalidSignature):
        key.verify(b"\x00" * 64, b"m")
    assert peek() == 0


def test_pem_is_read_and_written_as_cryptography_does(tmp_path: Path) -> None:
    private = Ed25519PrivateKey.generate()
    theirs = private.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    assert PublicKey.from_pem(theirs).raw == private.public_key().public_bytes_raw()
    assert public_pem(private.public_key()) == theirs
    loaded = serialization.load_pem_public_key(public_pem(private.public_key()))
    assert isinstance(loaded, Ed25519PublicKey) and loaded.public_bytes_raw() == PublicKey.from_pem(theirs).raw
    # two blocks in one file, with text around them, as an operator's key bundle may be
    second = Ed25519PrivateKey.generate()
    bundle = tmp_path / "keys.pub"
    bundle.write_bytes(b"# rotation\n" + theirs + b"next:\n" + public_pem(second.public_key()) + b"\n")
    assert [k.raw for k in load_public_keys([bundle])] == [private.public_key().public_bytes_raw(),
                                                            second.public_key().public_bytes_raw()]


def test_other_keys_and_broken_blocks_are_named(tmp_path: Path) -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "ec.pub").write_bytes(ec_key)
    with pytest.raises(DecisionKeyError, match=r"ec.pub: not an Ed25519 key"):
        load_public_keys([tmp_path / "ec.pub"])
    (tmp_path / "broken.pub").write_bytes(b"-----BEGIN PUBLIC KEY-----\nnot base64!\n-----END PUBLIC KEY-----\n")
    with pytest.raises(DecisionKeyError, match=r"broken.pub: not a PEM public key \(.*base64"):
        load_public_keys([tmp_path / "broken.pub"])
    good = public_pem(Ed25519PrivateKey.generate().public_key())
    (tmp_path / "cut.pub").write_bytes(good.split(b"-----END")[0])  # no END line: refused, not completed
    with pytest.raises(DecisionKeyError, match=r"cut.pub: not a PEM public key"):
        load_public_keys([tmp_path / "cut.pub"])


RUNNER_PROBE = """
import sys
from bot.approvals.decisions import DecisionVerifier, verify_detached
from bot.approvals.decision_keys import load_public_keys
keys = load_public_keys([sys.argv[1]])
verifier = DecisionVerifier(keys)
assert verify_detached("seal", sys.argv[2], {"call": "c1"}, keys[0])
assert not verify_detached("seal", sys.argv[2], {"call": "c2"}, keys[0])
from bot.approvals import sodium, verify_key
print(verify_key.backend(), ",".join(sorted(m for m in sys.modules if m.startswith("cryptography.hazmat"))))
"""


def test_a_process_that_only_verifies_never_loads_cryptography_openssl(tmp_path: Path) -> None:
    from bot.approvals.decisions import DecisionSigner

    private = Ed25519PrivateKey.generate()
    (tmp_path / "decisions.pub").write_bytes(public_pem(private.public_key()))
    seal = DecisionSigner(private).sign_detached("seal", {"call": "c1"})
    done = subprocess.run([sys.executable, "-c", RUNNER_PROBE, str(tmp_path / "decisions.pub"), seal],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [PREFERRED]


# Every encoding of a point of order 1, 2, 4 or 8, both sign bits (the y = p and y = p + 1 spellings included)
SMALL_ORDER = [
    bytes.fromhex(y[:-2]) + bytes([int(y[-2:], 16) | sign]) for sign in (0, 0x80) for y in (
        "00" * 32, "01" + "00" * 31, "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "ec" + "ff" * 30 + "7f",
        "ed" + "ff" * 30 + "7f", "ee" + "ff" * 30 + "7f")
]
FORGED = bytes.fromhex("01" + "00" * 31) + bytes(32)  # R = the identity, S = 0: made without any private key


@pytest.mark.parametrize("raw", SMALL_ORDER, ids=lambda raw: raw.hex()[:4] + ".." + raw.hex()[-2:])
def test_a_small_order_key_is_refused_both_backends_would_verify_forgeries_under_it(raw: bytes, tmp_path: Path) -> None:
    """Verification is cofactorless: under a small-order "key" the forged signature verifies for one message in
    8 or more, on both backends (shown here, 200 messages: missing every one is a 1e-11 chance). Such a key is no
    key at all: it is refused when it is built and when a key file holds it."""
    messages = [os.urandom(8) for _ in range(200)]
    for name, verify in BACKENDS.items():
        assert verify is not None
        assert any(verify(raw, FORGED, m) for m in messages), name
    with pytest.raises(ValueError, match="small order"):
        PublicKey(raw)
    with pytest.raises(ValueError, match="small order"):
        as_public_key(Ed25519PublicKey.from_public_bytes(raw))
    planted = tmp_path / "planted.pub"
    spki = bytes.fromhex("302a300506032b6570032100") + raw  # RFC 8410 SubjectPublicKeyInfo
    planted.write_bytes(b"-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(spki) + b"\n-----END PUBLIC KEY-----\n")
    with pytest.raises(DecisionKeyError, match="planted.pub: .*small order"):
        load_public_keys([planted])
    assert verify_key.is_small_order(raw)


def test_a_decision_forged_without_a_private_key_never_runs(tmp_path: Path) -> None:
    """The attack end to end: someone who can write a runner's key file (or its Secret) plants the identity point;
    every decision token "signed" (R = identity, S = 0) then verified for every call. The runner now refuses the
    key at start instead."""
    from bot.approvals.decisions import DecisionClaims, DecisionVerifier, key_id_of

    identity = bytes.fromhex("01" + "00" * 31)
    claims = DecisionClaims(call_id="c1", tool="t", app="a", argv_hash="h", binary_digest="b", model_hash="m",
                            approvers=("U1",), verdict="approved", signed_at=0.0, expires_at=1e12,
                            key_id=key_id_of(Ed25519PublicKey.from_public_bytes(identity)))
    payload = claims.encode()
    token = (base64.urlsafe_b64encode(payload).rstrip(b"=") + b"." + base64.urlsafe_b64encode(FORGED).rstrip(b"="))
    assert BACKENDS["cryptography"](identity, FORGED, b"fisk-chatops decision v1\n" + payload)  # type: ignore[misc]
    with pytest.raises(ValueError, match="small order"):  # it accepted the token for any call before
        DecisionVerifier([Ed25519PublicKey.from_public_bytes(identity)]).verify_ahead(token.decode())
    for _ in range(100):  # no generated key is refused
        key = Ed25519PrivateKey.generate().public_key()
        assert not verify_key.is_small_order(key.public_bytes_raw())
        assert PublicKey(key.public_bytes_raw()).raw == key.public_bytes_raw()


ORDER_L = 2**252 + 27742317777372353535851937790883648493  # the order of the base point


@pytest.mark.parametrize("name", sorted(EVERY_BACKEND))
def test_a_non_canonical_s_is_refused_so_a_decision_has_one_signature(name: str) -> None:
    """S + L verifies the same equation; a backend that accepted it would let a replayed decision carry a second
    signature, and the replay memory (keyed by the decoded signature, decisions.py) would not know it."""
    verify = EVERY_BACKEND[name]
    assert verify is not None
    private = Ed25519PrivateKey.generate()
    raw = private.public_key().public_bytes_raw()
    for n in range(50):
        message = b"decision %d" % n
        signature = private.sign(message)
        s = int.from_bytes(signature[32:], "little")
        assert verify(raw, signature, message)
        for bigger in (s + ORDER_L, s + 2 * ORDER_L, s + 3 * ORDER_L):  # every 32-byte spelling of the same S
            if bigger < 2**256:
                assert not verify(raw, signature[:32] + bigger.to_bytes(32, "little"), message)


@pytest.mark.parametrize("raw", SMALL_ORDER, ids=lambda raw: raw.hex()[:4] + ".." + raw.hex()[-2:])
def test_libsodium_refuses_the_forgery_under_a_small_order_key_itself(raw: bytes) -> None:
    """libsodium is stricter than OpenSSL, never looser: the forgery the two OpenSSL backends accept under a
    small-order key (above) it refuses even without ``PublicKey``'s own check. Where libsodium is not installed
    (a fresh CI machine: the image installs it, ``.ci/run`` does not) the process verifies with libcrypto, and
    ``PublicKey`` refuses such a key (above)."""
    if SODIUM is None:
        assert verify_key.backend() == "libcrypto"
        return
    assert not any(SODIUM(raw, FORGED, os.urandom(8)) for _ in range(200))


@pytest.mark.parametrize("name", sorted(set(EVERY_BACKEND) - {"cryptography"}))
def test_the_ctypes_backends_refuse_short_and_long_input_without_reading_past_it(name: str) -> None:
    verify = EVERY_BACKEND[name]
    assert verify is not None
    private = Ed25519PrivateKey.generate()
    raw, signature = private.public_key().public_bytes_raw(), private.sign(b"m")
    assert verify(raw, signature, b"m")
    assert not verify(raw, signature[:63], b"m")
    assert not verify(raw[:31], signature, b"m")
    assert not verify(raw, signature + b"\x00", b"m")
