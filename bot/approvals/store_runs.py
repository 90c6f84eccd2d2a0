"""The runner's side of a call: claim it, keep its heartbeat, store its result, or mark it interrupted.

A claim is given back (``RELEASE``) when no replica acknowledged it, before anything starts: a runner that ran
a call whose claim a failover then lost would leave it ``approved`` on the new primary, for a second runner to
run again. A result no replica acknowledged is confirmed by storing it again (the script recognises the
repeat). A call whose runner's heartbeat lapsed is ``interrupted``, never re-run by itself.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from bot.approvals import scripts
from bot.approvals.errors import CallNotFound, InvalidTransition
from bot.approvals.records import RESULT_STATUSES, CallRecord, CallState
from bot.approvals.replies import check_reply, require_acknowledged, unwrap_reply
from bot.approvals.store_base import StoreBase, log
from bot.redis_durable import Acknowledgement
from bot.streams import text as _text


class RunTransitions(StoreBase):
    """What a runner does to a call it executes, and what the sweeper does when a runner died."""

    async def claim(
        self, call_id: str, runner_id: str, heartbeat_ttl: float | None = None, *, nonce: str = ""
    ) -> CallRecord | None:
        """approved/auto_approved -> running for ``runner_id``, atomically; None if someone else has it,
        it was cancelled, or it is already past that point. The heartbeat key is set in the same script.

        ``nonce`` (random, secret: ``new_claim_nonce``): one per run entry the runner handles, passed again by
        every retry of that claim. A retry whose earlier attempt ran in Redis but whose reply was lost finds the
        call running for this runner with this nonce and gets the record back as its claim (it runs once, not
        never); a different runner or nonce is refused. Without a nonce no retry is recognised.

        Raises ``NotDurable`` when no replica acknowledged the claim in time: the claim has then been given back
        (the call is approved again, nothing started) and the caller must not run it now."""
        now = self._clock()
        ttl_ms = int((heartbeat_ttl or self.heartbeat_ttl) * 1000)
        keys = [self.keys.call(call_id), self.keys.heartbeat(call_id)]
        common = self._common(self.keys.shard_of_call(call_id), now)
        reply, ack = await self.durable.run(self._claim, keys, [*common, call_id, runner_id, ttl_ms, nonce])
        try:
            record = unwrap_reply(reply, call_id)
        except (InvalidTransition, CallNotFound):
            return None
        if not ack.durable:
            reason = (f"claim not acknowledged by a replica within {ack.timeout_ms} ms; given back before it "
                      "started")
            try:
                await self._release(keys=keys, args=[*common, call_id, runner_id, _text(reply[2]), reason])
            except Exception:  # noqa: BLE001 (left running unstarted: its heartbeat lapses, it is interrupted)
                log.exception("call %s: giving back a claim no replica acknowledged failed", call_id)
            require_acknowledged(ack, "claim", call_id)
        return record

    async def park(self, shard: int, runner_id: str, park_seconds: float, heartbeat_ttl: float,
                   hand_back_after: float, token: str = "") -> None:
        """Name ``runner_id`` as waiting for the shard's next approved call, for ``park_seconds``: that approval then
        claims the call for it and hands it over on ``keys.handover`` (``scripts.move``), heartbeat key set for
        ``heartbeat_ttl``. One hand-over per park. A hand-over still on that list after ``hand_back_after`` seconds
        is taken back by the sweeper (``hand_back``), so a runner that dies while parked loses nothing.

        ``token`` (the runner process's own, ``new_claim_nonce``): its wait moves the element onto its own list
        (``keys.moved``) and the move is the take; the call's mark names the token, so its end removes that
        element. Without one (the previous version's runners) a moved element waits for TAKE on ``keys.taken``."""
        value = f"{runner_id} {int(heartbeat_ttl * 1000)} {hand_back_after:g}"
        if token:
            value += f" {token}"
        await self.redis.set(self.keys.parked(shard), value, px=max(1, int(park_seconds * 1000)))

    async def unpark(self, shard: int, runner_id: str) -> None:
        """Stop waiting for hand-overs (unless another runner parked since)."""
        await self._unpark(keys=[self.keys.parked(shard)], args=[runner_id])

    async def hand_back(self, call_id: str, reason: str, runner_id: str = "") -> str:
        """Give back a handed-over call its runner has not taken: ``"ok"`` (approved again, with a run entry, or
        handed to another parked runner), ``"taken"`` (the runner took it: it may have started, so the heartbeat
        rules apply), or the state it is in when it is not running any more. With ``runner_id``, that runner gives
        back one it took but did not start (``return_handover``)."""
        reply = await self._handback(
            keys=[self.keys.call(call_id), self.keys.heartbeat(call_id)],
            args=[*self._common(self.keys.shard_of_call(call_id), self._clock()), call_id, reason, runner_id],
        )
        return _text(reply[0]) if _text(reply[0]) != "invalid" else _text(reply[1])

    async def return_handover(self, shard: int, runner_id: str, element: Any) -> str:
        """Give back a hand-over this runner's wait took but that it will not start (it is stopping, or has no
        room): one script, not a push onto its list again (this runner's own wait for hand-overs would take it at
        once, and again). A crash before the script leaves it on the runner's taken list, not started: the sweep
        gives it back after its hand-back time."""
        return await self.hand_back(_text(element).partition(" ")[0], "given back unstarted by the runner it was "
                                                                          "handed over to", runner_id)

    async def take_handover(self, call_id: str, runner_id: str, heartbeat_ttl: float, nonce: str) -> str:
        """Say that ``runner_id`` starts a hand-over its wait moved onto its taken list, before it starts the child:
        ``"ok"`` (no hand-back can take it any more; heartbeat refreshed), else ``"gone"`` (given back or cancelled
        meanwhile) or ``"invalid"`` (not running for this runner): then it must not start it. ``nonce`` (one per
        handling, ``new_claim_nonce``) lets a retry whose first reply was lost get its ``"ok"`` again."""
        shard = self.keys.shard_of_call(call_id)
        reply = await self._take(
            keys=[self.keys.call(call_id), self.keys.heartbeat(call_id), self.keys.taken(shard, runner_id)],
            args=[*self._common(shard, self._clock()), call_id, runner_id, int(heartbeat_ttl * 1000), nonce],
        )
        return _text(reply[0])

    async def set_aside(self, shard: int, runner_id: str, token: str, element: Any, hand_back_after: float) -> bool:
        """Move one element from the runner process's own moved list (``keys.moved``: being started) to its taken
        list (``keys.taken``: not started until TAKE), due for the hand-back sweep again ``hand_back_after`` from
        now: the process will not start it at once (no free slot, stopping, an element it did not see itself move,
        a second element of one call). False when the element was on neither list (the call's end removed it);
        True again for a retry whose first answer was lost."""
        call_id = _text(element).partition(" ")[0]
        return bool(await self._demote(
            keys=[self.keys.moved(shard, runner_id, token), self.keys.taken(shard, runner_id),
                  self.keys.handovers(shard)],
            args=[element, call_id, self._clock() + hand_back_after],
        ))

    async def taken_handovers(self, shard: int, runner_id: str) -> list[Any]:
        """The elements on ``runner_id``'s taken list: hand-overs for it that it has not started."""
        return list(await self.redis.lrange(self.keys.taken(shard, runner_id), 0, -1))

    async def moved_handovers(self, shard: int, runner_id: str, token: str) -> list[Any]:
        """The elements on the moved list of ``runner_id``'s process ``token``: what its wait moved and the call's
        end has not removed yet (a move whose reply was lost is among them)."""
        return list(await self.redis.lrange(self.keys.moved(shard, runner_id, token), 0, -1))

    async def drop_taken(self, shard: int, runner_id: str, element: Any, moved: str | None = None) -> None:
        """Remove one element from ``runner_id``'s taken list (or the ``moved`` list named) that is not a hand-over
        claimed for it (written into Redis by hand): it is not run, and not looked at again."""
        await self.redis.lrem(moved or self.keys.taken(shard, runner_id), 1, element)

    async def due_hand_backs(self, shard: int) -> list[str]:
        """Handed-over calls whose runner had its time to take them (the sweeper asks ``hand_back`` for each)."""
        due = await self.redis.zrangebyscore(self.keys.handovers(shard), "-inf", self._clock())
        return [_text(call_id) for call_id in due]

    async def heartbeat(self, call_id: str, runner_id: str, ttl: float | None = None) -> bool:
        """Refresh the running call's heartbeat; False if the call is no longer running for this runner."""
        return await self.beat(call_id, runner_id, ttl) != "gone"

    async def beat(self, call_id: str, runner_id: str, ttl: float | None = None) -> str:
        """Refresh the heartbeat: ``"running"``, ``"stop"`` (still ours, and a human asked to stop it) or
        ``"gone"`` (no longer running for this runner)."""
        ttl_ms = int((ttl or self.heartbeat_ttl) * 1000)
        status = await self._heartbeat(
            keys=[self.keys.call(call_id), self.keys.heartbeat(call_id)], args=[runner_id, ttl_ms]
        )
        return {1: "running", 2: "stop"}.get(int(status), "gone")

    async def finish(self, call_id: str, runner_id: str, result: dict[str, Any]) -> CallRecord:
        """Store the result; ``result["status"]`` (finished, timed_out, failed_to_start) is the new state."""
        reply, ack = await self._store_result(call_id, runner_id, result)
        record = unwrap_reply(reply, call_id)  # "repeat": this runner's result was stored already; now confirmed
        require_acknowledged(ack, "result", call_id)
        return record

    async def record_result(
        self, call_id: str, runner_id: str, result: dict[str, Any], run_entry: tuple[str, str] | None = None
    ) -> None:
        """``finish`` for a caller that does not use the record (the runner worker): the script's answer is
        checked (same exceptions) and carries no record. ``run_entry`` (consumer group, entry id): the run stream
        entry that brought the call, acknowledged by the same script as soon as it runs, whatever it answers."""
        reply, ack = await self._store_result(call_id, runner_id, result, run_entry or ("", ""), lean=True)
        check_reply(reply, call_id)
        require_acknowledged(ack, "result", call_id)

    async def _store_result(
        self, call_id: str, runner_id: str, result: dict[str, Any], run_entry: tuple[str, str] = ("", ""),
        *, lean: bool = False,
    ) -> tuple[Any, Acknowledgement]:
        status = CallState(result.get("status", ""))
        if status not in RESULT_STATUSES:
            raise ValueError(f"result status must be one of {sorted(RESULT_STATUSES)}, got {status}")
        now = self._clock()
        if status == CallState.refused:
            reason = str(result.get("error") or "refused")
        else:
            reason = f"exit code {result['exit_code']}" if result.get("exit_code") is not None else str(status)
        reply, ack = await self.durable.run(
            self._finish,
            [self.keys.call(call_id)],
            [
                *self._common(self.keys.shard_of_call(call_id), now),
                call_id, runner_id, status.value, json.dumps(result), reason, *run_entry, "1" if lean else "0",
            ],
        )
        return reply, ack

    async def mark_interrupted(
        self, call_id: str, reason: str, *, actor: str = "sweeper", only_if_stale: bool = False
    ) -> CallRecord:
        """running -> interrupted: the outcome is unknown and the call is never re-run by itself.

        With ``only_if_stale`` the script refuses while the heartbeat key still exists, so a slow but live
        runner is never cut off by a sweeper on another replica.
        """
        now = self._clock()
        result = json.dumps({"status": CallState.interrupted.value, "error": reason})
        reply = await self._interrupt(
            keys=[self.keys.call(call_id), self.keys.heartbeat(call_id)],
            args=[
                *self._common(self.keys.shard_of_call(call_id), now),
                call_id, actor, reason, "1" if only_if_stale else "0", result,
            ],
        )
        return unwrap_reply(reply, call_id)

    async def interrupt_stale(self) -> list[CallRecord]:
        """Mark every running call whose heartbeat expired as interrupted (its runner died)."""
        interrupted = []
        for shard in self.keys.all_shards():
            for raw_id in await self.redis.zrange(self.keys.running(shard), 0, -1):
                call_id = _text(raw_id)
                if await self.redis.exists(self.keys.heartbeat(call_id)):
                    continue
                record = await self.find(call_id)
                runner = record.runner if record else "?"
                try:
                    interrupted.append(
                        await self.mark_interrupted(
                            call_id,
                            f"heartbeat of runner {runner} stopped; outcome unknown, not re-run",
                            only_if_stale=True,
                        )
                    )
                except InvalidTransition:
                    pass
                except CallNotFound:
                    await self.redis.zrem(self.keys.running(shard), call_id)
        return interrupted

    async def set_meta(self, call_id: str, **meta: str) -> None:
        """Attach front-end data (e.g. Slack channel and ts of the approval card) to an existing call."""
        if not meta:
            return
        if not await self._set_meta(keys=[self.keys.call(call_id)], args=_meta_args(meta)):
            raise CallNotFound(call_id)

    def queue_set_meta(self, pipe: Any, call_id: str, **meta: str) -> None:
        """``set_meta`` queued on a pipeline the caller runs with writes of its own, in one round trip (the Slack
        poster records a posted result and releases its hold on posting it together). The pipeline's reply for
        it is 0 when the call does not exist. Sent as EVAL: a pipeline's EVALSHA would first cost a SCRIPT
        EXISTS round trip, and this script is a few lines."""
        pipe.eval(scripts.SET_META, 1, self.keys.call(call_id), *_meta_args(meta))


def handed_over(element: Any) -> tuple[CallRecord, str]:
    """The claimed call of a hand-over list element (``<id> <record JSON>``, written by ``scripts.move``), and its
    hand-over mark (``<runner> <claimed from>[ <process token>]``; '' when there is none)."""
    call_id, _, record = _text(element).partition(" ")
    reply = json.loads(record)
    flat = reply[0]
    mark = ""
    for index in range(0, len(flat) - 1, 2):
        if flat[index] == "handoff":
            mark = flat[index + 1]
            break
    return CallRecord.from_reply(reply, call_id), str(mark)


def new_claim_nonce() -> str:
    """A claim's nonce: 128 random bits from the OS, never derived from anything a Slack user sees (call id,
    runner id, entry id), so no one can present another claim's nonce."""
    return secrets.token_urlsafe(16)


def _meta_args(meta: dict[str, str]) -> list[str]:
    args: list[str] = []
    for k, v in meta.items():
        args += [f"meta:{k}", v]
    return args
