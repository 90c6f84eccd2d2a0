"""Nothing acknowledged is lost (bot/slack/intake.py, intake_worker.py): a request is recorded in Redis before
Slack is answered; when it cannot be, Slack is refused in a way it acts on; work after the ack that fails is
retried from the recorded entry. Real bolt app over signed HTTP, real Redis servers, loopback fake Slack."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.redis_connection import connect_redis
from bot.redis_pool import PoolSettings
from bot.slack.cards import APPROVE_ACTION
from bot.slack.intake import CLICK_NOT_RECORDED, COULD_NOT_START, Intake
from bot.slack.intake_worker import MAX_ATTEMPTS
from bot.slack.settings import SlackSettings
from bot.streams import ensure_group
from bot.tools.catalog import Catalog
from tests.slack.conftest import CHANNEL, Harness, make_front, serving, wait_for
from tests.support.fake_slack import FakeSlack, SlackCall
from tests.support.redis_server import RedisServer
from tests.support.reply_dropping_proxy import ReplyDroppingProxy

MENTION = {"type": "app_mention", "user": "UREQ", "channel": CHANNEL, "ts": "1700.000001",
           "text": "<@UBOT> check db-3"}


async def inbox(redis: Redis) -> list[bus.BusEvent]:
    return [bus.BusEvent.from_fields(i, f) for i, f in await redis.xrange(bus.INBOX)]


def asked_posts(slack: FakeSlack) -> list[str]:
    return [c.response["ts"] for c in slack.calls_to("chat.postMessage")
            if c.response.get("ok") and "asked:" in str(c.params.get("text"))]


async def test_a_request_that_cannot_be_recorded_is_refused_so_slack_or_the_user_retries(
    slack: FakeSlack, redis_url: str, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    # one command connection, held by a slow command: the record cannot get a connection within Slack's 3 s
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(1, 10.0))
    try:
        front = make_front(slack, handle.client, store, policy, catalog, settings, reader=redis)
        async with serving(front, slack, store, handle.client) as h:
            holder = asyncio.create_task(handle.client.blpop(["nothing"], timeout=3))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            command, event = await asyncio.gather(h.command("check db-3"), h.event(MENTION, event_id="EvX"))
            assert time.monotonic() - started < 3  # answered within Slack's deadline
            status, text = command
            assert status == 200  # a slash command is never retried by Slack: the user is told instead
            assert json.loads(text) == {"response_type": "ephemeral", "text": COULD_NOT_START}
            assert event[0] == 503  # Slack retries an event it did not get a 2xx for
            await holder
            # the retried event is recorded now and handled; the refused command started nothing
            assert (await h.event(MENTION, event_id="EvX", headers={"X-Slack-Retry-Num": "1"}))[0] == 200
            (message,) = await wait_for(lambda: inbox(redis))
            assert message.data["text"] == "check db-3"
            assert asked_posts(slack) == []
    finally:
        await handle.close()


async def test_a_click_that_cannot_be_recorded_is_refused_and_the_clicker_told_to_click_again(
    slack: FakeSlack, redis_url: str, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """Slack does not retry a click and shows a refused one only as a small failure mark on the button: the
    person also gets a note only they see (through the click's response_url, never replacing the card) saying
    nothing was changed and to click again."""
    handle = await connect_redis(redis_url, state_dir=".", pool=PoolSettings(1, 10.0))
    try:
        front = make_front(slack, handle.client, store, policy, catalog, settings, reader=redis)
        async with serving(front, slack, store, handle.client) as h:
            record = await h.propose(f"slack:{CHANNEL}:1700.000001", ["opsctl", "status"])
            holder = asyncio.create_task(handle.client.blpop(["nothing"], timeout=3))
            await asyncio.sleep(0.1)
            status, _text = await h.click(record, APPROVE_ACTION, "UAPPROVER")
            assert status == 503
            (note,) = await wait_for(lambda: slack.response_url_posts.get("click"), timeout=5)
            assert note["response_type"] == "ephemeral" and note["replace_original"] is False
            assert note["text"] == CLICK_NOT_RECORDED
            await holder
            assert (await store.get(record.id)).state is CallState.awaiting_approval  # nothing was changed
    finally:
        await handle.close()


async def test_work_after_the_ack_survives_a_redis_crash_and_a_slack_outage(
    tmp_path: Path, slack: FakeSlack, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    server = RedisServer(tmp_path / "redis")  # our own server (AOF, fsync always), so we may kill it
    server.start()
    handle = await connect_redis(server.url, state_dir=".", readers=1)
    front = make_front(slack, handle.client, CallStore(handle.client), policy, catalog, settings,
                       reader=handle.reader)
    stop = asyncio.Event()
    try:
        port = await front.listen_http(host="127.0.0.1", port=0)  # receiving, but no intake worker yet
        await front.start()
        async with aiohttp.ClientSession() as session:
            h = Harness(front, slack, f"http://127.0.0.1:{port}/slack/events", session, store, handle.client)
            assert (await h.command("why is db-3 slow?"))[0] == 200  # acknowledged: recorded
        server.kill()  # SIGKILL: only what reached the AOF survives
        slack.fail_next("chat.postMessage", status=500, times=3)  # and Slack is down for a while
        worker = asyncio.create_task(front.intake_worker.run(stop))
        await asyncio.sleep(0.5)  # the worker fails against the dead Redis and keeps retrying
        server.start()
        (message,) = await wait_for(lambda: inbox(handle.client), timeout=20)
        assert message.data["text"] == "why is db-3 slow?" and message.kind == "user_message"
        assert len(asked_posts(slack)) == 1
        assert message.conversation == f"slack:{CHANNEL}:{asked_posts(slack)[0]}"
        assert await wait_for(lambda: _all_acked(handle.client, front.intake.stream))
        stop.set()
        await worker
    finally:
        stop.set()
        if front._http_runner is not None:
            await front._http_runner.cleanup()
        await handle.close()
        server.stop()


async def _all_acked(redis: Redis, stream: str) -> bool:
    return int((await redis.xpending(stream, "intake"))["pending"]) == 0


async def test_retrying_a_recorded_request_starts_it_once(harness: Harness) -> None:
    """The worker may run one entry's work again (a failure half-way, a takeover): one post, one hand-off."""
    worker = harness.front.intake_worker
    await harness.command("restart web-1")
    await wait_for(lambda: inbox(harness.redis))
    ((entry_id, fields),) = await harness.redis.xrange(harness.front.intake.stream)
    await worker.process(entry_id.decode(), fields)  # the same entry handled twice more
    await worker.process(entry_id.decode(), fields)
    assert len(await inbox(harness.redis)) == 1
    assert len(asked_posts(harness.slack)) == 1
    await harness.event(MENTION, event_id="Ev1")
    await wait_for(lambda: _at_least(harness.redis, 2))
    entries = await harness.redis.xrange(harness.front.intake.stream)
    event_entry = entries[-1]
    await worker.process(event_entry[0].decode(), event_entry[1])
    assert len(await inbox(harness.redis)) == 2


async def _at_least(redis: Redis, n: int) -> list[bus.BusEvent] | None:
    events = await inbox(redis)
    return events if len(events) >= n else None


async def test_an_entry_left_by_a_dead_replica_is_taken_over(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """A replica that read an entry and died leaves it pending; a live one takes it over and does the work."""
    settings.reclaim_idle_seconds = 0.3
    async with serving(make_front(slack, redis, store, policy, catalog, settings), slack, store, redis) as harness:
        await _taken_over(harness)


async def _taken_over(harness: Harness) -> None:
    stream = harness.front.intake.stream
    body = {"command": "/fisk", "text": "disk full on db-2", "user_id": "UREQ", "channel_id": CHANNEL,
            "response_url": harness.slack.response_url("dead")}
    await ensure_group(harness.redis, stream, "intake")  # the live worker may not have created it yet
    async with harness.redis.pipeline(transaction=True) as pipe:  # recorded and read by the dead replica at once
        pipe.xadd(stream, {"kind": "command", "body": json.dumps(body)})
        pipe.xreadgroup("intake", "dead-replica", {stream: ">"}, count=10)
        _, taken = await pipe.execute()
    assert len(taken[0][1]) == 1
    (message,) = await wait_for(lambda: inbox(harness.redis), timeout=10)
    assert message.data["text"] == "disk full on db-2"
    assert await wait_for(lambda: _all_acked(harness.redis, stream))


async def test_replays_and_retried_events_are_recorded_once(harness: Harness) -> None:
    body = urlencode({"command": "/fisk", "text": "hi there", "user_id": "UREQ", "channel_id": CHANNEL,
                      "response_url": harness.slack.response_url("r")})
    ts = int(time.time())
    assert (await harness.send(body, "application/x-www-form-urlencoded", timestamp=ts))[0] == 200
    assert (await harness.send(body, "application/x-www-form-urlencoded", timestamp=ts))[0] == 401  # replay
    for retry in range(3):  # Slack signs each retry anew (its own timestamp): not a replay, a duplicate
        status, _ = await harness.event(MENTION, event_id="EvR", timestamp=ts - retry,
                                        headers={"X-Slack-Retry-Num": str(retry)})
        assert status == 200
    await wait_for(lambda: _at_least(harness.redis, 2))
    assert await harness.redis.xlen(harness.front.intake.stream) == 2


async def test_a_failing_entry_left_pending_by_a_restart_waits_for_the_reclaim_delay(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """A restarted worker re-reads its own pending entries once: an entry that fails again is retried after
    ``reclaim_idle_seconds`` like any other, not re-read at once in a loop that burns every attempt in a moment."""
    settings.reclaim_idle_seconds = 30
    settings.consumer = "restarted"
    front = make_front(slack, redis, store, policy, catalog, settings)
    stream = front.intake.stream
    await ensure_group(redis, stream, "intake")
    entry_id = (await redis.xadd(stream, {"kind": "command", "body": "{not json"})).decode()
    await redis.xreadgroup("intake", "restarted", {stream: ">"}, count=10)  # read before the "crash"
    stop = asyncio.Event()
    worker = asyncio.create_task(front.intake_worker.run(stop))
    try:
        await asyncio.sleep(1.0)
        attempts = await redis.get(f"{front.intake.prefix}:{{intake}}:attempts:{entry_id}")
        assert int(attempts or 0) == 1
        assert int((await redis.xpending(stream, "intake"))["pending"]) == 1  # kept for a later attempt
    finally:
        stop.set()
        await worker


async def test_an_entry_that_always_fails_is_dropped_after_max_attempts_counting_its_first_delivery(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings, caplog: pytest.LogCaptureFixture,
) -> None:
    """The first delivery of an entry is not counted in Redis (it is attempt 1 by definition: no round trip on a
    click's way to the approval); each re-delivery is. An entry that fails every time is tried MAX_ATTEMPTS times
    in all, then logged and acknowledged, not retried for ever."""
    settings.reclaim_idle_seconds = 0.1
    front = make_front(slack, redis, store, policy, catalog, settings)
    stream = front.intake.stream
    stop = asyncio.Event()
    worker = asyncio.create_task(front.intake_worker.run(stop))
    try:
        await wait_for(lambda: _group_exists(redis, stream))
        entry_id = (await redis.xadd(stream, {"kind": "command", "body": "{not json"})).decode()
        await wait_for(lambda: f"request {entry_id} failed {MAX_ATTEMPTS} times; giving up" in caplog.text,
                       timeout=20)
        assert await wait_for(lambda: _all_acked(redis, stream))
        attempts = await redis.get(f"{front.intake.prefix}:{{intake}}:attempts:{entry_id}")
        assert int(attempts or 0) == MAX_ATTEMPTS  # re-deliveries are attempts 2..MAX_ATTEMPTS+1; the last gives up
        assert caplog.text.count(f"request {entry_id} failed; it stays pending") == MAX_ATTEMPTS
    finally:
        stop.set()
        await worker


async def _group_exists(redis: Redis, stream: str) -> bool:
    try:
        return bool(await redis.xinfo_groups(stream))
    except Exception:
        return False


async def test_redis_lost_right_after_the_asked_post_does_not_post_it_twice(
    tmp_path: Path, slack: FakeSlack, policy: ApprovalPolicy, catalog: Catalog, settings: SlackSettings,
) -> None:
    """Redis restarts between Slack's answer to the "asked" post and recording its ts: the worker waits for Redis
    to record it instead of redoing the whole request (which posted the request twice and opened two threads)."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    handle = await connect_redis(server.url, state_dir=".", readers=1)
    front = make_front(slack, handle.client, CallStore(handle.client), policy, catalog, settings,
                       reader=handle.reader)

    def post_then_lose_redis(call: SlackCall) -> dict[str, object]:
        answer = slack._api_chat_postMessage(call.params)
        if "asked:" in str(call.params.get("text")) and len(asked_posts(slack)) == 0:
            server.kill()  # Slack has posted it; the ts is not recorded yet
            restart.start()
        return answer

    restart = threading.Timer(7.0, server.start)  # down longer than redis-py's own retries last

    slack.on("chat.postMessage", post_then_lose_redis)
    try:
        async with serving(front, slack, CallStore(handle.client), handle.client) as h:
            assert (await h.command("why is db-3 slow?"))[0] == 200
            await wait_for(lambda: _started(restart), timeout=10)
            await asyncio.to_thread(restart.join)
            (message,) = await wait_for(lambda: inbox(handle.client), timeout=20)
            assert await wait_for(lambda: _all_acked(handle.client, front.intake.stream), timeout=20)
            assert len(asked_posts(slack)) == 1
            assert message.conversation == f"slack:{CHANNEL}:{asked_posts(slack)[0]}"
    finally:
        await handle.close()
        server.stop()


async def _started(timer: threading.Timer) -> bool:
    return timer.is_alive() or timer.finished.is_set()


async def test_a_record_retried_by_redis_py_after_a_lost_reply_is_recorded_not_a_replay(
    redis_url: str, redis: Redis, settings: SlackSettings,
) -> None:
    """Redis ran the recording script but the connection broke before its reply: redis-py sends it again on a new
    connection. That second run is ours, not a replayed request: the request is recorded once and Slack is told so
    (it used to find its own signature and answer 401 "replayed request" for a request that then ran)."""
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    await Intake(redis, settings).record("event", {"text": "loads the script"})  # so the next EVALSHA runs it
    async with ReplyDroppingProxy(host, int(port), b"EVALSHA") as proxy:
        handle = await connect_redis(f"redis://127.0.0.1:{proxy.port}/0", state_dir=".")
        try:
            intake = Intake(handle.client, settings)
            recorded = await intake.record("command", {"text": "hi"}, signature="v0=lost-reply")
        finally:
            await handle.close()
    assert proxy.dropped == 1  # the reply of the first run was lost indeed
    assert recorded.outcome == "recorded"
    (_, entry) = await redis.xrange(intake.stream)
    assert entry[0].decode() == recorded.entry_id
    replay = await Intake(redis, settings).record("command", {"text": "hi"}, signature="v0=lost-reply")
    assert replay.outcome == "replay"  # a real replay is still refused


async def test_an_entry_whose_delivery_reply_was_lost_is_handled_without_waiting_for_the_reclaim(
    slack: FakeSlack, redis_url: str, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """Redis delivered an entry to our consumer (it is pending for us) but the reply never arrived: redis-py sends
    the read again on a new connection and gets only newer entries. The worker still handles it within its
    recheck period (5 s), long before another replica's reclaim delay (60 s) would."""
    assert settings.reclaim_idle_seconds == 60
    intake = Intake(redis, settings)
    body = {"command": "/fisk", "text": "why is db-3 slow?", "user_id": "UREQ", "channel_id": CHANNEL,
            "response_url": slack.response_url("lost")}
    await ensure_group(redis, intake.stream, "intake")
    await redis.xadd(intake.stream, {"kind": "command", "body": json.dumps(body)})
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    async with ReplyDroppingProxy(host, int(port), b"\r\n$1\r\n>\r\n") as proxy:  # the first read of new entries
        reader = await connect_redis(f"redis://127.0.0.1:{proxy.port}/0", state_dir=".")
        try:
            front = make_front(slack, redis, store, policy, catalog, settings, reader=reader.client)
            async with serving(front, slack, store, redis):
                (message,) = await wait_for(lambda: inbox(redis), timeout=20)
                assert proxy.dropped == 1  # the delivery's reply was lost indeed
                assert message.data["text"] == "why is db-3 slow?"
                assert await wait_for(lambda: _all_acked(redis, intake.stream))
                assert len(asked_posts(slack)) == 1
        finally:
            await reader.close()


async def test_handled_requests_are_acknowledged_in_batches_each_handled_once(harness: Harness) -> None:
    """A burst of recorded requests is acknowledged in a few XACKs (one per request cost each a Redis round
    trip), and every request is handled once: one hand-off to the agent each."""
    await harness.redis.config_resetstat()
    texts = [f"check web-{n}" for n in range(10)]
    replies = await asyncio.gather(*(harness.command(text, user=f"U{n:04d}") for n, text in enumerate(texts)))
    assert all(status == 200 for status, _ in replies)
    await wait_for(lambda: _at_least(harness.redis, len(texts)), timeout=20)
    assert await wait_for(lambda: _all_acked(harness.redis, harness.front.intake.stream), timeout=10)
    stats = await harness.redis.info("commandstats")
    assert int(stats["cmdstat_xack"]["calls"]) < len(texts)
    assert sorted(e.data["text"] for e in await inbox(harness.redis)) == sorted(texts)


async def test_a_request_waiting_for_its_batched_acknowledgement_is_not_handled_again(harness: Harness) -> None:
    """Between its handling and its batch's XACK an entry is still pending: the read loop's look at its own
    pending entries (or a reclaim) must not hand it to a second task."""
    worker, stream = harness.front.intake_worker, harness.front.intake.stream
    body = json.dumps({"command": "/fisk", "text": "check db-9", "user_id": "UREQ", "channel_id": CHANNEL})
    worker.acks.queue(stream, "1-1", done=False)  # handled; its acknowledgement waits for the batch
    await worker._spawn("1-1", {"kind": "command", "body": body}, asyncio.Event(), fresh=False)
    assert "1-1" not in worker._tasks
