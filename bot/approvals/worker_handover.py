"""Hand-overs on the runner's side: park while there is room, take what an approval claimed for this runner, run it
or give it back unstarted (see ``scripts.move`` and the README's *Hand-overs*)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from redis.exceptions import ResponseError

from bot.approvals.records import CallState
from bot.approvals.store_runs import handed_over
from bot.approvals.worker_execution import _TRANSIENT, ExecutingWorker
from bot.cancelling import cancel_and_wait
from bot.streams import text as _text

log = logging.getLogger("bot.approvals.worker")


class HandoverWorker(ExecutingWorker):
    """The hand-over loops of a runner (``RunnerWorker`` runs them when ``handover`` is set)."""

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
