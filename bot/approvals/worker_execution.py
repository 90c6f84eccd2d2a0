"""The part of the runner worker that executes a claimed call: the executor's task, the heartbeat while it runs,
storing its outcome, and retrying Redis operations that must not be lost. ``RunnerWorker`` (worker.py) builds on
it; the module docstring there describes the whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.approvals.errors import ApprovalError, InvalidTransition, NotDurable
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.approvals.store_runs import new_claim_nonce
from bot.logcontext import log_context
from bot.runner.execute import STOP_REQUEST, StopRequest

log = logging.getLogger("bot.approvals.worker")  # one logger for the worker, whichever module the line is in


Executor = Callable[[CallRecord], Awaitable[dict[str, Any]]]
#: Work on a run entry's fields that can be done while its claim is in Redis (the runner verifies the decision's
#: signature ahead: ``DecisionVerifier.verify_ahead``). Never a check by itself: the claimed record is checked.
Prepare = Callable[[dict[str, str]], None]
T = TypeVar("T")
_TRANSIENT = (RedisConnectionError, RedisTimeoutError, OSError)


class ExecutingWorker:
    """Settings and the execution of claimed calls (see ``RunnerWorker``)."""

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
        self._seen: OrderedDict[str, None] = OrderedDict()  # run entries handed to a task (bounded, recent last)
        self._executing: dict[str, asyncio.Task[dict[str, Any]]] = {}
        self._freed = asyncio.Event()
        self._stopping = False
        #: the overall limit, ``concurrency`` calls started at once whichever way they came (run entries of every
        #: shard, hand-overs on every shard): a run entry waits for a slot before its claim, a hand-over that finds
        #: none is given back unstarted
        self._slots = asyncio.Semaphore(concurrency)
        self._busy = 0  # slots held
        self._parked: set[int] = set()  # shards this runner is parked on
        self._handling: dict[str, int] = {}  # call id -> handlers of its hand-over elements (worker_handover.py)
        self._handovers_seen = 0
        self._started: OrderedDict[str, None] = OrderedDict()  # hand-overs started by this process (recent last)
        #: this process's own token, written with its parks (``worker_handover.py``): new for every ``run``
        self._token = new_claim_nonce()

    async def _acquire_slot(self) -> None:
        await self._slots.acquire()
        self._busy += 1

    async def _try_slot(self) -> bool:
        """A slot at once, or False (the semaphore's acquire does not suspend when it is not locked)."""
        if self._slots.locked():
            return False
        await self._acquire_slot()
        return True

    def _release_slot(self) -> None:
        self._busy -= 1
        self._slots.release()

    def _prepare(self, call_id: str, fields: dict[str, str]) -> None:
        assert self.prepare is not None
        try:
            self.prepare(fields)
        except Exception:  # never fatal: the claimed record is checked in full anyway
            log.exception("runner %s: preparing %s failed", self.runner_id, call_id)

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
