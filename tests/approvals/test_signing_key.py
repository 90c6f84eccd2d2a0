"""A deciding role's signing key without ``cryptography`` (``bot/approvals/signing_key.py``): the key file is read
by hand only in its plain PKCS#8 form, libsodium is used only after its checks, and anything else is read (or
refused, with the same messages) by ``cryptography`` as before."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.approvals import signing_key, sodium
from bot.approvals.decision_keys import (
    ensure_key_pair,
    generate_private_key,
    load_private_key,
    private_pem,
    signer_and_verifier,
)
from bot.approvals.decisions import DecisionKeyError, DecisionSigner, DecisionVerifier
from bot.approvals.signing_key import SeedKey, passes_known_answer, pkcs8_seed, seed_pem

ROOT = Path(__file__).resolve().parents[2]
HAVE_SODIUM = sodium.library() is not None


def pem_of(key: Ed25519PrivateKey, encryption: serialization.KeySerializationEncryption | None = None) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             encryption or serialization.NoEncryption())


def test_the_plain_pkcs8_form_is_read_and_written_byte_for_byte_as_cryptography_does() -> None:
    for _ in range(50):
        key = Ed25519PrivateKey.generate()
        pem = pem_of(key)
        assert pkcs8_seed(pem) == key.private_bytes_raw()
        assert seed_pem(key.private_bytes_raw()) == pem == private_pem(key)
        # as an operator's editor may leave it: CRLF, blank lines around, the body folded
        begin, body, end, _ = pem.split(b"\n")
        folded = b"\r\n".join([begin, body[:20], body[20:], end])
        assert pkcs8_seed(b"\n" + folded + b"\r\n\r\n") == key.private_bytes_raw()


def test_every_other_form_is_left_to_cryptography() -> None:
    key = Ed25519PrivateKey.generate()
    seed, pem = key.private_bytes_raw(), pem_of(key)
    public = key.public_key().public_bytes_raw()
    v2 = bytes.fromhex("3053020101300506032b657004220420") + seed + bytes.fromhex("812100") + public
    not_plain = [
        pem_of(key, serialization.BestAvailableEncryption(b"pw")),  # encrypted PKCS#8
        pem + pem,  # two blocks
        pem.replace(b"PRIVATE KEY", b"PUBLIC KEY"),
        pem[:-40] + pem[-26:],  # body cut short
        pem.replace(b"MC4C", b"MC4C!"),  # not base64
        seed_pem(seed)[:28] + b"Proc-Type: 4,ENCRYPTED\n" + seed_pem(seed)[28:],
        signing_key.PEM_BEGIN + b"\n" + base64.b64encode(v2) + b"\n" + signing_key.PEM_END,  # with its public key
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
        b"text before\n" + pem,
        b"",
    ]
    for data in not_plain:
        assert pkcs8_seed(data) is None, data


def test_padding_past_the_body_is_refused_as_cryptography_refuses_it(tmp_path: Path) -> None:
    """The 48 DER bytes are exactly 64 base64 characters: one '=' or two after them decode to the same bytes in
    Python's lenient decoder, but cryptography refuses the file; read by hand it would load on a machine with
    libsodium and stop start-up on one without."""
    pem = pem_of(Ed25519PrivateKey.generate())
    for padding in (b"=", b"==", b"\n=", b"=\n="):
        data = pem.replace(b"\n-----END", padding + b"\n-----END")
        assert pkcs8_seed(data) is None, data
        (tmp_path / "padded.key").write_bytes(data)
        with pytest.raises(DecisionKeyError, match="padded.key: not a PEM private key"):
            load_private_key(tmp_path / "padded.key")


def test_a_key_file_is_read_with_libsodium_and_signs_as_cryptography_would(tmp_path: Path) -> None:
    """Where libsodium is installed (the image; a fresh CI machine may lack it, and the key is cryptography's)."""
    key = Ed25519PrivateKey.generate()
    path = tmp_path / "signing.key"
    path.write_bytes(pem_of(key))
    loaded = load_private_key(path)
    assert isinstance(loaded, SeedKey) == HAVE_SODIUM
    assert loaded.public_key().public_bytes_raw() == key.public_key().public_bytes_raw()
    for n in (0, 1, 100, 5000):
        message = os.urandom(n)
        assert loaded.sign(message) == key.sign(message)
    signer = DecisionSigner(loaded)
    assert (signer._sign == loaded.sign) == HAVE_SODIUM and signer.key_id == DecisionSigner(key).key_id
    token = signer.sign(call_id="c1", tool="t", app="a", argv_hash="h", binary_digest="b", model_hash="m",
                        approvers=["U1"], verdict="approved", now=1e9)
    DecisionVerifier([key.public_key()], clock=lambda: 1e9 + 1).verify_ahead(token)  # raises if refused
    seed = key.private_bytes_raw()
    shown = f"{loaded!r} {signer!r} {vars(signer)!r}"
    assert seed.hex() not in shown and repr(seed) not in shown


def test_bad_key_files_keep_their_messages(tmp_path: Path) -> None:
    """What ``cryptography`` said of a bad file before, it still says: the hand reader only takes the plain form."""
    cases = {
        "ec.key": (ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
            "ec.key: not an Ed25519 key"),
        "junk.key": (b"not a key", "junk.key: not a PEM private key"),
        "encrypted.key": (pem_of(Ed25519PrivateKey.generate(), serialization.BestAvailableEncryption(b"pw")),
                          "encrypted.key: not a PEM private key"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(DecisionKeyError, match=message):
            load_private_key(tmp_path / name)


def test_a_library_that_fails_the_known_answer_is_not_used() -> None:
    def wrong_signature(seed: bytes):  # type: ignore[no-untyped-def]
        return b"\0" * 32, lambda data: b"\1" * 64

    assert not passes_known_answer(wrong_signature)
    assert not passes_known_answer(lambda seed: None)
    assert passes_known_answer(sodium.keypair) == HAVE_SODIUM


def test_a_new_key_pair_is_made_and_read_back_by_cryptography(tmp_path: Path) -> None:
    key = generate_private_key()
    assert isinstance(key, SeedKey) == HAVE_SODIUM
    private, public = ensure_key_pair(tmp_path / "keys")
    read_by_cryptography = serialization.load_pem_private_key(private.read_bytes(), password=None)
    assert isinstance(read_by_cryptography, Ed25519PrivateKey)
    signer, verifier = signer_and_verifier(str(private), [str(public)], valid_seconds=60, keep_in=None)
    assert signer is not None and verifier is not None
    assert signer.key_id == DecisionSigner(read_by_cryptography).key_id and signer.key_id in verifier.keys


# A deciding process: load the key, sign a decision, and say which packages it loaded. With libsodium's names
# changed (as on a machine without it), the key is cryptography's, and it signs the same bytes.
DECIDING = """
import sys
from bot.approvals import sodium
if sys.argv[2] == "without":
    sodium.LIBRARY_NAMES = ("libsodium-not-installed.so.99",)
from bot.approvals.decision_keys import signer_and_verifier
signer, _ = signer_and_verifier(sys.argv[1], [], valid_seconds=60, keep_in=None)
token = signer.sign(call_id="c1", tool="t", app="a", argv_hash="h", binary_digest="b", model_hash="m",
                    approvers=["U1"], verdict="approved", now=1e9)
print(type(signer._key).__name__, any(m.startswith("cryptography.hazmat") for m in sys.modules), token)
"""


def test_a_deciding_process_with_libsodium_never_loads_cryptography(tmp_path: Path) -> None:
    path = tmp_path / "signing.key"
    path.write_bytes(pem_of(Ed25519PrivateKey.generate()))
    seen = {}
    for libsodium in ("with", "without"):
        done = subprocess.run([sys.executable, "-c", DECIDING, str(path), libsodium], capture_output=True,
                              text=True, timeout=60, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        seen[libsodium] = done.stdout.split()
    assert seen["without"][:2] == ["Ed25519PrivateKey", "True"]
    if HAVE_SODIUM:
        assert seen["with"][:2] == ["SeedKey", "False"]
    assert seen["with"][2] == seen["without"][2]  # the same token, byte for byte
