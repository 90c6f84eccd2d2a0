"""The window between a runner's claim and its heartbeat task (``RunnerWorker._execute_logged``): the child starts
first (the executor's first step), the heartbeat task after it. A first step that holds the loop (a slow spawn, a
loaded machine) must not let another runner's sweeper take the call for dead while its child runs, and whatever
the first step ends in is recorded, with nothing left beating."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.helpers import all_terminal, running, wait_until
from tests.approvals.test_worker import approved_calls

# the claim's heartbeat key lives stale_after; the first beat is due heartbeat_interval after the claim
WINDOW = {"heartbeat_interval": 0.4, "stale_after": 1.0, "reclaim_after": 5.0, "recovery_interval": 0.1,
          "block_seconds": 0.1, "sweep": False}


class Sweeper:
    """Another runner's recovery sweep, in its own thread and event loop (this one's may be held): it marks
    interrupted every running call whose heartbeat key lapsed, every 20 ms."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.interrupted: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._sweep()))

    async def _sweep(self) -> None:
        client = Redis.from_url(self.redis_url)
        store = CallStore(client)
        while not self._stop.is_set():
            self.interrupted += [r.id for r in await store.interrupt_stale()]
            await asyncio.sleep(0.02)
        await client.aclose()

    def __enter__(self) -> Sweeper:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(10)


async def test_a_first_step_that_holds_the_loop_past_the_first_beat_is_not_swept_as_dead(redis_url: str):
    """The first step holds the loop 0.75 s (the claim's key lives 1 s, a beat is due every 0.4 s): the first beat
    must go out as soon as the loop is free, not 0.4 s after the heartbeat task was made (1.15 s after the claim,
    when the key had lapsed and the sweeper had marked the running call interrupted, and its child was stopped)."""
    client = Redis.from_url(redis_url)
    store = CallStore(client)

    async def slow_start(record: CallRecord) -> dict[str, Any]:
        time.sleep(0.75)  # the child's start holding the loop (a fork under memory pressure, a loaded machine)
        await asyncio.sleep(0.6)  # the child runs past the claim key's lifetime
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    worker = RunnerWorker(client, store, slow_start, runner_id="w-slow", **WINDOW)  # type: ignore[arg-type]
    with Sweeper(redis_url) as sweeper:
        async with running(worker):
            ids = await approved_calls(store, 1)
            await wait_until(lambda: all_terminal(store, ids))  # noqa: B023 (awaited in this iteration)
    record = await store.get(ids[0])
    assert sweeper.interrupted == [] and record.state is CallState.finished, (record.state, record.result)
    await client.aclose()


async def test_every_end_of_the_first_step_is_recorded_and_nothing_keeps_beating(redis_url: str, tmp_path: Path):
    """A refusal returned by the first step (the argv check, a binary that changed), an exception raised in it
    (before the heartbeat task exists), and a normal run: each call's outcome is stored, its run entry leaves the
    pending list, and no heartbeat key is left behind to be refreshed."""
    client = Redis.from_url(redis_url)
    store = CallStore(client)
    outcomes = iter(("refused", "raise", "finished"))

    async def first_step_ends(record: CallRecord) -> dict[str, Any]:
        outcome = next(outcomes)
        if outcome == "raise":
            raise OSError("spawn failed: ENOMEM")
        if outcome == "refused":
            return {"status": "failed_to_start", "error": "the command line differs from the one approved; not run"}
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    worker = RunnerWorker(client, store, first_step_ends, runner_id="w-ends",  # type: ignore[arg-type]
                          concurrency=1, **WINDOW)
    async with running(worker):
        ids = []
        for _ in range(3):  # one at a time: the outcomes go to the calls in order
            ids += await approved_calls(store, 1)
            await wait_until(lambda: all_terminal(store, ids))  # noqa: B023 (awaited in this iteration)
        await asyncio.sleep(WINDOW["heartbeat_interval"] * 2)  # a beat left running would recreate its key
        states = [(await store.get(i)).state for i in ids]
        assert states == [CallState.failed_to_start, CallState.interrupted, CallState.finished]
        assert "spawn failed" in str((await store.get(ids[1])).result)
        assert [await client.exists(store.keys.heartbeat(i)) for i in ids] == [0, 0, 0]
        assert (await client.xpending(store.keys.run_stream(0), "runners"))["pending"] == 0
    await client.aclose()
