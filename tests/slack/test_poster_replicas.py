"""Two slack replicas' posters on one Redis: a reply never overtakes a result the other replica is posting, and
each result is posted once whichever of them gets to it. (The whole pair as processes: tests/scaling/
test_slack_replicas.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.slack import SlackFrontEnd, SlackSettings
from bot.slack import client as api
from bot.slack.client import close_client
from bot.tools.catalog import Catalog
from tests.slack.conftest import CHANNEL, Harness, make_front, wait_for
from tests.support.fake_slack import FakeSlack, SlackCall, SlackReply

CONV = f"slack:{CHANNEL}:1700.000001"


def key_of(call: SlackCall) -> str:
    metadata = call.params.get("metadata") or {}
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    return str((metadata.get("event_payload") or {}).get("key") or "")


def posted_keys(slack: FakeSlack) -> list[str]:
    """The bot's posts in the order Slack accepted them (their ts), by metadata key."""
    posts = [c for c in slack.calls_to("chat.postMessage") if c.status == 200 and c.response.get("ok")]
    return [key_of(c) for c in sorted(posts, key=lambda c: float(c.response["ts"]))]


def slow_results(slack: FakeSlack, seconds: float, prefix: str = "result:") -> None:
    def post(call: SlackCall) -> dict[str, Any]:
        if key_of(call).startswith(prefix):
            time.sleep(seconds)  # this request's own server thread: nothing else waits
        return slack._api_chat_postMessage(call.params)

    slack.on("chat.postMessage", post)


@pytest.fixture
def settings() -> SlackSettings:
    """As in the other Slack tests, but a replica takes over another's idle entries after 1 s (not 60)."""
    return SlackSettings(mode="http", usergroup_cache_seconds=0, reclaim_idle_seconds=1.0)


@pytest.fixture
async def other(slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
                settings: SlackSettings) -> AsyncIterator[SlackFrontEnd]:
    """A second slack replica on the same Redis and Slack (the ``harness`` front is the first)."""
    front = make_front(slack, redis, store, policy, catalog, settings.model_copy(update={"consumer": "replica-b"}))
    yield front
    await close_client(front.deps.client)


async def finished_with_card(harness: Harness) -> CallRecord:
    record = await harness.propose(CONV, ["opsctl", "status"])
    await harness.front.poster.post_card(record.id)
    await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=record.argv_hash)
    assert await harness.store.claim(record.id, "runner-1")
    return await harness.store.finish(record.id, "runner-1", {"status": "finished", "exit_code": 0, "output": "ok\n",
                                                               "duration_seconds": 0.1, "total_bytes": 3})


async def test_a_reply_waits_for_the_result_the_other_replica_is_posting(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    record = await finished_with_card(harness)
    slow_results(slack, 0.5)
    # replica A takes the completion and is still waiting for Slack to accept the result...
    posting = asyncio.create_task(harness.front.poster.handle_completion(record.id, owner="a:completions:1-0"))
    await asyncio.sleep(0.15)
    # ...when replica B takes the agent's answer, written from that result
    await other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0"))
    await posting
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]


async def test_a_reply_posts_a_result_nobody_has_taken_yet_and_the_completion_does_not_post_it_again(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    record = await finished_with_card(harness)
    await other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0"))
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]
    await harness.front.poster.handle_completion(record.id, owner="a:completions:1-0")  # read late, on A
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]
    card = slack.message(CHANNEL, (await store.get(record.id)).meta["slack_ts"])
    assert "Finished" in json.dumps(card["blocks"])
    # nobody had tried to post that result, so the reply posted it without reading the thread back first
    assert not slack.calls_to("conversations.replies")


async def test_a_reply_finds_the_result_a_dead_replica_posted_and_does_not_post_it_again(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack) -> None:
    """Replica A took a result's hold, posted the result and died before recording it. B's reply, once A's hold
    lapsed, is told someone tried before: it looks in the thread, finds A's post and records it instead of
    posting the result a second time."""
    other.poster.outcomes.hold_seconds = 1
    record = await finished_with_card(harness)
    assert (await harness.front.deps.state.take_outcome(record.id, "dead-replica", 1))[0]
    await api.post(harness.front.deps.client, CHANNEL, "exit code 0", thread_ts=CONV.rsplit(":", 1)[1],
                   key=f"result:{record.id}")  # A's post, never recorded
    await other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0"))
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]
    assert slack.calls_to("conversations.replies"), "the reply looked in the thread first"
    assert (await harness.store.get(record.id)).meta.get("slack_result_ts")


async def test_both_replicas_taking_one_result_at_once_post_it_once(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    record = await finished_with_card(harness)
    slow_results(slack, 0.3)
    await asyncio.gather(
        harness.front.poster.handle_completion(record.id, owner="a:completions:1-0"),
        other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0")),
    )
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]


async def test_an_entry_a_live_replica_keeps_retrying_is_not_taken_over_and_posted_twice(
    harness: Harness, slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """Slack is down for longer than ``reclaim_idle_seconds``: the replica that read the reply keeps retrying it,
    and the other must not take it over as if its reader had died (both would post it when Slack is back)."""
    fronts = [make_front(slack, redis, store, policy, catalog, settings.model_copy(update={"consumer": name}))
              for name in ("replica-a", "replica-b")]
    slack.messages[(CHANNEL, "1700.000001")] = {"type": "message", "user": "UREQ", "text": "help", "ts": "1700.000001"}
    stop = asyncio.Event()
    slack.down = "error"
    tasks = [asyncio.create_task(front.run_poster(stop)) for front in fronts]
    try:
        await bus.publish(redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": "answer during outage"}))
        await wait_for(lambda: len(slack.calls) >= 3, timeout=5)  # tried and retried
        await asyncio.sleep(3.0)  # three reclaim periods of the outage
        slow_results(slack, 0.5, "reply:")  # a second poster would look for the post before it is made
        slack.down = None
        await wait_for(lambda: posted_keys(slack), timeout=10)
        await asyncio.sleep(1.0)  # room for a second post
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        for front in fronts:
            await close_client(front.deps.client)
    assert len(posted_keys(slack)) == 1, posted_keys(slack)


async def test_a_request_a_live_replica_keeps_retrying_is_not_taken_over_and_started_twice(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack) -> None:
    """The intake likewise: a /fisk recorded by replica A, whose "asked" post waits out a Slack outage longer than
    ``reclaim_idle_seconds``, is not also started by replica B (two posts, two threads)."""
    outage = True

    def post(call: SlackCall) -> SlackReply | dict[str, Any]:
        if outage:
            return SlackReply(503, "service unavailable")
        if "asked:" in str(call.params.get("text")):
            time.sleep(0.5)  # a second replica would look for the post before it is made
        return slack._api_chat_postMessage(call.params)

    slack.on("chat.postMessage", post)
    stop = asyncio.Event()
    worker = asyncio.create_task(other.intake_worker.run(stop))
    try:
        assert (await harness.command("is web ok?"))[0] == 200
        await asyncio.sleep(3.0)  # three reclaim periods of the outage
        (pending,) = await harness.redis.xpending_range(harness.front.intake.stream, "intake", "-", "+", 10)
        # kept by its reader, never taken over (its reader re-reads its own pending entries every reclaim period,
        # which counts as a delivery, so the count is no measure of a takeover)
        assert pending["consumer"].decode() == harness.front.intake_worker.consumer != "replica-b", pending
        outage = False
        await wait_for(lambda: posted_asked(slack), timeout=10)
        await asyncio.sleep(1.0)  # room for a second post
    finally:
        stop.set()
        await worker
    assert len(posted_asked(slack)) == 1


def posted_asked(slack: FakeSlack) -> list[SlackCall]:
    return [c for c in slack.calls_to("chat.postMessage") if c.status == 200 and "asked:" in str(c.params.get("text"))]


async def test_a_card_refused_for_its_size_is_the_calls_only_outcome_whichever_replica_reads_the_denial(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    """Replica A refuses a card too big for Slack (the call is closed as denied, the thread told why) while
    replica B reads the completion entry that closing wrote: B must not post a "denied" note as well (the
    refusal is the call's outcome, posted under the hold every outcome is posted under)."""
    deps = harness.front.deps
    deps.policy = deps.policy.model_copy(update={"approvers": deps.policy.approvers.model_copy(
        update={"users": [f"U{i:010d}" for i in range(300)]})})
    record = await harness.propose(CONV, ["opsctl", "status"])
    slow_results(slack, 0.5, "card:")  # A's refusal is still on its way when B reads the completion
    refusing = asyncio.create_task(harness.front.poster.handle(
        bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}, id="1-0")))
    await wait_for(lambda: store.find(record.id), timeout=5)

    async def denied() -> bool:
        return (await store.get(record.id)).terminal

    await wait_for(denied, timeout=5)
    await other.poster.handle_completion(record.id, owner="b:completions:1-0")
    await refusing
    assert posted_keys(slack) == [f"card:{record.id}"]
    final = await store.get(record.id)
    assert final.meta["slack_result_ts"] == final.meta["slack_ts"] and final.meta.get("slack_card_refused") == "1"


async def test_a_live_replica_kept_waiting_by_slack_keeps_its_hold_and_the_result_is_posted_once(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack) -> None:
    """The hold on posting an outcome is short (a dead holder delays its thread only that long), so a live holder
    renews it: Slack keeping replica A's post waiting for longer than the hold must not let replica B take over
    and post the result a second time (B would look in the thread before A's post is there)."""
    for front in (harness.front, other):
        front.poster.outcomes.hold_seconds, front.poster.outcomes.renew_seconds = 1, 0.2
    record = await finished_with_card(harness)
    slow_results(slack, 2.5)  # more than twice the hold
    posting = asyncio.create_task(harness.front.poster.handle_completion(record.id, owner="a:completions:1-0"))
    await asyncio.sleep(0.2)
    await other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0"))
    await posting
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]


async def test_a_result_held_by_a_replica_that_died_is_posted_once_its_short_hold_lapses(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack) -> None:
    """Replica A died holding the post of a result (nothing renews its hold): B posts the result after the hold
    lapses, not before (A might still be alive), and looks in the thread first."""
    other.poster.outcomes.hold_seconds = 1
    record = await finished_with_card(harness)
    assert (await harness.front.deps.state.take_outcome(record.id, "dead-replica", 1))[0]
    started = time.monotonic()
    await other.poster.handle_completion(record.id, owner="b:completions:1-0")
    waited = time.monotonic() - started
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}"]
    assert 0.8 <= waited < 5, waited
    assert any(c.method == "conversations.replies" for c in slack.calls), "the taker looked in the thread first"


async def test_every_hold_a_poster_has_is_renewed_together_and_a_lapsed_one_is_left_to_its_taker(
        harness: Harness, redis: Redis) -> None:
    """A poster posting many results at once renews all its holds in one round trip per period, from one timer:
    no task of its own per hold. A hold that lapsed and was taken by another poster is not renewed any more (it
    is the taker's), and once no hold is left no timer is left behind."""
    outcomes = harness.front.poster.outcomes
    outcomes.hold_seconds, outcomes.renew_seconds = 1, 0.2
    state = harness.front.deps.state
    calls = [f"0-call{n}" for n in range(3)]
    for call in calls:
        assert (await state.take_outcome(call, f"a:{call}", 1))[0]
    tasks_before = len(asyncio.all_tasks())
    async with contextlib.AsyncExitStack() as holding:
        for call in calls:
            await holding.enter_async_context(outcomes.kept(call, f"a:{call}"))
        assert len(asyncio.all_tasks()) == tasks_before  # nothing runs per hold between renewals
        await redis.set(f"{state.prefix}:outcome:{calls[0]}", "b:taker", ex=1)  # lapsed, and another took it
        await asyncio.sleep(1.5)  # past the hold: only renewals keep them
        assert await redis.get(f"{state.prefix}:outcome:{calls[1]}") == f"a:{calls[1]}".encode()
        assert await redis.get(f"{state.prefix}:outcome:{calls[2]}") == f"a:{calls[2]}".encode()
        assert await redis.get(f"{state.prefix}:outcome:{calls[0]}") is None  # the taker's lapsed: not renewed
    assert outcomes._renewal is None and not outcomes._held
