"""An inbox entry Redis delivered to a live agent worker whose read's reply was lost (the connection cut after
Redis delivered it: redis-py then retries the read on its own and gets only newer entries) is answered within
seconds by the same worker, not after ``reclaim_after`` (60 s by default). Under load this made the burst test
(tests/ops/test_load.py) report acknowledged requests "never answered" within its 120 s."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.agent import bus
from bot.agent.worker import AgentWorker
from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.support.answer_losing_proxy import AnswerLosingProxy
from tests.support.fake_anthropic import FakeAnthropic, text_reply
from tests.support.waiting import wait_for

CONV = "console:lost:1"


async def test_an_entry_whose_read_reply_was_lost_is_answered_by_the_same_worker_within_seconds(
    redis: Redis, redis_url: str, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(text_reply("late answer"))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings(reclaim_after_seconds=60))
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    async with AnswerLosingProxy(host, int(port), b"LOST-READ-MARK") as proxy:
        reader = Redis.from_url(  # the production clients' retry (bot/redis_connection.py): a lost reply is retried
            f"redis://127.0.0.1:{proxy.port}/0", retry=Retry(ExponentialBackoff(cap=2.0, base=0.1), 5),
            retry_on_error=[RedisConnectionError, RedisTimeoutError])
        stop = asyncio.Event()
        worker = asyncio.create_task(AgentWorker(redis, agent, block_seconds=0.05, reader=reader).run(stop))
        try:
            await asyncio.sleep(0.3)  # reading new entries
            started = time.monotonic()
            await bus.submit_user_message(redis, CONV, "U1", "LOST-READ-MARK: check it")
            replies = await wait_for(lambda: _replies(redis), timeout=20)
            assert proxy.lost == 1
            assert replies == ["late answer"]
            assert time.monotonic() - started < 15  # not the 60 s reclaim delay
        finally:
            stop.set()
            await asyncio.wait_for(worker, 15)
            await reader.aclose()


async def _replies(redis: Redis) -> list[str] | None:
    return harness.replies(await harness.outbox(redis, CONV)) or None
