"""Human decisions on a call: approve (one or two people), deny, cancel, a stop request, and expiry.

Who may decide is checked here in Python against the policy and the proposal's seal; the scripts re-check
everything that can race (state, argv hash, who already approved, expiry). An approval completing the
required count is signed here for exactly the approvers it completes. Approve, deny and cancel wait for a
replica's acknowledgement (see ``store.py``), so what a person is told survives a failover.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from bot.approvals.errors import AlreadyApproved, AlreadyCancelling, ArgvMismatch, CallNotFound, InvalidTransition
from bot.approvals.records import CallRecord, CallState, to_epoch
from bot.approvals.replies import require_acknowledged, unwrap_reply
from bot.approvals.seals import check_sealed, seal_approval
from bot.approvals.store_base import StoreBase, log
from bot.streams import text as _text

if TYPE_CHECKING:  # a runner decides nothing and imports no policy (a pydantic model)
    from bot.approvals.policy import ApprovalPolicy

_CLOSABLE_BY_CANCEL = "awaiting_approval,approved,auto_approved"


class HumanDecisions(StoreBase):
    """The transitions a person (or the expiry sweeper standing in for the clock) causes before a call runs."""

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
            require_acknowledged(ack, "approval", call_id)  # the approval is on the primary; a repeat click confirms it
        if status == "repeat":  # this user's approval took effect earlier (and is now confirmed)
            raise AlreadyApproved(user, CallRecord.from_reply(reply[1], call_id).state.value)
        result = unwrap_reply(reply, call_id)
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
        result = unwrap_reply(reply, call_id)
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

    def _sign_record(self, record: CallRecord, approvers: Sequence[str], now: float) -> str:
        assert self.signer is not None
        return self.signer.sign(
            call_id=record.id, tool=record.tool, app=record.app, argv_hash=record.argv_hash,
            binary_digest=record.binary_digest, model_hash=record.model_hash, approvers=approvers,
            verdict=CallState.approved.value, now=now,
        )
