"""tool_result blocks from terminal call records (what the model reads after a call ends).

A denial or expiry is a NORMAL (non-error) result that tells the model the operator refused and that it must
not retry or work around it (DESIGN.md): marking it an error invites the model to "fix" and retry.
"""

from __future__ import annotations

from typing import Any

from bot.approvals.describe import own_reason
from bot.approvals.records import CallRecord, CallState

REFUSED = (
    "The operator refused this call ({how}). Do not retry it and do not try to work around it with other"
    " tools or arguments; tell the user what you wanted to run and why, and ask how to proceed."
)


def _their_reason(record: CallRecord) -> str:
    """The denier's own words, when they gave any (the default reason is just "denied by <user>")."""
    reason = own_reason(record)
    return f" Their reason, in their words: {reason}" if reason else ""


def result_block(tool_use_id: str, content: str, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def _withheld(result: dict[str, Any]) -> list[str]:
    """The line that says why every line of the output is a marker (the argv asked for a secret's value)."""
    return [f"(output withheld: {result['output_withheld']})"] if result.get("output_withheld") else []


def record_result(tool_use_id: str, record: CallRecord | None) -> dict[str, Any]:
    """The tool_result of one terminal call."""
    if record is None:
        return result_block(tool_use_id, "The call record is gone (expired); its outcome is unknown.", True)
    reason = record.decision.reason if record.decision else ""
    result = record.result or {}
    state = record.state
    if state == CallState.finished:
        lines = [f"exit code: {result.get('exit_code')}"]
        if result.get("truncated"):
            lines.append(f"(output truncated: {result.get('total_bytes')} bytes in total, head and tail kept)")
        lines += _withheld(result)
        output = result.get("output") or ""
        lines.append("output:\n" + output if output else "output: (none)")
        return result_block(tool_use_id, "\n".join(lines))
    if state == CallState.denied:
        who = record.decision.actor if record.decision else "operator"
        return result_block(tool_use_id, REFUSED.format(how=f"denied by {who}") + _their_reason(record))
    if state == CallState.expired:
        return result_block(tool_use_id, REFUSED.format(how="nobody approved it before the approval expired"))
    if state == CallState.timed_out:
        output = result.get("output") or ""
        return result_block(tool_use_id, "\n".join(["The command timed out and was killed.", *_withheld(result)])
                            + (f" Partial output:\n{output}" if output else ""))
    if state == CallState.failed_to_start:
        return result_block(tool_use_id, f"The command failed to start: {result.get('error') or 'unknown error'}")
    if state == CallState.interrupted:
        return result_block(tool_use_id, "The call was interrupted (its runner stopped); the outcome is unknown"
                            f" and it was not re-run. {result.get('error') or reason}".strip())
    if state == CallState.refused:
        return result_block(tool_use_id, "The runner refused to run this call (its approval or its binary did"
                            f" not verify), so nothing ran: {result.get('error') or reason}. Do not retry it.",
                            True)
    if state == CallState.cancelled:
        who = record.cancel.actor if record.cancel else "an operator"
        output = result.get("output") or ""
        if record.started_at is None:
            return result_block(tool_use_id, REFUSED.format(how=f"{who} cancelled it before it started; it never ran"))
        return result_block(tool_use_id, f"{who} stopped this call while it ran ({result.get('stopped_by') or 'signal'}"
                            " to its processes); it may have done part of its work. Do not run it again unless"
                            " the user asks." + (f" Output before it was stopped:\n{output}" if output else ""))
    if state == CallState.rejected:
        return result_block(tool_use_id, f"The call was rejected: {reason or 'not allowed'}", True)
    return result_block(tool_use_id, f"The call ended in state {state.value}.", True)
