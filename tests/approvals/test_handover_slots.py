"""The runner's overall concurrency limit holds when hand-overs come on several shards at once: a runner parks on
fewer shards than it has free slots, and a hand-over that finds no free slot (parked just before another call took
it) is given back unstarted, in one script, and runs later, once. Before, a runner with one free slot parked on
every shard and ran what each brought at once (per-application limits held, the overall one did not)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, executions, running, wait_until
from tests.support import decision_keys
from tests.support.worker_process import append_marker

FAST = {"heartbeat_interval": 0.1, "stale_after": 1.0, "reclaim_after": 0.5, "recovery_interval": 0.1,
        "block_seconds": 0.1}
ON_SHARD = {0: "C0/1.0", 1: "C8/1.0"}  # crc32 of the conversation, modulo 2


class Overlap:
    """An executor that counts the calls running at once, with a real side effect per run (a marker line)."""

    def __init__(self, marker: Path, seconds: float) -> None:
        self.marker, self.seconds = marker, seconds
        self.now = self.most = 0

    async def __call__(self, record: CallRecord) -> dict[str, Any]:
        append_marker(str(self.marker), record.id)
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.now -= 1
        return {"status": "finished", "exit_code": 0, "output": "ok"}


async def one_each(store: CallStore) -> list[str]:
    ids = []
    for conversation in ON_SHARD.values():
        (record,) = await store.propose(conversation, [proposal()], ApprovalPolicy(), "U_REQ")
        ids.append(record.id)
    assert [store.keys.shard_of_call(i) for i in ids] == [0, 1]
    return ids


async def test_a_runner_with_one_free_slot_parks_on_one_shard_and_runs_one_call_at_a_time(redis: Redis,
                                                                                          tmp_path: Path) -> None:
    store = CallStore(redis, shards=2, heartbeat_ttl=1.0, signer=decision_keys.signer())
    executor = Overlap(tmp_path / "marker", 0.3)
    worker = RunnerWorker(redis, store, executor, runner_id="w1", handover=True, concurrency=1,
                          **FAST)  # type: ignore[arg-type]
    ids = await one_each(store)
    async with running(worker):
        await wait_until(lambda: _parked_anywhere(redis, store))
        for _ in range(10):
            assert await _parks(redis, store) == 1
            await asyncio.sleep(0.03)
        await asyncio.gather(*(store.approve(i, "U_APP", [], ApprovalPolicy()) for i in ids))
        await wait_until(lambda: all_terminal(store, ids), timeout=15)
    assert sorted(executions(executor.marker)) == sorted(ids)
    assert executor.most == 1


async def test_hand_overs_beyond_the_free_slots_are_given_back_and_run_later_once(redis: Redis,
                                                                                 tmp_path: Path) -> None:
    store = CallStore(redis, shards=2, heartbeat_ttl=1.0, signer=decision_keys.signer())
    executor = Overlap(tmp_path / "marker", 0.5)
    worker = RunnerWorker(redis, store, executor, runner_id="w1", handover=True, concurrency=1,
                          **FAST)  # type: ignore[arg-type]
    (busy,) = await store.propose(ON_SHARD[0], [proposal()], ApprovalPolicy(), "U_REQ")
    ids = await one_each(store)
    async with running(worker):
        await store.approve(busy.id, "U_APP", [], ApprovalPolicy())
        await wait_until(lambda: _ran(executor.marker, busy.id))
        # parked on both shards as the slot was taken (the race a park cannot see): both approvals hand over to w1
        for shard in (0, 1):
            await store.park(shard, "w1", 5.0, worker.stale_after, worker.hand_back_after)
        await asyncio.gather(*(store.approve(i, "U_APP", [], ApprovalPolicy()) for i in ids))
        await wait_until(lambda: all_terminal(store, [busy.id, *ids]), timeout=15)
    assert sorted(executions(executor.marker)) == sorted([busy.id, *ids])  # each once
    assert executor.most == 1
    for shard in (0, 1):
        assert await redis.llen(store.keys.taken(shard, "w1")) == 0


async def _parks(redis: Redis, store: CallStore) -> int:
    return sum([await redis.exists(store.keys.parked(shard)) for shard in (0, 1)])


async def _parked_anywhere(redis: Redis, store: CallStore) -> bool:
    return await _parks(redis, store) > 0


async def _ran(marker: Path, call_id: str) -> bool:
    return call_id in executions(marker)
