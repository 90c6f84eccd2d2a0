"""fisk_chatops_queue_depth's stages read from a real Redis after real approvals, claims and runs: ``queued`` is
the approved calls no runner has claimed yet, over every shard; denied, expired and cancelled calls never count."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.queue_depth import QueueDepth, read_queue_depth
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, running, wait_until
from tests.support import decision_keys

FAST = {"heartbeat_interval": 0.1, "stale_after": 0.6, "reclaim_after": 0.3, "recovery_interval": 0.1,
        "block_seconds": 0.1}


def conversation_per_shard(store: CallStore) -> list[str]:
    """One conversation that lands on each shard (the shard comes from the conversation's CRC)."""
    found: dict[int, str] = {}
    n = 0
    while len(found) < store.keys.shards:
        conv = f"C{n}/1.0"
        found.setdefault(store.keys.shard_for_conversation(conv), conv)
        n += 1
    return [found[s] for s in range(store.keys.shards)]


async def propose(store: CallStore, conversation: str, n: int) -> list[str]:
    records = await store.propose(conversation, [proposal() for _ in range(n)], ApprovalPolicy(), "U_REQ")
    return [r.id for r in records]


async def depth(store: CallStore) -> QueueDepth:
    return await read_queue_depth(store.redis, store.keys)


async def test_approved_calls_with_no_runner_are_queued_across_shards_and_closed_ones_never(redis: Redis):
    store = CallStore(redis, shards=3, signer=decision_keys.signer())
    policy = ApprovalPolicy()
    convs = conversation_per_shard(store)
    expired = await propose(store, convs[0], 2)
    await store.expire_due(datetime.now(UTC) + timedelta(days=2))
    approved = []
    for shard, conv in enumerate(convs):  # 1, 2 and 3 approved calls on the three shards
        ids = await propose(store, conv, shard + 1)
        for call_id in ids:
            await store.approve(call_id, "U_APP", [], policy)
        approved += ids
    denied = await propose(store, convs[1], 2)
    await store.deny(denied[0], "U_APP", [], policy)
    await store.cancel(denied[1], "U_REQ")  # an awaiting call cancelled: denied
    waiting = await propose(store, convs[2], 1)
    (auto,) = await store.propose(convs[1], [proposal()], ApprovalPolicy(auto_approve={"tools": ["_status$"]}),
                                  "U_REQ")
    assert auto.state is CallState.auto_approved
    assert {(await store.get(i)).state for i in expired} == {CallState.expired}
    assert {(await store.get(i)).state for i in denied} == {CallState.denied}
    result = await depth(store)
    assert (result.awaiting_approval, result.queued, result.running) == (1, 7, 0)
    assert result.earliest_expiry == (await store.get(waiting[0])).expires_at.timestamp()
    assert await depth(CallStore(redis, key_prefix="other")) == QueueDepth()  # another deployment's keys


async def test_claimed_calls_leave_queued_for_running_then_nothing(redis: Redis, tmp_path: Path):
    store = CallStore(redis, shards=2, heartbeat_ttl=1.0, signer=decision_keys.signer())
    policy = ApprovalPolicy()
    ids = []
    for conv in conversation_per_shard(store):
        for call_id in await propose(store, conv, 3):
            await store.approve(call_id, "U_APP", [], policy)
            ids.append(call_id)
    assert (await depth(store)).queued == 6
    release = asyncio.Event()

    async def held(record: CallRecord) -> dict[str, Any]:
        await release.wait()
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    worker = RunnerWorker(redis, store, held, runner_id="r1", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: _is(store, QueueDepth(0, 0, 6, None)))
        release.set()
        await wait_until(lambda: all_terminal(store, ids))
        await wait_until(lambda: _is(store, QueueDepth()))
    assert {(await store.get(i)).state for i in ids} == {CallState.finished}


async def test_an_approved_call_cancelled_before_any_runner_stops_counting_once_a_runner_refuses_it(
    redis: Redis,
):
    """The documented exception: its run entry counts until a runner reads it, refuses the claim and deletes
    the entry (an entry only acknowledged would count as queued until the stream is trimmed)."""
    store = CallStore(redis, heartbeat_ttl=1.0, signer=decision_keys.signer())
    policy = ApprovalPolicy()
    cancelled, kept = await propose(store, "C1/1.0", 2)
    await store.approve(cancelled, "U_APP", [], policy)
    await store.approve(kept, "U_APP", [], policy)
    await store.cancel(cancelled, "U_REQ")
    assert (await store.get(cancelled)).state is CallState.denied
    assert (await depth(store)).queued == 2  # no runner has read its entry yet
    ran: list[str] = []

    async def record_run(record: CallRecord) -> dict[str, Any]:
        ran.append(record.id)
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    worker = RunnerWorker(redis, store, record_run, runner_id="r1", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [kept]))
        await wait_until(lambda: _is(store, QueueDepth()))
    assert ran == [kept]
    assert await redis.xlen(store.keys.run_stream(0)) == 0


async def test_a_call_whose_runner_died_stops_counting_once_a_live_runner_takes_its_entry_over(redis: Redis):
    """A runner read the entry, claimed the call and died: the call is interrupted (never re-run) and its entry,
    pending to the dead runner, counts as queued until a live runner takes it over and deletes it."""
    store = CallStore(redis, heartbeat_ttl=0.3, signer=decision_keys.signer())
    (call_id,) = await propose(store, "C1/1.0", 1)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    stream = store.keys.run_stream(0)
    await redis.xgroup_create(stream, "runners", id="0", mkstream=True)
    await redis.xreadgroup("runners", "dead", {stream: ">"}, count=1)  # what the dead runner read
    assert await store.claim(call_id, "dead", heartbeat_ttl=0.3) is not None
    assert (await depth(store)) == QueueDepth(0, 0, 1, None)
    await asyncio.sleep(0.4)  # its heartbeat lapses
    await store.interrupt_stale()
    assert (await store.get(call_id)).state is CallState.interrupted
    assert (await depth(store)).queued == 1  # the documented exception: its entry is pending to the dead runner

    async def never(record: CallRecord) -> dict[str, Any]:
        raise AssertionError(f"{record.id} ran again")

    worker = RunnerWorker(redis, store, never, runner_id="live", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: _is(store, QueueDepth()))
    assert (await store.get(call_id)).state is CallState.interrupted


async def _is(store: CallStore, expected: QueueDepth) -> bool:
    return await depth(store) == expected


async def test_a_handed_over_call_is_running_and_leaves_the_queued_count_alone(redis: Redis):
    store = CallStore(redis, signer=decision_keys.signer())
    (conversation,) = conversation_per_shard(store)
    ids = await propose(store, conversation, 4)
    policy = ApprovalPolicy()
    await store.approve(ids[0], "U_APP", [], policy)
    await store.approve(ids[1], "U_APP", [], policy)
    await store.park(0, "r1", 5.0, 10.0, 5.0)
    await store.approve(ids[2], "U_APP", [], policy)  # handed over: running, no run entry
    await store.claim(ids[0], "r2")  # claimed from its run entry: running, entry kept until the result
    depth = await read_queue_depth(redis, store.keys)
    assert (depth.awaiting_approval, depth.queued, depth.running) == (1, 1, 2)
