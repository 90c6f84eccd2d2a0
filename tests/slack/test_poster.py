"""The poster: results, answers, working reactions; 429s, outages and redelivery."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.agent import bus
from bot.approvals.records import CallRecord
from tests.slack.conftest import CHANNEL, Harness, wait_for

CONV = f"slack:{CHANNEL}:1700.000001"
Start = Callable[[], Awaitable[None]]


async def finished(harness: Harness, output: str, **result: Any) -> CallRecord:
    record = await harness.propose(CONV, ["opsctl", "status"])
    await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=record.argv_hash)
    assert await harness.store.claim(record.id, "runner-1")
    data = {"status": "finished", "exit_code": 0, "output": output, "duration_seconds": 1.25,
            "total_bytes": len(output), **result}
    return await harness.store.finish(record.id, "runner-1", data)


def thread_posts(harness: Harness) -> list[dict[str, Any]]:
    return [c.params for c in harness.slack.calls_to("chat.postMessage") if c.status == 200 and c.response.get("ok")]


async def test_result_is_escaped_mentions_disabled_and_long_output_attached(harness: Harness, poster: Start) -> None:
    blob = "x" * 200_000
    output = "ping <!channel> and <@U123> and <!subteam^S1> & <https://evil|click>\n" + blob
    record = await finished(harness, output, truncated=True)
    await poster()
    (post,) = await wait_for(lambda: thread_posts(harness))
    assert post["thread_ts"] == "1700.000001" and post["parse"] == "none" and not post["link_names"]
    text = json.dumps(post["blocks"])
    assert "&lt;!channel&gt;" in text and "&lt;@U123&gt;" in text and "&amp; &lt;https://evil|click&gt;" in text
    for bad in ("<!channel>", "<@U123>", "<!subteam", "<https://evil"):
        assert bad not in text and bad not in post["text"]
    assert "exit code 0" in text and "1.2s" in text
    assert len(post["blocks"]) <= 50 and all(len(b["elements"][0]["text"] if b["type"] == "context"
                                                 else b["text"]["text"]) <= 3000 for b in post["blocks"])
    assert sum(len(json.dumps(b)) for b in post["blocks"]) < 40_000
    assert len(harness.slack.uploads) == 1
    assert next(iter(harness.slack.uploads.values())).decode() == output
    (complete,) = harness.slack.calls_to("files.completeUploadExternal")
    assert complete.params["channel_id"] == CHANNEL and complete.params["thread_ts"] == "1700.000001"
    async def remembered() -> bool:
        return bool((await harness.store.get(record.id)).meta.get("slack_result_ts"))

    await wait_for(remembered)


async def test_short_result_is_inline_without_upload(harness: Harness, poster: Start) -> None:
    await finished(harness, "all good\n", exit_code=3)
    await poster()
    (post,) = await wait_for(lambda: thread_posts(harness))
    assert "all good" in json.dumps(post["blocks"]) and "exit code 3" in json.dumps(post["blocks"])
    assert harness.slack.uploads == {}


async def test_rate_limited_post_is_retried_and_posted_once(harness: Harness, poster: Start) -> None:
    harness.slack.fail_next("chat.postMessage", status=429, headers={"Retry-After": "1"})
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": "done"}))
    await poster()
    (post,) = await wait_for(lambda: thread_posts(harness), timeout=8)
    assert [c.status for c in harness.slack.calls_to("chat.postMessage")] == [429, 200]
    await asyncio.sleep(0.3)
    assert len(thread_posts(harness)) == 1


async def test_slack_down_then_up_loses_nothing(harness: Harness, poster: Start) -> None:
    harness.slack.down = "error"
    await finished(harness, "result during outage")
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": "answer during outage"}))
    await poster()
    await wait_for(lambda: len(harness.slack.calls) >= 4)
    assert thread_posts(harness) == []
    harness.slack.down = None
    posts = await wait_for(lambda: len(thread_posts(harness)) >= 2 and thread_posts(harness))
    texts = json.dumps(posts)
    assert "result during outage" in texts and "answer during outage" in texts
    await wait_for(lambda: _no_pending(harness))
    await asyncio.sleep(0.3)
    assert len(thread_posts(harness)) == 2


async def _no_pending(harness: Harness) -> bool:
    streams = [bus.OUTBOX, harness.store.keys.completions_stream(0)]
    counts = [(await harness.redis.xpending(s, "slack"))["pending"] for s in streams]
    return counts == [0, 0]


async def test_unacked_entries_are_reread_after_restart(harness: Harness) -> None:
    await bus.ensure_group(harness.redis, bus.OUTBOX, "slack")
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": "survivor"}))
    consumer = harness.front.poster.consumer
    await harness.redis.xreadgroup("slack", consumer, {bus.OUTBOX: ">"})  # read, then "crash" before the ack
    stop = asyncio.Event()
    task = asyncio.create_task(harness.front.run_poster(stop))
    try:
        (post,) = await wait_for(lambda: thread_posts(harness))
        assert "survivor" in post["text"]
        await wait_for(lambda: _no_pending(harness))
    finally:
        stop.set()
        await task


async def test_reply_markdown_is_converted_and_escaped(harness: Harness, poster: Start) -> None:
    text = "# Findings\n**db-3** is *slow*; see [runbook](https://wiki/x) <!here>\n- one\n- two\n```py\na < b\n```"
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": text}))
    await poster()
    (post,) = await wait_for(lambda: thread_posts(harness))
    body = post["blocks"][0]["text"]["text"]
    assert body.startswith("*Findings*\n*db-3* is _slow_; see runbook (<https://wiki/x>) &lt;!here&gt;")
    assert "• one\n• two" in body and "```\na &lt; b\n```" in body
    assert post["blocks"][0]["text"]["verbatim"] is True


async def test_working_reaction_added_and_removed(harness: Harness, poster: Start) -> None:
    await harness.front.deps.state.open_thread(CHANNEL, "1700.000001", "UREQ", last_ts="1700.000001")
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("working", CONV))
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("idle", CONV))
    await poster()
    (removed,) = await wait_for(lambda: harness.slack.calls_to("reactions.remove"))
    (added,) = harness.slack.calls_to("reactions.add")
    assert added.params == {"channel": CHANNEL, "timestamp": "1700.000001", "name": "hourglass_flowing_sand"}
    assert removed.params["timestamp"] == "1700.000001"


async def test_posts_made_just_before_a_crash_are_not_posted_again(harness: Harness) -> None:
    """Crash window: Slack accepted the post, the poster died before recording it. The retry finds its own
    message in the thread (by the key in the message metadata) instead of posting a second copy."""
    poster, state, redis = harness.front.poster, harness.front.deps.state, harness.redis
    record = await finished(harness, "all good")
    reply_id = await bus.publish(redis, bus.OUTBOX, bus.BusEvent("reply", CONV, {"text": "the answer"}))
    (completion,) = [(i.decode(), {k.decode(): v.decode() for k, v in f.items()})
                     for i, f in await redis.xrange(harness.store.keys.completions_stream(0))]
    reply_fields = {"kind": "reply", "conversation": CONV, "data": json.dumps({"text": "the answer"})}
    completions = harness.store.keys.completions_stream(0)
    for stream, entry_id, fields in [(bus.OUTBOX, reply_id, reply_fields), (completions, *completion)]:
        await poster._handle_once(stream, entry_id, fields)
        await redis.delete(f"{state.prefix}:done:{stream}:{entry_id}")  # the crash: posted, never recorded
        await redis.hdel(harness.store.keys.call(record.id), "meta:slack_result_ts")
        await poster._handle_once(stream, entry_id, fields)  # the restarted poster handles it again
    posts = thread_posts(harness)
    assert [p["text"] for p in posts].count("the answer") == 1
    assert sum("exit code 0" in json.dumps(p) for p in posts) == 1
    assert harness.slack.calls_to("conversations.replies")  # the retry looked before posting


async def finished_in(harness: Harness, conversation: str, output: str) -> CallRecord:
    record = await harness.propose(conversation, ["opsctl", "status"])
    await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=record.argv_hash)
    assert await harness.store.claim(record.id, "runner-1")
    return await harness.store.finish(record.id, "runner-1", {"status": "finished", "exit_code": 0, "output": output})


async def test_a_slow_thread_does_not_hold_up_others_and_each_thread_keeps_its_order(
        harness: Harness, poster: Start) -> None:
    """Results of different threads are posted in parallel; one thread's results in the order they finished."""
    slow_thread, fast_thread = "1700.000010", "1700.000020"
    default = harness.slack._api_chat_postMessage

    def answer(call: Any) -> dict[str, Any]:
        if call.params.get("thread_ts") == slow_thread:
            time.sleep(0.4)  # Slack slow for this thread only (runs on the fake's own request thread)
        return default(call.params)

    harness.slack.on("chat.postMessage", answer)
    for i in range(3):
        await finished_in(harness, f"slack:{CHANNEL}:{slow_thread}", f"slow {i}\n")
    for i in range(3):
        await finished_in(harness, f"slack:{CHANNEL}:{fast_thread}", f"fast {i}\n")
    await poster()

    def posted(thread: str) -> list[str]:
        return [json.dumps(p["blocks"]) for p in thread_posts(harness) if p.get("thread_ts") == thread]

    await wait_for(lambda: len(posted(fast_thread)) == 3, timeout=5)
    assert len(posted(slow_thread)) <= 1  # the fast thread finished while the slow one was still posting
    await wait_for(lambda: len(posted(slow_thread)) == 3, timeout=10)
    for thread, kind in ((slow_thread, "slow"), (fast_thread, "fast")):
        assert [next(i for i in range(3) if f"{kind} {i}" in text) for text in posted(thread)] == [0, 1, 2]


async def test_a_poster_that_is_behind_updates_each_card_once_with_its_latest_state(
    harness: Harness, poster: Start
) -> None:
    """Approved, running and finished wait in the streams (the poster was down): the card is updated once, to
    its final state, and linked to the result; the entries announcing states the call has left are skipped."""
    record = await harness.propose(CONV, ["opsctl", "status"])
    card = harness.slack._api_chat_postMessage({"channel": CHANNEL, "thread_ts": "1700.000001", "text": "card"})
    await harness.store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=card["ts"])
    record = await finished_from(harness, record, "all good\n")
    await poster()
    (post,) = await wait_for(lambda: thread_posts(harness))
    await wait_for(lambda: _all_handled(harness))
    (update,) = harness.slack.calls_to("chat.update")
    assert update.params["ts"] == card["ts"] and "exit code 0" in json.dumps(update.params["blocks"])
    stored = await harness.store.get(record.id)
    assert stored.meta["slack_result_ts"] and stored.meta["slack_card_link"] and stored.meta["slack_result_link"]


async def finished_from(harness: Harness, record: CallRecord, output: str) -> CallRecord:
    await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=record.argv_hash)
    assert await harness.store.claim(record.id, "runner-1")
    data = {"status": "finished", "exit_code": 0, "output": output, "duration_seconds": 0.5,
            "total_bytes": len(output)}
    return await harness.store.finish(record.id, "runner-1", data)


async def _all_handled(harness: Harness) -> bool:
    keys = harness.store.keys
    for shard in keys.all_shards():
        for stream in (keys.progress_stream(shard), keys.completions_stream(shard)):
            if await harness.redis.exists(stream):
                groups = {g["name"].decode() if isinstance(g["name"], bytes) else g["name"]: g
                          for g in await harness.redis.xinfo_groups(stream)}
                slack = groups.get("slack")
                if slack is None or slack["pending"] or slack.get("lag"):
                    return False
    return True
