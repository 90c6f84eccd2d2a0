"""The agent worker's read loops survive what Redis can do to them while they run (issue #19, item 4): a stream
deleted under them (its consumer group gone) is recreated and later messages are still answered."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.agent import bus
from bot.agent.worker import AgentWorker
from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.support.fake_anthropic import FakeAnthropic, text_reply
from tests.support.waiting import wait_for

CONV = "console:load:1"


async def test_messages_are_answered_after_the_inbox_lost_its_group(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(text_reply("first answer"), text_reply("second answer"))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    stop = asyncio.Event()
    worker = asyncio.create_task(AgentWorker(redis, agent, block_seconds=0.05).run(stop))
    try:
        await bus.submit_user_message(redis, CONV, "U1", "first")
        await wait_for(lambda: _replies(redis, 1))
        await redis.delete(bus.INBOX)  # the group goes with the stream: the next read gets NOGROUP
        await asyncio.sleep(0.2)
        await bus.submit_user_message(redis, CONV, "U1", "second")
        assert await wait_for(lambda: _replies(redis, 2), timeout=10) == ["first answer", "second answer"]
        assert not worker.done()
    finally:
        stop.set()
        await asyncio.wait_for(worker, 15)


async def _replies(redis: Redis, n: int) -> list[str] | None:
    replies = harness.replies(await harness.outbox(redis, CONV))
    return replies if len(replies) >= n else None
