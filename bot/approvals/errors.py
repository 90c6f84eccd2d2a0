"""Exceptions of the approval lifecycle.

Each refusal has its own class so a front end can answer precisely ("this card has expired", "you may not
approve your own call") without parsing messages, and so tests can assert exactly which guard fired.
"""

from __future__ import annotations

from typing import Any


class ApprovalError(Exception):
    """Base class of every refusal raised by ``bot.approvals``."""


class CallNotFound(ApprovalError):
    """No call with that id exists (never existed, or its record expired after the retention period)."""

    def __init__(self, call_id: str) -> None:
        super().__init__(f"no call {call_id!r}")
        self.call_id = call_id


class InvalidTransition(ApprovalError):
    """The call is not in a state that allows the requested transition (double click, expired card...)."""

    def __init__(self, current_state: str, message: str = "") -> None:
        super().__init__(message or f"not allowed while the call is {current_state}")
        self.current_state = current_state


class AlreadyApproved(InvalidTransition):
    """The same user approved this call already: a second person is needed for a two-person call still
    awaiting (``current_state`` awaiting_approval), or the approval took effect and the call is now
    ``current_state``. Raised only once that earlier approval is as durable as the store asks (a repeated click
    is how a user confirms an approval no replica had acknowledged)."""

    def __init__(self, user: str, current_state: str = "awaiting_approval") -> None:
        super().__init__(current_state, f"{user} has already approved this call")
        self.user = user


class AlreadyCancelling(InvalidTransition):
    """Someone already asked to stop this running call; the runner is stopping it."""

    def __init__(self, user: str) -> None:
        super().__init__("running", f"{user} has already asked to stop this call")
        self.user = user


class NotDurable(ApprovalError):
    """The transition is written on the Redis primary, but fewer replicas than asked acknowledged it within the
    timeout (``redis.durability``): a failover now could lose it. Repeating the same action is safe (approve and
    finish recognise their repeat, a claim was given back before anything started) and confirms it."""

    def __init__(self, what: str, call_id: str, wanted: int, acked: int, timeout_ms: int,
                 record: Any = None) -> None:
        super().__init__(f"{what} of call {call_id} is on the primary only: {acked} of {wanted} replica(s) "
                         f"acknowledged it within {timeout_ms} ms")
        self.record = record  # the record as written on the primary, where the caller has nothing else to show
        self.what = what
        self.call_id = call_id
        self.wanted = wanted
        self.acked = acked
        self.timeout_ms = timeout_ms


class NotAuthorized(ApprovalError):
    """The user may not approve (or deny) this call under the configured policy."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ArgvMismatch(ApprovalError):
    """The click was bound to a different argv than the one stored: the card is stale or forged."""


class TamperedRecord(ArgvMismatch):
    """What the call record says about who may approve it (tool, requester, tags, approvals needed, earlier
    approvals) is not what the deciding role sealed at proposal: someone wrote Redis. Nothing is signed."""


class PolicyError(ValueError):
    """The approval policy in the configuration is invalid (e.g. a regex that does not compile)."""
