"""Signed decisions: the store signs where the decision is made, the verifier refuses anything else."""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from redis.asyncio import Redis

from bot.approvals.decision_keys import (
    ensure_key_pair,
    load_private_key,
    load_public_keys,
    public_pem,
    signer_and_verifier,
)
from bot.approvals.decisions import DecisionKeyError, DecisionRefused, DecisionSigner, DecisionVerifier
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.streams import ensure_group
from tests.approvals.conftest import proposal
from tests.support import decision_keys

DIGEST = "ab" * 32


def signed_proposal(tags: list[str] | None = None):  # type: ignore[no-untyped-def]
    p = proposal(tags=tags)
    return replace(p, binary_digest=DIGEST, model_hash="cd" * 32)


async def approved(store: CallStore, policy: ApprovalPolicy) -> CallRecord:
    [call] = await store.propose("conv", [signed_proposal()], policy, "UREQ")
    return await store.approve(call.id, "UAPP", [], policy, argv_hash=call.argv_hash)


async def test_a_click_is_signed_for_the_call_and_its_approver(store: CallStore, policy: ApprovalPolicy) -> None:
    record = await approved(store, policy)
    claims = decision_keys.verifier().check(record)
    assert (claims.call_id, claims.approvers, claims.verdict) == (record.id, ("UAPP",), "approved")
    assert claims.binary_digest == DIGEST and claims.argv_hash == record.argv_hash


async def test_a_policy_auto_approval_is_signed_by_the_proposing_store(store: CallStore) -> None:
    policy = ApprovalPolicy(auto_approve={"tools": ["^opsctl_status$"]})
    [call] = await store.propose("conv", [signed_proposal()], policy, "UREQ")
    assert call.state == CallState.auto_approved
    claims = decision_keys.verifier().check(call)
    assert claims.verdict == "auto_approved" and claims.approvers == ("policy",)


async def test_two_person_decision_names_both_even_when_the_clicks_race(redis: Redis) -> None:
    policy = ApprovalPolicy(two_person_tags=["prod"])
    stores = [CallStore(redis, signer=decision_keys.signer()) for _ in range(2)]
    [call] = await stores[0].propose("conv", [signed_proposal(tags=["prod"])], policy, "UREQ")
    await asyncio.gather(stores[0].approve(call.id, "UA", [], policy), stores[1].approve(call.id, "UB", [], policy))
    record = await stores[0].get(call.id)
    assert record.state == CallState.approved
    claims = decision_keys.verifier().check(record)
    assert sorted(claims.approvers) == ["UA", "UB"]


async def test_a_store_without_a_key_records_decisions_no_runner_accepts(redis: Redis, policy: ApprovalPolicy) -> None:
    record = await approved(CallStore(redis), policy)
    assert record.state == CallState.approved and record.signed_decision == ""
    with pytest.raises(DecisionRefused, match="no signed decision"):
        decision_keys.verifier().check(record)


async def test_the_verifier_refuses_every_mismatch(store: CallStore, policy: ApprovalPolicy) -> None:
    record = await approved(store, policy)
    other = await approved(store, policy)
    verifier = decision_keys.verifier()
    cases = {
        "another call": replace(record, signed_decision=other.signed_decision),
        "command line differs": replace(record, argv=[*record.argv, "--force"]),
        "binary digest differs": replace(record, binary_digest="ef" * 32),
        "another tool": replace(record, tool="opsctl_restart"),
        "malformed": replace(record, signed_decision="garbage"),
        "does not verify": replace(record, signed_decision=record.signed_decision[:-4] + (
            "AAAA" if not record.signed_decision.endswith("AAAA") else "BBBB")),
    }
    for what, forged in cases.items():
        with pytest.raises(DecisionRefused) as caught:
            verifier.check(forged)
        assert what in caught.value.reason, (what, caught.value.reason)


async def test_unknown_key_expiry_and_replay_are_refused(store: CallStore, policy: ApprovalPolicy) -> None:
    record = await approved(store, policy)
    with pytest.raises(DecisionRefused, match="unknown key"):
        DecisionVerifier([Ed25519PrivateKey.generate().public_key()]).check(record)
    later = DecisionVerifier([decision_keys.TEST_KEY.public_key()], clock=lambda: 1e12)
    with pytest.raises(DecisionRefused, match="expired"):
        later.check(record)
    verifier = decision_keys.verifier()
    verifier.consume(record)
    with pytest.raises(DecisionRefused, match="replay"):
        verifier.consume(record)
    head, _, tail = record.signed_decision.partition(".")
    respelled = replace(record, signed_decision=f"{head}.{tail}==")
    with pytest.raises(DecisionRefused, match="replay"):  # the same decision spelled differently
        verifier.consume(respelled)


async def test_replay_memory_forgets_expired_decisions(redis: Redis, policy: ApprovalPolicy) -> None:
    """A runner remembers executed decisions only until they expire (oldest first), so its memory and the
    per-call work stay bounded however many calls it has run; a live decision is still refused twice."""
    now = [1000.0]
    store = CallStore(redis, signer=DecisionSigner(decision_keys.TEST_KEY, valid_seconds=60), clock=lambda: now[0])
    early = [await approved(store, policy) for _ in range(4)]
    now[0] = 1100.0
    late = await approved(store, policy)
    verifier = DecisionVerifier([decision_keys.TEST_KEY.public_key()], clock=lambda: now[0])
    now[0] = 1000.0
    for record in early:
        verifier.consume(record)
    assert len(verifier._used) == 4
    now[0] = 1101.0  # the early decisions expired at 1060
    verifier.consume(late)
    assert len(verifier._used) == 1  # only the live decision is remembered
    with pytest.raises(DecisionRefused, match="replay"):
        verifier.consume(late)


async def test_rotation_accepts_old_and_new_keys(redis: Redis, policy: ApprovalPolicy, tmp_path: Path) -> None:
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    keys = tmp_path / "public"
    keys.mkdir()
    (keys / "old.pub").write_bytes(public_pem(old.public_key()))
    (keys / "new.pub").write_bytes(public_pem(new.public_key()))
    verifier = DecisionVerifier(load_public_keys([keys]))
    for key in (old, new):
        record = await approved(CallStore(redis, signer=DecisionSigner(key)), policy)
        assert verifier.check(record).key_id == DecisionSigner(key).key_id


def test_single_process_default_keeps_a_private_pair(tmp_path: Path) -> None:
    signer, verifier = signer_and_verifier(None, [], valid_seconds=60, keep_in=tmp_path / "keys")
    assert signer is not None and verifier is not None and signer.key_id in verifier.keys
    private, public = ensure_key_pair(tmp_path / "keys")
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    assert DecisionSigner(load_private_key(private)).key_id == signer.key_id  # kept, not regenerated
    runner_only, checks = signer_and_verifier(None, [str(public)], valid_seconds=60, keep_in=None)
    assert runner_only is None and checks is not None


def test_bad_key_files_are_named(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pub"
    junk.write_text("not a key")
    with pytest.raises(DecisionKeyError, match="junk.pub: no PEM public key"):
        load_public_keys([junk])
    with pytest.raises(DecisionKeyError, match="missing.key: cannot read"):
        load_private_key(tmp_path / "missing.key")


async def test_the_replay_memory_survives_a_runner_restart(
    store: CallStore, policy: ApprovalPolicy, tmp_path: Path
) -> None:
    memory = tmp_path / "state" / "decisions-executed"
    record = await approved(store, policy)
    other = await approved(store, policy)
    DecisionVerifier([decision_keys.TEST_KEY.public_key()], memory=memory).consume(record)
    memory.write_text(memory.read_text() + "0-torn")  # a line cut short by a crash is skipped
    restarted = DecisionVerifier([decision_keys.TEST_KEY.public_key()], memory=memory)
    with pytest.raises(DecisionRefused, match="replay"):
        restarted.consume(record)
    restarted.consume(other)  # another call is fine
    later = DecisionVerifier([decision_keys.TEST_KEY.public_key()], memory=memory, clock=lambda: 1e12)
    assert later._used == {} and memory.read_text() == ""  # expired entries are dropped when it starts


async def test_a_decision_verified_ahead_is_still_checked_against_its_record(
        store: CallStore, policy: ApprovalPolicy) -> None:
    """verify_ahead takes only the signature off the way (while the runner's claim is in Redis): the claimed
    record is still matched against the claims, expiry and replay still apply, a bad token is not remembered."""
    record = await approved(store, policy)
    other = await approved(store, policy)
    verifier = decision_keys.verifier()
    verifier.verify_ahead(record.signed_decision)
    with pytest.raises(DecisionRefused, match="command line differs"):
        verifier.check(replace(record, argv=[*record.argv, "--force"]))
    verifier.verify_ahead(other.signed_decision)
    with pytest.raises(DecisionRefused, match="another call"):
        verifier.check(replace(record, signed_decision=other.signed_decision))
    forged = record.signed_decision[:-4] + ("AAAA" if not record.signed_decision.endswith("AAAA") else "BBBB")
    verifier.verify_ahead(forged)
    verifier.verify_ahead("garbage")
    verifier.verify_ahead("")
    for token in (forged, "garbage"):
        with pytest.raises(DecisionRefused):
            verifier.check(replace(record, signed_decision=token))
    later = DecisionVerifier([decision_keys.TEST_KEY.public_key()], clock=lambda: 1e12)
    later.verify_ahead(record.signed_decision)
    with pytest.raises(DecisionRefused, match="expired"):
        later.check(record)
    verifier.verify_ahead(record.signed_decision)
    verifier.keys.clear()  # the signature was verified ahead: check of the same token does not verify it again
    assert verifier.consume(record).call_id == record.id
    with pytest.raises(DecisionRefused):  # once checked it is forgotten: the next check verifies (no key: refused)
        verifier.check(record)
    verifier.verify_ahead(record.signed_decision)  # no key any more: not verified, so not remembered
    with pytest.raises(DecisionRefused, match="unknown key"):
        verifier.check(record)


async def test_tokens_verified_ahead_are_bounded(store: CallStore, policy: ApprovalPolicy) -> None:
    from bot.approvals.decisions import VERIFIED_AHEAD_LIMIT

    record = await approved(store, policy)
    signer = decision_keys.signer()
    verifier = decision_keys.verifier()

    def token(approver: str) -> str:
        return signer.sign(call_id=record.id, tool=record.tool, app=record.app, argv_hash=record.argv_hash,
                           binary_digest=record.binary_digest, model_hash=record.model_hash, approvers=[approver],
                           verdict="approved", now=1.0)

    first = token("UAPP")
    verifier.verify_ahead(first)
    for i in range(VERIFIED_AHEAD_LIMIT):  # claims that never came (lost to another runner)
        verifier.verify_ahead(token(f"U{i}"))
    assert len(verifier._ahead) == VERIFIED_AHEAD_LIMIT and first not in verifier._ahead  # the oldest went


async def test_the_run_entry_carries_the_decision_and_the_finish_deletes_it(
        store: CallStore, policy: ApprovalPolicy, redis: Redis) -> None:
    stream = store.keys.run_stream(0)
    clicked = await approved(store, policy)
    [auto] = await store.propose("conv", [signed_proposal()], ApprovalPolicy(auto_approve={"tools": ["_status$"]}),
                                 "UREQ")
    entries = {fields[b"call_id"].decode(): (entry_id, fields) for entry_id, fields in await redis.xrange(stream)}
    for record in (clicked, auto):
        assert entries[record.id][1][b"decision"].decode() == record.signed_decision != ""
    await ensure_group(redis, stream, "runners")
    await redis.xreadgroup("runners", "c1", {stream: ">"}, count=10)
    await store.claim(clicked.id, "r1")
    entry_id = entries[clicked.id][0].decode()
    await store.record_result(clicked.id, "r1", {"status": "finished", "exit_code": 0}, run_entry=("runners", entry_id))
    assert [e for e, _ in await redis.xrange(stream)] == [entries[auto.id][0]]  # the token is not kept


def test_claims_encode_to_the_same_canonical_bytes_as_every_field_of_the_dataclass() -> None:
    """Signed bytes never change: a missing or renamed field would change every token (and the check below)."""
    import dataclasses
    import json

    from bot.approvals.decisions import DecisionClaims

    claims = DecisionClaims(call_id="0-abc", tool="opsctl_status", app="opsctl", argv_hash="ab" * 32,
                            binary_digest="cd" * 32, model_hash="ef" * 32, approvers=("U1", "Ü\u202e2"),
                            verdict="approved", signed_at=1.5, expires_at=3601.5, key_id="0123456789abcdef")
    every_field = {f.name: getattr(claims, f.name) for f in dataclasses.fields(claims)}
    every_field["approvers"] = list(claims.approvers)
    assert claims.encode() == json.dumps(every_field, sort_keys=True, separators=(",", ":")).encode()
    assert DecisionClaims.decode(claims.encode()) == claims
