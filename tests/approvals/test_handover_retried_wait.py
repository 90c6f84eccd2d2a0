"""A hand-over whose move's answer was lost while the client retried the wait itself (the production clients retry
a command whose connection dropped: ``bot/redis_connection.py``): no error reaches the runner's loop, yet the same
runner takes it within ``hand_back_after / 2`` and runs it once, instead of the sweep giving it back first (a
second hop, and a hand-back in the audit trail, for a call that was never in danger)."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.support.answer_losing_proxy import AnswerLosingProxy

FAST = {"heartbeat_interval": 0.1, "stale_after": 0.6, "reclaim_after": 0.3, "recovery_interval": 0.1,
        "block_seconds": 0.1}


async def test_a_move_whose_answer_was_lost_under_a_retrying_client_is_taken_by_the_same_runner(
        redis_url: str, tmp_path: Path) -> None:
    direct = Redis.from_url(redis_url)
    store = CallStore(direct)
    (record,) = await store.propose("C1/1.0", [proposal()], ApprovalPolicy(), "U_REQ")
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    async with AnswerLosingProxy(host, int(port), record.id.encode()) as proxy:
        waits = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0", retry=Retry(ExponentialBackoff(cap=2.0, base=0.1),
                               5), retry_on_error=[RedisConnectionError, RedisTimeoutError])
        worker = RunnerWorker(direct, store, marker_executor(marker), runner_id="w1", reader=waits, handover=True,
                              **FAST)  # type: ignore[arg-type]
        async with running(worker):
            await wait_until(lambda: direct.exists(store.keys.parked(0)))
            await store.approve(record.id, "U_APP", [], ApprovalPolicy())  # handed over to w1, its answer lost
            await wait_until(lambda: all_terminal(store, [record.id]), timeout=20)
        await waits.aclose()
    assert proxy.lost == 1
    assert executions(marker) == [record.id]
    trail = [(e.from_state, e.to_state, e.actor) for e in await read_audit(direct, call_id=record.id, limit=50)]
    assert trail == [
        ("proposed", "awaiting_approval", "U_REQ"), ("awaiting_approval", "approved", "U_APP"),
        ("approved", "running", "runner:w1"), ("running", "finished", "runner:w1")]
    await direct.aclose()
