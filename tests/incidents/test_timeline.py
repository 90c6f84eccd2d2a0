"""The timeline recorder and export without Slack: what a thread did stays exportable for
``incidents.retention_seconds`` even after the call records, the audit trail and the bus streams are gone;
redeliveries are not doubled; outside text is cleaned on the way out."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import Proposal
from bot.approvals.store import CallStore
from bot.incidents.recorder import TimelineRecorder, read_timeline
from bot.incidents.store import IncidentStore
from bot.incidents.timeline import build_timeline, render_markdown, zone
from tests.support.waiting import wait_for

CONV = "slack:C0WEB:1700000000.000100"
TOKEN = "xoxb-1234567890-abcdefghijklmnop"


async def test_recorded_thread_outlives_the_call_records(redis: Redis) -> None:
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(redis, incidents, calls, block_seconds=0.05)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))
    try:
        await bus.submit_user_message(redis, CONV, "UREQ", f"check db-3, my token is {TOKEN}")
        argv = ["/bin/opsctl", "db", "query", "--password", "hunter2", "--", "main", "select 1"]
        [record] = await calls.propose(CONV, [Proposal(tool="db_query", app="opsctl", arguments="{}", argv=argv)],
                                       ApprovalPolicy(), "UREQ")
        await calls.approve(record.id, "UAPPROVER", [], ApprovalPolicy(), reason="looks safe")
        await calls.claim(record.id, "r1")
        output = "row 1\n```\nnot the end of the block\n" + TOKEN
        await calls.finish(record.id, "r1", {"status": "finished", "exit_code": 0, "output": output,
                                             "duration_seconds": 0.25})
        await bus.publish_outbox(redis, "reply", CONV, {"turn": "t", "text": "db-3 answers.", "kind": "answer"})
        [later_call] = await calls.propose(CONV, [Proposal(tool="db_backup", app="opsctl", arguments="{}",
                                                           argv=["/bin/opsctl", "db", "backup"])],
                                           ApprovalPolicy(), "UREQ")
        await bus.submit_stop(redis, CONV, "UREQ")
        await calls.cancel(later_call.id, actor="UREQ", reason="conversation stopped by UREQ")
        await bus.publish_outbox(redis, "reply", "slack:C0OTHER:1.1", {"turn": "t", "text": "other", "kind": "answer"})

        async def complete() -> bool:
            entries = await read_timeline(redis, incidents, CONV)
            return len(entries) == 9  # message, proposed, approved, running, finished, answer, proposed, stop, cancel
        await wait_for(complete, timeout=10)
    finally:
        stop.set()
        await task

    # the recorder handled an entry twice (a crash before its ack): the export shows it once
    inbox_id, fields = (await redis.xrange(bus.INBOX))[0]
    await recorder.record(bus.INBOX, inbox_id.decode(), {k.decode(): v.decode() for k, v in fields.items()})
    assert len(await read_timeline(redis, incidents, CONV)) == 9
    assert 3500 < await redis.ttl(incidents.timeline_key(CONV)) <= 3600

    # the call record, the audit trail and the bus streams expire long before the timeline
    await redis.delete(calls.keys.call(record.id), calls.keys.audit_stream(0), bus.INBOX, bus.OUTBOX)
    timeline = await build_timeline(redis, incidents, CONV)
    document = render_markdown(timeline, zone("America/New_York"))
    for part in ("**Message** from UREQ", "**Approved**: `db_query`", "by UAPPROVER: looks safe",
                 "exit code 0 after 0.2", "db-3 answers.", "**Stop** requested by UREQ",
                 "**Cancelled**: `db_backup`", "by UREQ: conversation stopped by UREQ", "America/New_York",
                 "/bin/opsctl db query --password",
                 "/bin/opsctl db backup"):  # argv joined: not in the audit entry, read from the record when recorded
        assert part in document, part
    assert TOKEN not in document and "hunter2" not in document and "other" not in document
    assert "````\nrow 1\n```\nnot the end" in document  # a fence longer than any backtick run inside

    later = await build_timeline(redis, incidents, CONV, since=time.time() + 60)
    assert later.entries == []


async def test_a_calls_command_is_read_from_its_record_once_for_all_its_transitions(redis: Redis) -> None:
    """An audit entry whose command is the argv joined leaves it to the call record; the recorder reads that once
    per call (a call writes four entries), so a later transition keeps the command even once the record is gone."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(redis, incidents, calls)
    [record] = await calls.propose(CONV, [Proposal(tool="db_backup", app="opsctl", arguments="{}",
                                                   argv=["/bin/opsctl", "db", "backup"])], ApprovalPolicy(), "UREQ")
    await calls.approve(record.id, "UAPPROVER", [], ApprovalPolicy())
    stream = calls.keys.audit_stream(calls.keys.shard_of_call(record.id))
    entries = [(i.decode(), {k.decode(): v.decode() for k, v in f.items()}) for i, f in await redis.xrange(stream)]
    assert len(entries) >= 2 and not any(fields.get("command") for _, fields in entries)
    await recorder.record(stream, *entries[0])
    await redis.delete(calls.keys.call(record.id), calls.keys.body(record.id))
    for entry_id, fields in entries[1:]:
        await recorder.record(stream, entry_id, fields)
    timeline = await read_timeline(redis, incidents, CONV)
    assert [e["command"] for e in timeline] == ["/bin/opsctl db backup"] * len(entries)


async def test_a_batch_reads_the_record_of_each_of_its_calls_once(redis: Redis) -> None:
    """A batch of audit entries (a burst: several calls, each approved, running and finished) reads the records it
    needs (the command line, the result) together: each call's record once, however many of its entries the batch
    holds, in one pipeline rather than one round trip per entry."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(redis, incidents, calls)
    records = await calls.propose(CONV, [Proposal(tool="db_backup", app="opsctl", arguments="{}",
                                                  argv=["/bin/opsctl", "db", "backup", f"--n={n}"]) for n in range(3)],
                                  ApprovalPolicy(), "UREQ")
    for record in records:
        await calls.approve(record.id, "UAPPROVER", [], ApprovalPolicy())
        await calls.claim(record.id, "r1")
        await calls.finish(record.id, "r1", {"status": "finished", "exit_code": 0, "output": f"out {record.id}",
                                             "duration_seconds": 0.5})
    stream = calls.keys.audit_stream(0)
    entries = [(i.decode(), {k.decode(): v.decode() for k, v in f.items()}) for i, f in await redis.xrange(stream)]
    assert len(entries) >= 4 * len(records)

    async def reads() -> tuple[int, int]:
        stats = await redis.info("commandstats")
        return (int(stats.get("cmdstat_hgetall", {}).get("calls", 0)),
                int(stats.get("cmdstat_get", {}).get("calls", 0)))

    before = await reads()
    await recorder.record_many(stream, entries)
    after = await reads()
    assert (after[0] - before[0], after[1] - before[1]) == (len(records), len(records))  # hash and body, once each
    timeline = await read_timeline(redis, incidents, CONV)
    finished = [e for e in timeline if e["to"] == "finished"]
    assert sorted(e["output"] for e in finished) == sorted(f"out {r.id}" for r in records)
    assert {e["command"] for e in timeline if e["call_id"] == records[1].id} == {"/bin/opsctl db backup --n=1"}


async def test_a_bad_entry_left_pending_does_not_stop_the_timeline(redis: Redis) -> None:
    """An entry that cannot be recorded (here: a corrupt inbox entry left pending by a crashed recorder) is tried a
    few times, then acknowledged; the entries after it still reach their timelines, after a restart too."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    await redis.xgroup_create(bus.INBOX, "timeline", id="0", mkstream=True)
    await redis.xadd(bus.INBOX, {"kind": "user_message", "conversation": CONV, "data": "{not json"})
    await redis.xreadgroup("timeline", "timeline-crashed", {bus.INBOX: ">"}, count=10)  # delivered, never acked
    await bus.submit_user_message(redis, CONV, "UREQ", "after the bad one")

    recorder = TimelineRecorder(redis, incidents, calls, consumer="timeline-crashed", block_seconds=0.05)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))
    try:
        async def recorded() -> bool:
            return any("after the bad one" in str(e) for e in await read_timeline(redis, incidents, CONV))
        await wait_for(recorded, timeout=15)

        async def nothing_pending() -> bool:
            return (await redis.xpending(bus.INBOX, "timeline"))["pending"] == 0
        await wait_for(nothing_pending, timeout=15)
    finally:
        stop.set()
        await task


async def test_the_recorder_recreates_a_lost_group_and_goes_on(redis: Redis) -> None:
    """The group is created once, not before every read; when Redis loses it (the stream deleted, a replaced
    server), the recorder recreates it and later entries still reach their timeline."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(redis, incidents, calls, block_seconds=0.05)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))
    try:
        await bus.submit_user_message(redis, CONV, "UREQ", "before the loss")

        async def has(text: str) -> bool:
            return any(text in str(e) for e in await read_timeline(redis, incidents, CONV))
        await wait_for(lambda: has("before the loss"), timeout=10)
        await redis.delete(bus.INBOX)  # the stream and its consumer group are gone
        await asyncio.sleep(0.2)
        await bus.submit_user_message(redis, CONV, "UREQ", "after the loss")
        await wait_for(lambda: has("after the loss"), timeout=15)
    finally:
        stop.set()
        await task


async def test_a_timeline_is_a_compact_list_and_one_begun_as_a_stream_is_still_read(redis: Redis) -> None:
    """The previous version appended to a stream per thread (4 KiB each: Redis preallocates stream nodes)."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(redis, incidents, calls)
    conv, old = "slack:C0LIST:1700000000.000200", "slack:C0LIST:1700000000.000300"

    def message(where: str, said: str) -> dict[str, str]:
        return bus.BusEvent("user_message", where, {"user": "U1", "text": said}).fields()

    await recorder.record(bus.INBOX, "1700000000000-0", message(conv, "hi"))
    assert await redis.type(incidents.timeline_key(conv)) == b"list"
    assert int(await redis.memory_usage(incidents.timeline_key(conv)) or 0) < 1024
    earlier = '{"type":"message","at":1.0,"user":"U0","text":"before","src":"a"}'
    await redis.xadd(incidents.stream_timeline_key(old), {"entry": earlier})
    await recorder.record(bus.INBOX, "1700000000001-0", message(old, "after"))
    assert [e["text"] for e in await read_timeline(redis, incidents, old)] == ["before", "after"]
    assert [e["text"] for e in await read_timeline(redis, incidents, conv)] == ["hi"]


async def test_a_batch_of_entries_reaches_each_thread_in_order_a_bad_one_among_them_too(
        redis: Redis, caplog: pytest.LogCaptureFixture) -> None:
    """What one read returns is recorded in one round trip, each thread's entries in stream order; a batch with
    an entry that cannot be recorded falls back to one entry at a time, so the others still arrive, once each."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    other = "slack:C0WEB:1700000000.000200"
    for n in range(8):  # all there before the recorder starts: its first read returns them together
        if n == 4:
            await redis.xadd(bus.INBOX, {"kind": "user_message", "conversation": CONV, "data": "{not json"})
        await bus.submit_user_message(redis, CONV if n % 2 else other, "UREQ", f"message {n}")
    recorder = TimelineRecorder(redis, incidents, calls, block_seconds=0.05)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))
    try:
        async def texts(conversation: str) -> list[str]:
            return [str(e.get("text")) for e in await read_timeline(redis, incidents, conversation)]

        await wait_for(lambda: _equal(texts(CONV), ["message 1", "message 3", "message 5", "message 7"]), timeout=15)
        await wait_for(lambda: _equal(texts(other), ["message 0", "message 2", "message 4", "message 6"]), timeout=15)

        async def nothing_pending() -> bool:
            return (await redis.xpending(bus.INBOX, "timeline"))["pending"] == 0
        await wait_for(nothing_pending, timeout=15)
        await bus.submit_user_message(redis, other, "UREQ", "later")
        await wait_for(lambda: _equal(texts(other), ["message 0", "message 2", "message 4", "message 6", "later"]),
                       timeout=15)
    finally:
        stop.set()
        await task
    assert "a batch of 9" in caplog.text  # the first read was one batch, recorded one by one after it failed
    for conversation in (CONV, other):  # recorded once each
        lines = await redis.lrange(incidents.timeline_key(conversation), 0, -1)
        assert len(lines) == len({json.loads(line)["src"] for line in lines}), conversation


async def _equal(texts: Awaitable[list[str]], expected: list[str]) -> bool:
    return await texts == expected


async def test_entries_arriving_one_by_one_are_gathered_into_one_write(redis: Redis) -> None:
    """After a read that found a few entries the recorder lets the next ones gather for ``linger_seconds``
    before reading again: a timeline can be a moment behind (it is read at an export), while every read and its
    write cost the slack role a round trip or two, taken just as an approval's runner starts its child."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    recorder = TimelineRecorder(redis, incidents, calls, block_seconds=5, linger_seconds=1.0)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))

    async def pushes() -> int:
        return int((await redis.info("commandstats")).get("cmdstat_rpush", {}).get("calls", 0))

    async def recorded(count: int) -> bool:
        return len(await read_timeline(redis, incidents, CONV)) == count

    try:
        await bus.submit_user_message(redis, CONV, "UREQ", "first")
        await wait_for(lambda: recorded(1), timeout=10)
        before = await pushes()
        for n in range(3):  # one by one, well inside the linger
            await bus.submit_user_message(redis, CONV, "UREQ", f"then {n}")
            await asyncio.sleep(0.02)
        await wait_for(lambda: recorded(4), timeout=10)
        assert await pushes() - before == 1  # the three in one write (one read each without the linger)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)  # the linger ends at once when stopped


async def test_entries_gathering_when_the_recorder_stops_are_recorded_by_the_next_one(redis: Redis) -> None:
    """Entries that arrive while the recorder lingers stay unread in the stream (its consumer group's), so a stop
    or a crash then loses none of them: the next recorder, under another consumer name, records each once."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)

    async def recorded(count: int) -> bool:
        return len(await read_timeline(redis, incidents, CONV)) == count

    first = TimelineRecorder(redis, incidents, calls, block_seconds=5, linger_seconds=30.0)
    stop = asyncio.Event()
    task = asyncio.create_task(first.run(stop))
    await bus.submit_user_message(redis, CONV, "UREQ", "first")
    await wait_for(lambda: recorded(1), timeout=10)
    for n in range(3):  # arriving while it lingers
        await bus.submit_user_message(redis, CONV, "UREQ", f"then {n}")
    stop.set()
    await asyncio.wait_for(task, 5)  # stopped in the middle of its linger
    assert await recorded(1)
    second = TimelineRecorder(redis, incidents, calls, block_seconds=0.1, linger_seconds=0.0)
    stop = asyncio.Event()
    task = asyncio.create_task(second.run(stop))
    try:
        await wait_for(lambda: recorded(4), timeout=10)
        await asyncio.sleep(0.3)
        assert await recorded(4)  # each once
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def test_entries_a_dead_recorder_had_read_are_recorded_by_one_started_at_once(redis: Redis) -> None:
    """A recorder that dies between its read and its write leaves the entries pending under its own name. Its
    replacement has another name (a new pod) and usually starts within seconds, before they are idle long enough
    to be claimed at its start-up: it must claim them later, while it runs, and record each once. Left pending,
    they were never recorded, and the inbox could no longer be trimmed past them (``trim_bus_streams``)."""
    calls = CallStore(redis, retention_seconds=60)
    incidents = IncidentStore(redis, retention_seconds=3600)
    await redis.xgroup_create(bus.INBOX, "timeline", id="0", mkstream=True)
    for n in range(3):
        await bus.submit_user_message(redis, CONV, "UREQ", f"read by the dead one {n}")
    read: Any = await redis.xreadgroup("timeline", "timeline-dead", {bus.INBOX: ">"}, count=10)  # never acked
    await redis.xdel(bus.INBOX, read[0][1][0][0])  # one of them trimmed while pending: nothing left to record
    await bus.submit_user_message(redis, CONV, "UREQ", "after its death")

    recorder = TimelineRecorder(redis, incidents, calls, block_seconds=0.05, reclaim_idle_seconds=0.5)
    assert not await recorder.caught_up()
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))
    try:
        async def recorded(count: int) -> bool:
            return len(await read_timeline(redis, incidents, CONV)) == count

        await wait_for(lambda: recorded(3), timeout=10)
        await wait_for(recorder.caught_up, timeout=10)  # nothing pending under the dead name, the deleted one too
        lines = await redis.lrange(incidents.timeline_key(CONV), 0, -1)
        assert len(lines) == 3  # each once
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
