"""Creating calls: one assistant turn's proposals recorded at once, or an invalid one recorded as rejected.

Here the policy decides, per proposal, whether a human must approve (``awaiting_approval``) or the call may
run at once (``auto_approved`` by the policy or a standing approval); such a decision is signed here, by the
deciding role that makes it, and a proposal is sealed so a later click can rely on what it shows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.approvals.grants import Grant
from bot.approvals.records import CallRecord, CallState, NewCall, Proposal, new_call
from bot.approvals.seals import proposal_claims, seal_proposal
from bot.approvals.store_base import StoreBase, log
from bot.tools.selection import DENY_TAG

if TYPE_CHECKING:  # the runner's store never proposes: a runner imports no policy (a pydantic model)
    from bot.approvals.policy import ApprovalPolicy


class CallCreation(StoreBase):
    """``propose`` and ``reject``: how a call comes into the lifecycle."""

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
