"""``IntakeWorker``: does the work of every recorded Slack request (``intake.py``), at least once, never lost.

Consumer group ``intake`` on the intake stream, so slack replicas share the requests. Each entry is handled in
its own task (up to ``concurrency`` at once) and acknowledged only after its work is done:

* a transient failure (Redis unreachable or its pool exhausted, Slack 5xx/429/timeouts) is retried in place
  with backoff, for as long as the process runs;
* any other failure leaves the entry pending; it is taken over again (by this replica or another) after
  ``reclaim_idle_seconds``, at most ``MAX_ATTEMPTS`` times, after which it is logged as an error and dropped;
* a crash leaves it pending too: a restart first re-reads its own pending entries, other replicas reclaim it.
  An entry a live replica is still working on is re-claimed by it every reclaim period (idle time reset), so
  another replica never takes it over while it is retried.

Handled entries are acknowledged in batches (``acks.py``, as the poster's): one XACK per entry cost every click
and command a Redis round trip of its own. While an entry waits in the batch (``ACK_DELAY_SECONDS`` at most, and
only while other entries are being handled) it is treated as still in hand: not spawned again when the read loop
re-reads its own pending entries, and kept claimed against other replicas. A crash in between leaves it pending,
read again as a retry: the same as a crash just before its XACK.

Handling is idempotent per entry (``request_id`` = the entry id): the "asked" post is recorded, the inbox hand-off
is deduplicated, the mention/message pair claimed by entry, so a retried entry does not start twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.slack.acks import Acknowledger
from bot.slack.clicks import handle_action
from bot.slack.deny import handle_deny_submission
from bot.slack.intake import Intake
from bot.slack.interactions import SlackDeps, handle_command, handle_event
from bot.slack.retry import TRANSIENT_REDIS, pause, until_done
from bot.streams import ensure_group, next_read_id, stop_consumer
from bot.streams import text as _text

log = logging.getLogger(__name__)

GROUP = "intake"
MAX_ATTEMPTS = 5


class IntakeWorker:
    def __init__(self, deps: SlackDeps, intake: Intake, *, reader: Redis | None = None, consumer: str | None = None,
                 concurrency: int = 32, block_seconds: float = 1.0,
                 backoff: tuple[float, float] = (0.1, 10.0)) -> None:  # fmt: skip
        self.deps = deps
        self.intake = intake
        self.redis = deps.redis
        self.reader = reader or deps.redis  # the blocking read holds a connection: its own pool
        self.consumer = consumer or deps.settings.consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.block_ms = max(1, int(block_seconds * 1000))
        self.backoff = backoff
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.acks = Acknowledger(deps.state, GROUP, busy=lambda: bool(self._tasks), label="slack intake")

    async def run(self, stop_event: asyncio.Event) -> None:
        stream = self.intake.stream
        await until_done(lambda: ensure_group(self.redis, stream, GROUP), stop_event, self.backoff)
        loops = [asyncio.create_task(self._read_loop(stop_event)), asyncio.create_task(self._reclaim_loop(stop_event))]
        acks = asyncio.create_task(self.acks.run(stop_event))
        try:
            await stop_event.wait()
        finally:
            try:
                await stop_consumer(loops, self._tasks.values())
            finally:
                await stop_consumer([acks])  # what was handled is acknowledged, once
                # and what the handlers finished in their grace, after the acknowledging loop saw the stop: left
                # pending, it would be handled again by another replica (a rolling deploy under load)
                with contextlib.suppress(*TRANSIENT_REDIS, RedisError):
                    await self.acks.flush()

    async def _read_loop(self, stop_event: asyncio.Event) -> None:
        stream, last_id = self.intake.stream, "0"  # our own pending entries first (a restart), then new ones
        clock = asyncio.get_running_loop().time
        recheck_at = clock() + self._recheck_seconds()
        while not stop_event.is_set():
            if last_id == ">" and clock() >= recheck_at:
                # Our own pending entries once more: a read whose reply was lost (Redis killed or the connection
                # cut after it delivered; redis-py then sends the read again and gets only newer entries) left
                # entries delivered to us that no task works on, which would otherwise wait for the reclaim delay.
                # Those being worked on are skipped by _spawn; what is done was acknowledged and is not returned.
                last_id, recheck_at = "0", clock() + self._recheck_seconds()
            try:
                reply: Any = await self.reader.xreadgroup(
                    GROUP, self.consumer, {stream: last_id}, count=32, block=None if last_id != ">" else self.block_ms
                )
            except ResponseError as exc:
                if "NOGROUP" in str(exc):  # the stream was deleted (FLUSHALL, a fresh Redis): recreate the group
                    await until_done(lambda: ensure_group(self.redis, stream, GROUP), stop_event, self.backoff)
                else:  # never let the loop die: recorded requests would wait for a restart
                    log.error("slack intake: reading failed (%s); retrying", exc)
                    await pause(stop_event, 1.0)
                continue
            except TRANSIENT_REDIS as exc:
                log.warning("slack intake: reading failed (%s); retrying", exc)
                await pause(stop_event, 0.5)
                last_id = "0"  # the failed read may have been delivered: ours again first (see above)
                continue
            entries = reply[0][1] if reply else []
            fresh = last_id == ">"  # delivered for the first time (not our pending ones re-read after a restart)
            last_id = next_read_id(last_id, entries)
            for entry_id, fields in entries:
                await self._spawn(_text(entry_id), fields, stop_event, fresh=fresh)

    def _recheck_seconds(self) -> float:
        """How often the read loop looks at its own pending entries again: as often as the reclaim loop runs."""
        return min(max(0.05, self.deps.settings.reclaim_idle_seconds / 2), 5.0)

    async def _reclaim_loop(self, stop_event: asyncio.Event) -> None:
        while not stop_event.is_set():
            idle = self.deps.settings.reclaim_idle_seconds
            await pause(stop_event, self._recheck_seconds())
            try:
                # ours, still being worked on (a Slack outage) or handled and waiting for the acknowledgements'
                # batch: not for another replica to take
                held: list[Any] = [*self._tasks, *self.acks.waiting_in(self.intake.stream)]
                if held:
                    await self.redis.xclaim(self.intake.stream, GROUP, self.consumer, 0, held, justid=True)
                reply: Any = await self.redis.xautoclaim(
                    self.intake.stream, GROUP, self.consumer, int(idle * 1000), "0-0", count=32
                )
            except (*TRANSIENT_REDIS, ResponseError) as exc:  # NOGROUP is repaired by the read loop
                log.warning("slack intake: reclaiming failed (%s)", exc)
                continue
            for entry_id, fields in reply[1] if len(reply) > 1 else []:
                await self._spawn(_text(entry_id), fields, stop_event, fresh=False)

    async def _spawn(self, entry_id: str, fields: Any, stop_event: asyncio.Event, *, fresh: bool) -> None:
        if entry_id in self._tasks or self.acks.waiting(self.intake.stream, entry_id):
            return
        await self._slots.acquire()
        task = asyncio.create_task(self._handle(entry_id, fields, stop_event, fresh))
        self._tasks[entry_id] = task

    async def _handle(self, entry_id: str, fields: Any, stop_event: asyncio.Event, fresh: bool) -> None:
        try:
            if not fields:  # trimmed away while pending: nothing left to do
                done = True
            else:
                attempts = 1 if fresh else await self._attempt(entry_id, stop_event)
                if attempts > MAX_ATTEMPTS:
                    log.error("slack intake: request %s failed %d times; giving up on it: %r", entry_id,
                              attempts - 1, fields)
                    done = True
                else:
                    done = await until_done(lambda: self.process(entry_id, fields), stop_event, self.backoff)
            if done:
                self.acks.queue(self.intake.stream, entry_id, done=False)
        except Exception:
            log.exception("slack intake: request %s failed; it stays pending and is retried", entry_id)
        finally:
            self._tasks.pop(entry_id, None)
            self._slots.release()
            if not self._tasks:
                self.acks.quiet()  # nothing else in hand whose acknowledgement the batch would wait for

    async def _attempt(self, entry_id: str, stop_event: asyncio.Event) -> int:
        """Which attempt a re-delivered entry (ours after a restart, or taken over) is on. Only re-deliveries are
        counted: an entry's first delivery is attempt 1 by definition, and counting it cost every click a Redis
        round trip on its way to the approval."""
        key = f"{self.intake.prefix}:{{intake}}:attempts:{entry_id}"
        count = 0

        async def count_it() -> None:
            nonlocal count
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.expire(key, 86400)
                count = 1 + int((await pipe.execute())[0])

        await until_done(count_it, stop_event, self.backoff)
        return count

    async def process(self, entry_id: str, fields: Any) -> None:
        """The work of one recorded request (idempotent: it may run again after a failure)."""
        values = {_text(k): _text(v) for k, v in fields.items()}
        kind, body = values.get("kind", ""), json.loads(values.get("body") or "{}")
        if kind == "command":
            respond = AsyncRespond(response_url=body.get("response_url"))
            await handle_command(self.deps, body, respond, request_id=entry_id)
        elif kind == "event":
            await handle_event(self.deps, body, request_id=entry_id)
        elif kind == "action":
            await handle_action(self.deps, body)
        elif kind == "view":
            await handle_deny_submission(self.deps, body)
        else:
            log.error("slack intake: request %s of unknown kind %r skipped", entry_id, kind)


