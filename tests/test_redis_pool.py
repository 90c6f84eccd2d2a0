"""Bounded pools (bot/redis_pool.py) against the real test Redis: commands wait for a free connection instead of
failing, a wait that runs out is a clear (retryable) ConnectionError, blocking readers have their own pool, and
the server never sees more connections than the bound (CLIENT LIST)."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.exceptions
from redis.asyncio import Redis

from bot.metrics import REGISTRY
from bot.redis_connection import connect_redis
from bot.redis_pool import PoolSettings
from tests.support.waiting import wait_for


async def named_connections_are(redis: Redis, name: str, count: int) -> bool:
    found = await named_connections(redis, name)
    assert found <= count
    return found == count


def metric(name: str, pool: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, {"pool": pool, **labels}) or 0.0


async def named_connections(redis: Redis, name: str) -> int:
    return sum(1 for c in await redis.client_list() if c.get("name") == name)


async def test_commands_wait_for_a_free_connection_and_stay_under_the_bound(redis_url: str, redis: Redis) -> None:
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(3, 10.0), client_name="pool-test-a")
    try:
        # 12 commands that each hold their connection 0.2 s: with 3 connections they run in 4 waves, none fails
        started = time.monotonic()
        results = asyncio.gather(*(handle.client.blpop([f"empty-{i}"], timeout=0.2) for i in range(12)))
        await asyncio.sleep(0.1)
        waiting = metric("fisk_chatops_redis_pool_waiting", "commands")
        seen = await named_connections(redis, "pool-test-a")
        assert await results == [None] * 12
        assert time.monotonic() - started >= 0.75  # they really waited for each other
        assert waiting >= 9 - 0.5  # 3 running, 9 waiting
        assert seen <= 3
        handle.collect_metrics()
        assert metric("fisk_chatops_redis_pool_connections", "commands", state="idle") == 3
        assert metric("fisk_chatops_redis_pool_max_connections", "commands") == 3
        assert metric("fisk_chatops_redis_pool_waiting", "commands") == 0
    finally:
        await handle.close()


async def test_a_wait_that_runs_out_fails_clearly_and_is_counted(redis_url: str) -> None:
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(1, 0.2))
    try:
        before = metric("fisk_chatops_redis_pool_timeouts_total", "commands")
        holder = asyncio.create_task(handle.client.blpop(["empty"], timeout=1))
        await asyncio.sleep(0.05)
        with pytest.raises(redis.exceptions.ConnectionError, match="No connection available"):
            await handle.client.set("k", "v")
        assert metric("fisk_chatops_redis_pool_timeouts_total", "commands") == before + 1
        await holder
        assert await handle.client.set("k", "v")  # the pool recovers once the connection is free
    finally:
        await handle.close()


async def test_blocking_readers_do_not_take_command_connections(redis_url: str, redis: Redis) -> None:
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(1, 0.5), readers=2,
                                 client_name="pool-test-r")
    try:
        await handle.client.xgroup_create("s", "g", id="0", mkstream=True)
        reads = [asyncio.create_task(handle.reader.xreadgroup("g", f"c{i}", {"s": ">"}, block=1500))
                 for i in range(2)]
        await asyncio.sleep(0.1)
        for _ in range(20):  # the one command connection is free while both readers block
            await handle.client.incr("n")
        # one command connection + one per reader, never more (the readers connect as they start reading)
        assert await wait_for(lambda: named_connections_are(redis, "pool-test-r", 3))
        await handle.client.xadd("s", {"f": "1"})
        replies = await asyncio.gather(*reads)
        assert sum(len(r) for r in replies) == 1
    finally:
        await handle.close()
    # close() closed both pools (the server drops a closed client from CLIENT LIST a moment later)
    async def all_closed() -> bool:
        return await named_connections(redis, "pool-test-r") == 0
    assert await wait_for(all_closed)
