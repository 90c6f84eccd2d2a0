"""The batched acknowledgements (bot/slack/acks.py, used by the poster and the intake worker) outlast a Redis that
refuses the XACK for a while with an error that is not a dropped connection: a primary demoted to a replica by a
failover answers READONLY until it is promoted again. One such refusal must not end the acknowledging task: every
entry handled after it would then stay pending and held by its replica for as long as the process lives. Real
redis-server, demoted with REPLICAOF and promoted back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.slack.acks import Acknowledger
from bot.slack.settings import SlackSettings
from bot.slack.state import SlackState
from bot.streams import text
from tests.slack.conftest import free_port, wait_for
from tests.support.redis_server import RedisServer

GROUP = "intake"


@pytest.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[Redis]:
    server = RedisServer(tmp_path / "redis", appendonly=False)
    server.start()
    client = Redis.from_url(server.url)
    try:
        yield client
    finally:
        await client.aclose()
        server.stop()


async def _pending(redis: Redis, stream: str) -> int:
    return int((await redis.xpending(stream, GROUP))["pending"])


async def _pending_is(redis: Redis, stream: str, count: int) -> bool:
    return await _pending(redis, stream) == count


async def test_a_refused_acknowledgement_is_retried_and_the_acknowledger_keeps_running(
    own_redis: Redis, settings: SlackSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.slack.acks.RETRY_SECONDS", 0.05)
    redis, stream = own_redis, "fc:{intake}:requests"
    await redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
    ids = [text(await redis.xadd(stream, {"kind": "command"})) for _ in range(3)]
    await redis.xreadgroup(GROUP, "me", {stream: ">"})
    acks = Acknowledger(SlackState(redis, settings), GROUP, busy=lambda: False, label="slack intake")
    stop = asyncio.Event()
    running = asyncio.create_task(acks.run(stop))
    try:
        await redis.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))  # demoted: writes answer READONLY
        acks.queue(stream, ids[0], done=False)
        await asyncio.sleep(0.3)  # the batch was tried and refused
        assert await _pending(redis, stream) == 3
        assert acks.waiting(stream, ids[0])  # still queued, not dropped: nothing is handled twice meanwhile
        await redis.execute_command("REPLICAOF", "NO", "ONE")  # promoted again
        assert await wait_for(lambda: _pending_is(redis, stream, 2), timeout=5)
        assert not running.done()  # still acknowledging what is handled next
        acks.queue(stream, ids[1], done=False)
        acks.queue(stream, ids[2], done=False)
        assert await wait_for(lambda: _pending_is(redis, stream, 0), timeout=5)
        assert not acks.waiting_in(stream)
    finally:
        stop.set()
        acks._wake.set()
        await asyncio.wait({running}, timeout=5)
