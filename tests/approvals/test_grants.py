"""Standing approvals in the store: a grant approves later calls of its tool in its thread (signed by the role
applying it, audited with the grant id), and stops doing so once revoked or expired; never for two-person or
(by default) confirm tools; an exact-command grant covers only that command line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.decisions import DecisionSigner, DecisionVerifier
from bot.approvals.grants import GrantError
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState, Proposal, hash_argv
from bot.approvals.store import CallStore
from tests.approvals.test_decisions import DIGEST, signed_proposal
from tests.support import decision_keys

CONV = "slack:C1:1.0"
POLICY = ApprovalPolicy(approvers={"users": ["UAPP"]}, two_person_tags=["two"], confirm_tags=["impact:rw"],
                        standing={"enabled": True})


def _p(tags: list[str] | None = None, argv: list[str] | None = None) -> Proposal:
    return replace(signed_proposal(tags), argv=argv or ["status", "--host", "db-3"])


async def test_a_grant_approves_later_calls_signed_and_audited(redis: Redis) -> None:
    signer = DecisionSigner(decision_keys.TEST_KEY, valid_seconds=60)
    store = CallStore(redis, signer=signer)
    grant = await store.grants.create(CONV, "opsctl_status", "UAPP", 30, binary_digest=DIGEST)
    (call,) = await store.propose(CONV, [_p()], POLICY, "UREQ")
    assert call.state is CallState.auto_approved
    assert call.decision is not None and call.decision.actor == f"grant:{grant.id}"
    assert "UAPP" in call.decision.reason
    claims = DecisionVerifier([decision_keys.TEST_KEY.public_key()]).check(call)
    assert list(claims.approvers) == [f"grant:{grant.id}", "UAPP"]
    trail = await read_audit(redis, call_id=call.id)
    assert trail[-1].actor == f"grant:{grant.id}" and trail[-1].to_state == "auto_approved"
    (granted,) = await read_audit(redis, call_id=grant.id)
    assert granted.to_state == "granted" and granted.actor == "UAPP"
    (other,) = await store.propose("slack:C1:2.0", [_p()], POLICY, "UREQ")  # another thread: not covered
    assert other.state is CallState.awaiting_approval


async def test_revoked_and_expired_grants_are_not_used(redis: Redis) -> None:
    now = [1_000_000.0]
    store = CallStore(redis, clock=lambda: now[0], signer=decision_keys.signer())
    grant = await store.grants.create(CONV, "opsctl_status", "UAPP", 30, binary_digest=DIGEST)
    await store.grants.revoke(grant.id, "UAPP")
    with pytest.raises(GrantError):
        await store.grants.revoke(grant.id, "UAPP")
    (call,) = await store.propose(CONV, [_p()], POLICY, "UREQ")
    assert call.state is CallState.awaiting_approval
    assert [e.to_state for e in await read_audit(redis, call_id=grant.id)] == ["granted", "revoked"]

    later = await store.grants.create(CONV, "opsctl_status", "UAPP", 30, binary_digest=DIGEST)
    (used,) = await store.propose(CONV, [replace(_p(), tool_use_id="t2")], POLICY, "UREQ")
    assert used.state is CallState.auto_approved
    now[0] += 30 * 60 + 1
    (after,) = await store.propose(CONV, [replace(_p(), tool_use_id="t3")], POLICY, "UREQ")
    assert after.state is CallState.awaiting_approval and await store.grants.active(CONV) == []
    with pytest.raises(GrantError):
        await store.grants.revoke(later.id, "UAPP")


async def test_a_grant_revoked_after_it_was_read_is_not_used(redis: Redis) -> None:
    """The CREATE script checks the grant itself, so a revoke between the read and the write wins."""
    store = CallStore(redis, signer=DecisionSigner(decision_keys.TEST_KEY, valid_seconds=60))
    grant = await store.grants.create(CONV, "opsctl_status", "UAPP", 30, binary_digest=DIGEST)
    active = store.grants.active

    async def read_then_revoke(conversation: str):  # type: ignore[no-untyped-def]
        grants = await active(conversation)
        await store.grants.revoke(grant.id, "UAPP")
        return grants

    store.grants.active = read_then_revoke  # type: ignore[method-assign]
    (call,) = await store.propose(CONV, [_p()], POLICY, "UREQ")
    assert call.state is CallState.awaiting_approval and call.signed_decision == ""


async def test_exact_command_grants_and_tools_that_never_get_one(redis: Redis) -> None:
    store = CallStore(redis, signer=decision_keys.signer())
    argv = ["status", "--host", "db-3"]
    await store.grants.create(CONV, "opsctl_status", "UAPP", 30, argv_hash=hash_argv(argv), binary_digest=DIGEST)
    same, other = await store.propose(CONV, [_p(argv=argv), replace(_p(argv=["status", "--host", "db-4"]),
                                                                        tool_use_id="t2")], POLICY, "UREQ")
    assert same.state is CallState.auto_approved and other.state is CallState.awaiting_approval
    assert POLICY.standing_refusal(["two"]) and POLICY.standing_refusal(["impact:rw"])
    assert POLICY.standing_refusal(["ai:confirm"]) and POLICY.standing_refusal(["impact:ro"]) is None
    for tags in (["two"], ["impact:rw"]):  # grants that would cover them, were it not for the policy
        await store.grants.create(CONV, "opsctl_status", "UAPP", 30, tags=tags, binary_digest=DIGEST)
    two, rw = await store.propose(CONV, [replace(_p(tags=["two"]), tool_use_id="t3"),
                                         replace(_p(tags=["impact:rw"]), tool_use_id="t4")],
                                  POLICY, "UREQ")
    assert two.state is CallState.awaiting_approval and rw.state is CallState.awaiting_approval
    relaxed = POLICY.model_copy(update={"standing": POLICY.standing.model_copy(update={"allow_confirm_tags": True})})
    (rw_ok,) = await store.propose(CONV, [replace(_p(tags=["impact:rw"]), tool_use_id="t5")],
                                   relaxed, "UREQ")
    assert rw_ok.state is CallState.auto_approved
    off = ApprovalPolicy(approvers={"users": ["UAPP"]})  # the default: no grant is ever applied
    (not_used,) = await store.propose(CONV, [replace(_p(), tool_use_id="t6")], off, "UREQ")
    assert not_used.state is CallState.awaiting_approval and off.standing_refusal([]) is not None


async def test_a_grant_forged_or_widened_in_redis_approves_nothing(redis: Redis) -> None:
    """Redis is not authority for standing approvals either: the agent uses a grant only as signed."""
    store = CallStore(redis, signer=DecisionSigner(decision_keys.TEST_KEY, valid_seconds=60))
    narrow = await store.grants.create(CONV, "opsctl_other", "UAPP", 1)
    key = store.grants.key(narrow.id)
    await redis.hset(key, mapping={"tool": "opsctl_status", "expires_at": repr(store.grants.now() + 86400)})
    forged_id = "0-gforgedforgedforg"
    await redis.hset(store.grants.key(forged_id), mapping={
        "id": forged_id, "conversation": CONV, "tool": "opsctl_status", "argv_hash": "", "command": "",
        "granted_by": "UAPP", "created_at": repr(store.grants.now()), "expires_at": repr(store.grants.now() + 600),
        "revoked_by": "", "revoked_at": "", "signature": narrow.signature})
    await redis.sadd(store.grants.index(CONV), forged_id)
    (call,) = await store.propose(CONV, [_p()], POLICY, "UREQ")
    assert call.state is CallState.awaiting_approval  # neither the widened nor the forged grant applied


async def test_a_grant_never_approves_its_granters_own_request(redis: Redis) -> None:
    """A grant stands in for its granter's click: the granter asking in the thread is self-approval, refused
    unless the policy writes forbid_self_approval: false (unset counts as forbidden, as in Slack)."""
    store = CallStore(redis, signer=decision_keys.signer())
    await store.grants.create(CONV, "opsctl_status", "UAPP", 30, binary_digest=DIGEST)
    (own,) = await store.propose(CONV, [_p()], POLICY, "UAPP")
    assert own.state is CallState.awaiting_approval and own.signed_decision == ""
    allowed = POLICY.model_copy(update={"forbid_self_approval": False})
    (written,) = await store.propose(CONV, [replace(_p(), tool_use_id="t2")], allowed, "UAPP")
    assert written.state is CallState.auto_approved


async def test_a_grant_does_not_cover_the_tool_once_re_tagged_or_replaced(redis: Redis) -> None:
    """Granted for the tool as the approver saw it: after a re-tag (say a per-tag approver rule the granter is
    not in now applies) or a new binary, its calls wait for a click again."""
    store = CallStore(redis, signer=decision_keys.signer())
    policy = POLICY.model_copy(update={"per_tag": {"impact:db": {"users": ["UDBA"]}}})
    grant = await store.grants.create(CONV, "opsctl_status", "UAPP", 30, tags=["impact:ro"], binary_digest=DIGEST)
    assert grant.trusted(decision_keys.TEST_KEY.public_key(), CONV) is not None
    same, retagged, replaced = await store.propose(CONV, [
        _p(tags=["impact:ro"]),
        replace(_p(tags=["impact:ro", "impact:db"]), tool_use_id="t2"),
        replace(_p(tags=["impact:ro"]), tool_use_id="t3", binary_digest="ef" * 32),
    ], policy, "UREQ")
    assert same.state is CallState.auto_approved
    assert retagged.state is CallState.awaiting_approval and replaced.state is CallState.awaiting_approval
    # the tags are signed: widening them in Redis makes the grant cover nothing
    await redis.hset(store.grants.key(grant.id), "tags", "impact:db\nimpact:ro")
    (still,) = await store.propose(CONV, [replace(_p(tags=["impact:ro", "impact:db"]), tool_use_id="t4")],
                                   policy, "UREQ")
    assert still.state is CallState.awaiting_approval
