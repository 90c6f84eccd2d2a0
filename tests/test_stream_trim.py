"""Streams are trimmed to their cap only below what every consumer group has acknowledged (issue 12, item 6)."""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio import Redis

from bot.agent import bus
from bot.streams import ensure_group, entry_age_seconds, trim_acknowledged

STREAM = "fc:{test}:stream"


async def fill(redis: Redis, n: int) -> list[str]:
    return [(await redis.xadd(STREAM, {"n": str(i)})).decode() for i in range(n)]


async def consume(redis: Redis, group: str, count: int, ack: int) -> None:
    reply: Any = await redis.xreadgroup(group, "c1", {STREAM: ">"}, count=count)
    ids = [entry_id for entry_id, _ in reply[0][1]] if reply else []
    if ack:
        await redis.xack(STREAM, group, *ids[:ack])


async def test_unacknowledged_and_undelivered_entries_survive_the_cap(redis: Redis) -> None:
    await ensure_group(redis, STREAM, "fast")
    await ensure_group(redis, STREAM, "slow")
    ids = await fill(redis, 30)
    await consume(redis, "fast", 30, 30)  # one group has everything
    await consume(redis, "slow", 10, 5)  # the other: 5 acknowledged, 5 pending, 20 never delivered
    removed, oldest = await trim_acknowledged(redis, STREAM, keep=3)
    assert removed == 5 and oldest == ids[5]
    assert 0 <= entry_age_seconds(oldest, time.time()) < 60
    remaining = [e[0].decode() for e in await redis.xrange(STREAM)]
    assert remaining == ids[5:]  # from the oldest pending entry on: nothing the slow group owes is gone
    await consume(redis, "slow", 100, 0)
    reply: Any = await redis.xpending_range(STREAM, "slow", "-", "+", 100)
    await redis.xack(STREAM, "slow", *[p["message_id"] for p in reply])
    assert await trim_acknowledged(redis, STREAM, keep=3) == (22, None)
    assert [e[0].decode() for e in await redis.xrange(STREAM)] == ids[-3:]


async def test_publish_never_trims_by_itself(redis: Redis) -> None:
    stream = bus.OUTBOX
    await ensure_group(redis, stream, "front")
    for i in range(5):
        await bus.publish(redis, stream, bus.BusEvent("reply", "c", {"i": i}))
    assert await redis.xlen(stream) == 5
    removed, oldest = await trim_acknowledged(redis, stream, keep=1)
    assert removed == 0 and oldest is not None and await redis.xlen(stream) == 5  # all 5 owed to the group


async def test_a_stream_that_does_not_exist_yet_is_left_alone(redis: Redis) -> None:
    assert await trim_acknowledged(redis, "fc:{test}:nothing-yet", keep=3) == (0, None)


async def test_acknowledged_only_drops_what_every_group_handled_and_nothing_else(redis: Redis) -> None:
    await ensure_group(redis, STREAM, "fast")
    await ensure_group(redis, STREAM, "slow")
    ids = await fill(redis, 10)
    await consume(redis, "fast", 10, 10)
    await consume(redis, "slow", 6, 4)  # 4 acknowledged, 2 pending, 4 never delivered
    assert await trim_acknowledged(redis, STREAM, keep=100, acknowledged_only=True) == (4, ids[4])
    assert [e[0].decode() for e in await redis.xrange(STREAM)] == ids[4:]
    await consume(redis, "slow", 100, 0)
    pending: Any = await redis.xpending_range(STREAM, "slow", "-", "+", 100)
    await redis.xack(STREAM, "slow", *[p["message_id"] for p in pending])
    assert await trim_acknowledged(redis, STREAM, keep=100, acknowledged_only=True) == (6, None)
    assert await redis.xlen(STREAM) == 0
    later = await fill(redis, 2)  # added after the trim: owed to both groups, kept
    assert await trim_acknowledged(redis, STREAM, keep=0, acknowledged_only=True) == (0, later[0])
    assert await redis.xlen(STREAM) == 2


async def test_acknowledged_only_keeps_a_stream_no_group_reads_yet_up_to_its_cap(redis: Redis) -> None:
    ids = await fill(redis, 5)  # the reader's role has not started: no group, nothing handled
    assert await trim_acknowledged(redis, STREAM, keep=10, acknowledged_only=True) == (0, None)
    assert await trim_acknowledged(redis, STREAM, keep=3, acknowledged_only=True) == (2, None)
    assert [e[0].decode() for e in await redis.xrange(STREAM)] == ids[2:]


async def test_acknowledged_only_waits_for_the_reader_that_has_not_started(redis: Redis) -> None:
    """The slack role's timeline group reads the inbox too: when it has acknowledged the users' messages and the
    agent role (whose group has not been created yet, a fresh deployment) has not started, the messages must stay
    for the agent group, which starts at the stream's beginning."""
    await ensure_group(redis, STREAM, "timeline")
    ids = await fill(redis, 5)
    await consume(redis, "timeline", 5, 5)
    assert await trim_acknowledged(redis, STREAM, keep=10, acknowledged_only=True, readers=("agent",)) == (0, None)
    await ensure_group(redis, STREAM, "agent")
    reply: Any = await redis.xreadgroup("agent", "c1", {STREAM: ">"}, count=10)
    assert [e[0].decode() for e in reply[0][1]] == ids


def test_bus_readers_are_the_groups_the_roles_read_with() -> None:
    from bot.agent.worker import GROUP as AGENT_GROUP
    from bot.slack.poster import GROUP as POSTER_GROUP

    assert bus.READERS == {bus.INBOX: (AGENT_GROUP,), bus.OUTBOX: (POSTER_GROUP,)}
