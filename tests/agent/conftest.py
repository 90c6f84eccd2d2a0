"""Fixtures of the agent tests: real Redis (session server), the scripted Messages API, the opsctl fixture."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.approvals.worker import RunnerWorker
from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def small_catalog(opsctl: Path) -> Catalog:
    return harness.catalog_for(opsctl, small=True)


@pytest.fixture
def full_catalog(opsctl: Path) -> Catalog:
    return harness.catalog_for(opsctl, small=False)


@pytest.fixture
async def runner(redis: Redis) -> AsyncIterator[RunnerWorker]:
    """A real RunnerWorker executing approved calls as real subprocesses."""
    from bot.approvals.store import CallStore

    worker = RunnerWorker(redis, CallStore(redis, heartbeat_ttl=2.0), harness.execute, runner_id="r1",
                          block_seconds=0.05, stale_after=2.0, sweep=False)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    yield worker
    stop.set()
    await asyncio.wait_for(task, 10)
