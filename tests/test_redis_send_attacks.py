"""Attacks on the direct send (bot/redis_send.py), against the real test Redis behind loopback proxies: a command
cancelled at every step of its send and read, a Redis that stops reading its socket (commands small and large,
pipelines, transactions), and a health check due on a stalled Redis. Each must end within the connection's
``socket_timeout`` (never hang: the direct send sets that timeout aside for the write), and the timeout must be in
force again afterwards on every connection of the pool."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Coroutine
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.redis_pool import MeteredPool, PoolSettings, pool_kwargs
from tests.support.delaying_proxy import DelayingProxy
from tests.support.redis_proxy import RedisProxy

TIMEOUT = 0.3
BOUND = 2.0  # a command against a Redis that does not answer ends well within this


def client(url: str, connections: int = 1, **options: Any) -> Redis:
    pool = MeteredPool.from_url(url, socket_timeout=TIMEOUT, retry=Retry(NoBackoff(), 0), **options,
                                **pool_kwargs(PoolSettings(max_connections=connections, name="send-attack")))
    return Redis(connection_pool=pool)


def host_port(redis_url: str) -> tuple[str, int]:
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    return host, int(port)


class StopReadingProxy(RedisProxy):
    """Forwards until a command carries the marker, then never reads the client's socket again (a Redis that hung
    with the connection open): the client's writes fill the kernel's buffers, then its transport's."""

    def _pumps(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, up_r: asyncio.StreamReader,
               up_w: asyncio.StreamWriter) -> tuple[Coroutine[Any, Any, None], Coroutine[Any, Any, None]]:
        async def to_redis() -> None:
            while data := await client_r.read(65536):
                if self.marker in data.upper():
                    await asyncio.Event().wait()
                up_w.write(data)
                await up_w.drain()

        async def to_client() -> None:
            while data := await up_r.read(65536):
                client_w.write(data)
                await client_w.drain()

        return to_redis(), to_client()


async def ends_in_time(command: Awaitable[Any]) -> None:
    started = time.monotonic()
    with pytest.raises((RedisTimeoutError, RedisConnectionError)):
        await asyncio.wait_for(command, 10)  # the outer bound only catches a hang: the check is the time below
    assert time.monotonic() - started < BOUND


def timeouts_in_force(redis: Redis) -> list[float | None]:
    pool: Any = redis.connection_pool
    return [c.socket_timeout for c in [*pool._available_connections, *pool._in_use_connections]]


async def test_a_command_cancelled_at_any_step_leaves_the_timeout_in_force(redis_url: str) -> None:
    async with DelayingProxy(*host_port(redis_url), b"SEND-ATTACK", delay=1.0, times=1000) as proxy:
        ours = client(f"redis://127.0.0.1:{proxy.port}/0", connections=2)
        await ours.ping()
        for passes in range(8):  # cancelled before the send, during it, while the reply is awaited
            task: asyncio.Task[Any] = asyncio.ensure_future(ours.get("send-attack"))
            for _ in range(passes):
                await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert set(timeouts_in_force(ours)) <= {TIMEOUT}
        await ends_in_time(ours.get("send-attack"))  # the reply that does not come still times out
        assert await ours.set("after", "1")  # and the pool still works
        assert set(timeouts_in_force(ours)) == {TIMEOUT}
        await ours.aclose()


@pytest.mark.parametrize("size", [10, 30_000, 65_000, 300_000, 4_000_000])
async def test_every_send_to_a_redis_that_stops_reading_ends_in_time(redis_url: str, size: int) -> None:
    async with StopReadingProxy(*host_port(redis_url), b"SEND-HANG") as proxy:
        ours = client(f"redis://127.0.0.1:{proxy.port}/0")
        await ours.ping()
        await ends_in_time(ours.set("send-hang", b"x" * size))
        for _ in range(3):  # after it: each command on a new connection that the proxy stopped reading too
            await ends_in_time(ours.set("send-hang", b"y" * size))
        async with ours.pipeline(transaction=False) as pipe:
            for n in range(50):
                pipe.set(f"send-hang-{n}", b"z" * (size // 50 + 1))
            await ends_in_time(pipe.execute())
        async with ours.pipeline(transaction=True) as pipe:
            pipe.set("send-hang", b"w" * size)
            pipe.get("send-hang")
            await ends_in_time(pipe.execute())
        assert set(timeouts_in_force(ours)) <= {TIMEOUT}
        await ours.aclose()


async def test_pipelines_and_transactions_are_sent_whole(redis_url: str) -> None:
    ours = client(redis_url)
    async with ours.pipeline(transaction=True) as pipe:
        pipe.set("send-pipe", "1")
        pipe.incr("send-pipe")
        pipe.get("send-pipe")
        assert await pipe.execute() == [True, 2, b"2"]
    async with ours.pipeline(transaction=False) as pipe:
        for n in range(2000):  # one send over the transport's high-water mark: redis-py's own timed send
            pipe.set(f"send-pipe-{n}", "v" * 40)
        assert all(await pipe.execute())
    assert set(timeouts_in_force(ours)) == {TIMEOUT}
    await ours.aclose()


async def test_a_due_health_check_on_a_stalled_redis_times_out(redis_url: str) -> None:
    async with DelayingProxy(*host_port(redis_url), b"PING", delay=3.0, times=1000) as proxy:
        ours = client(f"redis://127.0.0.1:{proxy.port}/0")
        await ours.set("send-health", "1")  # connected without a PING
        pool: Any = ours.connection_pool
        for connection in pool._available_connections:  # from now on a health check (a PING) is due
            connection.health_check_interval, connection.next_health_check = 0.05, 0.0
        await ends_in_time(ours.get("send-health"))
        assert set(timeouts_in_force(ours)) <= {TIMEOUT}
        await ours.aclose()


@pytest.mark.parametrize("cancelled", [False, True])
async def test_a_send_on_a_closing_connection_fails_and_keeps_its_timeout(redis_url: str, cancelled: bool) -> None:
    """The one send the direct path lets yield: the transport is closing (its peer reset it, or redis-py closed it),
    so ``drain`` sleeps a loop pass and then raises (or the caller is cancelled meanwhile). The connection is
    dropped, and when the pool hands it out again it reconnects with its read timeout, not without one."""
    async with DelayingProxy(*host_port(redis_url), b"SEND-CLOSING", delay=1.0, times=1000) as proxy:
        ours = client(f"redis://127.0.0.1:{proxy.port}/0")
        pool: Any = ours.connection_pool
        await ours.ping()
        connection = pool._available_connections[0]
        connection._writer.transport.close()  # closing: the loop has not run its connection_lost yet
        sending = asyncio.ensure_future(connection.send_command("GET", "send-closing"))
        if cancelled:
            await asyncio.sleep(0)  # the send is in drain's loop pass now
            sending.cancel()
        with pytest.raises((RedisConnectionError, asyncio.CancelledError)):
            await sending
        assert connection.socket_timeout == TIMEOUT
        await ends_in_time(ours.get("send-closing"))  # reconnected, and a reply that does not come times out
        await ours.aclose()
