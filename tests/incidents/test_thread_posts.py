"""The poster's side of alert threads: an opening post redelivered after a crash (posted, but not recorded)
is found in the channel instead of posted twice, and the brief goes to the agent once; a post for a thread that
Slack refused to open is dropped instead of blocking the outbox."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.agent import bus
from bot.slack import threads
from tests.slack.conftest import Harness

RECORD = "fc:{inc}:incident:abc"


def _event(entry_id: str) -> bus.BusEvent:
    return bus.BusEvent("thread_open", "incident:abc", {
        "record": RECORD, "channel": "C0WEB", "text": "[OPEN] x", "blocks": [], "user": "alert:alertmanager",
        "brief": "Investigate.", "meta": {"incident": "abc"},
    }, id=entry_id)  # fmt: skip


async def _briefs(redis: Redis) -> int:
    return sum(1 for _i, f in await redis.xrange(bus.INBOX) if f[b"kind"] == b"user_message")


async def test_redelivered_opening_post_is_found_not_repeated(harness: Harness) -> None:
    deps, redis = harness.front.deps, harness.redis
    entry = "1-0"
    await threads.open_thread(deps, _event(entry), retry=False)
    ts = (await redis.hget(RECORD, "thread_ts")).decode()  # type: ignore[union-attr]
    # a crash between Slack's answer and recording it: the record never got the ts, the entry is redelivered
    await redis.hdel(RECORD, "thread_ts", "brief_submitted")
    await redis.delete(bus.INBOX)
    await threads.open_thread(deps, _event(entry), retry=True)
    assert len(harness.slack.calls_to("chat.postMessage")) == 1
    assert (await redis.hget(RECORD, "thread_ts")).decode() == ts  # type: ignore[union-attr]
    assert await _briefs(redis) == 1
    # a plain redelivery once everything was recorded changes nothing
    await threads.open_thread(deps, _event(entry), retry=True)
    assert len(harness.slack.calls_to("chat.postMessage")) == 1 and await _briefs(redis) == 1
    assert await deps.state.owned("C0WEB", ts) == f"slack:C0WEB:{ts}"


async def test_refused_channel_is_recorded_and_later_posts_dropped(harness: Harness) -> None:
    deps, redis = harness.front.deps, harness.redis
    harness.slack.fail_next("chat.postMessage", error="channel_not_found")
    await threads.open_thread(deps, _event("1-0"), retry=False)
    assert (await redis.hget(RECORD, "thread_error")) == b"channel_not_found"
    assert await _briefs(redis) == 0
    post = bus.BusEvent("thread_post", "incident:abc", {"record": RECORD, "key": "k", "text": "Resolved",
                                                        "card": None}, id="2-0")
    await threads.post_in_thread(deps, post, retry=False)  # returns at once: nothing to post into
    assert len(harness.slack.calls_to("chat.postMessage")) == 1


async def test_post_before_the_thread_is_open_goes_back_in_line(harness: Harness) -> None:
    deps, redis = harness.front.deps, harness.redis
    await redis.hset(RECORD, mapping={"channel": "C0WEB", "state": "open"})
    post = bus.BusEvent("thread_post", "incident:abc", {"record": RECORD, "key": "k1", "text": "Resolved",
                                                        "card": None}, id="5-0")
    await threads.post_in_thread(deps, post, retry=False)
    assert harness.slack.calls_to("chat.postMessage") == []
    [(_id, fields)] = await redis.xrange(bus.OUTBOX)
    requeued = bus.BusEvent.from_fields(_id, fields)
    assert requeued.kind == "thread_post" and requeued.data["attempt"] == 1 and requeued.data["text"] == "Resolved"
    await threads.open_thread(deps, _event("6-0"), retry=False)
    await threads.post_in_thread(deps, requeued, retry=False)
    ts = (await redis.hget(RECORD, "thread_ts")).decode()  # type: ignore[union-attr]
    assert any(m.get("text") == "Resolved" for m in harness.slack.thread("C0WEB", ts))
    gave_up = bus.BusEvent("thread_post", "incident:x", {"record": "fc:{inc}:incident:x", "attempt": 40}, id="7-0")
    await redis.hset("fc:{inc}:incident:x", "channel", "C0WEB")
    await threads.post_in_thread(deps, gave_up, retry=False)  # dropped with an error log, not requeued again
    assert len(await redis.xrange(bus.OUTBOX)) == 1
