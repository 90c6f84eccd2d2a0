"""The timeline recorder across a Redis crash, with the linger on: what the inbox acknowledged before the crash
is in the timeline after it, each entry once, and an entry whose read reply the crash lost (Redis delivered it to
the recorder's name, the recorder never saw it) is claimed back by the recorder itself while it runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.agent import bus
from bot.approvals.store import CallStore
from bot.incidents.recorder import GROUP, TimelineRecorder, read_timeline
from bot.incidents.store import IncidentStore
from tests.support.redis_server import RedisServer
from tests.support.waiting import wait_for

CONV = "slack:C0WEB:1700000000.000100"


async def test_a_redis_crash_loses_no_entry_and_doubles_none(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")  # our own (AOF, fsync always), so we may kill it
    server.start()
    redis, own = Redis.from_url(server.url), Redis.from_url(server.url)  # the test's, the recorder's
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(own, IncidentStore(own, retention_seconds=3600), CallStore(own),
                                block_seconds=0.05, linger_seconds=1.0, reclaim_idle_seconds=0.5)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))

    async def texts() -> list[str]:
        return [str(e.get("text")) for e in await read_timeline(redis, incidents, CONV)]

    async def has(*expected: str) -> bool:
        return await texts() == list(expected)

    try:
        await bus.submit_user_message(redis, CONV, "UREQ", "before the crash")
        await wait_for(lambda: has("before the crash"), timeout=10)
        server.kill()
        server.start()  # same port and directory: the streams, the group and the timeline come back from the AOF
        await redis.connection_pool.disconnect()  # the test's own connections died with the server
        await wait_for(lambda: _answers(redis), timeout=10)
        await bus.submit_user_message(redis, CONV, "UREQ", "after the crash")
        await wait_for(lambda: has("before the crash", "after the crash"), timeout=15)

        # the recorder lingers now; a read of its name whose reply a crash would have lost delivers the next entry
        await bus.submit_user_message(redis, CONV, "UREQ", "its reply lost")
        lost: Any = await redis.xreadgroup(GROUP, recorder.consumer, {bus.INBOX: ">"}, count=10)
        assert [json.loads(f[b"data"])["text"] for _, f in lost[0][1]] == ["its reply lost"]
        await wait_for(lambda: has("before the crash", "after the crash", "its reply lost"), timeout=15)
        await wait_for(recorder.caught_up, timeout=10)
        assert len(await redis.lrange(incidents.timeline_key(CONV), 0, -1)) == 3  # each once
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        await redis.aclose()
        await own.aclose()
        server.stop()


async def _answers(redis: Redis) -> bool:
    try:
        return bool(await redis.ping())
    except (RedisError, OSError):
        return False
