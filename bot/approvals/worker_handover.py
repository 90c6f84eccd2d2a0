"""Hand-overs on the runner's side: park while there is room, take what an approval claimed for this runner, run it
or give it back unstarted (see ``scripts.move`` and the README's *Hand-overs*)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from redis.exceptions import ResponseError

from bot.approvals.records import CallRecord, CallState
from bot.approvals.store_runs import handed_over, new_claim_nonce
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
        move (BLMOVE onto this runner's taken list) is the wake-up, and the record comes with it; the claim's work
        was done in the approval's script (TAKE, the runner's one round trip before the start, is a small script
        sent while it verifies the decision's signature). Exactly once: the call was claimed for this runner alone;
        TAKE moves it off the taken list atomically before the child starts, and a hand-over still on either list
        after ``hand_back_after`` is given back by the sweeper (``RunTransitions.hand_back``: the runner died, or
        lost the move's reply), never one that was taken (it may have started: the heartbeat rules apply, as to a
        claim). What a lost reply left on the taken list this runner takes itself as soon as Redis answers again
        (the taken list is read again after every failed wait, and at start): nothing waits for the hand-back.

        Not parked where a claim must be confirmed by a replica before the child starts (``waits_for_replicas``):
        the approval's script is confirmed for the approving side only. The wait is not cancelled at shutdown
        (what it moved would wait for the hand-back): ``_stop_handovers`` unparks and lets it time out."""
        key = self.store.keys.handover(shard, self.runner_id)
        taken = self.store.keys.taken(shard, self.runner_id)
        backoff = 0.1
        parked = False
        recover = True  # first what a previous run of this runner id, or a lost reply, left on the taken list
        while not self._stopping:
            try:
                if recover:
                    for element in await self.store.taken_handovers(shard, self.runner_id):
                        if _text(element).partition(" ")[0] not in self._handling:  # else its handler has it
                            self._take_handover(shard, element)
                    recover = False
                may_park = self._may_park(shard)
                if may_park:
                    self._parked.add(shard)  # before any await: the other shards' loops count it at once
                if may_park and not await self.store.durable.waits_for_replicas():
                    await self.store.park(shard, self.runner_id, self.park_seconds, self.stale_after,
                                          self.hand_back_after)
                    parked = True
                else:
                    self._parked.discard(shard)
                    if parked:
                        await self.store.unpark(shard, self.runner_id)
                        parked = False
                # listening even when not parked: takes what was handed over just before the unpark
                moved: Any = await self.reader.blmove(key, taken, self.block_ms / 1000,  # type: ignore[arg-type]
                                                      "LEFT", "RIGHT")  # (Redis takes seconds with a decimal part)
                backoff = 0.1
            except _TRANSIENT as exc:
                log.warning("runner %s: waiting for hand-overs on shard %d failed (%s); retrying", self.runner_id,
                            shard, exc)
                recover = True  # a move whose reply was lost left its element on the taken list
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            if moved:
                self._take_handover(shard, moved)
                # the child's start before this loop parks again (a send, and a wake-up of Redis): the hand-over's
                # handler runs on the next loop pass and its executor's first step (the spawn) on the one after
                await asyncio.sleep(0)
                await asyncio.sleep(0)
        self._parked.discard(shard)

    def _may_park(self, shard: int) -> bool:
        """Room for one more call of any application (a hand-over's application is not known in advance), and
        parked on fewer other shards than there are free slots: each park may bring a call at the same moment."""
        free = self.concurrency - self._busy
        return (len(self._parked - {shard}) < free and not self._slots.locked()
                and not any(s.locked() for s in self._app_limits.values()))

    def _take_handover(self, shard: int, element: Any) -> None:
        """Handle one element moved onto the taken list. Every element the wait moved gets a handler, even a second
        one for the same call (written into Redis by hand): TAKE lets at most one of them start it."""
        call_id = _text(element).partition(" ")[0]
        self._handovers_seen += 1
        name = f"handover:{call_id}:{self._handovers_seen}"
        self._handling[call_id] = self._handling.get(call_id, 0) + 1
        self._inflight[name] = asyncio.create_task(self._run_handover(shard, call_id, element, name))

    async def _run_handover(self, shard: int, call_id: str, element: Any, name: str) -> None:
        """Run a call handed over to this runner (claimed for it already), or give it back unstarted when this
        runner is stopping, has no free slot (overall or for the application), or a claim now has to be confirmed
        by a replica."""
        slot = app_slot = False
        limit: asyncio.Semaphore | None = None
        try:
            record = await self._handed_record(shard, call_id, element)
            if record is None:
                return
            limit = self._app_limits.get(record.app) or self._app_limits.get("*")
            slot = await self._try_slot()  # never waited for: parked on several shards, several may come at once
            app_slot = slot and (limit is None or await self._slot_for_handover(limit))
            if not app_slot or self._stopping or await self.store.durable.waits_for_replicas():
                await self._retry(lambda: self.store.return_handover(shard, self.runner_id, element))
                return
            if await self._take(record):
                await self._execute(record, "")
        except Exception:
            log.exception("runner %s: hand-over of %s failed", self.runner_id, call_id)
        finally:
            if app_slot and limit is not None:
                limit.release()
            if slot:
                self._release_slot()
            self._inflight.pop(name, None)
            left = self._handling.pop(call_id, 1) - 1
            if left:
                self._handling[call_id] = left
            self._freed.set()

    async def _handed_record(self, shard: int, call_id: str, element: Any) -> CallRecord | None:
        """The record a hand-over brought, or the call's own when the element is unreadable; None (and the element
        dropped from the taken list) when it is not a call claimed for this runner."""
        record: CallRecord | None
        try:
            record = handed_over(element)
        except Exception:  # noqa: BLE001 (whatever was written into Redis: the call is claimed for us, read it)
            log.error("runner %s: malformed hand-over %r; reading the call", self.runner_id, _text(element)[:200])
            record = await self._retry(lambda: self.store.find(call_id))
        if record is None or record.state is not CallState.running or record.runner != self.runner_id:
            # only an approval's script claims a call for this runner before pushing it: anything else on the
            # list (written into Redis by hand) is not run from here
            log.error("runner %s: hand-over of %s is not claimed for this runner (%s, runner %s); not run",
                      self.runner_id, call_id, record.state.value if record else "gone", record and record.runner)
            await self._retry(lambda: self.store.drop_taken(shard, self.runner_id, element))
            return None
        return record

    async def _take(self, record: CallRecord) -> bool:
        """TAKE before the child starts, the decision's signature verified while it is in Redis (``prepare`` runs
        on the loop's next pass, when the script has been sent: see ``_claim_ahead``). False: not ours to start."""
        if self.prepare is not None:
            asyncio.get_running_loop().call_soon(self._prepare, record.id, {"decision": record.signed_decision})
        nonce = new_claim_nonce()
        status = await self._retry(lambda: self.store.take_handover(record.id, self.runner_id, self.stale_after,
                                                                    nonce))
        if status != "ok":
            log.warning("runner %s: hand-over of %s not started: %s (given back or stopped meanwhile)",
                        self.runner_id, record.id, status)
        return status == "ok"

    async def _slot_for_handover(self, limit: asyncio.Semaphore) -> bool:
        """Take a slot of the hand-over's application: at once when one is free, else (claimed for us while another
        call took the last slot) wait up to ``stale_after / 2``. Meanwhile the hand-over stays on the taken list,
        not started: a stop request cancels it there, the sweep may give it back, and TAKE then says so."""
        if not limit.locked():
            await limit.acquire()  # does not suspend (asyncio.wait_for would start a task: a loop pass more)
            return True
        try:
            await asyncio.wait_for(limit.acquire(), self.stale_after / 2)
        except TimeoutError:
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
