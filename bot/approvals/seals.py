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


def seal_approval(signer: DecisionSigner, record: CallRecord, user: str) -> str:
    return signer.sign_statement("approval", approval_claims(record, user))


def check_sealed(signer: DecisionSigner, record: CallRecord) -> None:
    """Raise ``TamperedRecord`` unless the record's proposal fields and earlier approvals are as sealed."""
    key = signer.public_key
    sealed = verified_statement("proposal", record.proposal_seal, key) if record.proposal_seal else None
    if sealed is None:
        raise TamperedRecord(f"call {record.id}: no valid proposal seal; the record was not written by the bot")
    if sealed != _claims_of(record):
        changed = sorted(k for k, v in _claims_of(record).items() if sealed.get(k) != v)
        raise TamperedRecord(f"call {record.id}: {', '.join(changed)} changed since the proposal")
    for approval in record.approvals:
        got = verified_statement("approval", approval.seal, key) if approval.seal else None
        if got != approval_claims(record, approval.user):
            raise TamperedRecord(f"call {record.id}: approval by {approval.user} was not recorded by the bot")
