"""The final-state metrics reader counts every call once and reads calls finishing one after another in batches."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.config import Secrets, parse_config
from bot.metrics import CALLS_FINAL
from bot.roles import Core
from bot.roles.loops import count_final_states
from tests.approvals.conftest import proposal


async def test_calls_finishing_one_after_another_are_counted_in_batches(
        opsctl: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    config = parse_config({"applications": [{"binary": str(opsctl)}]})
    core = await Core.open(config, {"slack", "agent", "runner"}, Secrets())
    watcher = Redis.from_url(redis_url)
    stop = asyncio.Event()
    reads: list[str] = []
    before = CALLS_FINAL.labels("finished").value
    try:
        async with watcher.monitor() as monitor:
            async def watch() -> None:
                async for entry in monitor.listen():
                    if entry["command"].startswith("XREADGROUP GROUP metrics"):
                        reads.append(entry["command"])

            watching = asyncio.create_task(watch())
            counting = asyncio.create_task(count_final_states(core, stop, pause=1.0))
            await asyncio.sleep(0.3)  # its first read is waiting
            policy = ApprovalPolicy()
            for _ in range(5):  # one after another, each finished before the next is proposed
                (record,) = await core.store.propose("C1/1.0", [proposal()], policy, "U_REQ")
                await core.store.approve(record.id, "U_APP", [], policy)
                await core.store.claim(record.id, "r1")
                await core.store.finish(record.id, "r1", {"status": "finished", "exit_code": 0})
            deadline = asyncio.get_running_loop().time() + 10
            while CALLS_FINAL.labels("finished").value < before + 5:
                assert asyncio.get_running_loop().time() < deadline, "not every call was counted"
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            stop.set()
            await asyncio.wait_for(counting, 5)
            watching.cancel()
    finally:
        await watcher.aclose()
        await core.close()
    assert CALLS_FINAL.labels("finished").value == before + 5  # each once
    # the first call's read, one read after the pause for the other four, and the read waiting when it stopped;
    # one read per call (at least 6) without the pause
    assert len(reads) <= 4, reads
