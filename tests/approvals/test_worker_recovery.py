"""The runner's read loop survives what Redis can do to it while it runs (issue #19, item 4): an unexpected error
reply and a stream deleted under it (its consumer group gone) end in a retry, not in a runner that silently
stops taking approved calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.approvals.test_worker import FAST, approved_calls


async def test_runner_keeps_reading_after_an_error_reply_and_a_lost_group(redis: Redis, tmp_path: Path) -> None:
    store = CallStore(redis)
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w", **FAST)  # type: ignore[arg-type]
    stream = store.keys.run_stream(0)
    async with running(worker):
        first = await approved_calls(store, 1)
        await wait_until(lambda: all_terminal(store, first))
        await redis.delete(stream)
        await redis.set(stream, "not a stream")  # every read now fails with WRONGTYPE
        await asyncio.sleep(0.5)
        await redis.delete(stream)  # and then the group is gone (NOGROUP) until the runner recreates it
        await asyncio.sleep(0.3)
        second = await approved_calls(store, 2)
        await wait_until(lambda: all_terminal(store, second))
    assert sorted(executions(marker)) == sorted(first + second)
