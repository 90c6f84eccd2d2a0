"""Seals: what the deciding role relies on when a human clicks, signed when it was decided, not read from Redis.

A signed decision (``decisions.py``) binds the runner to a call, tool and command line. But the role that signs
it on a click reads the call record from Redis to decide *whether* to sign: who asked (self-approval), the tags
(per-tag approvers, two-person rule), how many approvals it needs, which approvals were given before, which
tool of which application it is. Anyone who can write Redis could otherwise rewrite those fields and have a
genuine key sign for them. So the role that proposes the call seals those fields (a ``proposal`` statement)
and each partial approval of a two-person call is sealed by the role that recorded it (an ``approval``
statement); a click checks both before it signs anything, and refuses a record that does not match.

Both statements use ``DecisionSigner.sign_statement``: their own signing domains, so neither passes as a
decision, nor a decision as one of them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.approvals.decisions import DecisionSigner, verified_statement
from bot.approvals.errors import TamperedRecord
from bot.approvals.records import CallRecord


def proposal_claims(
    *, call_id: str, conversation: str, tool: str, app: str, argv_hash: str, binary_digest: str,
    model_hash: str, requester: str, tags: Sequence[str], approvals_needed: int,
) -> dict[str, str]:
    """The fields of a call that decide who may approve it and what it is (all strings, one spelling)."""
    return {
        "call": call_id, "conversation": conversation, "tool": tool, "app": app, "argv_hash": argv_hash,
        "binary_digest": binary_digest, "model_hash": model_hash, "requester": requester,
        "tags": json.dumps(list(tags)), "approvals_needed": str(int(approvals_needed)),
    }


def _claims_of(record: CallRecord) -> dict[str, str]:
    return proposal_claims(
        call_id=record.id, conversation=record.conversation, tool=record.tool, app=record.app,
        argv_hash=record.argv_hash, binary_digest=record.binary_digest, model_hash=record.model_hash,
        requester=record.requester, tags=record.tool_tags, approvals_needed=record.approvals_needed,
    )


def approval_claims(record: CallRecord, user: str) -> dict[str, str]:
    return {"call": record.id, "user": user, "argv_hash": record.argv_hash}


def seal_proposal(signer: DecisionSigner, claims: dict[str, str]) -> str:
    """The proposing role's seal: the signature alone (the claims are the record's own fields, rebuilt when
    checked)."""
    return signer.sign_detached("proposal", claims)


def seal_approval(signer: DecisionSigner, record: CallRecord, user: str) -> str:
    return signer.sign_detached("approval", approval_claims(record, user))


def _sealed(kind: str, seal: str, claims: dict[str, str], signer: DecisionSigner) -> bool:
    """Does ``seal`` cover exactly ``claims``? A seal written before seals were detached carries its claims
    (``<claims>.<signature>``) and is compared with them."""
    if not seal:
        return False
    if "." in seal:
        return verified_statement(kind, seal, signer.public_key) == claims
    return signer.made_detached(kind, seal, claims)


def check_sealed(signer: DecisionSigner, record: CallRecord) -> None:
    """Raise ``TamperedRecord`` unless the record's proposal fields and earlier approvals are as sealed."""
    if not record.proposal_seal:
        raise TamperedRecord(f"call {record.id}: no valid proposal seal; the record was not written by the bot")
    if not _sealed("proposal", record.proposal_seal, _claims_of(record), signer):
        raise TamperedRecord(f"call {record.id}: the fields a click relies on (requester, tool, app, tags, approvals"
                             " needed, command line and binary digests) differ from what the bot proposed")
    for approval in record.approvals:
        if not _sealed("approval", approval.seal, approval_claims(record, approval.user), signer):
            raise TamperedRecord(f"call {record.id}: approval by {approval.user} was not recorded by the bot")
