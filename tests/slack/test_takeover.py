"""The poster takes over entries left pending while it runs (a dead replica's, or its own that failed), not only
at start-up: an answer must not wait for a restart (issue #19, item 4)."""

from __future__ import annotations

import asyncio
import json

from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.slack.poster import GROUP
from bot.slack.settings import SlackSettings
from bot.streams import ensure_group
from bot.tools.catalog import Catalog
from tests.slack.conftest import CHANNEL, make_front, serving, wait_for
from tests.support.fake_slack import FakeSlack

CONV = f"slack:{CHANNEL}:1700.000001"


async def test_a_reply_left_pending_by_a_dead_replica_is_posted_without_a_restart(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    settings.reclaim_idle_seconds = 0.3
    async with serving(make_front(slack, redis, store, policy, catalog, settings), slack, store, redis) as harness:
        stop = asyncio.Event()
        poster = asyncio.create_task(harness.front.run_poster(stop))
        try:
            await asyncio.sleep(0.3)  # the poster is past its start-up pass over pending entries
            await ensure_group(redis, bus.OUTBOX, GROUP)
            event = bus.BusEvent("reply", CONV, {"turn": "t1", "text": "the answer nobody posted", "kind": "answer"})
            async with redis.pipeline(transaction=True) as pipe:  # published and read by a replica that dies
                pipe.xadd(bus.OUTBOX, event.fields())
                pipe.xreadgroup(GROUP, "dead-replica", {bus.OUTBOX: ">"}, count=10)
                _, taken = await pipe.execute()
            assert len(taken[0][1]) == 1

            def posted() -> list[object]:
                calls = slack.calls_to("chat.postMessage")
                return [c for c in calls if "the answer nobody posted" in json.dumps(c.params)]

            assert len(await wait_for(posted, timeout=10)) == 1
            assert await wait_for(lambda: _nothing_pending(redis))
        finally:
            stop.set()
            await poster


async def _nothing_pending(redis: Redis) -> bool:
    return int((await redis.xpending(bus.OUTBOX, GROUP))["pending"]) == 0
