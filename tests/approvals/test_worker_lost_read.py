"""An approved call whose run entry Redis delivered to a live runner while the read's reply was lost (the
connection cut after Redis delivered it; the production clients retry the read by themselves and get only newer
entries) is run within seconds by the same runner, once, not after ``reclaim_after`` (30 s by default)."""

from __future__ import annotations

import time
from pathlib import Path

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.support.answer_losing_proxy import AnswerLosingProxy


async def test_a_run_entry_whose_read_reply_was_lost_runs_on_the_same_runner_within_seconds(
        redis_url: str, tmp_path: Path) -> None:
    direct = Redis.from_url(redis_url)
    store = CallStore(direct)
    (record,) = await store.propose("C1/1.0", [proposal()], ApprovalPolicy(), "U_REQ")
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    async with AnswerLosingProxy(host, int(port), record.id.encode()) as proxy:
        reads = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0", retry=Retry(ExponentialBackoff(cap=2.0, base=0.1),
                               5), retry_on_error=[RedisConnectionError, RedisTimeoutError])
        worker = RunnerWorker(direct, store, marker_executor(marker), runner_id="w1", reader=reads,
                              heartbeat_interval=0.1, stale_after=10.0, reclaim_after=30.0, recovery_interval=0.1,
                              block_seconds=0.1)
        async with running(worker):
            started = time.monotonic()
            await store.approve(record.id, "U_APP", [], ApprovalPolicy())  # its run entry's read answer is lost
            await wait_until(lambda: all_terminal(store, [record.id]), timeout=20)
            assert time.monotonic() - started < 10  # not the 30 s reclaim delay
        await reads.aclose()
    assert proxy.lost == 1
    assert executions(marker) == [record.id]
    assert (await store.get(record.id)).state is CallState.finished
    await direct.aclose()
