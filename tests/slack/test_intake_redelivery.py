"""A recorded click handled but not acknowledged (the process killed -9, or its Redis connection cut, before the
intake worker's batched XACK: bot/slack/acks.py) is handled again: by a restart re-reading its own pending entries,
or by another replica reclaiming it. Handling it again must change nothing a user can see except a note to the
clicker that their click had already taken effect: no second approval counted, no second run, no second card or
thread message, no second denial or cancel recorded. Real bolt app over signed HTTP, real Redis, loopback Slack;
the second handling is the intake worker's own (a replica's reclaim, or ``process`` as a restart's re-read runs it)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.slack.settings import SlackSettings
from bot.streams import ensure_group
from bot.tools.catalog import Catalog
from tests.slack.conftest import CHANNEL, Harness, click_payload, make_front, serving, wait_for
from tests.slack.test_approvals import card_for
from tests.support.fake_slack import FakeSlack, SlackCall

VISIBLE = ("chat.postMessage", "chat.update", "views.open")  # what others in the channel see, and dialogs


def visible(harness: Harness) -> dict[str, int]:
    return {method: len(harness.slack.calls_to(method)) for method in VISIBLE}


async def last_entry(harness: Harness) -> tuple[str, Any]:
    entry_id, fields = (await harness.redis.xrange(harness.front.intake.stream))[-1]
    return entry_id.decode(), fields


async def all_acked(harness: Harness) -> bool:
    return int((await harness.redis.xpending(harness.front.intake.stream, "intake"))["pending"]) == 0


async def lifecycle(harness: Harness, record: CallRecord) -> list[tuple[str, str, str]]:
    return [(e.from_state, e.to_state, e.actor) for e in await read_audit(harness.redis, call_id=record.id, limit=50)]


async def handled_again(harness: Harness) -> None:
    """The last recorded request handled a second time, as a restart's re-read of its pending entries does."""
    assert await wait_for(lambda: all_acked(harness))
    entry_id, fields = await last_entry(harness)
    await harness.front.intake_worker.process(entry_id, fields)


async def test_an_approve_click_handled_again_approves_and_runs_once(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _state(harness, record, CallState.approved))
    await asyncio.sleep(0.3)  # the poster's own card update from the lifecycle's event
    before, audit = visible(harness), await lifecycle(harness, record)
    await handled_again(harness)
    after = await harness.store.get(record.id)
    assert after.state is CallState.approved and [a.user for a in after.approvals] == ["UAPPROVER"]
    assert await harness.redis.xlen(harness.store.keys.run_stream(0)) == 1
    assert await lifecycle(harness, record) == audit
    assert visible(harness) == before
    (note,) = harness.slack.calls_to("chat.postEphemeral")
    assert note.params["user"] == "UAPPROVER" and "already approved" in note.params["text"]


async def test_a_first_of_two_approvals_handled_again_is_counted_once(harness: Harness, poster) -> None:
    two = harness.front.deps.policy.model_copy(update={"two_person_tags": ["impact:rw"]})
    record = await card_for(harness, poster, tags=["impact:rw"], policy=two)
    harness.front.deps.policy = two
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _approvals(harness, record, 1))
    await wait_for(lambda: harness.slack.calls_to("chat.update"))  # the handler's own card update: 1 of 2
    before, audit = visible(harness), await lifecycle(harness, record)
    await handled_again(harness)
    after = await harness.store.get(record.id)
    assert after.state is CallState.awaiting_approval and [a.user for a in after.approvals] == ["UAPPROVER"]
    assert await lifecycle(harness, record) == audit
    assert visible(harness) == before
    assert await harness.redis.xlen(harness.store.keys.run_stream(0)) == 0
    (note,) = harness.slack.calls_to("chat.postEphemeral")
    assert "approved this call already; another approver is needed" in note.params["text"]


async def test_a_deny_submission_handled_again_denies_once(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_deny", "UAPPROVER")
    (opened,) = await wait_for(lambda: harness.slack.calls_to("views.open"))
    await harness.submit_view(opened.response["view"], "UAPPROVER", {"reason": {"reason": "not now"}})
    await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postMessage") if "did not run" in c.params["text"]])
    await asyncio.sleep(0.3)
    before, audit = visible(harness), await lifecycle(harness, record)
    await handled_again(harness)
    await asyncio.sleep(0.3)  # anything the second handling set off (a lifecycle event for the poster)
    after = await harness.store.get(record.id)
    assert after.state is CallState.denied and after.decision is not None and after.decision.reason == "not now"
    (note,) = harness.slack.calls_to("chat.postEphemeral")  # handled again indeed: the denier is told
    assert note.params["user"] == "UAPPROVER" and "already denied" in note.params["text"]
    assert await lifecycle(harness, record) == audit
    assert visible(harness) == before


async def test_a_cancel_click_handled_again_records_one_cancel(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _state(harness, record, CallState.approved))
    assert await harness.store.claim(record.id, "runner-1") is not None
    await harness.click(await harness.store.get(record.id), "fisk_cancel", "UREQ")
    await wait_for(lambda: _cancel_asked(harness, record))
    await asyncio.sleep(0.3)
    cancel, audit = (await harness.store.get(record.id)).cancel, await lifecycle(harness, record)
    before = visible(harness)
    await handled_again(harness)
    after = await harness.store.get(record.id)
    assert after.state is CallState.running and after.cancel == cancel
    assert "already asked to stop" in harness.slack.calls_to("chat.postEphemeral")[-1].params["text"]
    assert await lifecycle(harness, record) == audit
    assert visible(harness) == before


async def test_a_click_handled_by_a_replica_killed_before_its_acknowledgement_is_taken_over_and_runs_once(
    harness: Harness, poster
) -> None:
    """The whole path: a replica reads the click and handles it (the approval is made, the card updated), then dies
    before its batch of acknowledgements is written; the live replica reclaims the entry and handles it again."""
    harness.front.deps.settings.reclaim_idle_seconds = 0.3
    record = await card_for(harness, poster)
    stream = harness.front.intake.stream
    payload = click_payload(record, "fisk_approve", "UAPPROVER", harness.slack.response_url("click"))
    body = {"kind": "action", "body": json.dumps(payload)}
    await ensure_group(harness.redis, stream, "intake")
    async with harness.redis.pipeline(transaction=True) as pipe:  # recorded and read by the doomed replica at once
        pipe.xadd(stream, body)
        pipe.xreadgroup("intake", "doomed-replica", {stream: ">"}, count=10)
        _, taken = await pipe.execute()
    ((entry_id, fields),) = taken[0][1]
    await harness.front.intake_worker.process(entry_id.decode(), fields)  # its handling; then killed: no XACK
    assert (await harness.store.get(record.id)).state is CallState.approved
    await asyncio.sleep(0.3)
    before, audit = visible(harness), await lifecycle(harness, record)
    assert await wait_for(lambda: all_acked(harness), timeout=10)  # taken over, handled again, acknowledged
    after = await harness.store.get(record.id)
    assert [a.user for a in after.approvals] == ["UAPPROVER"] and after.state is CallState.approved
    (note,) = harness.slack.calls_to("chat.postEphemeral")  # the live replica handled it again indeed
    assert "already approved" in note.params["text"]
    assert await harness.redis.xlen(harness.store.keys.run_stream(0)) == 1
    assert await lifecycle(harness, record) == audit
    assert visible(harness) == before


async def _state(harness: Harness, record: CallRecord, state: CallState) -> bool:
    return (await harness.store.get(record.id)).state is state


async def _approvals(harness: Harness, record: CallRecord, count: int) -> bool:
    return len((await harness.store.get(record.id)).approvals) == count


async def _cancel_asked(harness: Harness, record: CallRecord) -> bool:
    return (await harness.store.get(record.id)).cancel is not None


async def test_requests_handled_while_the_replica_stops_are_acknowledged_not_left_to_be_handled_again(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """A rolling deploy stops a replica while clicks are being handled (here: waiting on a slow chat.update). Its
    handlers get their grace to finish; what they finish then is acknowledged before the process exits, not left
    pending for another replica to handle again (a second note to every clicker, a second /fisk hand-off check)."""
    front = make_front(slack, redis, store, policy, catalog, settings)
    slow = {}

    def update(call: SlackCall) -> dict[str, Any]:
        time.sleep(slow.get(call.params.get("ts"), 0.0))  # the fake's own thread: the bot waits on Slack
        return {"ok": True, "channel": call.params.get("channel"), "ts": call.params.get("ts")}

    slack.on("chat.update", update)
    async with serving(front, slack, store, redis) as harness:
        records = []
        for n, delay in enumerate((0.3, 0.9)):
            record = await harness.propose(f"slack:{CHANNEL}:1700.00000{n}", ["opsctl", "status"])
            card = harness.slack._api_chat_postMessage({"channel": CHANNEL, "thread_ts": f"1700.00000{n}",
                                                        "text": "card"})
            await harness.store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=card["ts"])
            slow[card["ts"]] = delay
            records.append(await harness.store.get(record.id))
        for record in records:
            await harness.click(record, "fisk_approve", "UAPPROVER")
        for record in records:  # both approved; their handlers now wait on chat.update
            await wait_for(lambda r=record: _state(harness, r, CallState.approved))
    # stopped: the handlers had their grace and finished
    assert len(slack.calls_to("chat.update")) == 2
    assert int((await redis.xpending(front.intake.stream, "intake"))["pending"]) == 0
