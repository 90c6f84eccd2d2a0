"""Commands sent without a task per send (bot/redis_send.py), against the real test Redis: the command is on the
wire before anything else the loop has ready runs (no Task wraps the send), a reply that does not come still
times out, a command over the transport's high-water mark and one after a dropped connection go through redis-py's
own send and work."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.redis_pool import MeteredPool, PoolSettings, pool_kwargs
from tests.support.delaying_proxy import DelayingProxy


def client(url: str, **options: object) -> Redis:
    pool = MeteredPool.from_url(url, **options, **pool_kwargs(PoolSettings(max_connections=1, name="send-test")))
    return Redis(connection_pool=pool)


async def tasks_while_sending(redis: Redis) -> int:
    seen: list[int] = []
    asyncio.get_running_loop().call_soon(lambda: seen.append(len(asyncio.all_tasks())))
    await redis.get("send-test")
    return seen[0] - 1  # besides this test's own task


async def test_a_command_is_sent_before_the_loop_runs_anything_else(redis_url: str) -> None:
    ours = client(redis_url)
    await ours.ping()  # connected
    assert await tasks_while_sending(ours) == 0
    plain = Redis.from_url(redis_url)  # redis-py's own connection: its send is a Task of its own
    await plain.ping()
    assert await tasks_while_sending(plain) == 1
    await ours.aclose()
    await plain.aclose()


async def test_a_reply_that_does_not_come_still_times_out(redis_url: str) -> None:
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    async with DelayingProxy(host, int(port), b"SEND-TEST-SLOW", delay=3.0) as proxy:
        slow = client(f"redis://127.0.0.1:{proxy.port}/0", socket_timeout=0.3, retry=Retry(NoBackoff(), 0))
        await slow.ping()
        started = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await slow.get("send-test-slow")
        assert time.monotonic() - started < 2.0
        await slow.aclose()


async def test_large_commands_and_reconnects_go_through(redis_url: str, redis: Redis) -> None:
    ours = client(redis_url, retry=Retry(NoBackoff(), 2), retry_on_error=[RedisConnectionError])
    big = b"x" * 300_000  # over the transport's 64 KiB high-water mark: drain may wait, so redis-py's timed send
    await ours.set("send-test-big", big)
    assert await ours.get("send-test-big") == big
    await redis.client_kill_filter(_type="normal", skipme=True)  # every other connection, ours included
    await ours.set("send-test-after", "1")  # the pool's retry reconnects, through redis-py's own send
    assert await ours.get("send-test-after") == b"1"
    await ours.aclose()
