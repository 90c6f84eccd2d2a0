"""Exceptions of the approval lifecycle.

Each refusal has its own class so a front end can answer precisely ("this card has expired", "you may not
approve your own call") without parsing messages, and so tests can assert exactly which guard fired.
"""

from __future__ import annotations


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
    """The same user approved this call already; a second person is needed for a two-person call."""

    def __init__(self, user: str) -> None:
        super().__init__("awaiting_approval", f"{user} has already approved this call")
        self.user = user


class AlreadyCancelling(InvalidTransition):
    """Someone already asked to stop this running call; the runner is stopping it."""

    def __init__(self, user: str) -> None:
        super().__init__("running", f"{user} has already asked to stop this call")
        self.user = user


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
