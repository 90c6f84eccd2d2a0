"""The deciding role recognises its own seals by signing again (Ed25519 is deterministic), and verifies the rest.

``DecisionSigner.made_detached`` answers a click's seal check without a signature verification when the seal is
byte for byte what this key makes; everything else is verified in full. These tests pin both halves: a genuine
signature that is NOT the deterministic one (made here with a random nonce, as a hedged implementation would)
still passes, and nothing that is not this key's signature of exactly these claims does.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.approvals.decisions import DecisionSigner, verify_detached
from bot.approvals.errors import TamperedRecord
from bot.approvals.records import Approval, CallRecord, CallState
from bot.approvals.seals import approval_claims, check_sealed, proposal_claims, seal_approval, seal_proposal
from tests.approvals.conftest import proposal
from tests.support import ed25519_points


def _hedged_sign(seed: bytes, message: bytes) -> bytes:
    """An Ed25519 signature with a random nonce: valid under the same public key, yet not the RFC's own."""
    a, _ = ed25519_points.secret_scalar(seed)
    public = ed25519_points.encode(ed25519_points.multiply(a, ed25519_points.BASE))
    r = secrets.randbelow(ed25519_points.L - 1) + 1
    big_r = ed25519_points.encode(ed25519_points.multiply(r, ed25519_points.BASE))
    k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % ed25519_points.L
    return big_r + ((r + k * a) % ed25519_points.L).to_bytes(32, "little")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


CLAIMS = {"call": "0-abc", "user": "UAPP", "argv_hash": "ab" * 32}
#: what an approval statement of CLAIMS signs: its domain, then the claims as canonical JSON (decisions.py)
SIGNED = b"fisk-chatops approval statement v1\n" + b'{"argv_hash":"' + b"ab" * 32 + b'","call":"0-abc","user":"UAPP"}'


def test_its_own_seal_is_recognised_and_anything_else_is_not() -> None:
    key = Ed25519PrivateKey.generate()
    signer = DecisionSigner(key)
    seal = signer.sign_detached("approval", CLAIMS)
    assert signer.made_detached("approval", seal, CLAIMS)
    assert not signer.made_detached("approval", seal, {**CLAIMS, "user": "UOTHER"})  # other claims
    assert not signer.made_detached("proposal", seal, CLAIMS)  # the same claims as another kind of statement
    assert not signer.made_detached("approval", DecisionSigner(Ed25519PrivateKey.generate()).sign_detached(
        "approval", CLAIMS), CLAIMS)  # another key's seal
    flipped = seal[:-2] + ("A" if seal[-2] != "A" else "B") + seal[-1]
    assert not signer.made_detached("approval", flipped, CLAIMS)
    for garbage in ("", "x", "ü" * 86, "=" * 90):  # not base64, not ASCII, not a signature: refused, never raised
        assert not signer.made_detached("approval", garbage, CLAIMS)


def test_a_genuine_signature_made_with_a_random_nonce_still_passes() -> None:
    """The re-signing shortcut must not turn a valid seal into a refusal: it falls back to verifying."""
    key = Ed25519PrivateKey.generate()
    signer = DecisionSigner(key)
    hedged = _b64(_hedged_sign(key.private_bytes_raw(), SIGNED))
    assert hedged != signer.sign_detached("approval", CLAIMS)  # not the deterministic signature...
    assert verify_detached("approval", hedged, CLAIMS, signer.public_key)  # ...but a valid one of these claims
    assert signer.made_detached("approval", hedged, CLAIMS)
    assert not signer.made_detached("approval", hedged, {**CLAIMS, "call": "0-abd"})


def test_a_click_accepts_an_earlier_approval_sealed_with_a_random_nonce() -> None:
    """check_sealed end to end: a two-person call's first approval sealed by a hedged signer is accepted, and the
    same seal moved onto another approver is not."""
    key = Ed25519PrivateKey.generate()
    signer = DecisionSigner(key)
    p = proposal(tags=["two-person"])
    now = 1_700_000_000.0
    fields = dict(id="0-abc", conversation="conv", tool=p.tool, app=p.app, arguments=p.arguments, argv=p.argv,
                  argv_hash="ab" * 32, requester="UREQ", tool_tags=p.tags, state=CallState.awaiting_approval,
                  approvals_needed=2, created_at=now, expires_at=now + 60, updated_at=now)
    bare = CallRecord(**fields)
    proposal_seal = seal_proposal(signer, proposal_claims(
        call_id=bare.id, conversation=bare.conversation, tool=bare.tool, app=bare.app, argv_hash=bare.argv_hash,
        binary_digest="", model_hash="", requester="UREQ", tags=bare.tool_tags, approvals_needed=2))
    claims = approval_claims(bare, "UAPP")
    assert claims == CLAIMS
    hedged = _b64(_hedged_sign(key.private_bytes_raw(), SIGNED))
    good = replace(bare, proposal_seal=proposal_seal, approvals=[Approval(user="UAPP", at=now, seal=hedged)])
    check_sealed(signer, good)
    assert seal_approval(signer, good, "UAPP") != hedged
    moved = replace(good, approvals=[Approval(user="UOTHER", at=now, seal=hedged)])
    with pytest.raises(TamperedRecord):
        check_sealed(signer, moved)
