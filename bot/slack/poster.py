"""The poster: consumes the agent's outbox and the approvals' completions and progress streams (consumer group
``slack``) and posts to Slack: one live card per call, updated in place at every transition, and one result
(or note) per finished call, the two linked to each other (``outcomes.py``; outbox events: ``outbox_events.py``).
An entry is acknowledged only after Slack accepted what it asked for (in batches: ``acks.py``); while Slack is
down or rate-limits us the entry is retried with backoff (in order), and entries left pending by a crash -- ours
or another replica's -- are read again, so no card, answer or result is lost. Per-call progress is kept on the
call record (``slack_ts`` of the card, ``slack_result_ts``) so a re-delivered entry does not post twice.

Entries of different threads are handled in parallel (``slack.post_concurrency`` at once per replica); the
entries of one thread (one conversation, across the outbox and completions streams) are chained so they are
posted in the order this replica read them. Slack's per-method limits are kept by the client
(``bot/slack/ratelimit.py``).

Each batch of completion and progress entries is prepared in a round trip or two for the whole batch, not per
entry: for completions the calls' records and the entries' done/attempt markers; for progress the calls' states,
and an entry whose call has moved on since is acknowledged without being handled (a later entry shows the newer
state)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.agent import bus
from bot.approvals.records import CallRecord, CallState
from bot.slack.acks import Acknowledger
from bot.slack.interactions import SlackDeps
from bot.slack.outbox_events import OutboxEvents
from bot.slack.outcomes import Outcomes
from bot.slack.retry import pause, until_done
from bot.slack.settings import parse_conversation
from bot.slack.unconfirmed import watch_unconfirmed
from bot.streams import stop_consumer, unseen_pending
from bot.streams import text as _text

log = logging.getLogger(__name__)

GROUP = "slack"
READ_AHEAD_FACTOR = 8  # entries read ahead per handling slot (post_concurrency)
SEEN_KEPT = 8192  # entries whose handling the poster remembers (those it left pending are not re-read early)


@dataclass(frozen=True)
class Prepared:
    """What the read loop learnt of a completion or progress entry with its batch."""

    record: CallRecord | None  # the call as read with the batch (completions; None: unknown, or not read)
    done: bool = False  # handled before (completions)
    retry: bool = False  # an earlier attempt started and did not finish (completions)
    state: CallState | None = None  # the call's state as read with the batch (progress; None: unknown)


class Poster:
    def __init__(
        self, deps: SlackDeps, *, consumer: str | None = None, block_seconds: float = 1.0,
        backoff: tuple[float, float] = (0.2, 30.0), reader: Redis | None = None,
    ) -> None:  # fmt: skip
        self.deps = deps
        self.reader = reader or deps.redis  # blocking reads hold a connection: their own pool
        self.consumer = consumer or deps.settings.consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.block_ms = max(1, int(block_seconds * 1000))
        self.backoff = backoff
        self.concurrency = deps.settings.post_concurrency
        self.outcomes = Outcomes(deps)
        self.events = OutboxEvents(deps, self.outcomes)
        self.acks = Acknowledger(deps.state, GROUP, busy=self._handling)
        self._slots = asyncio.Semaphore(self.concurrency)  # entries being handled (posting) at once
        # entries read and not done yet, most of them waiting for an earlier entry of their thread: a slot is
        # taken only once an entry's turn has come, so a thread with many entries does not hold them all
        self._read_ahead = asyncio.Semaphore(self.concurrency * READ_AHEAD_FACTOR)
        self._tails: dict[str, asyncio.Task[None]] = {}  # conversation -> its last scheduled entry
        self._inflight: set[asyncio.Task[None]] = set()
        self._inflight_ids: set[tuple[str, str]] = set()
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()  # entries handled here (bounded, recent last)
        keys = deps.store.keys
        self._completions = {keys.completions_stream(s) for s in keys.all_shards()}
        self._progress = {keys.progress_stream(s) for s in keys.all_shards()}

    # ---------------------------------------------------------------- what tests and other modules call

    async def handle(self, event: bus.BusEvent, *, retry: bool = False) -> None:
        await self.events.handle(event, retry=retry, owner=f"{self.consumer}:{bus.OUTBOX}:{event.id}")

    async def handle_completion(self, call_id: str, **kwargs: Any) -> None:
        await self.outcomes.handle_completion(call_id, **kwargs)

    async def post_card(self, call_id: str, *, retry: bool = False) -> None:
        await self.events.post_card(call_id, retry=retry)

    async def results_first(self, conversation: str, owner: str) -> None:
        await self.outcomes.results_first(conversation, owner)

    # ---------------------------------------------------------------- loops

    def streams(self) -> list[str]:
        keys = self.deps.store.keys
        return [bus.OUTBOX, *(keys.completions_stream(s) for s in keys.all_shards()),
                *(keys.progress_stream(s) for s in keys.all_shards())]

    async def run(self, stop_event: asyncio.Event) -> None:
        tasks = [asyncio.create_task(self._loop(stream, stop_event)) for stream in self.streams()]
        tasks.append(asyncio.create_task(watch_unconfirmed(self.deps, stop_event)))  # cards a failover made wrong
        acks = asyncio.create_task(self.acks.run(stop_event))
        try:
            await stop_event.wait()
        finally:
            await stop_consumer(tasks, self._inflight, grace=0)  # not acknowledged yet: read again after a restart
            await stop_consumer([acks])  # what was handled is acknowledged, once

    async def _loop(self, stream: str, stop_event: asyncio.Event) -> None:
        redis = self.deps.redis
        await self._until_ok(lambda: bus.ensure_group(redis, stream, GROUP), stop_event)
        last_id = "0"  # our own pending entries first (a restart), then new ones
        history = True
        loop = asyncio.get_running_loop()
        next_claim = 0.0
        recheck_at = loop.time() + self._recheck_seconds()
        while not stop_event.is_set():
            idle = self.deps.settings.reclaim_idle_seconds
            # Our own pending entries once more: a read whose reply was lost (the connection cut after Redis
            # delivered; redis-py retries the read itself and gets only newer entries) left entries delivered to us
            # that nothing works on, which would otherwise wait ``idle`` for the reclaim below. Only entries this
            # poster never saw are taken up here (``_seen``); one it handled and left pending is the reclaim's, at
            # its own pace (``unseen_pending`` leaves its idle time alone).
            recheck = not history and loop.time() >= recheck_at
            try:
                if recheck:
                    recheck_at = loop.time() + self._recheck_seconds()
                    lost = await unseen_pending(redis, stream, GROUP, self.consumer,
                                                    lambda i: (stream, i) in self._seen)
                    entries = [(_text(i), _fields(f)) for i, f in lost if f]
                else:
                    entries = await self._read(stream, last_id if history else ">", block=not history)
                if history and entries:
                    last_id = entries[-1][0]  # entries are still pending while handled: read past them
                elif history:
                    history = False
                if not history and loop.time() >= next_claim:
                    # Take over entries idle that long: a dead replica's, or ours that failed and were left
                    # pending (not only at start-up: a failed entry must not wait for a restart).
                    next_claim = loop.time() + max(0.05, idle / 2)
                    await self._keep_claimed(stream)
                    reply: Any = await redis.xautoclaim(stream, GROUP, self.consumer, int(idle * 1000), "0-0",
                                                        count=50)
                    entries += [(_text(i), _fields(f)) for i, f in (reply[1] or []) if f]
                entries = [(i, f) for i, f in entries if not self._busy(stream, i)]  # reclaimed while handled
                prepared = await self._prepare(stream, entries)
            except ResponseError as exc:
                if "NOGROUP" in str(exc):
                    await self._until_ok(lambda: bus.ensure_group(redis, stream, GROUP), stop_event)
                else:  # never let the loop die: every later post of this stream would wait for a restart
                    log.error("poster: reading %s failed (%s); retrying", stream, exc)
                    await pause(stop_event, 1.0)
                continue
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.warning("poster: reading %s failed (%s); retrying", stream, exc)
                await pause(stop_event, 1.0)
                continue
            for (entry_id, fields), ready in zip(entries, prepared, strict=True):
                if self._busy(stream, entry_id):
                    continue
                self._remember(stream, entry_id)
                if ready is not None and self._nothing_to_do(stream, fields, ready):
                    self.acks.queue(stream, entry_id, done=stream not in self._progress)
                    continue
                await self._read_ahead.acquire()  # back-pressure: a bounded number of entries read and not done
                self._dispatch(stream, entry_id, fields, ready, stop_event)

    def _recheck_seconds(self) -> float:
        """How often the read loop looks at its own pending entries again: as often as the reclaim runs, at least
        every 5 s."""
        return min(max(0.05, self.deps.settings.reclaim_idle_seconds / 2), 5.0)

    def _remember(self, stream: str, entry_id: str) -> None:
        self._seen[(stream, entry_id)] = None
        self._seen.move_to_end((stream, entry_id))
        while len(self._seen) > SEEN_KEPT:
            self._seen.popitem(last=False)

    def _busy(self, stream: str, entry_id: str) -> bool:
        return (stream, entry_id) in self._inflight_ids or self.acks.waiting(stream, entry_id)

    async def _prepare(self, stream: str, entries: list[tuple[str, dict[str, str]]]) -> list[Prepared | None]:
        """The records of a batch of completion or progress entries (and, for completions, their done and
        attempt markers), in one round trip each for the whole batch; None for outbox entries."""
        if stream not in self._completions and stream not in self._progress or not entries:
            return [None] * len(entries)
        call_ids = [f.get("call_id", "") for _i, f in entries]
        if stream in self._progress:
            if len(entries) == 1:
                return [None]  # the handler reads the call anyway: a batch of one would read it twice
            return [Prepared(None, state=state) for state in await self.deps.store.states(call_ids)]
        records = await self.deps.store.find_many(call_ids)
        markers = await self.deps.state.start_many(stream, [i for i, _f in entries])
        return [Prepared(record, done, retry) for record, (done, retry) in zip(records, markers, strict=True)]

    def _nothing_to_do(self, stream: str, fields: dict[str, str], ready: Prepared) -> bool:
        """An entry known from its batch to need no handling: handled before, its call unknown or another front
        end's, or (progress) the call has moved on since (a later entry shows the newer state)."""
        conversation = fields.get("conversation")
        if conversation and parse_conversation(conversation) is None:
            return True
        if stream in self._progress:
            event_state = fields.get("state")
            return ready.state is None or bool(event_state) and ready.state.value != event_state
        record = ready.record
        return ready.done or record is None or parse_conversation(record.conversation) is None

    async def _keep_claimed(self, stream: str) -> None:
        """Reset the idle time of the entries this replica is still working on (retrying a Slack outage, say),
        so another replica does not take them over as a dead reader's: both would then post them."""
        ids: list[str | bytes | int | memoryview] = [entry_id for s, entry_id in self._inflight_ids if s == stream]
        ids += self.acks.waiting_in(stream)
        if ids:
            await self.deps.redis.xclaim(stream, GROUP, self.consumer, 0, ids, justid=True)

    def _dispatch(self, stream: str, entry_id: str, fields: dict[str, str], ready: Prepared | None,
                  stop_event: asyncio.Event) -> None:
        """Handle the entry in its own task, after the previous entry of the same thread (per-thread order)."""
        thread = fields.get("conversation") or f"{stream}/{entry_id}"
        previous = self._tails.get(thread)
        if ready is not None and (stream in self._progress or not _settled(ready.record)):
            # the call is read again when the entry's turn comes: it may move on while the entry waits (a progress
            # entry's state passed: an older state must not be shown over a newer one; its card posted, or
            # refused with its "result" in the same write, by an earlier entry of the thread)
            ready = Prepared(None, ready.done, ready.retry)
        task = asyncio.create_task(self._process(stream, entry_id, fields, previous, ready, stop_event))
        self._tails[thread] = task
        self._inflight.add(task)
        self._inflight_ids.add((stream, entry_id))

        def finished(done: asyncio.Task[None]) -> None:
            self._inflight.discard(done)
            self._inflight_ids.discard((stream, entry_id))
            if self._tails.get(thread) is done:
                del self._tails[thread]
            if not self._inflight:
                self.acks.quiet()  # nothing else to gather into the acknowledgements' batch

        task.add_done_callback(finished)

    async def _process(self, stream: str, entry_id: str, fields: dict[str, str], previous: asyncio.Task[None] | None,
                       ready: Prepared | None, stop_event: asyncio.Event) -> None:
        try:
            if previous is not None:
                await asyncio.wait({previous})  # its outcome is its own business; only the order matters here
            async with self._slots:
                if stream in self._progress:
                    # a progress entry only brings a card up to date (idempotent, posts nothing): no record of
                    # its handling is needed to keep a retry from posting twice, only the acknowledgement
                    first = [ready.record if ready is not None else None]  # a retry reads the call again
                    handled = await self._until_ok(lambda: self._show_progress(fields, first.pop() if first else None),
                                                   stop_event)
                    if handled:
                        self.acks.queue(stream, entry_id, done=False)
                    return
                once = [ready]  # a retry reads the markers and the call again
                handled = await self._until_ok(
                    lambda: self._handle_once(stream, entry_id, fields, once.pop() if once else None), stop_event)
                if handled:  # done and acknowledged together: a crash before this re-reads it as a retry
                    self.acks.queue(stream, entry_id, done=True)
        except asyncio.CancelledError:
            raise
        except Exception:  # left pending: read again by this replica after a restart or taken over by another
            log.exception("poster: %s entry %s failed; left pending", stream, entry_id)
        finally:
            self._read_ahead.release()

    def _handling(self) -> bool:
        """Whether an entry is still being handled (or waits for its thread's turn): one still to be acknowledged."""
        return any(not task.done() for task in self._inflight)

    async def _read(self, stream: str, last_id: str, *, block: bool) -> list[tuple[str, dict[str, str]]]:
        reply: Any = await self.reader.xreadgroup(
            GROUP, self.consumer, {stream: last_id}, count=self.concurrency, block=self.block_ms if block else None
        )
        return [(_text(i), _fields(f)) for _s, entries in reply or [] for i, f in entries if f]

    async def _until_ok(self, work: Callable[[], Awaitable[Any]], stop_event: asyncio.Event) -> bool:
        return await until_done(work, stop_event, self.backoff, "poster")

    async def _handle_once(self, stream: str, entry_id: str, fields: dict[str, str],
                           ready: Prepared | None = None) -> None:
        """Handle an entry of the outbox or a completions stream; ``ready``: its markers and record as read with
        its batch (used on the first attempt only: a retry after a failure reads them again)."""
        if ready is not None and not ready.done:
            done, retry, record = False, ready.retry, ready.record
        else:
            (done, retry), record = await self.deps.state.start(stream, entry_id), None
        if done:
            return
        owner = f"{self.consumer}:{stream}:{entry_id}"
        if stream == bus.OUTBOX:
            try:
                event = bus.BusEvent.from_fields(entry_id, fields)
            except (KeyError, ValueError):
                log.error("poster: malformed outbox entry %s skipped: %r", entry_id, fields)
            else:
                await self.events.handle(event, retry=retry, owner=owner)
        elif fields.get("call_id"):
            await self.outcomes.handle_completion(fields["call_id"], retry=retry, owner=owner, record=record)

    async def _show_progress(self, fields: dict[str, str], record: CallRecord | None) -> None:
        # only the completions stream posts results: a progress event read late (the call has ended since)
        # must not race it into posting the same result twice
        if fields.get("call_id"):
            await self.outcomes.handle_completion(fields["call_id"], final=False, event_state=fields.get("state"),
                                                  record=record)


def _settled(record: CallRecord | None) -> bool:
    """An ended call whose card is posted: what its completion entry shows no longer changes while the entry waits
    for its turn, whatever ran before it (its result's ts and links are written only by whoever holds its outcome,
    which reads the call again when someone held it before: ``Outcomes.post_outcome``; a refused card is written
    with its ts and its "result" together)."""
    return record is not None and record.terminal and bool(record.meta.get("slack_ts"))


def _fields(raw: Any) -> dict[str, str]:
    return {_text(k): _text(v) for k, v in raw.items()}
