"""Decision keys on disk: make, write and read the Ed25519 key pair behind signed decisions (``decisions.py``).

Kept apart from signing and verifying because it is a different job with a different audience: the operator's
files (PEM blocks, a mounted Kubernetes Secret directory, the single-process default pair in the state
directory), read once at start, while ``decisions.py`` is on every call's way to its child. ``cryptography``
is imported inside the functions that need it, so a runner that only verifies never loads it, and neither does a
deciding role where libsodium signs (``signing_key.py``: its key file is read here, and a new key made from the
kernel's randomness).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.approvals.decisions import DecisionKeyError, DecisionSigner, DecisionVerifier
from bot.approvals.signing_key import SigningKey, generate_seed_key, pkcs8_seed, seed_key, seed_pem
from bot.approvals.verify_key import KeyFormatError, PublicKey, RawPublicKey, as_public_key

if TYPE_CHECKING:  # cryptography is imported where a key is made or read without libsodium
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PRIVATE_KEY_FILE = "decision-signing.key"
PUBLIC_KEY_FILE = "decision-signing.pub"

def generate_private_key() -> SigningKey:
    key = generate_seed_key()
    if key is not None:
        return key
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate()


def private_pem(key: SigningKey) -> bytes:
    """The key as an unencrypted PKCS#8 PEM block: byte for byte what ``cryptography`` writes for it."""
    return seed_pem(key.private_bytes_raw())


def public_pem(key: RawPublicKey) -> bytes:
    """The key as a PEM ``SubjectPublicKeyInfo`` block (what ``load_public_keys`` reads)."""
    return as_public_key(key).to_pem()


def load_private_key(path: str | os.PathLike[str]) -> SigningKey:
    """An Ed25519 private key from a PEM (PKCS#8) file: libsodium's where it passes its checks, else
    ``cryptography``'s (which also reads the other encodings and names what is wrong with a bad file)."""
    data = _read(path)
    seed = pkcs8_seed(data)
    key = seed_key(seed) if seed is not None else None
    if key is not None:
        return key
    return _cryptography_private_key(path, data)


def _cryptography_private_key(path: str | os.PathLike[str], data: bytes) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise DecisionKeyError(f"{path}: not a PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise DecisionKeyError(f"{path}: not an Ed25519 key")
    return key


def load_public_keys(paths: Iterable[str | os.PathLike[str]]) -> list[PublicKey]:
    """Every Ed25519 public key in ``paths``: a file may hold several PEM blocks, a directory (a mounted
    Kubernetes Secret) contributes each of its regular files."""
    keys: list[PublicKey] = []
    for path in paths:
        p = Path(path)
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")) if p.is_dir() else [p]
        for file in files:
            keys += _public_keys_in(file)
    return keys


def _public_keys_in(file: Path) -> list[PublicKey]:
    data = _read(file)
    marker = b"-----BEGIN PUBLIC KEY-----"
    blocks = [marker + part for part in data.split(marker)[1:]]
    if not blocks:
        raise DecisionKeyError(f"{file}: no PEM public key in it")
    keys = []
    for block in blocks:
        try:
            body, end, _ = block.partition(b"-----END PUBLIC KEY-----")  # text after a block is no part of it
            keys.append(PublicKey.from_pem(body + end))
        except KeyFormatError as exc:
            if exc.other_algorithm:
                raise DecisionKeyError(f"{file}: not an Ed25519 key") from None
            raise DecisionKeyError(f"{file}: not a PEM public key ({exc})") from None
    return keys


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise DecisionKeyError(f"{path}: cannot read: {exc.strerror}") from None


def ensure_key_pair(directory: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The single-process default: a key pair kept in ``directory`` (private key mode 0600), made once."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / PRIVATE_KEY_FILE, folder / PUBLIC_KEY_FILE
    if not private.exists():
        key = generate_private_key()
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(private_pem(key))
        public.write_bytes(public_pem(key.public_key()))
    elif not public.exists():
        public.write_bytes(public_pem(load_private_key(private).public_key()))
    return private, public


def signer_and_verifier(
    signing_key_file: str | None,
    public_key_files: Sequence[str],
    *,
    valid_seconds: float,
    keep_in: str | os.PathLike[str] | None,
    memory: str | os.PathLike[str] | None = None,
) -> tuple[DecisionSigner | None, DecisionVerifier | None]:
    """What a process gets from its settings; ``keep_in`` (the state directory) makes a missing pair there;
    ``memory`` is the verifier's replay memory file."""
    if not signing_key_file and not public_key_files and keep_in is not None:
        private, public = ensure_key_pair(keep_in)
        signing_key_file, public_key_files = str(private), [str(public)]
    signer = (
        DecisionSigner(load_private_key(signing_key_file), valid_seconds=valid_seconds) if signing_key_file else None
    )
    keys = load_public_keys(public_key_files)
    if signer is not None and not keys:
        keys = [signer.public_key]
    verifier = DecisionVerifier(keys, memory=memory) if keys else None
    return signer, verifier

