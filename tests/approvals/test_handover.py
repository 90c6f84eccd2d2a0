"""Hand-overs: an approval claims its call for a parked runner and hands it over (scripts.move, worker.py).

Exactly once under two parked runners; a hand-over its runner never took (it died while parked) is given back
and runs once elsewhere, never interrupted by the sweeper meanwhile; one that was taken is never given back; a
stop request before it was taken cancels it unstarted; no parking where a claim must be confirmed by a replica.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.redis_durable import DurabilitySettings
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until

CONV = "C1/1.0"
FAST = {"heartbeat_interval": 0.1, "stale_after": 0.6, "reclaim_after": 0.3, "recovery_interval": 0.1,
        "block_seconds": 0.1}
HANDED_OVER = "claimed (handed over)"


async def proposed(store: CallStore, n: int) -> list[str]:
    records = await store.propose(CONV, [proposal() for _ in range(n)], ApprovalPolicy(), "U_REQ")
    return [r.id for r in records]


async def trail(redis: Redis, call_id: str) -> list[tuple[str, str, str]]:
    return [(e.from_state, e.to_state, e.reason) for e in await read_audit(redis, call_id=call_id, limit=50)]


async def test_two_parked_runners_run_every_call_exactly_once(redis_url: str, tmp_path: Path):
    clients = [Redis.from_url(redis_url) for _ in range(3)]
    stores = [CallStore(c) for c in clients]
    marker = tmp_path / "marker"
    workers = [RunnerWorker(clients[i], stores[i], marker_executor(marker, sleep=random.random() * 0.02),
                            runner_id=f"w{i}", handover=True, **FAST)  # type: ignore[arg-type]
               for i in (1, 2)]
    ids = await proposed(stores[0], 80)
    policy = ApprovalPolicy()
    async with running(workers[0]), running(workers[1]):
        await wait_until(lambda: clients[0].exists(stores[0].keys.parked(0)))
        for first in range(0, len(ids), 4):
            # one at a time, as clicks come (a parked runner takes it), then three at once from three clients:
            # one hand-over per park, the others as run entries that the runners claim
            await asyncio.sleep(0.03)
            await stores[0].approve(ids[first], "U_APP", [], policy)
            await asyncio.gather(*(stores[k].approve(call_id, "U_APP", [], policy)
                                   for k, call_id in enumerate(ids[first + 1:first + 4])))
        await wait_until(lambda: all_terminal(stores[0], ids), timeout=30)
    assert sorted(executions(marker)) == sorted(ids)  # every call once, none twice
    handed = [i for i in ids if any(reason == HANDED_OVER for *_, reason in await trail(clients[0], i))]
    assert handed and len(handed) < len(ids)  # both paths were taken
    runners = {str((await stores[0].get(i)).runner) for i in handed}
    assert runners <= {"w1", "w2"}
    for call_id in ids:
        assert (await stores[0].get(call_id)).state is CallState.finished
    assert not await clients[0].exists(stores[0].keys.parked(0))  # stopping unparked both
    assert await clients[0].zcard(stores[0].keys.handovers(0)) == 0
    for c in clients:
        await c.aclose()


async def test_a_hand_over_never_taken_is_given_back_and_runs_once(redis: Redis, store: CallStore, tmp_path: Path):
    (call_id,) = await proposed(store, 1)
    # a runner that parked and died: nothing will ever pop its list
    await store.park(0, "ghost", 5.0, 0.3, 0.4)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    record = await store.get(call_id)
    assert record.state is CallState.running and record.runner == "ghost"
    assert await redis.llen(store.keys.handover(0, "ghost")) == 1
    assert await redis.xlen(store.keys.run_stream(0)) == 0
    # its heartbeat lapsed: the sweeper still does not interrupt a hand-over that never started
    await asyncio.sleep(0.35)
    assert not await redis.exists(store.keys.heartbeat(call_id))
    assert await store.interrupt_stale() == []
    assert (await store.get(call_id)).state is CallState.running
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="alive", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
    assert executions(marker) == [call_id]
    steps = await trail(redis, call_id)
    assert [(a, b) for a, b, _ in steps] == [
        ("proposed", "awaiting_approval"), ("awaiting_approval", "approved"), ("approved", "running"),
        ("running", "approved"), ("approved", "running"), ("running", "finished")]
    assert "given back, it never started" in steps[3][2]
    assert (await store.get(call_id)).runner == "alive"
    assert await redis.llen(store.keys.handover(0, "ghost")) == 0
    assert not await redis.exists(store.keys.parked(0))  # the ghost is not handed anything more


async def test_a_taken_hand_over_is_never_given_back(redis: Redis, store: CallStore):
    (call_id,) = await proposed(store, 1)
    await store.park(0, "r1", 5.0, 0.3, 0.1)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    element = await redis.lpop(store.keys.handover(0, "r1"))  # taken by r1, which then died: it may have started
    assert element is not None and element.decode().startswith(call_id + " ")
    await asyncio.sleep(0.15)
    assert await store.due_hand_backs(0) == [call_id]
    assert await store.hand_back(call_id, "test") == "taken"
    assert await store.due_hand_backs(0) == []
    assert (await store.get(call_id)).state is CallState.running
    await asyncio.sleep(0.3)  # the heartbeat the hand-over set lapses: interrupted, never run again
    (interrupted,) = await store.interrupt_stale()
    assert interrupted.id == call_id and interrupted.state is CallState.interrupted
    assert await redis.xlen(store.keys.run_stream(0)) == 0


async def test_a_stop_before_the_runner_took_it_cancels_it_unstarted(redis: Redis, store: CallStore):
    (call_id,) = await proposed(store, 1)
    await store.park(0, "r1", 5.0, 10.0, 5.0)
    policy = ApprovalPolicy()
    await store.approve(call_id, "U_APP", [], policy)
    cancelled = await store.request_cancel(call_id, "U_REQ", [], policy)
    assert cancelled.state is CallState.cancelled
    assert cancelled.result is not None and "never ran" in cancelled.result["error"]
    assert await redis.llen(store.keys.handover(0, "r1")) == 0
    assert await redis.zcard(store.keys.handovers(0)) == 0
    assert not await redis.exists(store.keys.heartbeat(call_id))
    assert await store.hand_back(call_id, "test") == "cancelled"
    # a stop after the runner took it is a stop request to the running call, as for a claim
    (second,) = await proposed(store, 1)
    await store.park(0, "r1", 5.0, 10.0, 5.0)
    await store.approve(second, "U_APP", [], policy)
    assert await redis.lpop(store.keys.handover(0, "r1")) is not None
    requested = await store.request_cancel(second, "U_REQ", [], policy)
    assert requested.state is CallState.running and requested.cancel is not None


async def test_a_malformed_hand_over_reads_the_call_and_runs_it_once(redis: Redis, store: CallStore,
                                                                     tmp_path: Path):
    (call_id,) = await proposed(store, 1)
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w1", handover=True,
                          **FAST)  # type: ignore[arg-type]
    await store.park(0, "elsewhere", 5.0, 5.0, 5.0)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    assert await redis.lpop(store.keys.handover(0, "elsewhere")) is not None
    # claimed for w1 (as the approval's script does), its hand-over unreadable
    await redis.hset(store.keys.call(call_id), mapping={"runner": "w1", "handoff": "w1 approved"})
    await redis.rpush(store.keys.handover(0, "w1"), call_id.encode() + b" {not json")
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
    assert executions(marker) == [call_id]
    assert (await store.get(call_id)).state is CallState.finished


async def test_no_parking_where_a_claim_waits_for_a_replica(redis: Redis, tmp_path: Path):
    store = CallStore(redis, durability=DurabilitySettings(replicas=1, timeout_ms=50))
    worker = RunnerWorker(redis, store, marker_executor(tmp_path / "marker"), runner_id="w1", handover=True,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        for _ in range(5):
            await asyncio.sleep(0.1)
            assert not await redis.exists(store.keys.parked(0))


async def test_only_the_parked_runner_can_unpark(redis: Redis, store: CallStore):
    await store.park(0, "r1", 5.0, 1.0, 1.0)
    await store.unpark(0, "r2")
    assert await redis.exists(store.keys.parked(0))
    await store.unpark(0, "r1")
    assert not await redis.exists(store.keys.parked(0))


async def test_an_unreadable_park_is_dropped_and_the_call_queued_as_before(redis: Redis, store: CallStore):
    (call_id,) = await proposed(store, 1)
    await redis.set(store.keys.parked(0), "r1 soon")  # not what a runner writes: the approval must not fail on it
    record = await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    assert record.state is CallState.approved and record.runner is None
    assert await redis.xlen(store.keys.run_stream(0)) == 1
    assert not await redis.exists(store.keys.parked(0))


async def test_a_hand_over_not_claimed_for_the_runner_is_not_run(redis: Redis, store: CallStore, tmp_path: Path):
    (call_id,) = await proposed(store, 1)
    await redis.xgroup_create(store.keys.run_stream(0), "runners", id="$", mkstream=True)  # its entry: no one's
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())  # approved and queued, claimed by nobody
    flat: list[str] = []
    for name, value in (await redis.hgetall(store.keys.call(call_id))).items():
        flat += [name.decode(), value.decode()]
    body = (await redis.get(store.keys.body(call_id))).decode()
    await redis.xtrim(store.keys.run_stream(0), maxlen=0)  # only the element below could bring it to w1
    key = store.keys.handover(0, "w1")
    await redis.rpush(key, f"{call_id} {json.dumps([flat, body])}")  # a well-formed record, pushed by hand
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w1", handover=True, sweep=False,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: list_empty(redis, key))
        await asyncio.sleep(0.3)
    assert executions(marker) == []
    assert (await store.get(call_id)).state is CallState.approved


async def list_empty(redis: Redis, key: str) -> bool:
    return await redis.llen(key) == 0
