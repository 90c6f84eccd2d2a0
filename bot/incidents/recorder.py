"""The timeline recorder: copies what happens in every thread into that thread's own timeline stream.

It reads, with its own consumer group (``timeline``, shared by replicas), the agent's inbox (human messages,
the alert brief, stops), its outbox (model answers, notices, summaries) and every shard's audit stream (each
call transition, which carries the tool, the thread, the requester and a redacted command line unless it is
argv joined with spaces, then read from the call record, which lives as long as the entry), and
appends one JSON entry per fact to the list ``<prefix>:tlog:<conversation>``, kept ``incidents.retention_seconds``. So a
timeline can be exported for that whole period, even after the call records and the audit trail (kept
``redis.retention_seconds``) or the transcript are gone. For a finished call the entry also keeps the exit
code, the duration and an excerpt of the (already sanitized) output.

At-least-once: an entry handled twice is appended twice with the same ``src`` and the reader drops repeats.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.agent import bus
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.incidents.store import IncidentStore
from bot.streams import ensure_group, next_read_id, stop_consumer
from bot.streams import text as _text

log = logging.getLogger(__name__)

GROUP = "timeline"
OUTPUT_EXCERPT = 1500
MAX_ATTEMPTS = 5  # tries of an entry that fails for a reason other than a Redis outage
COMMANDS_REMEMBERED = 4096  # calls whose command line the recorder keeps (a call's argv never changes)
#: an entry delivered to a consumer of the group and still unacknowledged this long was left by a recorder that
#: died between its read and its write (a live one holds an entry a few milliseconds, or while Redis is down)
RECLAIM_IDLE_SECONDS = 60.0
READ_COUNT = 50  # entries one read takes
#: after a read that found fewer than READ_COUNT entries, how long the next read waits so that more gather: a
#: timeline is read when an incident is exported, so it can be a fraction of a second behind, while each read and
#: its write cost the slack role a round trip or two whatever they carry. An approval's script writes two audit
#: entries just as the runner starts its child; reading them at once took that CPU from the child's start.
#: It saves about half the recorder's CPU and most of its reads (``bench/bench_recorder.py``). It was off for a
#: while: the end-to-end incident flow test exported a timeline without the restart's approval and result. Nothing
#: was lost: the test exported inside the linger after waiting for text ("restart") that the restart's proposal,
#: recorded earlier, already carried; it waits for ``caught_up`` now.
LINGER_SECONDS = 0.25
_RESULT_STATES = {CallState.finished, CallState.timed_out, CallState.failed_to_start, CallState.interrupted,
                  CallState.refused}
_RESULT_VALUES = frozenset(s.value for s in _RESULT_STATES)


def _ms(entry_id: str) -> float:
    return int(entry_id.partition("-")[0] or 0) / 1000


class TimelineRecorder:
    def __init__(self, redis: Redis, incidents: IncidentStore, calls: CallStore, *, consumer: str | None = None,
                 block_seconds: float = 1.0, reader: Redis | None = None,
                 linger_seconds: float = LINGER_SECONDS,
                 reclaim_idle_seconds: float = RECLAIM_IDLE_SECONDS) -> None:  # fmt: skip
        self.redis = redis
        self.reader = reader or redis  # blocking reads hold a connection: their own pool (bot/redis_pool.py)
        self.incidents = incidents
        self.calls = calls
        self.consumer = consumer or f"timeline-{uuid.uuid4().hex[:12]}"
        self.block_ms = max(1, int(block_seconds * 1000))
        self.linger_seconds = linger_seconds
        self.reclaim_idle_ms = max(1, int(reclaim_idle_seconds * 1000))
        self.reclaim_every = reclaim_idle_seconds / 2  # so an abandoned entry waits at most 1.5x the idle time
        self._commands: OrderedDict[str, str] = OrderedDict()  # call id -> argv joined, most recent last

    def streams(self) -> list[str]:
        keys = self.calls.keys
        return [bus.INBOX, bus.OUTBOX, *(keys.audit_stream(s) for s in keys.all_shards())]

    async def run(self, stop_event: asyncio.Event) -> None:
        tasks = [asyncio.create_task(self._loop(s, stop_event)) for s in self.streams()]
        try:
            await stop_event.wait()
        finally:
            await stop_consumer(tasks)

    async def caught_up(self) -> bool:
        """Has the recorder's group recorded every entry its streams hold now (none pending, none undelivered)?
        A timeline trails its streams by design (the recorder is asynchronous, and may linger): whoever needs it
        complete up to some event waits for this after the event, not for some text that may be older."""
        for stream in self.streams():
            try:
                info: Any = await self.redis.xinfo_stream(stream)
            except ResponseError as exc:
                if "no such key" in str(exc).lower():
                    continue  # nothing was ever written there: nothing to record
                raise
            newest = _text(info.get("last-generated-id") or "0-0")
            groups: Any = await self.redis.xinfo_groups(stream)
            group = next((g for g in groups if _text(g["name"]) == GROUP), None)
            if group is None or int(group["pending"]) or _text(group["last-delivered-id"]) != newest:
                return False
        return True

    async def _loop(self, stream: str, stop_event: asyncio.Event) -> None:
        last_id = "0"  # our own pending entries first (a restart), each once; then new ones
        group_ready = False  # created once, and again only when Redis lost it (NOGROUP), not before every read
        loop = asyncio.get_running_loop()
        claim_at, claim_from = loop.time(), "0-0"  # when and where the next look for abandoned entries starts
        while not stop_event.is_set():
            try:
                if not group_ready:
                    await ensure_group(self.redis, stream, GROUP)
                    group_ready = True
                if last_id == ">" and loop.time() >= claim_at:
                    # entries a dead recorder had read: its replacement has another name (a new pod) and starts
                    # before they are idle enough to claim, so it looks again while it runs, not only at start-up
                    entries, claim_from = await self._claim_abandoned(stream, claim_from)
                    claim_at = loop.time() + (0 if claim_from != "0-0" else self.reclaim_every)  # more: at once
                else:
                    reply: Any = await self.reader.xreadgroup(
                        GROUP, self.consumer, {stream: last_id}, count=READ_COUNT,
                        block=None if last_id != ">" else self.block_ms,
                    )
                    entries = reply[0][1] if reply else []
                    last_id = next_read_id(last_id, entries)  # our own pending ones read once, then new ones
                await self._record_batch(stream, [(_text(i), f or {}) for i, f in entries], stop_event)
                if last_id == ">" and 0 < len(entries) < READ_COUNT and self.linger_seconds > 0:
                    with contextlib.suppress(TimeoutError):  # let the next entries gather (LINGER_SECONDS)
                        await asyncio.wait_for(stop_event.wait(), self.linger_seconds)
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.warning("timeline recorder: reading %s failed (%s); retrying", stream, exc)
                await asyncio.sleep(1.0)
            except ResponseError as exc:
                if "NOGROUP" in str(exc):  # the stream was deleted (a flushed or replaced Redis): recreate it
                    log.warning("timeline recorder: %s lost its consumer group; recreating it", stream)
                    group_ready = False
                else:
                    log.error("timeline recorder: reading %s failed (%s); retrying", stream, exc)
                    await asyncio.sleep(1.0)
            except Exception:  # the loop must outlive anything: a dead loop leaves every later entry unrecorded
                log.exception("timeline recorder: reading %s failed; retrying", stream)
                await asyncio.sleep(1.0)

    async def _claim_abandoned(self, stream: str, start: str) -> tuple[list[Any], str]:
        """One page of the group's entries idle for ``reclaim_idle`` (left by a dead recorder), now ours, and where
        the next page starts ("0-0": none left). An entry deleted while pending (trimmed, or the stream rebuilt)
        has nothing to record: it is acknowledged, as it would otherwise stay pending for ever and stop
        ``trim_bus_streams`` at it (Redis 7 drops it itself; 6.2 claims it and answers nil, without its id)."""
        reply: Any = await self.redis.xautoclaim(stream, GROUP, self.consumer, self.reclaim_idle_ms, start,
                                                 count=READ_COUNT)  # fmt: skip
        claimed = [e for e in reply[1] or [] if e[1]]
        if len(claimed) < len(reply[1] or []):
            await self._acknowledge_deleted(stream, {_text(entry_id) for entry_id, _ in claimed})
        return claimed, _text(reply[0])

    async def _acknowledge_deleted(self, stream: str, claimed: set[str]) -> None:
        """Acknowledge our pending entries of ``stream`` that no longer exist (other than ``claimed``: this loop
        acknowledges every batch it records before it reads again, so these are the ones just claimed)."""
        pending: Any = await self.redis.xpending_range(stream, GROUP, min="-", max="+", count=READ_COUNT,
                                                       consumername=self.consumer)  # fmt: skip
        for item in pending or []:
            entry_id = _text(item["message_id"])
            if entry_id not in claimed and not await self.redis.xrange(stream, entry_id, entry_id, count=1):
                log.warning("timeline recorder: %s/%s was deleted before it was recorded", stream, entry_id)
                await self.redis.xack(stream, GROUP, entry_id)

    async def _record_batch(self, stream: str, entries: list[tuple[str, Mapping[Any, Any]]],
                            stop_event: asyncio.Event) -> None:  # fmt: skip
        """Record and acknowledge what one read returned in one round trip (a call writes four audit entries,
        and a burst of calls arrives in batches). Should the batch fail, each entry is recorded on its own, with
        ``_record_entry``'s patience for a Redis outage and its bound on other failures."""
        if len(entries) > 1:
            try:
                await self.record_many(stream, [(i, {_text(k): _text(v) for k, v in f.items()}) for i, f in entries],
                                       acknowledge=True)
                return
            except Exception as exc:  # nothing is lost: each entry is tried again, one at a time
                log.warning("timeline recorder: a batch of %d %s entries failed (%s); recording them one by one",
                            len(entries), stream, exc)
        for entry_id, fields in entries:
            await self._record_entry(stream, entry_id, fields, stop_event)

    async def _record_entry(self, stream: str, entry_id: str, fields: Mapping[Any, Any],
                            stop_event: asyncio.Event) -> None:  # fmt: skip
        """Record and acknowledge one entry. A Redis outage is waited out (the entry is never skipped for it); an
        entry that fails for any other reason is tried ``MAX_ATTEMPTS`` times, then acknowledged with an error log,
        so one bad entry cannot stop every thread's timeline (the facts it copies stay in the audit trail)."""
        decoded = {_text(k): _text(v) for k, v in fields.items()}
        failures = 0
        while not stop_event.is_set():
            try:
                await self.record(stream, entry_id, decoded, acknowledge=True)
                return
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.warning("timeline recorder: recording %s/%s waits for Redis (%s)", stream, entry_id, exc)
                await asyncio.sleep(1.0)
            except Exception:
                failures += 1
                if failures >= MAX_ATTEMPTS:
                    log.exception("timeline recorder: %s/%s failed %d times; skipped (left out of its timeline)",
                                  stream, entry_id, failures)  # fmt: skip
                    await self.redis.xack(stream, GROUP, entry_id)
                    return
                log.exception("timeline recorder: %s/%s could not be recorded; retrying", stream, entry_id)
                await asyncio.sleep(0.2 * failures)

    async def record(self, stream: str, entry_id: str, fields: Mapping[str, str], *,
                     acknowledge: bool = False) -> None:
        """Turn one stream entry into a timeline entry of its conversation (or nothing); ``acknowledge``: and
        acknowledge the entry to the recorder's group, in the same round trip (every call writes four audit
        entries, and a round trip per command made this the slack role's busiest reader). Recorded but not
        acknowledged (the connection lost in between) means recorded again later: ``read_timeline`` keeps one
        entry per source."""
        await self.record_many(stream, [(entry_id, fields)], acknowledge=acknowledge)

    async def record_many(self, stream: str, entries: list[tuple[str, Mapping[str, str]]], *,
                          acknowledge: bool = False) -> None:
        """``record`` of several entries of one stream, written (and acknowledged) in one round trip."""
        lines: dict[str, list[str]] = {}  # timeline key -> its new entries, in stream order
        records = await self._records_for(stream, entries)
        for entry_id, fields in entries:
            src = f"{stream}/{entry_id}"
            if stream in (bus.INBOX, bus.OUTBOX):
                event = bus.BusEvent.from_fields(entry_id, fields)
                entry = await self._bus_entry(stream, event)
                conversation = event.conversation
            else:
                conversation = fields.get("conversation", "")
                entry = self._call_entry(fields, records)
            if entry is not None and conversation:
                # a list: a stream per thread cost 4 KiB (Redis gives every new stream node that much up front)
                lines.setdefault(self.incidents.timeline_key(conversation), []).append(
                    json.dumps({**entry, "src": src}, separators=(",", ":")))
        async with self.redis.pipeline(transaction=False) as pipe:
            for key, values in lines.items():
                pipe.rpush(key, *values)
                pipe.expire(key, self.incidents.retention)
            if acknowledge and entries:
                pipe.xack(stream, GROUP, *(entry_id for entry_id, _ in entries))
            if len(pipe):
                await pipe.execute()

    async def _bus_entry(self, stream: str, event: bus.BusEvent) -> dict[str, Any] | None:
        at, data = _ms(event.id), event.data
        if stream == bus.INBOX:
            if event.kind == "user_message":
                meta = data.get("meta") or {}
                if meta.get("incident"):
                    await self.incidents.link(event.conversation, str(meta["incident"]))
                kind = "alert_brief" if meta.get("source") == "alert" else "message"
                return {"type": kind, "at": at, "user": data.get("user", ""), "text": data.get("text", "")}
            if event.kind == "stop":
                return {"type": "stop", "at": at, "user": data.get("user", "")}
            if event.kind == "summary":
                return {"type": "summary_request", "at": at, "user": data.get("user", "")}
            return None
        if event.kind == "reply":
            return {"type": str(data.get("kind") or "answer"), "at": at, "text": data.get("text", "")}
        return None

    def _needs_record(self, f: Mapping[str, str]) -> bool:
        """Whether the audit entry's timeline entry needs its call's record: a command line left to the record
        (argv joined) this recorder has not kept yet, or a result (exit code, output) to copy."""
        if not f.get("call_id"):
            return False
        missing_command = not f.get("command") and bool(f.get("tool")) and f["call_id"] not in self._commands
        return missing_command or f.get("to") in _RESULT_VALUES

    async def _records_for(self, stream: str, entries: list[tuple[str, Mapping[str, str]]]
                           ) -> dict[str, CallRecord | None]:
        """The records the batch's audit entries need, read together in one round trip (``find_many``): read one
        entry at a time, a burst's batch of fifty entries cost the slack role fifty round trips in a row. A call's
        record is read once per batch, however many of its entries (approved, running, finished) it holds."""
        if stream in (bus.INBOX, bus.OUTBOX):
            return {}
        wanted = list(dict.fromkeys(f["call_id"] for _i, f in entries if self._needs_record(f)))
        if not wanted:
            return {}
        return dict(zip(wanted, await self.calls.find_many(wanted), strict=True))

    def _call_entry(self, f: Mapping[str, str], records: Mapping[str, CallRecord | None]) -> dict[str, Any] | None:
        """The timeline entry of one audit entry; ``records``: the records of the batch's calls that need one
        (``_records_for``)."""
        if not f.get("call_id"):
            return None
        command, record = f.get("command", ""), records.get(f["call_id"])
        if not command and f.get("tool"):  # argv joined: the entry leaves it to the call record (kept as long)
            command = self._commands.get(f["call_id"], "")
            if command:
                self._commands.move_to_end(f["call_id"])
            else:  # one record read per call, not per transition: a call writes four audit entries
                command = " ".join(record.argv) if record else ""
                if command:
                    self._commands[f["call_id"]] = command
                    if len(self._commands) > COMMANDS_REMEMBERED:
                        self._commands.popitem(last=False)
        entry: dict[str, Any] = {
            "type": "call", "at": float(f.get("at") or 0), "call_id": f["call_id"], "tool": f.get("tool", ""),
            "command": command, "from": f.get("from", ""), "to": f.get("to", ""),
            "actor": f.get("actor", ""), "reason": f.get("reason", ""), "requester": f.get("requester", ""),
        }  # fmt: skip
        if f.get("to") in _RESULT_VALUES:
            result = (record.result if record else None) or {}
            output = str(result.get("output") or "")
            entry.update({
                "exit_code": result.get("exit_code"), "duration": result.get("duration_seconds"),
                "output": output if len(output) <= OUTPUT_EXCERPT else output[:OUTPUT_EXCERPT] + "\n… [cut]",
                "error": result.get("error"),
            })  # fmt: skip
        return entry


async def read_timeline(redis: Redis, incidents: IncidentStore, conversation: str) -> list[dict[str, Any]]:
    """The recorded entries of a thread, oldest first, each once."""
    earlier: Any = await redis.xrange(incidents.stream_timeline_key(conversation))  # a previous version's stream
    lines: list[Any] = [fields.get(b"entry", fields.get("entry", b"{}")) for _id, fields in earlier or []]
    lines += await redis.lrange(incidents.timeline_key(conversation), 0, -1)
    seen: set[str] = set()
    entries = []
    for line in lines:
        entry = json.loads(_text(line))
        if entry.get("src") in seen:
            continue
        seen.add(entry.get("src", ""))
        entries.append(entry)
    return sorted(entries, key=lambda e: float(e.get("at") or 0))
