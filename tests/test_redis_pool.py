"""Bounded pools (bot/redis_pool.py) against the real test Redis: commands wait for a free connection instead of
failing, a wait that runs out is a clear (retryable) ConnectionError, blocking readers have their own pool, and
the server never sees more connections than the bound (CLIENT LIST)."""

from __future__ import annotations

import asyncio
import random
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


async def test_a_free_connection_is_taken_directly_only_while_nobody_waits(redis_url: str) -> None:
    """Commands one after another take a free connection without the waiting path (the condition, a timeout armed
    for each); once commands outnumber the connections they queue through it, and the pool is whole afterwards."""
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(2, 10.0), client_name="pool-test-d")
    try:
        (pool,) = [p for p in handle.pools() if p.pool_name == "commands"]
        await handle.client.set("k", "v")
        before = pool.taken_directly
        for _ in range(50):
            assert await handle.client.get("k") == b"v"
        assert pool.taken_directly - before == 50
        before = pool.taken_directly
        replies = await asyncio.gather(*(handle.client.blpop([f"none-{i}"], timeout=0.1) for i in range(6)))
        assert replies == [None] * 6
        assert pool.taken_directly - before == 2  # the two free connections; the other four waited for them
        assert (pool._slow, pool.waiting, pool.in_use()) == (0, 0, 0)
    finally:
        await handle.close()


async def test_no_wake_up_is_lost_when_direct_takes_meet_waiters_and_cancellations(redis_url: str) -> None:
    """Many tasks on 2 connections, commands of varied length, some tasks cancelled while they wait or run: every
    task left finishes long before the pool's 30 s wait would run out (a lost wake-up leaves a waiter asleep with a
    connection free), and the pool ends with nothing in use and nobody counted as waiting."""
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(2, 30.0), client_name="pool-test-w")
    rng = random.Random(7)
    try:
        (pool,) = [p for p in handle.pools() if p.pool_name == "commands"]

        async def worker(n: int) -> int:
            done = 0
            for k in range(15):
                if rng.random() < 0.03:  # holds its connection ~0.1 s (the server's timer resolution)
                    await handle.client.blpop([f"none-{n}-{k}"], timeout=0.01)
                else:
                    await handle.client.incr(f"n-{n}")
                done += 1
                if rng.random() < 0.3:
                    await asyncio.sleep(0)
            return done

        for _round in range(2):
            tasks = [asyncio.create_task(worker(n)) for n in range(60)]
            for _ in range(12):  # cancellations at random moments: waiting for a connection, or in a command
                await asyncio.sleep(rng.random() * 0.02)
                rng.choice(tasks).cancel()
            finished, pending = await asyncio.wait(tasks, timeout=20)
            assert not pending, f"{len(pending)} tasks still waiting: a wake-up was lost"
            assert all(t.cancelled() or t.result() == 15 for t in finished)
            assert (pool._slow, pool.waiting, pool.in_use()) == (0, 0, 0)
        assert await handle.client.set("k", "v")  # and the pool still serves
    finally:
        await handle.close()


async def test_a_release_that_waits_inside_the_pool_still_wakes_a_task_that_started_waiting_meanwhile(
        redis_url: str) -> None:
    """The race a direct hand-back must not lose: a release begins with nobody waiting (so it does not take the
    condition), then waits inside the pool (its lock is busy); a command arrives meanwhile, finds no connection and
    goes to sleep on the condition. When the release completes it must wake that command, which otherwise sleeps
    until its wait runs out (5 s here) with the connection free."""
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(1, 5.0), client_name="pool-test-x")
    try:
        (pool,) = [p for p in handle.pools() if p.pool_name == "commands"]
        connection = await pool.get_connection()
        await pool._lock.acquire()  # the pool's own lock, busy: the release below waits for it
        releasing = asyncio.create_task(pool.release(connection))
        await asyncio.sleep(0.05)
        assert not releasing.done()
        started = time.monotonic()
        command = asyncio.create_task(handle.client.incr("raced"))
        await asyncio.sleep(0.05)
        assert not command.done() and pool._slow == 1  # asleep on the condition: no connection was free
        pool._lock.release()
        assert await asyncio.wait_for(command, 3) == 1
        await releasing
        assert time.monotonic() - started < 1.0
    finally:
        await handle.close()
