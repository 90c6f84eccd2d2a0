"""A conversation's drive that is cancelled (a stopping agent worker) leaves nothing of its own running: no task
goes on with the model call and writes its outcome to Redis after its owner, and its lock, are gone."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.agent.test_basic import CONV
from tests.support.fake_anthropic import FakeAnthropic, text_reply


def _advancing() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__qualname__", "") == "Agent._advance"]


async def test_a_cancelled_drive_leaves_no_turn_running(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(text_reply("too late", delay=1.0))  # the model takes a second to answer
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings(lock_ttl_seconds=30))
    await agent.submit(CONV, "1-0", "U1", "hi")
    drive = asyncio.create_task(agent.drive(CONV))
    for _ in range(200):
        if fake.message_requests:
            break
        await asyncio.sleep(0.01)
    assert fake.message_requests, "the model was never asked"
    drive.cancel()
    done, _ = await asyncio.wait({drive}, timeout=10)
    assert done and drive.cancelled()
    assert _advancing() == []  # before the fix: the turn ran on, on its own
    await asyncio.sleep(1.5)  # past the model's answer: nobody is there to take it
    assert harness.replies(await harness.outbox(redis, CONV)) == []
    transcript, _state = await agent.conversations.load(CONV)
    assert all(message["role"] == "user" for message in transcript)
    assert len(fake.message_requests) == 1
