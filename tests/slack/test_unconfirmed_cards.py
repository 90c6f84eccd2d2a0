"""Cards of approvals no Redis replica confirmed (``bot/slack/unconfirmed.py``): the card says so while the mark
is on the record, not once the call moved on or the mark was cleared; and an approval a failover lost (the record
awaiting again, the approver gone) gets its card back to awaiting with its buttons from the watcher alone.

Records come from the real store on the real Redis; the card updates go to the fake Slack through the real bolt
front end. (The failover itself is in ``tests/scaling/test_failover_chaos.py``; the SIGSTOPped replica in
``test_click_durability.py``.)"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, Proposal
from bot.approvals.store import CallStore
from bot.redis_durable import DurabilitySettings
from bot.slack.cards import DENY_ACTION, UNCONFIRMED_WORDS, render_card
from bot.slack.deny import deny_with_reason
from bot.slack.interactions import SlackDeps
from bot.slack.unconfirmed import MARK, reconcile, unconfirmed_approver, watch_unconfirmed
from tests.slack.conftest import CHANNEL, Harness, wait_for
from tests.slack.test_approvals import card_for, card_text

CONV = f"slack:{CHANNEL}:1700.000001"
POLICY = ApprovalPolicy(approvers={"users": ["UAPP"]})


async def _proposed(store: CallStore, policy: ApprovalPolicy = POLICY, tags: tuple[str, ...] = ()) -> CallRecord:
    proposal = Proposal(tool="t", app="a", arguments="{}", argv=["a"], tags=list(tags))
    (record,) = await store.propose(CONV, [proposal], policy, "UREQ")
    return record


def _marked(record: CallRecord, user: str) -> CallRecord:
    return replace(record, meta={**record.meta, MARK: user})


def _buttons(blocks: list[dict[str, object]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]  # type: ignore[index, attr-defined]


async def _restore(harness: Harness, key: str, before: dict[bytes, bytes]) -> None:
    """What a failover that lost the decision leaves: the record on the new primary is the one from before it."""
    await harness.redis.delete(key)
    await harness.redis.hset(key, mapping=before)  # type: ignore[arg-type]


async def _watch_until_buttons(harness: Harness, deps: SlackDeps, record: CallRecord) -> None:
    """Run the watcher alone until the card offers Approve again."""
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch_unconfirmed(deps, stop, period=0.05))
    try:
        await wait_for(lambda: "fisk_approve" in card_text(harness, record))
    finally:
        stop.set()
        await watcher


async def test_an_unconfirmed_approval_is_shown_as_such_and_a_confirmed_one_plainly(store: CallStore) -> None:
    approved = await store.approve((await _proposed(store)).id, "UAPP", [], POLICY)
    plain = json.dumps(render_card(approved, POLICY)[1])
    assert "Approved by <@UAPP>" in plain and UNCONFIRMED_WORDS not in plain
    _, blocks = render_card(_marked(approved, "UAPP"), POLICY)
    text = json.dumps(blocks)
    assert "Approved by <@UAPP>" in text and UNCONFIRMED_WORDS in text
    assert _buttons(blocks) == ["fisk_cancel"]  # still approved on the primary: it may run
    # once claimed, the claim's own wait covered the approval: the running card says nothing of it
    claimed = await store.claim(approved.id, "runner-a")
    assert claimed is not None
    assert UNCONFIRMED_WORDS not in json.dumps(render_card(_marked(claimed, "UAPP"), POLICY)[1])


async def test_the_mark_names_an_approval_the_record_holds(store: CallStore) -> None:
    two = ApprovalPolicy(approvers={"users": ["UAPP", "UOTHER"]}, two_person_tags=["two"])
    first = await store.approve((await _proposed(store, two, ("two",))).id, "UAPP", [], two)
    assert first.state == CallState.awaiting_approval
    assert unconfirmed_approver(_marked(first, "UAPP")) == "UAPP"
    assert UNCONFIRMED_WORDS in json.dumps(render_card(_marked(first, "UAPP"), two)[1])
    # a mark whose approval is not on the record (lost, with the mark surviving somehow) is not shown
    assert unconfirmed_approver(_marked(first, "UOTHER")) is None
    assert unconfirmed_approver(_marked(await _proposed(store), "UAPP")) is None


async def test_the_watcher_puts_the_card_of_a_lost_approval_back_to_awaiting(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    deps = harness.front.deps
    key = harness.store.keys.call(record.id)
    before = await harness.redis.hgetall(key)
    await harness.store.approve(record.id, "UAPPROVER", [], deps.policy)
    await harness.store.set_meta(record.id, **{MARK: "UAPPROVER"})
    await wait_for(lambda: UNCONFIRMED_WORDS in card_text(harness, record))  # the poster's card of the approval
    # a failover lost the approval and its mark: the record on the new primary is the one from before the click
    # (the card's meta included), and no event tells the poster
    await _restore(harness, key, before)
    lost = await harness.store.get(record.id)
    assert lost.state == CallState.awaiting_approval
    deps.unconfirmed.watch(lost.id, "UAPPROVER")
    await _watch_until_buttons(harness, deps, lost)
    assert "Approval needed" in card_text(harness, lost) and lost.id not in deps.unconfirmed.watched


async def test_the_watcher_keeps_an_unconfirmed_approval_and_drops_a_confirmed_one(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    deps = harness.front.deps
    await harness.store.approve(record.id, "UAPPROVER", [], deps.policy)
    await harness.store.set_meta(record.id, **{MARK: "UAPPROVER"})
    deps.unconfirmed.watch(record.id, "UAPPROVER")
    await wait_for(lambda: UNCONFIRMED_WORDS in card_text(harness, record))  # the poster is done with the approval
    await asyncio.sleep(0.2)
    updates = len(harness.slack.calls_to("chat.update"))
    assert await reconcile(deps) == 0 and record.id in deps.unconfirmed.watched  # still on the primary only
    await harness.store.set_meta(record.id, **{MARK: ""})  # confirmed (the clicker's Confirm clears it)
    assert await reconcile(deps) == 0 and record.id not in deps.unconfirmed.watched
    assert len(harness.slack.calls_to("chat.update")) == updates  # nothing to correct: no card update


async def test_the_watcher_puts_the_card_of_a_lost_denial_back_to_awaiting(harness: Harness, poster) -> None:
    """A denial no replica confirmed (the store asks for a replica this Redis lacks) is watched; a failover that
    loses it leaves the call awaiting, and the card offers Approve / Deny again instead of saying "Denied" while the
    call quietly expires. A denial still on the record is left alone, and watched no longer than its window."""
    record = await card_for(harness, poster)
    deps = harness.front.deps
    key = harness.store.keys.call(record.id)
    before = await harness.redis.hgetall(key)
    deps.store.durable.settings = DurabilitySettings(replicas=1, timeout_ms=50)  # WAIT 1 with no replica: short
    told: list[str] = []

    async def tell(text: str) -> None:
        told.append(text)

    assert await deny_with_reason(deps, record.id, "UAPPROVER", [], "not now", tell) == "not_durable"
    assert "no Redis replica confirmed it" in told[0] and record.id in deps.unconfirmed.denials
    await wait_for(lambda: "Denied by" in card_text(harness, record))
    assert await reconcile(deps) == 0 and record.id in deps.unconfirmed.denials  # still denied: kept, no update
    # the failover lost the denial: the record on the new primary is the one from before the click
    await _restore(harness, key, before)
    await _watch_until_buttons(harness, deps, record)
    assert "Approval needed" in card_text(harness, record) and record.id not in deps.unconfirmed.denials
    deps.unconfirmed.watch_denial("0-" + "f" * 32, seconds=0)  # a watch that ended is dropped, whatever the state
    assert await reconcile(deps) == 0 and not deps.unconfirmed.watching()


async def test_a_deny_button_no_replica_confirmed_is_watched_like_the_dialog_s_denial(harness: Harness, poster) -> None:
    """Deny without the reason dialog (``deny_reason_dialog: false``, or a click without a trigger) tells the denier
    the same thing as the dialog ("its card then offers Approve / Deny again"): so its denial must be watched too
    (before: only the dialog's was, and the button's card kept saying "Denied" after a failover lost it)."""
    record = await card_for(harness, poster)
    deps = harness.front.deps
    deps.settings = deps.settings.model_copy(update={"deny_reason_dialog": False})
    key = harness.store.keys.call(record.id)
    before = await harness.redis.hgetall(key)
    deps.store.durable.settings = DurabilitySettings(replicas=1, timeout_ms=50)  # WAIT 1 with no replica: short
    assert (await harness.click(record, DENY_ACTION, "UAPPROVER"))[0] == 200
    await wait_for(lambda: record.id in deps.unconfirmed.denials)  # once its WAIT fell short
    await wait_for(lambda: "Denied by" in card_text(harness, record))
    await _restore(harness, key, before)  # the failover lost the denial
    await _watch_until_buttons(harness, deps, record)
    assert "Approval needed" in card_text(harness, record)
