"""A real Ed25519 key pair for tests: stores sign with it and runners verify with it (no mocks).

``signer()`` is what a deciding role holds; ``verifier()`` is a runner's (a fresh replay memory each time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.approvals.decision_keys import private_pem, public_pem
from bot.approvals.decisions import DecisionSigner, DecisionVerifier

TEST_KEY = Ed25519PrivateKey.generate()


def signer(valid_seconds: float = 3600.0) -> DecisionSigner:
    return DecisionSigner(TEST_KEY, valid_seconds=valid_seconds)


def verifier() -> DecisionVerifier:
    return DecisionVerifier([TEST_KEY.public_key()])


def write_key_files(directory: Path) -> dict[str, Any]:
    """The test pair as PEM files in ``directory``; returns the ``decisions:`` config section naming them."""
    directory.mkdir(parents=True, exist_ok=True)
    private, public = directory / "decision.key", directory / "decision.pub"
    private.write_bytes(private_pem(TEST_KEY))
    private.chmod(0o600)
    public.write_bytes(public_pem(TEST_KEY.public_key()))
    return {"signing_key_file": str(private), "public_key_files": [str(public)]}
