"""Block Kit rendering: pure functions from records and texts to ``(fallback text, blocks)``.

Every text that came from a tool, the model or a user is escaped here (see ``mrkdwn.py``) and every mrkdwn
object is ``verbatim`` so Slack does not auto-link names or parse mentions out of it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.fisk.digest import short
from bot.sanitize import display_command_line, reveal_invisible
from bot.slack.mrkdwn import CHUNK, code_block, escape, hard_split, markdown_to_mrkdwn, split_mrkdwn
from bot.tools.catalog import Catalog

APPROVE_ACTION = "fisk_approve"
DENY_ACTION = "fisk_deny"
MAX_BLOCKS = 50
MAX_MESSAGE_CHARS = 39_000
RESULT_VISIBLE_CHARS = 3 * CHUNK  # output shown inline; longer output is attached as a snippet

Blocks = list[dict[str, Any]]
Message = tuple[str, Blocks]

_RUN_SUFFIX = {
    CallState.running: " · running",
    CallState.finished: " · finished",
    CallState.timed_out: " · timed out",
    CallState.failed_to_start: " · failed to start",
    CallState.interrupted: " · interrupted",
    CallState.refused: " · refused by the runner",
}
_CLOSED_LINE = {
    CallState.auto_approved: ":white_check_mark: Approved automatically",
    CallState.denied: ":no_entry: Denied",
    CallState.expired: ":hourglass: Expired",
    CallState.rejected: ":x: Rejected",
}


def text_obj(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": text_obj(text)}


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [text_obj(text)]}


def slack_date(moment: datetime, fmt: str = "{date_short_pretty} at {time}") -> str:
    epoch = int(moment.timestamp())
    return f"<!date^{epoch}^{fmt}|{moment.strftime('%Y-%m-%d %H:%M UTC')}>"


def command_line(argv: Sequence[str]) -> str:
    return shlex.join(argv)


def reveal(text: str) -> tuple[str, bool]:
    """``text`` with every invisible or control character written as an escape, and whether any was (see
    ``bot.sanitize.reveal_invisible``): on an approval card what the human reads must be what runs."""
    return reveal_invisible(text)


def button_value(record: CallRecord) -> str:
    """Binds a click to this call AND this exact argv: a stale or forged card cannot approve anything else."""
    return json.dumps({"call": record.id, "argv": record.argv_hash}, separators=(",", ":"))


def parse_button_value(value: str) -> tuple[str, str]:
    """The call id and argv hash a button is bound to; ValueError unless both are there (a click must name
    the exact command line it approves)."""
    data = json.loads(value)
    call_id, argv_hash = str(data["call"]), str(data["argv"])
    if not call_id or len(argv_hash) != 64:
        raise ValueError("button value without a call id and an argv hash")
    return call_id, argv_hash


def _mention_user(user: str, mention: bool) -> str:
    # only a Slack user id can be mentioned; other requesters (an alert source: "alert:pagerduty") are shown
    is_user_id = user[:1] in ("U", "W") and user.isalnum()
    return f"<@{escape(user)}>" if mention and is_user_id else f"`{escape(user)}`"


def _mention_group(group: str, mention: bool) -> str:
    return f"<!subteam^{escape(group)}>" if mention else f"`{escape(group)}`"


def who_may_approve(record: CallRecord, policy: ApprovalPolicy, mention: bool = True) -> str:
    sets = []
    if not policy.approvers.empty:
        sets.append(policy.approvers)
    sets += [policy.per_tag[t] for t in record.tool_tags if t in policy.per_tag]
    parts = []
    for approver_set in sets:
        names = [_mention_user(u, mention) for u in approver_set.users]
        names += [_mention_group(g, mention) for g in approver_set.groups]
        parts.append(", ".join(names))
    text = " *and* ".join(f"({p})" if len(sets) > 1 else p for p in parts) or "any workspace member"
    if record.approvals_needed > 1:
        text += f" · {record.approvals_needed} different people must approve"
    if policy.forbid_self_approval:
        text += " · not the requester"
    return text


def _command_blocks(argv: Sequence[str], budget: int) -> tuple[Blocks, bool]:
    """The command line (secrets redacted, nothing else changed), split across as many sections as needed;
    (blocks, shown in full)."""
    text, revealed = display_command_line(argv)  # secrets as fingerprinted markers, invisibles escaped
    chunks = hard_split(escape(text), CHUNK - 10)
    note = [context(":warning: The command contains invisible or control characters, shown as escapes"
                    " (\\n, \\x1b, \\u202e, \\u3164...). Check them before approving.")] if revealed else []
    if len(chunks) + len(note) > budget:
        return [section(code_block(c)) for c in chunks[: budget - 1 - len(note)]] + note, False
    return [section(code_block(c)) for c in chunks] + note, True


def render_approval_card(record: CallRecord, policy: ApprovalPolicy, *, mention: bool = True) -> Message:
    """The card of one call: who asked, tool, exact command, why, who may approve, expiry, and (while the call
    awaits approval) Approve / Deny buttons. Decided calls render the same card with the decision instead."""
    awaiting = record.state == CallState.awaiting_approval
    title = ":raising_hand: *Approval needed*" if awaiting else "*Tool call*"
    blocks: Blocks = [section(f"{title} · requested by {_mention_user(record.requester, True)}")]
    blocks.append(
        {
            "type": "section",
            "fields": [
                text_obj(f"*Tool*\n`{escape(record.tool)}`"),
                text_obj(f"*Why approval is needed*\n{escape(record.trigger or 'policy')}"),
                text_obj(f"*Who may approve*\n{who_may_approve(record, policy, mention)}"),
                text_obj(f"*Expires*\n{slack_date(record.expires_at)}"),
            ],
        }
    )
    command, complete = _command_blocks(record.argv, MAX_BLOCKS - 6)
    blocks.append(section("*Command*"))
    blocks += command
    if not complete:
        blocks.append(section(":warning: The command line is too long to show in full, so it cannot be approved here."))
    if awaiting:
        if record.approvals:
            by = ", ".join(_mention_user(a.user, True) for a in record.approvals)
            blocks.append(context(f"Approved so far by {by}; waiting for another approver."))
        buttons: list[dict[str, Any]] = []
        if complete:
            buttons.append(_button("Approve", APPROVE_ACTION, record, "primary"))
        buttons.append(_button("Deny", DENY_ACTION, record, "danger"))
        blocks.append({"type": "actions", "block_id": f"fisk_call:{record.id}"[:255], "elements": buttons})
    else:
        blocks.append(section(decision_line(record)))
    blocks.append(context(f"call `{escape(record.id)}` · binary sha256 `{short(record.binary_digest)}`"))
    text = f"{'Approval needed' if awaiting else 'Tool call'}: {escape(record.tool)} ({record.state.value})"
    return text, blocks


def _button(label: str, action: str, record: CallRecord, style: str) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action,
        "style": style,
        "value": button_value(record),
    }


def decision_line(record: CallRecord) -> str:
    """One line saying who decided and when, then how far the call got."""
    suffix = _RUN_SUFFIX.get(record.state, "")
    decision = record.decision
    if record.approvals and record.state not in _CLOSED_LINE:
        by = ", ".join(f"{_mention_user(a.user, True)} {slack_date(a.at)}" for a in record.approvals)
        return f":white_check_mark: Approved by {by}{suffix}"
    line = _CLOSED_LINE.get(record.state) or (
        ":white_check_mark: Approved automatically" if suffix else escape(record.state.value)
    )
    if decision is not None:
        if record.state == CallState.denied:
            line += f" by {_mention_user(decision.actor, True)}"
        line += f" {slack_date(decision.at)}"
        if decision.reason and record.state != CallState.denied and decision.actor == "policy":
            line += f" ({escape(decision.reason)})"
    return line + suffix


def render_decision_note(record: CallRecord) -> Message:
    """The short thread note for a call closed without running (denied, expired)."""
    text = f"{decision_line(record)}: `{escape(record.tool)}` did not run."
    return text, [section(text)]


def render_result(record: CallRecord) -> tuple[str, Blocks, bool]:
    """The thread reply for an executed call: (text, blocks, whether the full output must be attached)."""
    result = record.result or {}
    status = str(result.get("status") or record.state.value)
    exit_code = result.get("exit_code")
    icon = ":white_check_mark:" if status == "finished" and exit_code == 0 else ":warning:"
    head = f"{icon} `{escape(record.tool)}` {escape(status.replace('_', ' '))}"
    details = [f"exit code {exit_code if exit_code is not None else '–'}"]
    details.append(f"{float(result.get('duration_seconds') or 0):.1f}s")
    if result.get("truncated"):
        details.append(f"output capped ({int(result.get('total_bytes') or 0):,} bytes written)")
    if result.get("redactions"):
        details.append(f"{int(result['redactions'])} secret(s) redacted")
    blocks: Blocks = [section(head + " · " + " · ".join(details))]
    if result.get("error"):
        blocks.append(section("*Error:* " + escape(str(result["error"]))))
    output = escape(str(result.get("output") or ""))
    attach = len(output) > RESULT_VISIBLE_CHARS
    if attach:
        output = output[: 2 * CHUNK].rsplit("\n", 1)[0]
    if output.strip():
        for chunk in hard_split(output, CHUNK - 10):
            blocks.append(section(code_block(chunk)))
    elif not result.get("error"):
        blocks.append(context("(no output)"))
    if attach:
        blocks.append(context("Output cut here; the full output is attached below as a snippet."))
    return head, blocks, attach


def render_reply(markdown: str) -> Message:
    """The agent's answer: Markdown converted to mrkdwn and split into sections."""
    chunks = split_mrkdwn(markdown_to_mrkdwn(markdown))
    total = 0
    blocks: Blocks = []
    for chunk in chunks:
        if len(blocks) >= MAX_BLOCKS - 1 or total + len(chunk) > MAX_MESSAGE_CHARS:
            blocks.append(context("(answer cut: too long for one Slack message)"))
            break
        blocks.append(section(chunk))
        total += len(chunk)
    fallback = escape(markdown[:3000])
    return fallback, blocks


def render_help(command: str) -> str:
    return "\n".join(
        [
            f"*{command} <request>*: ask the bot; it opens a thread and proposes commands for approval.",
            "Mention the bot in a channel or write to it directly to start too; reply in its thread to continue.",
            f"*{command} tools*: the tools available in this channel.",
            f"*{command} pending*: calls awaiting approval in this channel.",
            f"*{command} stop*: stop your latest conversation here (or reply `stop` in its thread).",
            f"*{command} timeline [link]*: upload the thread's timeline (Markdown) into it; default: your latest.",
            f"*{command} summary [link]*: a short status of the thread from the assistant.",
            f"*{command} help*: this text.",
        ]
    )


def render_tools(catalog: Catalog, policy: ApprovalPolicy) -> Blocks:
    lines = []
    for tool in sorted(catalog, key=lambda t: t.name):
        needs, trigger = policy.decide_trigger(tool.name, tool.tags)
        tags = ", ".join(escape(t) for t in tool.tags) or "no tags"
        approval = f"needs approval ({escape(trigger)})" if needs else "runs without approval"
        lines.append(f"• `{escape(tool.name)}`: {tags} · {approval}")
    if not lines:
        return [section("No tools are available in this channel.")]
    return _listing(f"*{len(lines)} tools available here*", lines)


def render_pending(records: Iterable[CallRecord]) -> Blocks:
    lines = []
    for r in records:
        link = ""
        parsed = r.conversation.split(":")
        if len(parsed) == 3:
            link = f" in thread {escape(parsed[2])}"
        lines.append(
            f"• `{escape(r.tool)}` requested by {_mention_user(r.requester, True)}{link}, "
            f"expires {slack_date(r.expires_at)}"
        )
    if not lines:
        return [section("Nothing is awaiting approval here.")]
    return _listing(f"*{len(lines)} call(s) awaiting approval here*", lines)


def _listing(title: str, lines: list[str]) -> Blocks:
    blocks: Blocks = [section(title)]
    for chunk in split_mrkdwn("\n".join(lines)):
        if len(blocks) >= MAX_BLOCKS - 1:
            blocks.append(context("(list cut: too long)"))
            break
        blocks.append(section(chunk))
    return blocks
