"""``CallStore``: the tool-call lifecycle in Redis.

Every public transition is one Lua script (see ``scripts.py``) guarded by the current state, so two clicks,
two replicas or a retried delivery can never approve twice or run twice. Authorization (who may approve) is
checked here in Python against the policy before the script runs; the script re-checks everything that can
race (state, argv hash, who already approved, expiry).

The store keeps no state in memory: any replica can serve any call.

Decisions are signed here, where they are made (``approve`` for a click, ``propose`` for a policy
auto-approval), with the ``signer`` of the deciding role; a store without one (a runner's) records unsigned
decisions, which no runner executes (see ``decisions.py``).

Approve, claim, finish, deny and cancel wait for a replica's acknowledgement when the primary has replicas
(``bot/redis_durable.py``, ``redis.durability``), so what a user is told survives a failover. When the wait falls
short, the write is on the primary only and ``NotDurable`` says so: an approval or a result is confirmed by
doing it again (the scripts recognise the repeat and write nothing new but a marker to wait for); a claim is
given back (``RELEASE``) before anything is started, because a runner that ran a call whose claim a failover
then lost would leave it ``approved`` on the new primary, for a second runner to run again. A denial is
raised as ``NotDurable`` too (its record attached: the denier is told a failover could undo it).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from bot.approvals import scripts
from bot.approvals.decisions import DecisionSigner
from bot.approvals.errors import (
    AlreadyApproved,
    AlreadyCancelling,
    ArgvMismatch,
    CallNotFound,
    InvalidTransition,
    NotDurable,
)
from bot.approvals.grants import Grant, GrantStore
from bot.approvals.keys import Keys
from bot.approvals.policy import DENY_TAG, ApprovalPolicy
from bot.approvals.records import (
    RESULT_STATUSES,
    CallRecord,
    CallState,
    NewCall,
    Proposal,
    epoch_text,
    new_call,
    to_epoch,
)
from bot.approvals.seals import check_sealed, proposal_claims, seal_approval, seal_proposal
from bot.metrics import UNCONFIRMED_WRITES
from bot.redis_durable import Acknowledgement, DurabilitySettings, DurableScripts
from bot.streams import text as _text

log = logging.getLogger(__name__)

_CLOSABLE_BY_CANCEL = "awaiting_approval,approved,auto_approved"


class CallStore:
    """Atomic lifecycle operations on call records (see DESIGN.md, "The tool-call lifecycle")."""

    def __init__(
        self,
        redis: Redis,
        *,
        retention_seconds: float = 7 * 86400,
        key_prefix: str = "fc",
        shards: int = 1,
        heartbeat_ttl: float = 10.0,
        clock: Callable[[], float] = time.time,
        signer: DecisionSigner | None = None,
        redact_patterns: Sequence[str] = (),
        durability: DurabilitySettings | None = None,
    ) -> None:
        self.redis = redis
        # approve, claim and finish wait for replicas (redis.durability; auto: one when the primary has any)
        self.durable = DurableScripts(redis, durability)
        # execution.redact_patterns: also applied to the command line kept on the record and the audit trail
        self.redact_patterns = tuple(redact_patterns)
        self.signer = signer
        self.keys = Keys(key_prefix, shards)
        self.retention_seconds = retention_seconds
        self.heartbeat_ttl = heartbeat_ttl
        self._clock = clock
        self.grants = GrantStore(redis, self.keys, retention_seconds=retention_seconds, clock=clock, signer=signer)
        self._create = redis.register_script(scripts.CREATE)
        self._approve = redis.register_script(scripts.APPROVE)
        self._close = redis.register_script(scripts.CLOSE)
        self._claim = redis.register_script(scripts.CLAIM)
        self._heartbeat = redis.register_script(scripts.HEARTBEAT)
        self._finish = redis.register_script(scripts.FINISH)
        self._interrupt = redis.register_script(scripts.INTERRUPT)
        self._set_meta = redis.register_script(scripts.SET_META)
        self._cancel_running = redis.register_script(scripts.CANCEL)
        self._release = redis.register_script(scripts.RELEASE)

    # ---------------------------------------------------------------- creation

    async def propose(
        self, conversation: str, proposals: Sequence[Proposal], policy: ApprovalPolicy, requester: str
    ) -> list[CallRecord]:
        """Record the calls of one assistant turn, all in one script (same conversation, same shard).

        Each becomes ``awaiting_approval`` or, when the policy says so, ``auto_approved`` and enqueued on the
        run stream. A tool tagged ``ai:deny`` is recorded as ``rejected`` (defence in depth: the tools layer
        should never have offered it). Passing the model's ``tool_use_id`` makes a retried propose idempotent.
        """
        now = self._clock()
        shard = self.keys.shard_for_conversation(conversation)
        grants = await self._trusted_grants(conversation) if policy.standing.enabled else []
        items = []
        for p in proposals:
            needs, trigger = policy.decide_trigger(p.tool, p.tags)
            call = new_call(
                call_id=self._new_id(shard, p.tool_use_id),
                conversation=conversation,
                tool=p.tool,
                app=p.app,
                arguments=p.arguments,
                argv=p.argv,
                redact_patterns=self.redact_patterns,
                requester=requester,
                tags=p.tags,
                trigger=trigger,
                approvals_needed=policy.approvals_needed(p.tags),
                tool_use_id=p.tool_use_id,
                now=now,
                expires_at=now + policy.expire_after_seconds,
                binary_digest=p.binary_digest,
                model_hash=p.model_hash,
            )
            argv_hash = call.fields["argv_hash"]
            if self.signer is not None:  # what a click will rely on, sealed by the role that knows it
                call.body["proposal_seal"] = seal_proposal(self.signer, proposal_claims(
                    call_id=call.id, conversation=conversation, tool=p.tool, app=p.app,
                    argv_hash=argv_hash, binary_digest=p.binary_digest, model_hash=p.model_hash,
                    requester=requester, tags=p.tags, approvals_needed=int(call.fields.get("approvals_needed", "1"))))
            if DENY_TAG in p.tags:
                item = _item(call, CallState.rejected, "policy", f"tool tagged {DENY_TAG}", decided=True)
            elif needs and (grant := _grant_for(grants, p, argv_hash, policy, requester)) is not None:
                # the role applying the grant signs the decision, naming the grant and who granted it
                call.fields["signed_decision"] = self._sign(call, [f"grant:{grant.id}", grant.granted_by],
                                                            CallState.auto_approved, now)
                reason = (f"standing approval {grant.id} by {grant.granted_by} until "
                          f"{grant.expires_at:%H:%M:%S} UTC")
                item = _item(call, CallState.auto_approved, f"grant:{grant.id}", reason, decided=True)
                item.update(grant=grant.id, fallback_actor=requester, fallback_reason=trigger)
            elif needs:
                item = _item(call, CallState.awaiting_approval, requester, trigger, decided=False)
            else:
                call.fields["signed_decision"] = self._sign(call, ["policy"], CallState.auto_approved, now)
                item = _item(call, CallState.auto_approved, "policy", trigger, decided=True)
            items.append(item)
        if not items:
            return []
        replies = await self._create(
            keys=[self.keys.run_stream(shard)], args=[*self._common(shard, now), json.dumps(items)]
        )
        return [CallRecord.from_reply(r, item["id"]) for r, item in zip(replies, items, strict=True)]

    async def reject(
        self,
        conversation: str,
        *,
        tool: str,
        arguments: str,
        reason: str,
        requester: str,
        app: str = "",
        argv: Sequence[str] = (),
        tags: Sequence[str] = (),
        tool_use_id: str | None = None,
        actor: str = "agent",
    ) -> CallRecord:
        """Record an invalid proposal (unknown tool, bad arguments) as ``rejected``, never for approval."""
        now = self._clock()
        shard = self.keys.shard_for_conversation(conversation)
        call = new_call(
            call_id=self._new_id(shard, tool_use_id),
            conversation=conversation,
            tool=tool,
            app=app,
            arguments=arguments,
            argv=argv,
            redact_patterns=self.redact_patterns,
            requester=requester,
            tags=tags,
            trigger="rejected",
            approvals_needed=1,
            tool_use_id=tool_use_id,
            now=now,
            expires_at=now,
        )
        item = _item(call, CallState.rejected, actor, reason, decided=True)
        replies = await self._create(
            keys=[self.keys.run_stream(shard)], args=[*self._common(shard, now), json.dumps([item])]
        )
        return CallRecord.from_reply(replies[0], call.id)

    # ---------------------------------------------------------------- reads

    async def find(self, call_id: str) -> CallRecord | None:
        try:
            key = self.keys.call(call_id)
        except ValueError:
            return None
        async with self.redis.pipeline(transaction=False) as pipe:  # one round trip: both keys in one slot
            pipe.hgetall(key)
            pipe.get(self.keys.body(call_id))
            raw, body = await pipe.execute()
        return CallRecord.from_redis(raw, body, call_id) if raw else None

    async def find_many(self, call_ids: Sequence[str]) -> list[CallRecord | None]:
        """``find`` of each call, in one round trip (None: no such call, or an id no key can be made of)."""
        keys: list[str | None] = []
        for call_id in call_ids:
            try:
                keys.append(self.keys.call(call_id))
            except ValueError:
                keys.append(None)
        replies: list[Any] = []
        if any(keys):
            async with self.redis.pipeline(transaction=False) as pipe:
                for call_id, key in zip(call_ids, keys, strict=True):
                    if key is not None:
                        pipe.hgetall(key)
                        pipe.get(self.keys.body(call_id))
                replies = await pipe.execute()
        pairs = iter(zip(replies[0::2], replies[1::2], strict=True))
        records: list[CallRecord | None] = []
        for call_id, key in zip(call_ids, keys, strict=True):
            raw, body = next(pairs) if key is not None else ({}, None)
            records.append(CallRecord.from_redis(raw, body, call_id) if raw else None)
        return records

    async def states(self, call_ids: Sequence[str]) -> list[CallState | None]:
        """The lifecycle state of each call, in one round trip of one-field reads (None: no such call): what a
        caller that only asks "is it over yet?" needs, without building whole records."""
        keys: list[str | None] = []
        for call_id in call_ids:
            try:
                keys.append(self.keys.call(call_id))
            except ValueError:
                keys.append(None)
        replies: list[Any] = []
        if any(keys):
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    if key is not None:
                        pipe.hget(key, "state")
                replies = await pipe.execute()
        answers = iter(replies)
        states: list[CallState | None] = []
        for key in keys:
            raw = next(answers) if key is not None else None
            states.append(CallState(_text(raw)) if raw else None)
        return states

    async def human_decision_wait(self, call_id: str) -> float | None:
        """Seconds from proposal to a human's decision; None for a policy decision, no decision or no call."""
        return (await self.human_decision_waits([call_id]))[0]

    async def human_decision_waits(self, call_ids: Sequence[str]) -> list[float | None]:
        """``human_decision_wait`` of each call, in one round trip (a pipeline of two-field reads, not whole
        records): the runner's metrics loop asks this for every batch of completions."""
        keys: list[str | None] = []
        for call_id in call_ids:
            try:
                keys.append(self.keys.call(call_id))
            except ValueError:
                keys.append(None)
        readable = [k for k in keys if k is not None]
        replies: list[Any] = []
        if readable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in readable:
                    pipe.hmget(key, ["created_at", "decision"])
                replies = await pipe.execute()
        answers = iter(replies)
        return [_decision_wait(*next(answers)) if key is not None else None for key in keys]

    async def get(self, call_id: str) -> CallRecord:
        record = await self.find(call_id)
        if record is None:
            raise CallNotFound(call_id)
        return record

    async def pending(self, conversation: str) -> list[CallRecord]:
        """Calls of a thread awaiting approval, oldest first."""
        return await self._records(await self._conversation_calls(conversation, awaiting_only=True))

    async def open_calls(self, conversation: str) -> list[CallRecord]:
        """Calls of a thread that are not terminal yet (awaiting, approved, running), oldest first."""
        return await self._records(await self._conversation_calls(conversation, awaiting_only=False))

    async def _conversation_calls(self, conversation: str, *, awaiting_only: bool) -> set[str]:
        """Ids from the thread's hash of open calls, and from the sets an earlier version kept them in."""
        shard = self.keys.shard_for_conversation(conversation)
        earlier = self.keys.conv_pending if awaiting_only else self.keys.conv_open
        async with self.redis.pipeline(transaction=False) as pipe:  # one round trip: one slot
            pipe.hgetall(self.keys.conv_calls(shard, conversation))
            pipe.smembers(earlier(shard, conversation))
            calls, before = await pipe.execute()
        ids = {_text(k) for k, v in calls.items() if not awaiting_only or _text(v) == "p"}
        return ids | {_text(i) for i in before}

    # ---------------------------------------------------------------- human decisions

    async def approve(
        self,
        call_id: str,
        user: str,
        groups: Iterable[str],
        policy: ApprovalPolicy,
        argv_hash: str | None = None,
        reason: str = "",
        known: CallRecord | None = None,
        binary_digest: str | None = None,
    ) -> CallRecord:
        """Record ``user``'s approval; the call becomes ``approved`` (and is enqueued) once enough approved.

        With a two-person tag the first approval is recorded (audited as awaiting -> awaiting) and the call
        stays awaiting until a second, distinct approver clicks. ``known``: this call's record as the caller
        already read it (a click handler does), to save a read; only what never changes after proposal
        (requester, tags, argv hash, binary digest) is relied on: the script re-checks state and expiry, and
        answers ``resign`` when the approvers so far differ from the copy's.
        """
        record = await self._immutable_view(call_id, known)
        if argv_hash is not None and argv_hash != record.argv_hash:
            raise ArgvMismatch(f"call {call_id}: the approved command line differs from the stored one")
        if binary_digest is not None and binary_digest != record.binary_digest:
            raise ArgvMismatch(f"call {call_id}: the binary digest on the card differs from the stored one")
        if self.signer is not None:  # a record rewritten in Redis does not choose who approves or how many
            check_sealed(self.signer, record)
        policy.check_approver(record, user, groups)
        now = self._clock()
        shard = self.keys.shard_of_call(call_id)
        signed_for = [a.user for a in record.approvals] + [user]
        for _ in range(3):
            # The token is signed for the approvers this click completes; if another click landed in between,
            # the script answers with the real list and the decision is signed again for it.
            seal = seal_approval(self.signer, record, user) if self.signer is not None else ""
            if self.signer is None:
                approvers, token = "*", ""
            elif len(signed_for) >= max(record.approvals_needed, policy.approvals_needed(record)):
                approvers, token = "\n".join(signed_for), self._sign_record(record, signed_for, now)
            else:
                approvers, token = "", ""
            reply, ack = await self.durable.run(
                self._approve,
                [self.keys.call(call_id)],
                [
                    *self._common(shard, now),
                    call_id,
                    user,
                    record.argv_hash,
                    policy.approvals_needed(record),
                    reason or f"approved by {user}",
                    approvers,
                    token,
                    seal,
                ],
            )
            if _text(reply[0]) != "resign":
                break
            # another click landed in between: the approvers so far come from a fresh read, each one's seal
            # checked (the list in the reply is Redis's word, not the bot's)
            record = await self.get(call_id)
            if self.signer is not None:
                check_sealed(self.signer, record)
            signed_for = [a.user for a in record.approvals] + [user]
        else:
            raise InvalidTransition("awaiting_approval")
        status = _text(reply[0])
        if status in ("ok", "repeat", "already"):
            _require(ack, "approval", call_id)  # the approval is on the primary; a repeat click confirms it
        if status == "repeat":  # this user's approval took effect earlier (and is now confirmed)
            raise AlreadyApproved(user, CallRecord.from_reply(reply[1], call_id).state.value)
        result = _unwrap(reply, call_id)
        log.info("call %s (%s): approval by %s, now %s", call_id, result.tool, user, result.state,
                 extra={"call_id": call_id, "conversation": result.conversation, "user": user})
        return result

    async def deny(
        self, call_id: str, user: str, groups: Iterable[str], policy: ApprovalPolicy, reason: str = "",
        known: CallRecord | None = None,
    ) -> CallRecord:
        """Deny an awaiting call. Approvers may deny; so may the requester (withdrawing one's own call).
        ``known`` as for ``approve``."""
        record = await self._immutable_view(call_id, known)
        if user != record.requester:
            policy.check_approver(record, user, groups)
        result = await self._close_call(
            call_id, user, reason or f"denied by {user}", "awaiting_approval", CallState.denied, "live",
            durable="denial",
        )
        log.info("call %s (%s): denied by %s", call_id, result.tool, user,
                 extra={"call_id": call_id, "conversation": result.conversation, "user": user})
        return result

    async def cancel(self, call_id: str, actor: str, reason: str = "") -> CallRecord:
        """Close a call that has not started (awaiting, approved, auto_approved) as ``denied``.

        Used when the user stops the conversation; an approved call that is cancelled before a runner claims
        it never runs (the claim script refuses a denied call).
        """
        return await self._close_call(
            call_id, actor, reason or "cancelled", _CLOSABLE_BY_CANCEL, CallState.denied, "any", durable="cancel"
        )

    async def request_cancel(
        self, call_id: str, user: str, groups: Iterable[str], policy: ApprovalPolicy, reason: str = ""
    ) -> CallRecord:
        """A human asks to stop a call that was approved: allowed to its requester and to anyone who may
        approve it. Not started yet -> ``cancelled`` at once (it never runs); running -> the request is
        recorded (``record.cancel``) and the owning runner stops the process group, then reports ``cancelled``
        (or the state the call reached on its own first). Anything else raises ``InvalidTransition`` with the
        state the call got to first, so the front end can say truthfully what happened."""
        record = await self.get(call_id)
        if user != record.requester:
            policy.check_approver(record, user, groups)
        now = self._clock()
        reply = await self._cancel_running(
            keys=[self.keys.call(call_id)],
            args=[*self._common(self.keys.shard_of_call(call_id), now), call_id, user,
                  reason or f"cancelled by {user}"],
        )
        if _text(reply[0]) == "already":
            raise AlreadyCancelling(_text(reply[1]))
        result = _unwrap(reply, call_id)
        log.info("call %s (%s): stop requested by %s, now %s", call_id, result.tool, user, result.state,
                 extra={"call_id": call_id, "conversation": result.conversation, "user": user})
        return result

    async def expire_due(self, now: datetime | None = None) -> list[CallRecord]:
        """Sweeper: close every awaiting call whose ``expires_at`` has passed as ``expired``."""
        moment = to_epoch(now) if now is not None else self._clock()
        closed = []
        for shard in self.keys.all_shards():
            due = await self.redis.zrangebyscore(self.keys.awaiting(shard), "-inf", moment)
            for raw_id in due:
                call_id = _text(raw_id)
                try:
                    closed.append(
                        await self._close_call(
                            call_id, "sweeper", "approval window elapsed", "awaiting_approval",
                            CallState.expired, "due", now=moment,
                        )
                    )
                except (InvalidTransition, CallNotFound):
                    await self.redis.zrem(self.keys.awaiting(shard), call_id)
        return closed

    # ---------------------------------------------------------------- runner side

    async def claim(
        self, call_id: str, runner_id: str, heartbeat_ttl: float | None = None
    ) -> CallRecord | None:
        """approved/auto_approved -> running for ``runner_id``, atomically; None if someone else has it,
        it was cancelled, or it is already past that point. The heartbeat key is set in the same script.

        Raises ``NotDurable`` when no replica acknowledged the claim in time: the claim has then been given back
        (the call is approved again, nothing started) and the caller must not run it now."""
        now = self._clock()
        ttl_ms = int((heartbeat_ttl or self.heartbeat_ttl) * 1000)
        keys = [self.keys.call(call_id), self.keys.heartbeat(call_id)]
        common = self._common(self.keys.shard_of_call(call_id), now)
        reply, ack = await self.durable.run(self._claim, keys, [*common, call_id, runner_id, ttl_ms])
        try:
            record = _unwrap(reply, call_id)
        except (InvalidTransition, CallNotFound):
            return None
        if not ack.durable:
            reason = (f"claim not acknowledged by a replica within {ack.timeout_ms} ms; given back before it "
                      "started")
            try:
                await self._release(keys=keys, args=[*common, call_id, runner_id, _text(reply[2]), reason])
            except Exception:  # noqa: BLE001 (left running unstarted: its heartbeat lapses, it is interrupted)
                log.exception("call %s: giving back a claim no replica acknowledged failed", call_id)
            _require(ack, "claim", call_id)
        return record

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
        record = _unwrap(reply, call_id)  # "repeat": this runner's result was stored already; now confirmed
        _require(ack, "result", call_id)
        return record

    async def record_result(
        self, call_id: str, runner_id: str, result: dict[str, Any], run_entry: tuple[str, str] | None = None
    ) -> None:
        """``finish`` for a caller that does not use the record (the runner worker): the script's answer is
        checked (same exceptions) and carries no record. ``run_entry`` (consumer group, entry id): the run stream
        entry that brought the call, acknowledged by the same script as soon as it runs, whatever it answers."""
        reply, ack = await self._store_result(call_id, runner_id, result, run_entry or ("", ""), lean=True)
        _check(reply, call_id)
        _require(ack, "result", call_id)

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
        return _unwrap(reply, call_id)

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
        args: list[str] = []
        for k, v in meta.items():
            args += [f"meta:{k}", v]
        if not await self._set_meta(keys=[self.keys.call(call_id)], args=args):
            raise CallNotFound(call_id)

    # ---------------------------------------------------------------- helpers

    async def _trusted_grants(self, conversation: str) -> list[Grant]:
        """The thread's active grants that a deciding role signed, as signed (see ``Grant.trusted``)."""
        if self.signer is None:
            return []
        now = self._clock()
        trusted = []
        for grant in await self.grants.active(conversation):
            checked = grant.trusted(self.signer.public_key, conversation)
            if checked is None:
                log.warning("standing approval %s in %s is not signed for; ignored", grant.id, conversation)
            elif checked.active(now):
                trusted.append(checked)
        return trusted

    def _sign(self, call: NewCall, approvers: Sequence[str], verdict: CallState, now: float) -> str:
        if self.signer is None:
            return ""
        return self.signer.sign(
            call_id=call.id, tool=call.fields["tool"], app=call.fields["app"], argv_hash=call.fields["argv_hash"],
            binary_digest=call.body.get("binary_digest", ""), model_hash=call.body.get("model_hash", ""),
            approvers=approvers, verdict=verdict.value, now=now,
        )

    def _sign_record(self, record: CallRecord, approvers: Sequence[str], now: float) -> str:
        assert self.signer is not None
        return self.signer.sign(
            call_id=record.id, tool=record.tool, app=record.app, argv_hash=record.argv_hash,
            binary_digest=record.binary_digest, model_hash=record.model_hash, approvers=approvers,
            verdict=CallState.approved.value, now=now,
        )

    async def _immutable_view(self, call_id: str, known: CallRecord | None) -> CallRecord:
        """A record to take the fixed fields from: the caller's copy of this call, else read now."""
        if known is not None and known.id == call_id:
            return known
        return await self.get(call_id)

    async def _close_call(
        self,
        call_id: str,
        actor: str,
        reason: str,
        allowed: str,
        target: CallState,
        mode: str,
        now: float | None = None,
        durable: str | None = None,
    ) -> CallRecord:
        """``durable``: a decision a person is told about ("denial", "cancel"), so it waits for the replicas as
        approve does. A denial no replica acknowledged raises ``NotDurable`` (carrying the record: it IS denied on
        the primary) so the denier is told a failover could still undo it; a cancel is counted and logged (its
        callers tell nobody more than "stopped"). Lost in a failover, either leaves the call awaiting (nothing
        runs without an approval; the sweeper expires it) or approved-not-run for a cancel of an approved call."""
        try:
            key = self.keys.call(call_id)
        except ValueError as exc:
            raise CallNotFound(call_id) from exc
        moment = self._clock() if now is None else now
        keys = [key]
        args = [*self._common(self.keys.shard_of_call(call_id), moment), call_id, actor, reason, allowed,
                target.value, mode]
        if durable is None:
            return _unwrap(await self._close(keys=keys, args=args), call_id)
        reply, ack = await self.durable.run(self._close, keys, args)
        result = _unwrap(reply, call_id)
        if not ack.durable:
            UNCONFIRMED_WRITES.labels(durable).inc()
            log.warning("call %s: %s by %s is on the Redis primary only (%d of %d replicas within %d ms)", call_id,
                        durable, actor, ack.acked, ack.wanted, ack.timeout_ms, extra={"call_id": call_id})
            if durable == "denial":
                raise NotDurable(durable, call_id, ack.wanted, ack.acked, ack.timeout_ms, record=result)
        return result

    def _common(self, shard: int, now: float) -> list[str]:
        min_ms = max(0, int((now - self.retention_seconds) * 1000))
        return [self.keys.base(shard), epoch_text(now), str(int(self.retention_seconds)), f"{min_ms}-0"]

    def _new_id(self, shard: int, tool_use_id: str | None) -> str:
        return f"{shard}-{tool_use_id or uuid.uuid4().hex}"

    async def _records(self, raw_ids: Iterable[Any]) -> list[CallRecord]:
        records = []
        for raw_id in raw_ids:
            record = await self.find(_text(raw_id))
            if record is not None:
                records.append(record)
        return sorted(records, key=lambda r: (r.created_at, r.id))


def _item(call: NewCall, target: CallState, actor: str, reason: str, *, decided: bool) -> dict[str, Any]:
    return {"id": call.id, "fields": call.fields, "body": call.body_json(), "target": target.value, "actor": actor,
            "reason": reason, "decided": decided}



def _grant_for(grants: Sequence[Grant], proposal: Proposal, argv_hash: str, policy: ApprovalPolicy,
               requester: str) -> Grant | None:
    """The thread's standing approval that covers this proposal, if the policy lets one apply to it. A grant
    stands in for its granter's click, so it never approves the granter's own request unless self-approval
    is explicitly allowed (``forbid_self_approval: false``; unset counts as forbidden: grants are made in
    Slack, where self-approval is forbidden by default)."""
    if policy.approvals_needed(proposal.tags) > 1 or policy.standing_refusal(proposal.tags) is not None:
        return None
    self_ok = policy.forbid_self_approval is False
    return next((g for g in grants if g.covers(proposal.tool, argv_hash, proposal.tags, proposal.binary_digest)
                 and (self_ok or g.granted_by != requester)), None)


def _require(ack: Acknowledgement, what: str, call_id: str) -> None:
    if not ack.durable:
        UNCONFIRMED_WRITES.labels(what).inc()
        raise NotDurable(what, call_id, ack.wanted, ack.acked, ack.timeout_ms)


def _decision_wait(created: Any, decision: Any) -> float | None:
    """Seconds from ``created_at`` to the decision's time, when a human (not the policy) decided."""
    if not created or not decision:
        return None
    try:  # a malformed record (Redis writer) must not end the runner whose metrics loop asks this
        data = json.loads(decision)
        if data.get("actor") == "policy":
            return None
        return max(0.0, float(data["at"]) - float(created))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _unwrap(reply: Any, call_id: str) -> CallRecord:
    """Map a script's status reply to a record or to the matching exception."""
    _check(reply, call_id)
    return CallRecord.from_reply(reply[1], call_id)


def _check(reply: Any, call_id: str) -> None:
    """Raise the exception matching a script's status reply; return when the script did what was asked."""
    status = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
    if status in ("ok", "repeat"):
        return
    if status == "not_found":
        raise CallNotFound(call_id)
    if status == "invalid":
        state = reply[1].decode() if isinstance(reply[1], bytes) else reply[1]
        raise InvalidTransition(state)
    if status == "already":
        user = reply[1].decode() if isinstance(reply[1], bytes) else reply[1]
        raise AlreadyApproved(user)
    if status == "argv_mismatch":
        raise ArgvMismatch(f"call {call_id}: the approved command line differs from the stored one")
    raise RuntimeError(f"unexpected script reply {reply!r}")


__all__ = ["CallStore"]
