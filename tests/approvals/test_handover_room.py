"""Hand-overs a runner cannot start at once (its application has no free slot): given back unstarted, never
popped again by the same runner's own wait for hand-overs, never run after the sweeper ended the call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.queue_depth import read_queue_depth
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, executions, running, wait_until
from tests.support.worker_process import append_marker

CONV = "C1/1.0"
FAST = {"heartbeat_interval": 0.1, "stale_after": 0.6, "reclaim_after": 0.3, "recovery_interval": 0.1,
        "block_seconds": 0.1}


def slow_first(marker: Path, slow_id: list[str], seconds: float):  # type: ignore[no-untyped-def]
    async def executor(record: CallRecord) -> dict[str, Any]:
        append_marker(str(marker), record.id)
        if record.id in slow_id:
            await asyncio.sleep(seconds)
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    return executor


async def test_a_hand_over_without_room_is_given_back_and_runs_once_later(redis: Redis, store: CallStore,
                                                                          tmp_path: Path):
    first, second = (r.id for r in await store.propose(CONV, [proposal(), proposal(argv=["status"])],
                                                       ApprovalPolicy(), "U_REQ"))
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, slow_first(marker, [first], 2.0), runner_id="w1", handover=True,
                          per_app_limits={"opsctl": 1}, **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await store.approve(first, "U_APP", [], ApprovalPolicy())
        await wait_until(lambda: _ran(marker, first))
        # the runner's application is full; an approval hands the next call over to it anyway (it parked just
        # before the slot was taken)
        await store.park(0, "w1", 5.0, worker.stale_after, worker.hand_back_after)
        await store.approve(second, "U_APP", [], ApprovalPolicy())
        await wait_until(lambda: all_terminal(store, [first, second]), timeout=15)
        await asyncio.sleep(0.5)
    assert sorted(executions(marker)) == sorted([first, second])
    record = await store.get(second)
    assert record.state is CallState.finished, (record.state, record.result)
    assert await redis.llen(store.keys.handover(0, "w1")) == 0
    assert await redis.zcard(store.keys.handovers(0)) == 0


async def _ran(marker: Path, call_id: str) -> bool:
    return call_id in executions(marker)


async def test_a_stop_while_a_moved_hand_over_waits_for_a_slot_cancels_it_at_once_unstarted(
        redis: Redis, store: CallStore, tmp_path: Path):
    first, second = (r.id for r in await store.propose(CONV, [proposal(), proposal(argv=["status"])],
                                                       ApprovalPolicy(), "U_REQ"))
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, slow_first(marker, [first], 1.5), runner_id="w1", handover=True,
                          per_app_limits={"opsctl": 1}, **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await store.approve(first, "U_APP", [], ApprovalPolicy())
        await wait_until(lambda: _ran(marker, first))
        await store.park(0, "w1", 5.0, worker.stale_after, worker.hand_back_after)
        await store.approve(second, "U_APP", [], ApprovalPolicy())
        # moved, and set aside onto the taken list to wait for a slot: not taken (TAKE), it has not started
        await wait_until(lambda: _list_has(redis, store.keys.taken(0, "w1"), 1))
        assert await redis.llen(store.keys.handover(0, "w1")) == 0
        requested = await store.request_cancel(second, "U_REQ", [], ApprovalPolicy())
        assert requested.state is CallState.cancelled  # so the stop cancels it there and then
        assert await redis.llen(store.keys.taken(0, "w1")) == 0
        await wait_until(lambda: all_terminal(store, [first, second]), timeout=15)
    assert executions(marker) == [first]
    record = await store.get(second)
    assert record.state is CallState.cancelled and record.result is not None
    assert "never ran" in record.result["error"]


async def test_a_taken_hand_over_past_its_hand_back_time_still_counts_as_running_not_queued(redis: Redis,
                                                                                          store: CallStore):
    ids = [r.id for r in await store.propose(CONV, [proposal() for _ in range(3)], ApprovalPolicy(), "U_REQ")]
    await store.park(0, "r1", 5.0, 10.0, 0.1)
    await store.approve(ids[0], "U_APP", [], ApprovalPolicy())  # handed over to r1, which takes it
    assert await redis.lpop(store.keys.handover(0, "r1")) is not None
    await store.approve(ids[1], "U_APP", [], ApprovalPolicy())  # two run entries no runner read yet
    await store.approve(ids[2], "U_APP", [], ApprovalPolicy())
    await asyncio.sleep(0.15)
    assert await store.due_hand_backs(0) == [ids[0]]
    assert await store.hand_back(ids[0], "sweep") == "taken"
    assert await store.due_hand_backs(0) == []  # asked once: never due again
    depth = await read_queue_depth(redis, store.keys)
    assert (depth.queued, depth.running) == (2, 1)
    await store.finish(ids[0], "r1", {"status": "finished", "exit_code": 0, "output": ""})
    assert await redis.zcard(store.keys.handovers(0)) == 0  # the call's end takes it out of the index


async def _list_has(redis: Redis, key: str, length: int) -> bool:
    return await redis.llen(key) == length
