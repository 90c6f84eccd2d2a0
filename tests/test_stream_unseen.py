"""Looking for entries whose read reply was lost (``bot.streams.unseen_pending``) delivers nothing again: an entry
the consumer handled and left pending keeps ageing, so the reclaim (XAUTOCLAIM after its idle time) takes it up."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.streams import unseen_pending


async def test_looking_for_lost_reads_returns_the_unseen_entries_and_leaves_every_idle_time_alone(
        redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    await redis.xgroup_create("unseen-s", "g", id="0", mkstream=True)
    handled = (await redis.xadd("unseen-s", {"n": "handled"})).decode()
    lost = (await redis.xadd("unseen-s", {"n": "lost"})).decode()
    await redis.xreadgroup("g", "c", {"unseen-s": ">"})  # both delivered to c; c handled only the first
    await asyncio.sleep(0.3)
    for _ in range(3):  # the read loop looks every few seconds
        found = await unseen_pending(redis, "unseen-s", "g", "c", lambda i: i == handled)
        assert [(i.decode(), f) for i, f in found] == [(lost, {b"n": b"lost"})]
    pending = await redis.xpending_range("unseen-s", "g", min="-", max="+", count=10)
    assert [p["times_delivered"] for p in pending] == [1, 1]
    assert min(p["time_since_delivered"] for p in pending) >= 300  # still ageing: the reclaim will see them idle
    claimed = await redis.xautoclaim("unseen-s", "g", "c", 250, "0-0")
    assert [i.decode() for i, _ in claimed[1]] == [handled, lost]
    await redis.aclose()
