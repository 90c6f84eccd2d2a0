"""An outbox entry Redis delivered to a live poster whose read's reply was lost (the connection cut after Redis
delivered it: redis-py then retries the read on its own and gets only newer entries) is posted within seconds by
the same poster, not after ``reclaim_idle_seconds`` (60 s by default), and once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.slack.settings import SlackSettings
from bot.tools.catalog import Catalog
from tests.slack.conftest import CHANNEL, make_front, serving, wait_for
from tests.support.answer_losing_proxy import AnswerLosingProxy
from tests.support.fake_slack import FakeSlack

CONV = f"slack:{CHANNEL}:1700.000001"


def posted(slack: FakeSlack, text: str) -> list[dict[str, Any]]:
    return [c.params for c in slack.calls_to("chat.postMessage")
            if c.status == 200 and c.response.get("ok") and text in str(c.params.get("text"))]


async def test_an_entry_whose_read_reply_was_lost_is_posted_by_the_same_poster_within_seconds(
    slack: FakeSlack, redis: Redis, redis_url: str, store: CallStore, policy: ApprovalPolicy, catalog: Catalog
) -> None:
    settings = SlackSettings(mode="http", usergroup_cache_seconds=0, reclaim_idle_seconds=60)
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    async with AnswerLosingProxy(host, int(port), b"LOST-POST-MARK") as proxy:
        reader = Redis.from_url(  # the production clients' retry (bot/redis_connection.py): a lost reply is retried
            f"redis://127.0.0.1:{proxy.port}/0", retry=Retry(ExponentialBackoff(cap=2.0, base=0.1), 5),
            retry_on_error=[RedisConnectionError, RedisTimeoutError])
        async with serving(make_front(slack, redis, store, policy, catalog, settings, reader=reader), slack, store,
                           redis) as harness:
            stop = asyncio.Event()
            task = asyncio.create_task(harness.front.run_poster(stop))
            try:
                await asyncio.sleep(0.5)  # reading new entries
                started = time.monotonic()
                await bus.publish(redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": "LOST-POST-MARK here"}))
                await wait_for(lambda: posted(slack, "LOST-POST-MARK"), timeout=20)
                assert proxy.lost == 1
                assert time.monotonic() - started < 15  # not the 60 s reclaim delay
                await asyncio.sleep(1.0)
                assert len(posted(slack, "LOST-POST-MARK")) == 1
            finally:
                stop.set()
                await task
        await reader.aclose()
