"""Completion events: waiting for a turn's calls, and one consumer group per role on the same stream."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from bot.approvals.events import CompletionConsumer, wait_for_terminal
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from tests.approvals.conftest import proposal

CONV = "C9/2.0"


async def test_wait_for_terminal_wakes_on_completion(store: CallStore, policy: ApprovalPolicy):
    a, b = await store.propose(CONV, [proposal(), proposal()], policy, "U")
    waiter = asyncio.create_task(wait_for_terminal(store, [a.id, b.id], timeout=5))
    await asyncio.sleep(0.05)
    await store.deny(a.id, "U2", [], policy)
    await asyncio.sleep(0.05)
    assert not waiter.done()
    await store.cancel(b.id, "U", "stopped")
    records = await asyncio.wait_for(waiter, 3)
    assert [r.state for r in records] == [CallState.denied, CallState.denied]


async def test_wait_for_terminal_times_out(store: CallStore, policy: ApprovalPolicy):
    (a,) = await store.propose(CONV, [proposal()], policy, "U")
    with pytest.raises(TimeoutError):
        await wait_for_terminal(store, [a.id], timeout=0.2)


async def test_two_roles_each_see_every_event_replicas_share(redis: Redis, store: CallStore,
                                                             policy: ApprovalPolicy):
    agent_1 = CompletionConsumer(redis, "agent", "agent-1")
    agent_2 = CompletionConsumer(redis, "agent", "agent-2")
    slack = CompletionConsumer(redis, "slack", "slack-1")
    for c in (agent_1, agent_2, slack):
        await c.ensure_group()
    records = await store.propose(CONV, [proposal() for _ in range(4)], policy, "U")
    for r in records:
        await store.deny(r.id, "U2", [], policy)
    seen_agent = await agent_1.read(count=2, block=0.1) + await agent_2.read(count=10, block=0.1)
    seen_slack = await slack.read(count=10, block=0.1)
    assert sorted(e.call_id for e in seen_agent) == sorted(r.id for r in records)
    assert sorted(e.call_id for e in seen_slack) == sorted(r.id for r in records)
    assert [e.open for e in seen_slack] == [3, 2, 1, 0]
    await agent_1.ack(*seen_agent[:2])
    await agent_2.ack(*seen_agent[2:])
    await slack.ack(*seen_slack)
    assert await agent_1.read(block=0.05) == [] and await slack.read(block=0.05) == []
    for group in ("agent", "slack"):  # every event acknowledged (one XACK per stream for a batch)
        assert [(await redis.xpending(s, group))["pending"] for s in slack.streams] == [0] * len(slack.streams)


async def test_unacked_events_are_redelivered_after_restart_and_to_others(redis: Redis, store: CallStore,
                                                                          policy: ApprovalPolicy):
    first = CompletionConsumer(redis, "agent", "agent-1", claim_idle=0.2)
    await first.ensure_group()
    (a,) = await store.propose(CONV, [proposal()], policy, "U")
    await store.deny(a.id, "U2", [], policy)
    (event,) = await first.read(block=0.1)  # crash before ack
    restarted = CompletionConsumer(redis, "agent", "agent-1", claim_idle=0.2)
    assert [e.call_id for e in await restarted.read(block=0.1)] == [a.id]
    other = CompletionConsumer(redis, "agent", "agent-2", claim_idle=0.2)
    await asyncio.sleep(0.25)
    assert [e.call_id for e in await other.read(block=0.1)] == [a.id]
    await other.ack(event)


async def test_events_iterator_acks(redis: Redis, store: CallStore, policy: ApprovalPolicy):
    consumer = CompletionConsumer(redis, "slack", "s1")
    (a,) = await store.propose(CONV, [proposal()], policy, "U")
    await store.deny(a.id, "U2", [], policy)
    stop = asyncio.Event()
    async for event in consumer.events(stop, block=0.05):
        assert event.call_id == a.id and event.state is CallState.denied
        stop.set()
    pending = await redis.xpending(store.keys.completions_stream(0), "slack")
    assert pending["pending"] == 0


@pytest.mark.parametrize("bad", [{"state": "exploded"}, {"open": "many"}, {"at": "inf"}, {"at": "soon"}])
async def test_a_malformed_entry_is_acknowledged_and_skipped_not_raised(redis: Redis, store: CallStore,
                                                                        policy: ApprovalPolicy, bad: dict[str, str]):
    """Only a Redis writer makes such an entry; raising on it stopped every consumer (the runner's metrics loop
    ended its process) again after each restart, since the entry stayed pending."""
    consumer = CompletionConsumer(redis, "agent", "agent-1", claim_idle=0.2)
    await consumer.ensure_group()
    (a,) = await store.propose(CONV, [proposal()], policy, "U")
    await redis.xadd(consumer.streams[0], {"call_id": "forged", "conversation": CONV, "state": "finished",
                                           "open": "0", "at": "1", **bad})
    await store.deny(a.id, "U2", [], policy)
    events = await consumer.read(block=0.1)
    assert [e.call_id for e in events] == [a.id]  # the good event after the bad one still arrives
    await consumer.ack(*events)
    assert (await redis.xpending(consumer.streams[0], "agent"))["pending"] == 0  # the bad one acknowledged too
    restarted = CompletionConsumer(redis, "agent", "agent-1", claim_idle=0.2)
    await asyncio.sleep(0.25)
    assert await restarted.read(block=0.05) == []
