"""A Redis attacker against the *deciding* role (issue 12, review r5).

The runner only checks that a decision was signed for this call, tool and command line; the role that signs
(a click in Slack, the console) reads the call record from Redis to decide who may approve and how many
approvals it needs. Whoever can write Redis must not be able to change those answers: rewrite the requester to
approve their own call, strip the two-person tag, inject a fake first approval, or swap the tool for another
application's tool with the same command line. Each attempt leaves the call awaiting with no signed decision.
"""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from bot.approvals.errors import NotAuthorized, TamperedRecord
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, Proposal, hash_argv
from bot.approvals.store import CallStore
from bot.tools.catalog import Catalog
from tests.adversarial.conftest import wait_until
from tests.adversarial.test_trust import CONV as CARD_CONV
from tests.adversarial.test_trust import POLICY, status_proposal
from tests.slack.conftest import Harness
from tests.support import decision_keys

CONV = "slack:C1:1700.000009"
ARGV = ["/usr/bin/nats", "stream", "rm", "--", "ORDERS"]


def proposal(tool: str = "dev_stream_rm", app: str = "dev", tags: tuple[str, ...] = ("danger",)) -> Proposal:
    return Proposal(tool=tool, app=app, arguments='{"stream": "ORDERS"}', argv=ARGV, tags=list(tags),
                    binary_digest="b" * 64, model_hash="m" * 64)


async def proposed(store: CallStore, policy: ApprovalPolicy, requester: str = "UREQ") -> CallRecord:
    [record] = await store.propose(CONV, [proposal()], policy, requester)
    assert record.state == CallState.awaiting_approval
    return record


async def untouched(store: CallStore, call_id: str) -> None:
    record = await store.get(call_id)
    assert record.state == CallState.awaiting_approval and not record.signed_decision


async def test_a_rewritten_requester_does_not_allow_self_approval(redis: Redis) -> None:
    store, policy = CallStore(redis, signer=decision_keys.signer()), ApprovalPolicy(forbid_self_approval=True)
    call = await proposed(store, policy, requester="UATTACKER")
    await redis.hset(store.keys.call(call.id), "requester", "USOMEONE")
    with pytest.raises((TamperedRecord, NotAuthorized)):
        await store.approve(call.id, "UATTACKER", [], policy, argv_hash=call.argv_hash)
    await untouched(store, call.id)


async def test_a_stripped_two_person_tag_still_needs_two_approvers(redis: Redis) -> None:
    store, policy = CallStore(redis, signer=decision_keys.signer()), ApprovalPolicy(two_person_tags=["danger"])
    call = await proposed(store, policy)
    assert call.approvals_needed == 2
    await redis.hset(store.keys.call(call.id), mapping={"tool_tags": "[]", "approvals_needed": "1"})
    with pytest.raises(TamperedRecord):
        await store.approve(call.id, "UAPP", [], policy, argv_hash=call.argv_hash)
    await untouched(store, call.id)


async def test_an_injected_first_approval_does_not_complete_a_two_person_call(redis: Redis) -> None:
    store, policy = CallStore(redis, signer=decision_keys.signer()), ApprovalPolicy(two_person_tags=["danger"])
    call = await proposed(store, policy)
    fake = json.dumps([{"user": "UGHOST", "at": call.created_at.timestamp()}])
    await redis.hset(store.keys.call(call.id), "approvals", fake)
    with pytest.raises(TamperedRecord):
        await store.approve(call.id, "UAPP", [], policy, argv_hash=call.argv_hash)
    await untouched(store, call.id)
    # a genuine first approval is not enough either, and a genuine pair completes it
    await redis.hset(store.keys.call(call.id), "approvals", "[]")
    first = await store.approve(call.id, "UAPP", [], policy, argv_hash=call.argv_hash)
    assert first.state == CallState.awaiting_approval and not first.signed_decision
    done = await store.approve(call.id, "UAPP2", [], policy, argv_hash=call.argv_hash)
    assert done.state == CallState.approved and done.signed_decision


async def test_another_applications_tool_with_the_same_command_line_is_refused(redis: Redis) -> None:
    store, policy = CallStore(redis, signer=decision_keys.signer()), ApprovalPolicy()
    call = await proposed(store, policy)
    # same binary, same argv (so the same argv hash and digest on the card), another app's environment
    await redis.hset(store.keys.call(call.id), mapping={"tool": "prod_stream_rm", "app": "prod"})
    assert hash_argv(ARGV) == call.argv_hash
    with pytest.raises(TamperedRecord):
        await store.approve(call.id, "UAPP", [], policy, argv_hash=call.argv_hash, binary_digest="b" * 64)
    await untouched(store, call.id)


async def test_a_card_posted_from_rewritten_argv_cannot_approve_the_original(
    harness: Harness, poster, counted_catalog: Catalog
) -> None:
    """The attacker rewrites argv (not its hash) before the card is posted: the card shows the rewritten command,
    so its button must be bound to *that* command line, and the click must not sign the original one."""
    (record,) = await harness.store.propose(CARD_CONV, [status_proposal(counted_catalog, "web")], POLICY, "UREQ")
    shown = [*record.argv[:-1], "payroll"]
    await harness.redis.hset(harness.store.keys.call(record.id), "argv", json.dumps(shown))
    record = await harness.show_card(record, poster)
    card = harness.slack.calls_to("chat.postMessage")[-1].params
    assert "payroll" in json.dumps(card["blocks"])
    value = next(e["value"] for b in card["blocks"] if b["type"] == "actions" for e in b["elements"]
                 if e["action_id"] == "fisk_approve")
    await harness.click(record, "fisk_approve", "UAPPROVER", value=value)

    def told_stale() -> bool:
        return any("stale" in c.params["text"] for c in harness.slack.calls_to("chat.postEphemeral"))

    await wait_until(told_stale, 15)
    latest = await harness.store.get(record.id)
    assert latest.state == CallState.awaiting_approval and not latest.signed_decision
