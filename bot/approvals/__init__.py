"""The tool-call lifecycle in Redis: approval policy, atomic transitions, audit trail, runner worker, events.

Knows nothing about Slack or the Anthropic API (see DESIGN.md). Public names are re-exported here, imported on
first use: importing one module of this package (the runner imports the store and the worker) must not import
the approval policy and the audit reader, pydantic models a runner process never needs (README, runner RSS).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.approvals.audit import AuditEntry, format_audit_table, read_audit
    from bot.approvals.errors import (
        AlreadyApproved,
        ApprovalError,
        ArgvMismatch,
        CallNotFound,
        InvalidTransition,
        NotAuthorized,
        PolicyError,
    )
    from bot.approvals.events import CompletionConsumer, CompletionEvent, wait_for_terminal
    from bot.approvals.keys import Keys
    from bot.approvals.policy import ApprovalPolicy, ApproverSet, AutoApprove
    from bot.approvals.records import TERMINAL_STATES, CallRecord, CallState, Proposal, hash_argv
    from bot.approvals.store import CallStore
    from bot.approvals.worker import Executor, RunnerWorker

#: public name -> the module that defines it
_HOMES = {
    "AuditEntry": "audit", "format_audit_table": "audit", "read_audit": "audit",
    "AlreadyApproved": "errors", "ApprovalError": "errors", "ArgvMismatch": "errors", "CallNotFound": "errors",
    "InvalidTransition": "errors", "NotAuthorized": "errors", "PolicyError": "errors",
    "CompletionConsumer": "events", "CompletionEvent": "events", "wait_for_terminal": "events",
    "Keys": "keys",
    "ApprovalPolicy": "policy", "ApproverSet": "policy", "AutoApprove": "policy",
    "TERMINAL_STATES": "records", "CallRecord": "records", "CallState": "records", "Proposal": "records",
    "hash_argv": "records",
    "CallStore": "store",
    "Executor": "worker", "RunnerWorker": "worker",
}

__all__ = [
    "AlreadyApproved", "ApprovalError", "ApprovalPolicy", "ApproverSet", "ArgvMismatch", "AuditEntry",
    "AutoApprove", "CallNotFound", "CallRecord", "CallState", "CallStore", "CompletionConsumer",
    "CompletionEvent", "Executor", "InvalidTransition", "Keys", "NotAuthorized", "PolicyError", "Proposal",
    "RunnerWorker", "TERMINAL_STATES", "format_audit_table", "hash_argv", "read_audit", "wait_for_terminal",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
