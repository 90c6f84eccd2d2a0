"""``RunnerWorker``: consumes the run stream and executes each approved call at most once.

Delivery is at-least-once (a consumer group, entries acked after the result is stored); execution is
at-most-once because the only way to start executing is the atomic ``claim`` (approved -> running). So:

* a worker that dies after XREADGROUP but BEFORE claiming loses nothing: its entry stays pending, another
  worker takes it over with XAUTOCLAIM after ``reclaim_after`` seconds, claims and runs it -- once;
* a worker that dies AFTER claiming leaves the call ``running`` with a heartbeat key that stops being
  refreshed; when it expires (``stale_after``) the recovery loop marks the call ``interrupted`` (outcome
  unknown) and nobody re-runs it. A reclaimed entry for such a call fails to claim and is just acked.

A human's stop request (Cancel) reaches the owning runner through its heartbeat: the heartbeat script answers
"stop" and the worker sets the call's stop event, which the executor (``run_argv`` through ``STOP_REQUEST``)
turns into SIGTERM then SIGKILL of the tool's process group; the executor's result says whether the stop or the
tool's own exit came first, and that is what ``finish`` records.

If the injected executor raises, the call is marked ``interrupted`` with the error: the executor may have
started the process before failing, so "failed to start" would be a guess. An executor that knows it did not
start must return ``{"status": "failed_to_start", ...}`` itself.

Per-application concurrency is a per-process ``asyncio.Semaphore``: simple and enough to protect one host.
Across N replicas the effective limit is N x limit; a Redis counter would make it global but needs lease
handling for dead holders, which is not worth it yet.
"""


from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from redis.exceptions import ResponseError

from bot.approvals.errors import NotDurable
from bot.approvals.records import CallRecord
from bot.approvals.store_runs import new_claim_nonce
from bot.approvals.worker_execution import _TRANSIENT, Executor, Prepare, log
from bot.approvals.worker_handover import HandoverWorker
from bot.cancelling import cancel_and_wait
from bot.streams import ensure_group, next_read_id, unseen_pending
from bot.streams import text as _text

SEEN_KEPT = 8192  # run entries whose handling the runner remembers (those it left pending are not re-read early)

__all__ = ["Executor", "Prepare", "RunnerWorker"]


class RunnerWorker(HandoverWorker):
    """One runner replica: ``await worker.run(stop_event)``."""

    # ---------------------------------------------------------------- lifecycle

    async def ensure_groups(self) -> None:
        for shard in self.store.keys.all_shards():
            await ensure_group(self.redis, self.store.keys.run_stream(shard), self.group)

    async def run(self, stop_event: asyncio.Event) -> None:
        """Consume until ``stop_event`` is set, then stop gracefully (see ``_drain``)."""
        self._stopping = False
        self._token = new_claim_nonce()  # a new process, as far as hand-overs go: see worker_handover.py
        await self._retry(self.ensure_groups)
        loops = [asyncio.create_task(self._read_loop(s)) for s in self.store.keys.all_shards()]
        loops.append(asyncio.create_task(self._recovery_loop()))
        handovers = ([asyncio.create_task(self._handover_loop(s)) for s in self.store.keys.all_shards()]
                     if self.handover else [])
        try:
            await stop_event.wait()
        finally:
            self._stopping = True
            await cancel_and_wait(loops)  # not a single cancel(): Python 3.11 can lose one (see bot/cancelling.py)
            await self._stop_handovers(handovers)
            await self._drain()

    async def _drain(self) -> None:
        """Let running calls finish within ``grace_period``; cut off the rest (they become interrupted).

        Entries read but not claimed yet are left pending: another replica (or this one after a restart,
        which first re-reads its own pending entries) picks them up.
        """
        tasks = list(self._inflight.values())
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=self.grace_period)
        if late:
            for exec_task in list(self._executing.values()):
                exec_task.cancel()
            await asyncio.wait(late, timeout=max(5.0, self.heartbeat_interval * 2))

    # ---------------------------------------------------------------- reading

    async def _read_loop(self, shard: int) -> None:
        stream = self.store.keys.run_stream(shard)
        last_id = "0"  # first our own pending entries (a restart with the same runner id), then new ones
        backoff = 0.1
        clock = asyncio.get_running_loop().time
        # Our own pending entries once more every so often: a read whose reply was lost (the connection cut after
        # Redis delivered; the production clients retry the read by themselves and get only newer entries) left
        # approved calls delivered to this runner that nothing works on, which would otherwise wait
        # ``reclaim_after`` (30 s by default). Only entries this runner never saw are taken up there.
        recheck_every = min(max(0.05, self.reclaim_after / 2), 5.0)
        recheck_at = clock() + recheck_every
        while not self._stopping:
            await self._wait_for_capacity()
            free = self.concurrency - len(self._inflight)
            if last_id == ">" and clock() >= recheck_at:
                recheck_at = clock() + recheck_every
                try:
                    lost = await unseen_pending(self.redis, stream, self.group, self.runner_id,
                                                lambda i: i in self._seen or i in self._inflight)
                except (ResponseError, *_TRANSIENT) as exc:
                    log.warning("runner %s: looking for lost reads of %s failed (%s)", self.runner_id, stream, exc)
                    lost = []
                for entry_id, fields in lost[:free]:
                    self._spawn(shard, entry_id, fields)
                continue
            try:
                reply: Any = await self.reader.xreadgroup(
                    self.group, self.runner_id, {stream: last_id}, count=free,
                    block=None if last_id != ">" else self.block_ms,
                )
                backoff = 0.1
            except ResponseError as exc:
                if "NOGROUP" in str(exc):
                    await self._retry(self.ensure_groups, forever=True)
                else:  # never let the loop die: approved calls would wait for a restart
                    log.error("runner %s: reading %s failed (%s); retrying", self.runner_id, stream, exc)
                    await asyncio.sleep(1.0)
                continue
            except _TRANSIENT as exc:
                log.warning("runner %s: reading %s failed (%s); retrying", self.runner_id, stream, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            entries = reply[0][1] if reply else []
            last_id = next_read_id(last_id, entries)
            for entry_id, fields in entries:
                self._spawn(shard, entry_id, fields)
            if entries:
                # let the new entries' handlers send their claims before this loop sends its next read: the claim
                # is on the way to the child's start, the next read is not (it would only wait in Redis). A
                # handler sends its claim in its first step (_claim_ahead), on the loop's next pass.
                await asyncio.sleep(0)

    async def _wait_for_capacity(self) -> None:
        while len(self._inflight) >= self.concurrency:
            self._freed.clear()
            await self._freed.wait()

    def _spawn(self, shard: int, entry_id: Any, fields: dict[Any, Any] | None) -> None:
        eid = _text(entry_id)
        if eid in self._inflight:
            return
        task = asyncio.create_task(self._handle(shard, eid, fields or {}))
        self._inflight[eid] = task
        self._seen[eid] = None
        self._seen.move_to_end(eid)
        while len(self._seen) > SEEN_KEPT:
            self._seen.popitem(last=False)

    # ---------------------------------------------------------------- one entry

    async def _handle(self, shard: int, entry_id: str, fields: dict[Any, Any]) -> None:
        stream = self.store.keys.run_stream(shard)
        slot = False
        try:
            decoded = {_text(k): _text(v) for k, v in fields.items()}
            call_id = decoded.get("call_id", "")
            limit = self._app_limits.get(decoded.get("app", "")) or self._app_limits.get("*")
            acknowledged = False  # by the script that stored the result
            await self._acquire_slot()  # before the claim: an entry not claimed yet waits here, pending
            slot = True
            async with limit if limit is not None else contextlib.nullcontext():
                if self._stopping:
                    return  # not claimed: stays pending for another replica
                try:
                    # one nonce per handling of this entry, reused by its retries: a retry recognises its own claim
                    # whose reply was lost; a take-over of the entry (a new handling) never does
                    record = await self._claim_ahead(call_id, decoded, new_claim_nonce())
                except NotDurable as exc:
                    # given back unstarted; the entry stays pending and a runner takes it over after
                    # reclaim_after (by then the replica may have caught up, or auto mode sees none)
                    log.warning("runner %s: not running %s now: %s", self.runner_id, call_id, exc)
                    return
                except ValueError:
                    log.error("runner %s: malformed run entry %s %r", self.runner_id, entry_id, decoded)
                    record = None
                if record is not None:
                    acknowledged = await self._execute(record, entry_id)
            if not acknowledged:
                await self._retry(lambda: self._drop_entry(stream, entry_id))
        except Exception:
            log.exception("runner %s: entry %s failed; it stays pending", self.runner_id, entry_id)
        finally:
            if slot:
                self._release_slot()
            self._inflight.pop(entry_id, None)
            self._freed.set()

    async def _drop_entry(self, stream: str, entry_id: str) -> None:
        """Acknowledge and delete an entry that brought no result to store (its claim was refused: the call was
        cancelled, interrupted or is malformed): left in the stream it would be counted as queued
        (``bot.approvals.queue_depth``) and keep its decision token until trimmed. Not the claim's path."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xack(stream, self.group, entry_id)
            pipe.xdel(stream, entry_id)
            await pipe.execute()

    async def _claim_ahead(self, call_id: str, fields: dict[str, str], nonce: str) -> CallRecord | None:
        """Claim, and while the claim is in Redis run ``prepare`` on the entry's fields (CPU work that is then
        off the way to the child's start).

        ``prepare`` is a callback of the loop's next pass: by then this task has sent the claim and waits for its
        reply, and the reply, even if already back, resumes this task after the callback (the loop runs what is
        ready in order). The claim is awaited here, not in a task of its own: it goes out at once, and its reply
        resumes this handler directly, two loop passes fewer on the way to the child's start."""
        if self.prepare is not None:
            asyncio.get_running_loop().call_soon(self._prepare, call_id, fields)
        return await self._claim_durably(call_id, nonce)

    async def _claim_durably(self, call_id: str, nonce: str) -> CallRecord | None:
        """Claim; a claim no replica confirmed was given back unstarted (``NotDurable``): try again after each of
        ``durable_retry`` seconds (a lagging replica catches up; after a failover ``auto`` asks the new primary
        for its replicas again), then give up and raise, leaving the entry pending for a later take-over."""
        for delay in (*self.durable_retry, None):
            try:
                return await self._retry(
                    lambda: self.store.claim(call_id, self.runner_id, self.stale_after, nonce=nonce)
                )
            except NotDurable as exc:
                if delay is None or self._stopping:
                    raise
                log.info("runner %s: %s; claiming again in %g s", self.runner_id, exc, delay)
                await asyncio.sleep(delay)
                if self._stopping:  # not claimed: stays pending for another replica
                    raise
        raise AssertionError("unreachable")

    # ---------------------------------------------------------------- recovery

    async def _recovery_loop(self) -> None:
        while not self._stopping:
            try:
                await self.recover_once()
            except _TRANSIENT as exc:
                log.warning("runner %s: recovery pass failed (%s)", self.runner_id, exc)
            except Exception:
                log.exception("runner %s: recovery pass failed", self.runner_id)
            await asyncio.sleep(self.recovery_interval)

    async def recover_once(self) -> None:
        """Take over entries left pending by dead consumers; interrupt calls whose runner died; sweep."""
        for shard in self.store.keys.all_shards():
            free = self.concurrency - len(self._inflight)
            if free <= 0 or self._stopping:
                break
            stream = self.store.keys.run_stream(shard)
            reply: Any = await self.redis.xautoclaim(
                stream, self.group, self.runner_id, int(self.reclaim_after * 1000), "0-0", count=free
            )
            for entry_id, fields in reply[1] if len(reply) > 1 else []:
                if fields is None:  # trimmed away while pending: nothing to run
                    await self.redis.xack(stream, self.group, entry_id)
                    continue
                log.info("runner %s: reclaimed %s", self.runner_id, _text(entry_id))
                self._spawn(shard, entry_id, fields)
        if self.sweep:
            for shard in self.store.keys.all_shards():  # before interrupt_stale: a hand-over never taken never ran
                for call_id in await self.store.due_hand_backs(shard):
                    outcome = await self.store.hand_back(call_id, "handed over to a runner that did not take it in "
                                                                  "time; given back, it never started")
                    if outcome == "ok":
                        log.warning("runner %s: gave back %s (handed over, never taken)", self.runner_id, call_id)
            await self.store.interrupt_stale()
            await self.store.expire_due()
