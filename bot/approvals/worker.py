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
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.approvals.errors import ApprovalError, InvalidTransition, NotDurable
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.store_runs import handed_over, new_claim_nonce
from bot.cancelling import cancel_and_wait
from bot.logcontext import log_context
from bot.runner.execute import STOP_REQUEST, StopRequest
from bot.streams import ensure_group, next_read_id
from bot.streams import text as _text

log = logging.getLogger(__name__)


Executor = Callable[[CallRecord], Awaitable[dict[str, Any]]]
#: Work on a run entry's fields that can be done while its claim is in Redis (the runner verifies the decision's
#: signature ahead: ``DecisionVerifier.verify_ahead``). Never a check by itself: the claimed record is checked.
Prepare = Callable[[dict[str, str]], None]
T = TypeVar("T")
_TRANSIENT = (RedisConnectionError, RedisTimeoutError, OSError)



class RunnerWorker:
    """One runner replica: ``await worker.run(stop_event)``."""

    def __init__(
        self,
        redis: Redis,
        store: CallStore,
        executor: Executor,
        *,
        runner_id: str,
        group: str = "runners",
        heartbeat_interval: float = 2.0,
        stale_after: float = 10.0,
        per_app_limits: dict[str, int] | None = None,
        concurrency: int = 16,
        reclaim_after: float | None = None,
        recovery_interval: float | None = None,
        grace_period: float = 30.0,
        block_seconds: float = 1.0,
        sweep: bool = True,
        reader: Redis | None = None,
        prepare: Prepare | None = None,
        handover: bool = False,
    ) -> None:
        self.redis = redis
        self.reader = reader or redis  # blocking reads hold a connection: their own pool (bot/redis_pool.py)
        self.store = store
        self.executor = executor
        self.prepare = prepare
        self.runner_id = runner_id
        self.group = group
        self.heartbeat_interval = heartbeat_interval
        self.stale_after = stale_after
        self.concurrency = concurrency
        self.reclaim_after = reclaim_after if reclaim_after is not None else 3 * stale_after
        self.recovery_interval = recovery_interval if recovery_interval is not None else stale_after / 2
        self.grace_period = grace_period
        self.block_ms = max(1, int(block_seconds * 1000))
        self.sweep = sweep
        #: park while idle, so an approval claims its call for this runner and hands it over (``_handover_loop``)
        self.handover = handover
        self.park_seconds = 3 * block_seconds  # outlives a blocked wait: the park is renewed after each
        self.hand_back_after = self.park_seconds + 2.0  # a dead runner's park has expired by then
        #: pauses before claiming again when no replica confirmed a claim (see _claim_durably)
        self.durable_retry: tuple[float, ...] = (0.5, 1.0, 2.0)
        self._app_limits = {app: asyncio.Semaphore(n) for app, n in (per_app_limits or {}).items()}
        self._inflight: dict[str, asyncio.Task[None]] = {}
        self._executing: dict[str, asyncio.Task[dict[str, Any]]] = {}
        self._freed = asyncio.Event()
        self._stopping = False

    # ---------------------------------------------------------------- lifecycle

    async def ensure_groups(self) -> None:
        for shard in self.store.keys.all_shards():
            await ensure_group(self.redis, self.store.keys.run_stream(shard), self.group)

    async def run(self, stop_event: asyncio.Event) -> None:
        """Consume until ``stop_event`` is set, then stop gracefully (see ``_drain``)."""
        self._stopping = False
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
        while not self._stopping:
            await self._wait_for_capacity()
            free = self.concurrency - len(self._inflight)
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

    # ---------------------------------------------------------------- hand-overs

    async def _handover_loop(self, shard: int) -> None:
        """While this runner has room, park on the shard: the next approval claims its call for this runner in
        its own script and pushes it, with the record, onto this runner's list (``scripts.move``). The blocking
        pop is the wake-up and the claim at once: one Redis round trip and two process wake-ups fewer before the
        child starts than a run entry and a claim. Exactly once: the call was claimed for this runner alone, and
        the pop takes it off the list atomically; a hand-over still on the list after ``hand_back_after`` is
        given back by the sweeper (``RunTransitions.hand_back``: the runner died while parked), never one that
        was popped (it may have started: the heartbeat rules apply, as to a claim).

        Not parked where a claim must be confirmed by a replica before the child starts (``waits_for_replicas``):
        the approval's script is confirmed for the approving side only. The pop is not cancelled at shutdown
        (a cancelled pop could lose what the server popped): ``_stop_handovers`` unparks and lets it time out."""
        key = self.store.keys.handover(shard, self.runner_id)
        backoff = 0.1
        parked = False
        while not self._stopping:
            try:
                if self._may_park() and not await self.store.durable.waits_for_replicas():
                    await self.store.park(shard, self.runner_id, self.park_seconds, self.stale_after,
                                          self.hand_back_after)
                    parked = True
                elif parked:
                    await self.store.unpark(shard, self.runner_id)
                    parked = False
                # listening even when not parked: takes what was handed over just before the unpark
                reply: Any = await self.reader.blpop([key], timeout=self.block_ms / 1000)
                backoff = 0.1
            except _TRANSIENT as exc:
                log.warning("runner %s: waiting for hand-overs on shard %d failed (%s); retrying", self.runner_id,
                            shard, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            if reply:
                self._take_handover(shard, reply[1])
                # the child's start before this loop parks again (a send, and a wake-up of Redis): the hand-over's
                # handler runs on the next loop pass and its executor's first step (the spawn) on the one after
                await asyncio.sleep(0)
                await asyncio.sleep(0)

    def _may_park(self) -> bool:
        """Room for one more call of any application (a hand-over's application is not known in advance)."""
        return len(self._inflight) < self.concurrency and not any(s.locked() for s in self._app_limits.values())

    def _take_handover(self, shard: int, element: Any) -> None:
        call_id = _text(element).partition(" ")[0]
        task = asyncio.create_task(self._run_handover(shard, call_id, element))
        self._inflight[f"handover:{call_id}"] = task

    async def _run_handover(self, shard: int, call_id: str, element: Any) -> None:
        """Run a call handed over to this runner (claimed for it already), or give it back unstarted when this
        runner is stopping, its application has no room, or a claim now has to be confirmed by a replica."""
        try:
            try:
                record = handed_over(element)
            except Exception:  # noqa: BLE001 (whatever was written into Redis: the call is claimed for us, read it)
                log.error("runner %s: malformed hand-over %r; reading the call", self.runner_id, _text(element)[:200])
                found = await self._retry(lambda: self.store.find(call_id))
                if found is None:
                    return
                record = found
            if record.state is not CallState.running or record.runner != self.runner_id:
                # only an approval's script claims a call for this runner before pushing it: anything else on the
                # list (written into Redis by hand) is not run from here
                log.error("runner %s: hand-over of %s is not claimed for this runner (%s, runner %s); not run",
                          self.runner_id, call_id, record.state.value, record.runner)
                return
            limit = self._app_limits.get(record.app) or self._app_limits.get("*")
            held = limit is None or await self._slot_for_handover(record.id, limit)
            try:
                if not held or self._stopping or await self.store.durable.waits_for_replicas():
                    await self._retry(lambda: self.store.return_handover(shard, self.runner_id, element))
                    return
                await self._execute(record, "")
            finally:
                if held and limit is not None:
                    limit.release()
        except Exception:
            log.exception("runner %s: hand-over of %s failed", self.runner_id, call_id)
        finally:
            if self._inflight.get(f"handover:{call_id}") is asyncio.current_task():  # not a later hand-over's
                del self._inflight[f"handover:{call_id}"]
            self._freed.set()

    async def _slot_for_handover(self, call_id: str, limit: asyncio.Semaphore) -> bool:
        """Take a slot of the hand-over's application: at once when one is free. Else (claimed for us while another
        call took the last slot) wait up to ``stale_after / 2``, with the heartbeat the hand-over set refreshed
        before the wait and asked after it: the call may have been stopped or ended meanwhile. False (no slot
        held) when none freed or the call is not ours to start any more; the caller gives it back."""
        if not limit.locked():
            await limit.acquire()
            return True
        if await self._retry(lambda: self.store.beat(call_id, self.runner_id, self.stale_after)) != "running":
            return False
        try:
            await asyncio.wait_for(limit.acquire(), self.stale_after / 2)
        except TimeoutError:
            return False
        if await self._retry(lambda: self.store.beat(call_id, self.runner_id, self.stale_after)) != "running":
            limit.release()
            return False
        return True

    async def _stop_handovers(self, loops: list[asyncio.Task[None]]) -> None:
        """Unpark, then let each blocked pop end by its timeout (what it pops is given back, not run)."""
        if not loops:
            return
        for shard in self.store.keys.all_shards():
            with contextlib.suppress(*_TRANSIENT, ResponseError):
                await self.store.unpark(shard, self.runner_id)
        _, late = await asyncio.wait(loops, timeout=self.block_ms / 1000 + 2.0)
        await cancel_and_wait(list(late))

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

    # ---------------------------------------------------------------- one entry

    async def _handle(self, shard: int, entry_id: str, fields: dict[Any, Any]) -> None:
        stream = self.store.keys.run_stream(shard)
        try:
            decoded = {_text(k): _text(v) for k, v in fields.items()}
            call_id = decoded.get("call_id", "")
            limit = self._app_limits.get(decoded.get("app", "")) or self._app_limits.get("*")
            acknowledged = False  # by the script that stored the result
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

    def _prepare(self, call_id: str, fields: dict[str, str]) -> None:
        assert self.prepare is not None
        try:
            self.prepare(fields)
        except Exception:  # never fatal: the claimed record is checked in full anyway
            log.exception("runner %s: preparing %s failed", self.runner_id, call_id)

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

    async def _execute(self, record: CallRecord, entry_id: str) -> bool:
        """Run a claimed call and store its outcome; True when the script that stored the result also
        acknowledged ``entry_id``."""
        with log_context(call_id=record.id, conversation=record.conversation, tool=record.tool):
            acknowledged = await self._execute_logged(record, entry_id)
            log.info("runner %s: %s done", self.runner_id, record.tool)
            return acknowledged

    async def _execute_logged(self, record: CallRecord, entry_id: str) -> bool:
        # the claim just set the heartbeat key (it lives stale_after): the first beat is due heartbeat_interval
        # from now, however long the executor's first step holds the loop before the heartbeat task exists
        first_beat_at = asyncio.get_running_loop().time() + self.heartbeat_interval
        stop = StopRequest()  # the executor waits for the child's exit and for this on one future
        exec_task: asyncio.Task[dict[str, Any]] = asyncio.create_task(self._call_executor(record, stop))
        self._executing[record.id] = exec_task
        beat: asyncio.Task[None] | None = None
        try:
            try:
                # Yield first: the executor's first step (verification, the argv check, the child's start: it does
                # not suspend before the spawn) runs now, ahead of this task's next step (the loop runs what is
                # ready in order). The log line, the heartbeat task and the wait's set-up are bookkeeping the
                # child's start need not wait for.
                await asyncio.sleep(0)
                log.info("runner %s: running %s", self.runner_id, record.tool)
                # The heartbeat runs until the outcome is stored, not only while the call runs: a result waiting
                # for Redis to come back must not look like a dead runner to the recovery sweep meanwhile. Its first
                # beat is due heartbeat_interval after the claim (at once if the first step held the loop longer:
                # counted from here, a 0.75 s spawn let a 1 s claim key lapse before the first beat).
                beat = asyncio.create_task(self._heartbeat_loop(record.id, exec_task, stop, first_beat_at))
                await asyncio.wait({exec_task})
            finally:
                self._executing.pop(record.id, None)
            return await self._store_outcome(record, exec_task, entry_id)
        finally:
            if beat is not None:
                beat.cancel()

    async def _store_outcome(self, record: CallRecord, exec_task: asyncio.Task[dict[str, Any]], entry_id: str) -> bool:
        """Store what the executor returned (or that it failed); True when the run entry was acknowledged too."""
        if exec_task.cancelled():
            await self._interrupt(record.id, "runner stopped before the call finished; outcome unknown")
            return False
        error = exec_task.exception()
        if error is not None:
            await self._interrupt(record.id, f"executor error after start: {error!r}")
            return False
        try:
            # A result is retried for as long as this process lives: it is the one thing nobody can redo. That
            # includes a result no replica acknowledged yet: the retry confirms it, or stores it again on a
            # primary promoted meanwhile that never had it.
            await self._retry(lambda: self.store.record_result(record.id, self.runner_id, exec_task.result(),
                                                               run_entry=(self.group, entry_id) if entry_id else None),
                              forever=True, also=(NotDurable,))
        except ValueError as exc:  # refused before the script ran: nothing acknowledged
            await self._interrupt(record.id, f"executor returned an invalid result: {exc}")
            return False
        except InvalidTransition as exc:  # the script ran (and acknowledged the entry) but stored nothing
            log.warning("runner %s: result of %s not stored, call is %s", self.runner_id, record.id,
                        exc.current_state)
        return True

    async def _call_executor(self, record: CallRecord, stop: StopRequest) -> dict[str, Any]:
        STOP_REQUEST.set(stop)  # this task's own context: only this call's executor sees it
        return await self.executor(record)

    async def _interrupt(self, call_id: str, reason: str) -> None:
        with contextlib.suppress(ApprovalError):
            await self._retry(
                lambda: self.store.mark_interrupted(call_id, reason, actor=f"runner:{self.runner_id}")
            )

    async def _heartbeat_loop(
        self, call_id: str, exec_task: asyncio.Task[Any], stop: StopRequest, first_beat_at: float
    ) -> None:
        delay = max(0.0, first_beat_at - asyncio.get_running_loop().time())
        while True:
            await asyncio.sleep(delay)
            delay = self.heartbeat_interval
            try:
                status = await self.store.beat(call_id, self.runner_id, self.stale_after)
            except _TRANSIENT:
                continue
            if status == "stop" and not stop.is_set():
                log.info("runner %s: stop requested for %s; signalling its process group", self.runner_id, call_id)
                stop.set()
            if status == "gone":
                log.error("runner %s: %s is no longer ours (marked interrupted); stopping it",
                          self.runner_id, call_id)
                exec_task.cancel()
                return

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

    async def _retry(
        self, operation: Callable[[], Awaitable[T]], *, forever: bool = False,
        also: tuple[type[Exception], ...] = (),
    ) -> T:
        """Retry on connection errors (a Redis restart, no free pooled connection) and on ``also`` for up to a
        minute, or as long as the process lives with ``forever``; results must not be lost."""
        delay = 0.05
        deadline = asyncio.get_running_loop().time() + max(60.0, self.stale_after * 6)
        retried: tuple[type[BaseException], ...] = (*_TRANSIENT, *also)
        while True:
            try:
                return await operation()
            except retried as exc:
                if not forever and asyncio.get_running_loop().time() > deadline:
                    raise
                log.warning("runner %s: Redis failed (%s); retrying", self.runner_id, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

