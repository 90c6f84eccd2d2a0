"""Seals a click relies on, spelled every way an attacker who writes Redis might try (review of the re-signing
shortcut, ``DecisionSigner.made_detached``).

The shortcut must accept exactly what a full verification accepts: a seal is this key's signature of exactly
these claims, whatever else is in Redis. A seal that is not (a prefix, a suffix, padding, the other base64
alphabet, S + L, another key's, another kind's) is refused, and one that is not even text an encoder takes
(a lone surrogate from a JSON escape) is refused the same clear way, never raised as something else.
"""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from bot.approvals.decisions import DecisionSigner, verify_detached
from bot.approvals.errors import TamperedRecord
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from tests.adversarial.test_redis_deciding import proposed, untouched
from tests.support import decision_keys

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # fixed: the test ids name its seal
SIGNER = DecisionSigner(KEY)
CLAIMS = {"call": "0-abc", "user": "UAPP", "argv_hash": "ab" * 32}
SEAL = SIGNER.sign_detached("approval", CLAIMS)
_L = 2**252 + 27742317777372353535851937790883648493


def _spellings(seal: str) -> list[str]:
    raw = base64.urlsafe_b64decode(seal + "==")
    s_plus_l = raw[:32] + (int.from_bytes(raw[32:], "little") + _L).to_bytes(32, "little")
    return [
        seal + "==", seal + "=", seal + "\n", " " + seal, seal + "A", seal[:-1], seal[:43], "",
        base64.b64encode(raw).decode(),  # the other alphabet (differs where the signature has - or _)
        seal.upper(), seal + "\ud800", "\ud800", "\udcff" * 86, seal[:-1] + "\ud800",
        base64.urlsafe_b64encode(s_plus_l).rstrip(b"=").decode(),  # malleated S: not canonical, refused
        SIGNER.sign_detached("proposal", CLAIMS), DecisionSigner(Ed25519PrivateKey.from_private_bytes(
            bytes(32))).sign_detached("approval", CLAIMS),
    ]


@pytest.mark.parametrize("spelling", _spellings(SEAL))
def test_the_shortcut_answers_what_a_full_verification_answers(spelling: str) -> None:
    assert SIGNER.made_detached("approval", spelling, CLAIMS) is verify_detached(
        "approval", spelling, CLAIMS, SIGNER.public_key)


def test_only_the_exact_seal_is_recognised_without_verifying() -> None:
    assert SIGNER.made_detached("approval", SEAL, CLAIMS)
    for spelling in ("\ud800", SEAL + "\ud800", SEAL[:-1], SEAL + "A", SEAL[:43]):
        assert not SIGNER.made_detached("approval", spelling, CLAIMS)


@settings(max_examples=300, deadline=None)
@given(st.text(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=100),
       st.integers(min_value=0, max_value=86))
def test_any_text_spliced_into_a_seal_is_judged_as_verification_judges_it(text: str, at: int) -> None:
    spelled = SEAL[:at] + text + SEAL[at:]
    assert SIGNER.made_detached("approval", spelled, CLAIMS) is verify_detached(
        "approval", spelled, CLAIMS, SIGNER.public_key)


async def test_an_injected_approval_whose_seal_is_a_lone_surrogate_is_a_tampered_record(redis: Redis) -> None:
    """JSON lets Redis's writer spell a seal no encoder takes (``"\\ud800"``); the click refuses the record as
    tampered (what the Slack handler tells the user), not with a UnicodeEncodeError nobody explains."""
    store, policy = CallStore(redis, signer=decision_keys.signer()), ApprovalPolicy(two_person_tags=["danger"])
    call = await proposed(store, policy)
    for seal in ("\ud800", "\udcff" * 86):  # json.dumps writes them as the escapes JSON allows
        fake = json.dumps([{"user": "UGHOST", "at": call.created_at.timestamp(), "seal": seal}])
        await redis.hset(store.keys.call(call.id), "approvals", fake)
        with pytest.raises(TamperedRecord):
            await store.approve(call.id, "UAPP", [], policy, argv_hash=call.argv_hash)
        await untouched(store, call.id)
