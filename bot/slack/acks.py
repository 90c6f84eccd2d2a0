"""Acknowledging handled stream entries in batches: the poster's, and the intake worker's recorded requests.

An entry is acknowledged (and, unless it is a progress entry, recorded as done) only after Slack accepted what
it asked for. Doing that per entry cost a Redis round trip each -- three per call counting the progress entries,
a tenth of the slack role's CPU per completion. Handled entries are queued here instead and acknowledged
together, ``ACK_DELAY_SECONDS`` after the first of a batch, in one pipeline. Nothing is lost in between: an
entry not acknowledged yet is still pending in its stream, and the poster does not read it again while it
waits here (``waiting``); a crash before the batch is written only means the entries are read again after a
restart, as a retry (each posts nothing twice: the result is recorded on the call, a post is found by its key).

The delay only pays while the poster has other entries in hand (a backlog, a burst): their acknowledgements join
the batch. Once nothing else is in flight (``busy`` false when queued, or the poster calls ``quiet``) the batch
is written at once: waiting longer saves no round trip and kept each call's last step up to 20 ms later
(bench_click waits for it before the next click; the longer idle made every role colder at the next click:
+0.8 ms click -> child started).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from redis.exceptions import RedisError

from bot.slack.retry import TRANSIENT_REDIS
from bot.slack.state import SlackState

log = logging.getLogger(__name__)

ACK_DELAY_SECONDS = 0.02
MAX_BATCH = 500  # entries acknowledged in one pipeline; a fuller queue is written at once
RETRY_SECONDS = 1.0


class Acknowledger:
    def __init__(self, state: SlackState, group: str, busy: Callable[[], bool] = lambda: True, *,
                 label: str = "poster") -> None:
        """``busy``: whether other entries are being handled, whose acknowledgements a wait would gather;
        ``label``: who acknowledges, in log lines (the poster, the intake worker)."""
        self.state = state
        self.group = group
        self.label = label
        self.busy = busy
        self._queue: list[tuple[str, str, bool]] = []  # (stream, entry id, record as done)
        self._waiting: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._quiet = asyncio.Event()  # set when the poster has nothing left in flight, or the delay is over

    def queue(self, stream: str, entry_id: str, *, done: bool) -> None:
        """Acknowledge the entry with the next batch; ``done``: record it as done too."""
        self._queue.append((stream, entry_id, done))
        self._waiting.add((stream, entry_id))
        self._wake.set()

    def quiet(self) -> None:
        """The poster has no entry in flight any more: write what is queued without waiting out the delay."""
        self._quiet.set()

    def waiting(self, stream: str, entry_id: str) -> bool:
        """Whether the entry is handled and waits for its acknowledgement (it must not be handled again)."""
        return (stream, entry_id) in self._waiting

    def waiting_in(self, stream: str) -> list[str]:
        return [entry_id for s, entry_id in self._waiting if s == stream]

    async def run(self, stop_event: asyncio.Event) -> None:
        """Write the queued acknowledgements in batches until ``stop_event``, then what is left (best effort:
        what is not written stays pending and is read again)."""
        try:
            while not stop_event.is_set():
                await self._wake.wait()
                if len(self._queue) < MAX_BATCH and self.busy():
                    await self._until_quiet()
                if not await self.flush():
                    await asyncio.sleep(RETRY_SECONDS)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.flush())

    async def _until_quiet(self) -> None:
        """Wait ``ACK_DELAY_SECONDS``, or less if ``quiet`` is called meanwhile."""
        self._quiet.clear()
        timer = asyncio.get_running_loop().call_later(ACK_DELAY_SECONDS, self._quiet.set)
        try:
            await self._quiet.wait()
        finally:
            timer.cancel()

    async def flush(self) -> bool:
        """Write every queued acknowledgement (in pipelines of ``MAX_BATCH``); False when Redis failed (they stay
        queued)."""
        while self._queue:
            batch = self._queue[:MAX_BATCH]
            try:
                await self.state.finish_many(batch, self.group)
            except TRANSIENT_REDIS as exc:
                log.warning("%s: acknowledging %d entries failed (%s); retrying", self.label, len(batch), exc)
                return False
            except RedisError as exc:  # a refusal (READONLY from a demoted primary, CLUSTERDOWN): retried too;
                # ending the task instead would leave every entry handled after it pending and held for ever
                log.error("%s: Redis refused to acknowledge %d entries (%s); retrying", self.label, len(batch), exc)
                return False
            del self._queue[: len(batch)]
            for stream, entry_id, _ in batch:
                self._waiting.discard((stream, entry_id))
        self._wake.clear()
        return True
