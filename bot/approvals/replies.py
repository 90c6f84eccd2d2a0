"""What a lifecycle script's reply means: the record it returns, or the exception its status names.

Every transition script (``scripts.py``) answers ``{status, record-or-detail}``; all parts of the store map that
reply the same way, so the mapping lives here once. ``require_acknowledged`` is the durable-write counterpart:
a write the replicas did not acknowledge in time is counted and raised as ``NotDurable``.
"""

from __future__ import annotations

from typing import Any

from bot.approvals.errors import AlreadyApproved, ArgvMismatch, CallNotFound, InvalidTransition, NotDurable
from bot.approvals.records import CallRecord
from bot.metrics import UNCONFIRMED_WRITES
from bot.redis_durable import Acknowledgement


def require_acknowledged(ack: Acknowledgement, what: str, call_id: str) -> None:
    """Raise ``NotDurable`` (and count it) when no replica acknowledged the write ``what`` in time."""
    if not ack.durable:
        UNCONFIRMED_WRITES.labels(what).inc()
        raise NotDurable(what, call_id, ack.wanted, ack.acked, ack.timeout_ms)

def unwrap_reply(reply: Any, call_id: str) -> CallRecord:
    """Map a script's status reply to a record or to the matching exception."""
    check_reply(reply, call_id)
    return CallRecord.from_reply(reply[1], call_id)


def check_reply(reply: Any, call_id: str) -> None:
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
