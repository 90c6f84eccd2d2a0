"""The poster works through a backlog in batches: progress entries whose call has moved on acknowledged without
being handled, acknowledgements written together -- and what is handled but not acknowledged yet is neither lost
nor handled twice when Redis fails in between. (That a batch's calls are read in one round trip is a pipeline:
Redis counts the same commands; bench/bench_poster.py measures what it saves.)"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.slack import acks as acks_module
from bot.slack.acks import Acknowledger
from bot.slack.poster import GROUP
from tests.slack.conftest import CHANNEL, Harness, free_port, wait_for
from tests.slack.test_poster import Start, _all_handled, finished_from, thread_posts

CALLS = 24


async def commands(redis: Redis) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): int(stats["calls"])
            for name, stats in (await redis.info("commandstats")).items()}


async def test_a_backlog_is_read_and_acknowledged_in_batches(harness: Harness, poster: Start) -> None:
    records = []
    for i in range(CALLS):  # one thread each, card posted, then approved, run and finished while the poster is down
        conversation = f"slack:{CHANNEL}:1700.{i + 100:06d}"
        record = await harness.propose(conversation, ["opsctl", "status"])
        card = harness.slack._api_chat_postMessage({"channel": CHANNEL, "thread_ts": conversation.rsplit(":")[-1],
                                                    "text": "card"})
        await harness.store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=card["ts"])
        records.append(await finished_from(harness, record, f"out {i}\n"))
    await harness.redis.config_resetstat()
    await poster()
    await wait_for(lambda: len(thread_posts(harness)) == CALLS, timeout=20)
    await wait_for(lambda: _all_handled(harness), timeout=10)
    used = await commands(harness.redis)
    # Per call: its card updated once, to the final state (the approved and running entries were skipped)...
    updates = harness.slack.calls_to("chat.update")
    assert len(updates) == CALLS and all("exit code 0" in json.dumps(u.params["blocks"]) for u in updates)
    # 3 entries per call acknowledged in a few XACKs (one by one: one each), each completion recorded as done
    assert used["xack"] <= CALLS // 2
    assert used["set"] >= CALLS
    for record in records:
        stored = await harness.store.get(record.id)
        assert stored.meta["slack_result_ts"] and stored.meta["slack_result_link"]


async def test_acknowledgements_wait_out_a_redis_outage(harness: Harness) -> None:
    state, redis = harness.front.deps.state, harness.redis
    stream = harness.store.keys.completions_stream(0)
    await redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
    ids = [await redis.xadd(stream, {"call_id": f"c{i}"}) for i in range(3)]
    await redis.xreadgroup(GROUP, "me", {stream: ">"})
    away = Redis(port=free_port(), socket_connect_timeout=0.5)  # nothing listens there: Redis is away
    acks = Acknowledger(type(state)(away, state.settings), GROUP)
    for entry_id in ids:
        acks.queue(stream, entry_id.decode(), done=True)
    assert not await acks.flush()
    assert all(acks.waiting(stream, i.decode()) for i in ids)  # still queued: the poster will not handle them again
    assert (await redis.xpending(stream, GROUP))["pending"] == 3
    acks.state = state  # Redis is back
    assert await acks.flush()
    assert (await redis.xpending(stream, GROUP))["pending"] == 0
    assert not any(acks.waiting(stream, i.decode()) for i in ids)
    done: list[Any] = [await redis.exists(f"{state.prefix}:done:{stream}:{i.decode()}") for i in ids]
    assert done == [1, 1, 1]  # recorded as done with the acknowledgement: a re-delivery is skipped
    await away.aclose()


async def test_a_batch_waits_only_while_other_entries_are_in_hand(harness: Harness,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch delay gathers the acknowledgements of entries still being handled; once none is (the poster calls
    quiet(), or none was when the entry was queued) what is queued is written at once, not a delay later."""
    monkeypatch.setattr(acks_module, "ACK_DELAY_SECONDS", 60.0)  # a wait the test would notice
    state, redis = harness.front.deps.state, harness.redis
    stream = harness.store.keys.completions_stream(0)
    await redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
    ids = [(await redis.xadd(stream, {"call_id": f"c{i}"})).decode() for i in range(2)]
    await redis.xreadgroup(GROUP, "me", {stream: ">"})
    in_hand = [True]
    acks = Acknowledger(state, GROUP, busy=lambda: in_hand[0])
    stop = asyncio.Event()
    runner = asyncio.create_task(acks.run(stop))

    async def pending() -> int:
        return int((await redis.xpending(stream, GROUP))["pending"])

    acks.queue(stream, ids[0], done=True)  # another entry is in hand: its acknowledgement may join this batch
    await asyncio.sleep(0.3)
    assert await pending() == 2 and acks.waiting(stream, ids[0])
    in_hand[0] = False
    acks.quiet()  # the poster's last entry in flight ended
    await wait_for(lambda: not acks.waiting(stream, ids[0]), timeout=5)
    acks.queue(stream, ids[1], done=True)  # nothing else in hand when queued: written without the delay
    await wait_for(lambda: not acks.waiting(stream, ids[1]), timeout=5)
    assert await pending() == 0
    stop.set()
    acks.quiet()
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner
