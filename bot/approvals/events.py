"""What the agent and the front ends wait on: completion events of calls reaching a terminal state.

The transition scripts XADD one event per terminal transition to ``<prefix>:{s<n>}:completions`` (fields
``call_id``, ``conversation``, ``state``, ``open`` = the conversation's calls still not terminal, ``at``).

* ``wait_for_terminal``: one process waiting for a known set of calls (e.g. the tool_use ids of a turn).
* ``CompletionConsumer``: a consumer group per role (``agent``, ``slack``) on the same stream, so each role
  sees every event once across its replicas; delivery is at-least-once (handlers must be idempotent; the
  record in the store is the truth, the event is only a wake-up).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from bot.approvals.keys import Keys
from bot.approvals.records import CallRecord, CallState, from_epoch
from bot.approvals.store import CallStore
from bot.streams import ensure_group
from bot.streams import text as _text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompletionEvent:
    """A call reached a terminal state. ``open`` is how many calls of its conversation are still open."""

    stream: str
    entry_id: str
    call_id: str
    conversation: str
    state: CallState
    open: int
    at: datetime


async def wait_for_terminal(store: CallStore, call_ids: Iterable[str], timeout: float) -> list[CallRecord]:
    """Return the records (in the given order) once ALL are terminal; raise ``TimeoutError`` otherwise.

    The completions stream positions are taken BEFORE the records are checked, so an event emitted between
    the check and the blocking read is not missed.
    """
    ids = list(call_ids)
    keys = store.keys
    streams = sorted({keys.completions_stream(keys.shard_of_call(i)) for i in ids})
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    positions: dict[Any, Any] = {}
    for stream in streams:
        last: Any = await store.redis.xrevrange(stream, max="+", min="-", count=1)
        positions[stream] = last[0][0] if last else "0-0"
    while True:
        records = [await store.get(i) for i in ids]
        if all(r.terminal for r in records):
            return records
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError(f"calls not terminal after {timeout}s: {[r.id for r in records if not r.terminal]}")
        block = max(1, int(min(remaining, 1.0) * 1000))
        # One XREAD per stream: the shards' streams live in different hash slots (CROSSSLOT on Redis Cluster).
        replies: list[Any] = await asyncio.gather(
            *(store.redis.xread({stream: positions[stream]}, block=block) for stream in streams)
        )
        for reply in replies:
            for stream, entries in reply or []:
                if entries:
                    positions[_text(stream)] = entries[-1][0]


class CompletionConsumer:
    """Completion events for one consumer (``consumer``) of one role's group (``group``).

    ``start_id="0"`` (default) makes a newly created group see the whole retained history, so nothing emitted
    before the group existed is missed; pass ``"$"`` to start from now. A consumer first re-delivers its own
    pending (unacked) events, which covers a restart with the same consumer name, and takes over events a
    dead consumer of the group left pending for ``claim_idle`` seconds.

    With ``shards`` > 1 each shard stream is read by its own XREADGROUP, side by side (one reader connection
    each): one read across shards is a CROSSSLOT error on Redis Cluster.
    """

    def __init__(
        self,
        redis: Redis,
        group: str,
        consumer: str,
        *,
        key_prefix: str = "fc",
        shards: int = 1,
        only_shard: int | None = None,
        start_id: str = "0",
        claim_idle: float = 60.0,
        reader: Redis | None = None,
    ) -> None:
        self.redis = redis
        self.reader = reader or redis  # the blocking read holds a connection: its own pool (bot/redis_pool.py)
        self.group = group
        self.consumer = consumer
        keys = Keys(key_prefix, shards)
        shard_list = [only_shard] if only_shard is not None else list(keys.all_shards())
        self.streams = [keys.completions_stream(s) for s in shard_list]
        self.start_id = start_id
        self.claim_idle = claim_idle
        self._positions = {s: "0" for s in self.streams}
        self._ready = False
        self._last_claim = 0.0

    async def ensure_group(self) -> None:
        for stream in self.streams:
            await ensure_group(self.redis, stream, self.group, self.start_id)
        self._ready = True

    async def read(self, count: int = 50, block: float = 1.0) -> list[CompletionEvent]:
        """Up to ``count`` events (own pending first, then stale ones of dead consumers, then new ones)."""
        if not self._ready:
            await self.ensure_group()
        events = await self._claim_stale(count)
        if events:
            return events
        while True:
            pending_phase = any(p != ">" for p in self._positions.values())
            block_ms = None if pending_phase else max(1, int(block * 1000))
            # One XREADGROUP per shard stream, side by side: the streams live in different hash slots, and
            # Redis Cluster refuses a multi-stream read across slots (CROSSSLOT).
            replies: list[Any] = await asyncio.gather(*(
                self.reader.xreadgroup(self.group, self.consumer, {stream: position}, count=count, block=block_ms)
                for stream, position in self._positions.items()
            ))  # fmt: skip
            got = {_text(stream): entries for reply in replies for stream, entries in reply or []}
            for stream in self.streams:
                if self._positions[stream] != ">":  # walking our own pending entries after a restart
                    entries = got.get(stream)
                    self._positions[stream] = _text(entries[-1][0]) if entries else ">"
            events = await self._parse(
                (stream, entry_id, fields) for stream, entries in got.items() for entry_id, fields in entries if fields
            )
            if events or not pending_phase:
                return events

    async def ack(self, *events: CompletionEvent) -> None:
        """Acknowledge ``events``: one XACK per stream, whatever their number."""
        by_stream: dict[str, list[str]] = {}
        for event in events:
            by_stream.setdefault(event.stream, []).append(event.entry_id)
        for stream, entry_ids in by_stream.items():
            await self.redis.xack(stream, self.group, *entry_ids)

    async def events(self, stop_event: asyncio.Event, block: float = 1.0) -> AsyncIterator[CompletionEvent]:
        """Yield events until ``stop_event``; each is acked when the consumer asks for the next one, so an
        event whose handling crashed the process is re-delivered (at-least-once)."""
        while not stop_event.is_set():
            for event in await self.read(block=block):
                yield event
                await self.ack(event)

    async def _claim_stale(self, count: int) -> list[CompletionEvent]:
        now = asyncio.get_running_loop().time()
        if now - self._last_claim < self.claim_idle / 2:
            return []
        self._last_claim = now
        events = []
        for stream in self.streams:
            reply: Any = await self.redis.xautoclaim(
                stream, self.group, self.consumer, int(self.claim_idle * 1000), "0-0", count=count
            )
            entries = reply[1] if len(reply) > 1 else []
            for entry_id, fields in entries:
                if not fields:
                    await self.redis.xack(stream, self.group, entry_id)
            events += await self._parse((stream, entry_id, fields) for entry_id, fields in entries if fields)
        return events

    async def _parse(self, entries: Iterable[tuple[str, Any, dict[Any, Any]]]) -> list[CompletionEvent]:
        """Events of ``entries``; a malformed entry (an unknown state, a field that is not a number: only a
        Redis writer makes one) is acknowledged and logged instead of raised, so it cannot stop every consumer
        of the stream again after each restart."""
        events: list[CompletionEvent] = []
        for stream, entry_id, fields in entries:
            try:
                events.append(_event(stream, entry_id, fields))
            except (ValueError, TypeError, OverflowError) as exc:
                log.warning("completions: dropping malformed entry %s of %s (%s)", _text(entry_id), stream, exc)
                await self.redis.xack(stream, self.group, entry_id)
        return events


def _event(stream: str, entry_id: Any, fields: dict[Any, Any]) -> CompletionEvent:
    f = {_text(k): _text(v) for k, v in fields.items()}
    return CompletionEvent(
        stream=stream,
        entry_id=_text(entry_id),
        call_id=f.get("call_id", ""),
        conversation=f.get("conversation", ""),
        state=CallState(f.get("state", "interrupted")),
        open=int(f.get("open", "0")),
        at=from_epoch(f.get("at", "0")),
    )

