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

STARTED_KEPT = 8192  # hand-overs this process started, remembered (recent last) so a copy is never started again


class HandoverWorker(ExecutingWorker):
    """The hand-over loops of a runner (``RunnerWorker`` runs them when ``handover`` is set)."""

    # ---------------------------------------------------------------- hand-overs

    async def _handover_loop(self, shard: int) -> None:
        """While this runner has room, park on the shard: the next approval claims its call for this runner in
        its own script and pushes it, with the record, onto this runner's list (``scripts.move``). The blocking
        move (BLMOVE onto this process's own moved list) is the wake-up, the record comes with it, and the move is
        the take: the child starts without another round trip (the claim's work was done in the approval's
        script). Exactly once: the call was claimed for this runner alone, and once moved it is never given back
        (the heartbeat rules apply, as to a claim: a process that dies after the move leaves it ``interrupted``).
        The park names this process's token and so does the call's mark, so the call's end removes the element
        from the moved list, and a move whose reply was lost is told from what an earlier process of the same
        runner id moved: the moved list is read again after every failed wait, and what is there that this
        process never saw goes through TAKE (``_recover``). A hand-over still on the hand-over list after
        ``hand_back_after`` (the runner died while parked) is given back by the sweeper.

        Not parked where a claim must be confirmed by a replica before the child starts (``waits_for_replicas``):
        the approval's script is confirmed for the approving side only. The wait is not cancelled at shutdown
        (what it moved would wait for the hand-back): ``_stop_handovers`` unparks and lets it time out."""
        key = self.store.keys.handover(shard, self.runner_id)
        moved_list = self.store.keys.moved(shard, self.runner_id, self._token)
        backoff = 0.1
        parked = False
        recover = True  # first what waits on the taken list (a previous run of this runner id), then lost replies
        while not self._stopping:
            try:
                if recover:
                    await self._recover(shard)
                    recover = False
                may_park = self._may_park(shard)
                if may_park:
                    self._parked.add(shard)  # before any await: the other shards' loops count it at once
                if may_park and not await self.store.durable.waits_for_replicas():
                    await self.store.park(shard, self.runner_id, self.park_seconds, self.stale_after,
                                          self.hand_back_after, self._token)
                    parked = True
                else:
                    self._parked.discard(shard)
                    if parked:
                        await self.store.unpark(shard, self.runner_id)
                        parked = False
                # listening even when not parked: takes what was handed over just before the unpark
                moved: Any = await self.reader.blmove(key, moved_list, self.block_ms / 1000,  # type: ignore[arg-type]
                                                      "LEFT", "RIGHT")  # (Redis takes seconds with a decimal part)
                backoff = 0.1
            except _TRANSIENT as exc:
                log.warning("runner %s: waiting for hand-overs on shard %d failed (%s); retrying", self.runner_id,
                            shard, exc)
                recover = True  # a move whose reply was lost left its element on this process's moved list
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            if moved:
                self._take_handover(shard, moved, seen=True)
                # the child's start before this loop parks again (a send, and a wake-up of Redis): the hand-over's
                # handler runs on the next loop pass and its executor's first step (the spawn) on the one after
                await asyncio.sleep(0)
                await asyncio.sleep(0)
        self._parked.discard(shard)
        if recover:  # stopping right after a failed wait: what it moved is given back now, not left to lapse
            with contextlib.suppress(*_TRANSIENT):
                await self._recover(shard)

    async def _recover(self, shard: int) -> None:
        """Hand-overs this process did not see itself move: what waits on the runner's taken list, not started (a
        previous run of this runner id set it aside, or a previous version's wait moved it), and what is on this
        process's own moved list without a handler here (a move whose reply was lost, or one whose call ended
        between the read and now). Each goes through TAKE, which starts it only if it is still a hand-over to
        this runner that nobody started."""
        for element in await self.store.taken_handovers(shard, self.runner_id):
            if _text(element).partition(" ")[0] not in self._handling:  # else its handler has it
                self._take_handover(shard, element, seen=False, on_taken=True)
        for element in await self.store.moved_handovers(shard, self.runner_id, self._token):
            if _text(element).partition(" ")[0] not in self._handling:
                self._take_handover(shard, element, seen=False)

    def _may_park(self, shard: int) -> bool:
        """Room for one more call of any application (a hand-over's application is not known in advance), and
        parked on fewer other shards than there are free slots: each park may bring a call at the same moment."""
        free = self.concurrency - self._busy
        return (len(self._parked - {shard}) < free and not self._slots.locked()
                and not any(s.locked() for s in self._app_limits.values()))

    def _take_handover(self, shard: int, element: Any, *, seen: bool, on_taken: bool = False) -> None:
        """Handle one hand-over element: ``seen``, this process's wait moved it and read the reply; ``on_taken``, it
        waits on the runner's taken list (else on this process's moved list). Every element gets a handler, even a
        second one for the same call (written into Redis by hand): only the first may start it."""
        call_id = _text(element).partition(" ")[0]
        self._handovers_seen += 1
        name = f"handover:{call_id}:{self._handovers_seen}"
        copy = call_id in self._handling
        self._handling[call_id] = self._handling.get(call_id, 0) + 1
        self._inflight[name] = asyncio.create_task(
            self._run_handover(shard, call_id, element, name, seen=seen and not copy, on_taken=on_taken, copy=copy))

    async def _run_handover(self, shard: int, call_id: str, element: Any, name: str, *, seen: bool,
                            on_taken: bool, copy: bool) -> None:
        """Run a call handed over to this runner (claimed for it already). Started at once, without a round trip,
        when this process saw its own wait move it (``seen``), the call's mark names this process, it did not
        start this call before (a copy of an old element, written by hand, is not started again), and there is a
        free slot overall and for its application. Anything else is set aside onto the taken list first (not
        started, in one step; a second element of a call this process handles already is dropped) and goes the
        careful way: a slot waited for, then TAKE before the start, or given
        back unstarted when this runner is stopping, has no slot, or a claim now has to be confirmed by a
        replica."""
        slot = app_slot = False
        limit: asyncio.Semaphore | None = None
        try:
            record, mark = await self._handed_record(shard, call_id, element, on_taken)
            if record is None:
                return
            limit = self._app_limits.get(record.app) or self._app_limits.get("*")
            slot = await self._try_slot()  # never waited for: parked on several shards, several may come at once
            app_slot = slot and (limit is None or await _slot_now(limit))
            if not (seen and app_slot and _names_process(mark, self.runner_id, self._token)
                    and self._heartbeat_outlives_first_beat(record)
                    and call_id not in self._started and not self._stopping
                    and not await self.store.durable.waits_for_replicas()):
                if copy:  # a second element of a call this process handles already: never run from here
                    log.error("runner %s: a second hand-over element of %s; not run", self.runner_id, call_id)
                    await self._retry(lambda: self._drop(shard, element, on_taken))
                    return
                if not on_taken and not await self._retry(lambda: self.store.set_aside(
                        shard, self.runner_id, self._token, element, self.hand_back_after)):
                    return  # not on the moved list any more: the call ended (or was handled here) meanwhile
                if slot and not app_slot:
                    app_slot = await self._slot_for_handover(limit)  # type: ignore[arg-type]
                if not app_slot or self._stopping or await self.store.durable.waits_for_replicas():
                    await self._retry(lambda: self.store.return_handover(shard, self.runner_id, element))
                    return
                if not await self._take(record):
                    return
            self._started[call_id] = None
            while len(self._started) > STARTED_KEPT:
                self._started.popitem(last=False)
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

    def _heartbeat_outlives_first_beat(self, record: CallRecord) -> bool:
        """Whether the heartbeat the approval set with the hand-over (for ``stale_after``, from ``started_at``) is
        sure to last until the first beat of a call started now (``heartbeat_interval`` from now, plus its round
        trip: one interval more is kept as margin, for that and for the clocks of two processes). A move that
        reached Redis later (a wait held up on its way, a loop that was busy while its park still stood) goes
        through TAKE, which refreshes the heartbeat: started at once, the sweep would find it running with no
        heartbeat, mark it ``interrupted`` and have its child cut off."""
        if record.started_at is None:
            return False
        age = self.store.clock() - record.started_at.timestamp()
        return age <= self.stale_after - 2 * self.heartbeat_interval

    async def _drop(self, shard: int, element: Any, on_taken: bool) -> None:
        """Remove an element that is not run from here from the list it is on."""
        await self.store.drop_taken(shard, self.runner_id, element,
                                    None if on_taken else self.store.keys.moved(shard, self.runner_id, self._token))

    async def _handed_record(self, shard: int, call_id: str, element: Any,
                             on_taken: bool) -> tuple[CallRecord | None, str]:
        """The record a hand-over brought and its hand-over mark, or the call's own record (no mark) when the
        element is unreadable; None (and the element dropped from its list) when it is not a call claimed for this
        runner."""
        record: CallRecord | None
        mark = ""
        try:
            record, mark = handed_over(element)
        except Exception:  # noqa: BLE001 (whatever was written into Redis: the call is claimed for us, read it)
            log.error("runner %s: malformed hand-over %r; reading the call", self.runner_id, _text(element)[:200])
            record = await self._retry(lambda: self.store.find(call_id))
        if record is None or record.state is not CallState.running or record.runner != self.runner_id:
            # only an approval's script claims a call for this runner before pushing it: anything else on the
            # list (written into Redis by hand) is not run from here
            log.error("runner %s: hand-over of %s is not claimed for this runner (%s, runner %s); not run",
                      self.runner_id, call_id, record.state.value if record else "gone", record and record.runner)
            await self._retry(lambda: self._drop(shard, element, on_taken))
            return None, ""
        return record, mark

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
        """Unpark, then let each blocked pop end by its timeout (what it pops is given back, not run). A wait cut
        off because its reply was held up longer may have moved a call that nothing here read: its shard's moved
        list is read once more, and what is there is given back unstarted (``_drain`` waits for those handlers),
        not left running with no one to run it until it lapses into ``interrupted``."""
        if not loops:
            return
        for shard in self.store.keys.all_shards():
            with contextlib.suppress(*_TRANSIENT, ResponseError):
                await self.store.unpark(shard, self.runner_id)
        _, late = await asyncio.wait(loops, timeout=self.block_ms / 1000 + 2.0)
        await cancel_and_wait(list(late))
        for shard, loop in zip(self.store.keys.all_shards(), loops, strict=True):
            if loop in late:
                with contextlib.suppress(*_TRANSIENT, ResponseError):
                    await self._recover(shard)


async def _slot_now(limit: asyncio.Semaphore) -> bool:
    """A slot of the application at once, or False (the semaphore's acquire does not suspend when it is free)."""
    if limit.locked():
        return False
    await limit.acquire()
    return True


def _names_process(mark: str, runner_id: str, token: str) -> bool:
    """Whether a hand-over's mark (``<runner> <claimed from> <token>``) names this runner process: the approval
    found this process's park, so this process's wait is the only one that moves it onto its own list."""
    parts = mark.split(" ")
    return len(parts) == 3 and parts[0] == runner_id and parts[2] == token
