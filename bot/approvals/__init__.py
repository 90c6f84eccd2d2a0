"""The tool-call lifecycle in Redis: approval policy, atomic transitions, audit trail, runner worker, events.

Knows nothing about Slack or the Anthropic API (see DESIGN.md). Public names are re-exported here.
"""

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

__all__ = [
    "AlreadyApproved", "ApprovalError", "ApprovalPolicy", "ApproverSet", "ArgvMismatch", "AuditEntry",
    "AutoApprove", "CallNotFound", "CallRecord", "CallState", "CallStore", "CompletionConsumer",
    "CompletionEvent", "Executor", "InvalidTransition", "Keys", "NotAuthorized", "PolicyError", "Proposal",
    "RunnerWorker", "TERMINAL_STATES", "format_audit_table", "hash_argv", "read_audit", "wait_for_terminal",
]
