"""One human sentence per lifecycle state, shared by every front end (Slack cards, the console).

An on-call engineer reads these at 3 a.m.: each says what happened, who did it and what to do next (above all
``interrupted``: the outcome is unknown and someone must check by hand). Front ends pass ``who`` and ``when``
to format users and times their way (Slack mentions and date tokens, plain text in a terminal); the sentence
itself is plain text, so a front end that needs escaping escapes the parts it formats and the record's own
free text (``describe`` marks those with ``quote``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.approvals.records import CallRecord, CallState

Who = Callable[[str], str]
When = Callable[[datetime], str]
Quote = Callable[[str], str]


def _plain_when(moment: datetime) -> str:
    return moment.strftime("%H:%M:%S UTC")


def _seconds(result: dict[str, object]) -> str:
    try:
        return f"{float(result.get('duration_seconds') or 0):.1f}s"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "?s"


def approval_line(record: CallRecord, who: Who = str, when: When = _plain_when, quote: Quote = str) -> str:
    """Who let the call run ("Approved by bob at ...", "Approved automatically (rule)"), or "" if nobody did."""
    if record.approvals and (len(record.approvals) >= record.approvals_needed or not record.state.terminal):
        if record.state == CallState.awaiting_approval:
            return "Approved so far by " + ", ".join(who(a.user) for a in record.approvals)
        return "Approved by " + ", ".join(f"{who(a.user)} {when(a.at)}" for a in record.approvals)
    decision = record.decision
    if decision is not None and decision.actor.startswith("grant:"):
        return f"Approved automatically ({quote(decision.reason)})"
    if decision is not None and decision.actor == "policy" and record.state != CallState.rejected:
        return f"Approved automatically ({quote(decision.reason)})" if decision.reason else "Approved automatically"
    return ""


def state_sentence(record: CallRecord, who: Who = str, when: When = _plain_when, quote: Quote = str) -> str:
    """What the call is doing or how it ended, as one or two sentences."""
    state, result, decision = record.state, record.result or {}, record.decision
    if state == CallState.awaiting_approval:
        more = " (another approver is needed)" if record.approvals else ""
        return f"Waiting for approval until {when(record.expires_at)}{more}."
    if state in (CallState.approved, CallState.auto_approved):
        return "Waiting for a runner to start it."
    if state == CallState.running:
        since = when(record.started_at) if record.started_at else "a moment ago"
        text = f"Running since {since} on runner {quote(record.runner or '?')}."
        if record.cancel is not None:
            text += f" Stop requested by {who(record.cancel.actor)} {when(record.cancel.at)}: stopping it."
        return text
    if state == CallState.finished:
        code = result.get("exit_code")
        if code == 0:
            return f"Finished: exit code 0 after {_seconds(result)}."
        if isinstance(code, int) and code < 0:
            return f"Ended by signal {-code} after {_seconds(result)}."
        return f"Finished with exit code {code} (the command reported a failure) after {_seconds(result)}."
    if state == CallState.timed_out:
        return f"Timed out after {_seconds(result)} and was killed."
    if state == CallState.failed_to_start:
        return f"Could not start: {quote(str(result.get('error') or 'unknown reason'))}. Nothing ran."
    if state == CallState.interrupted:
        why = str(result.get("error") or (decision.reason if decision else "") or "its runner stopped")
        return f"Interrupted: outcome unknown, check by hand. It was not re-run ({quote(why)})."
    if state == CallState.cancelled:
        who_when = f"{who(record.cancel.actor)} {when(record.cancel.at)}" if record.cancel else "an operator"
        if record.started_at is None:
            return f"Cancelled by {who_when} before it started; it never ran."
        return (f"Cancelled by {who_when}: stopped with {quote(str(result.get('stopped_by') or 'a signal'))}"
                f" after {_seconds(result)}; it may have done part of its work.")
    if state == CallState.denied:
        by = f"{who(decision.actor)} {when(decision.at)}" if decision else "an operator"
        reason = own_reason(record)
        return f"Denied by {by}" + (f": “{quote(reason)}”" if reason else "") + ". It did not run."
    if state == CallState.expired:
        return f"Expired: nobody approved it before {when(record.expires_at)}. It did not run."
    if state == CallState.refused:
        why = str(result.get("error") or (decision.reason if decision else "") or "its approval did not verify")
        return f"Refused by the runner: {quote(why)}. Nothing ran."
    if state == CallState.rejected:
        return f"Rejected: {quote(decision.reason if decision else 'not allowed')}. It did not run."
    return f"{state.value.replace('_', ' ').capitalize()}."


def own_reason(record: CallRecord) -> str:
    """The reason a person typed when denying (not the default "denied by <user>" text)."""
    decision = record.decision
    if decision is None:
        return ""
    reason = decision.reason.strip()
    return "" if reason in ("", f"denied by {decision.actor}") else reason
