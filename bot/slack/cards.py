"""The live card of one call and its result message: pure functions from a record to ``(text, blocks)``.

One card per call, posted when the call is proposed and updated in place (chat.update) at every transition:
awaiting (who may approve, expiry, Approve / Deny) -> approved (by whom) -> running (since when, on which runner,
Cancel) -> how it ended, in a human sentence (``bot.approvals.describe``). The result message names the tool,
a short command line, the call id and the approver, and links back to the card; the card links to the result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import ConfirmObject, MarkdownTextObject

from bot.approvals.describe import approval_line, state_sentence
from bot.approvals.grants import Grant
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, hash_argv
from bot.fisk.digest import short
from bot.sanitize import display_command_line
from bot.slack.mrkdwn import CHUNK, code_block, escape, hard_split
from bot.slack.render import (
    MAX_BLOCKS,
    Blocks,
    Message,
    context,
    mention_user,
    section,
    slack_date,
    text_obj,
)
from bot.slack.unconfirmed import unconfirmed_approver

APPROVE_ACTION = "fisk_approve"
DENY_ACTION = "fisk_deny"
CANCEL_ACTION = "fisk_cancel"
GRANT_TOOL_ACTION = "fisk_grant_tool"  # approve, and approve this tool in this thread for a while
GRANT_COMMAND_ACTION = "fisk_grant_command"  # approve, and approve this exact command line for a while
GRANT_MINUTES_ACTION = "fisk_grant_minutes"  # the menu choosing how long those grants last (read on their click)
REVOKE_ACTION = "fisk_revoke"
# in the ephemeral note of an approval no Redis replica acknowledged: approve again (the card shows no Approve
# button any more once the call is approved)
CONFIRM_APPROVAL_ACTION = "fisk_confirm_approval"
RESULT_VISIBLE_CHARS = 3 * CHUNK  # output shown inline; longer output is attached as a snippet
SHORT_COMMAND_CHARS = 80
UNCONFIRMED_WORDS = "Not yet confirmed by a Redis replica"

_ICON = {
    CallState.awaiting_approval: ":raising_hand:",
    CallState.approved: ":white_check_mark:",
    CallState.auto_approved: ":white_check_mark:",
    CallState.running: ":gear:",
    CallState.finished: ":white_check_mark:",
    CallState.timed_out: ":alarm_clock:",
    CallState.failed_to_start: ":x:",
    CallState.interrupted: ":question:",
    CallState.cancelled: ":octagonal_sign:",
    CallState.denied: ":no_entry:",
    CallState.expired: ":hourglass:",
    CallState.rejected: ":x:",
    CallState.refused: ":lock:",
}
_LABEL = {
    CallState.awaiting_approval: "Awaiting approval",
    CallState.auto_approved: "Approved",
    CallState.failed_to_start: "Failed to start",
    CallState.timed_out: "Timed out",
    CallState.refused: "Refused by the runner",
}


def state_label(state: CallState) -> str:
    return _LABEL.get(state, state.value.replace("_", " ").capitalize())


def icon(record: CallRecord) -> str:
    code = (record.result or {}).get("exit_code")
    if record.state == CallState.finished and code != 0:
        return ":warning:"
    return _ICON.get(record.state, ":grey_question:")


def _mention_group(group: str, mention: bool) -> str:
    return f"<!subteam^{escape(group)}>" if mention else f"`{escape(group)}`"


def who_may_approve(record: CallRecord, policy: ApprovalPolicy, mention: bool = True) -> str:
    sets = []
    if not policy.approvers.empty:
        sets.append(policy.approvers)
    sets += [policy.per_tag[t] for t in record.tool_tags if t in policy.per_tag]
    parts = []
    for approver_set in sets:
        names = [mention_user(u, mention) for u in approver_set.users]
        names += [_mention_group(g, mention) for g in approver_set.groups]
        parts.append(", ".join(names))
    text = " *and* ".join(f"({p})" if len(sets) > 1 else p for p in parts) or "any workspace member"
    if record.approvals_needed > 1:
        text += f" · {record.approvals_needed} different people must approve"
    if policy.forbid_self_approval:
        text += " · not the requester"
    return text


def button_value(record: CallRecord) -> str:
    """Binds a click to this call AND this exact argv: a stale or forged card cannot approve anything else.

    The hash is computed from the argv the card shows, not copied from the record's ``argv_hash`` field: a
    record whose argv was rewritten in Redis (hash left alone) shows the rewritten command, and a click on it
    must not sign the original one."""
    return json.dumps({"call": record.id, "argv": hash_argv(record.argv), "bin": record.binary_digest},
                      separators=(",", ":"))


def confirm_approval_note(text: str, value: str) -> Blocks:
    """The clicker's note that an approval is not confirmed yet, with a button that approves again; ``value`` is
    the clicked button's own value, so the repeat is bound to the command line the card showed."""
    button = {"type": "button", "text": {"type": "plain_text", "text": "Confirm my approval"},
              "action_id": CONFIRM_APPROVAL_ACTION, "value": value, "style": "primary"}
    return [section(text), {"type": "actions", "elements": [button]}]


def button_binary(value: str) -> str | None:
    """The binary digest the card showed (None on cards made before it was recorded): the decision is signed
    for that digest, so a record whose digest was rewritten after the card was posted cannot be approved."""
    digest = json.loads(value).get("bin")
    return str(digest) if digest else None


def parse_button_value(value: str) -> tuple[str, str]:
    """The call id and argv hash a button is bound to; ValueError unless both are there (a click must name
    the exact command line it approves)."""
    data = json.loads(value)
    call_id, argv_hash = str(data["call"]), str(data["argv"])
    if not call_id or len(argv_hash) != 64:
        raise ValueError("button value without a call id and an argv hash")
    return call_id, argv_hash


def _command_blocks(argv: Sequence[str], budget: int, patterns: Sequence[str] = ()) -> tuple[Blocks, bool]:
    """The command line (secrets redacted, the operator's ``patterns`` too, nothing else changed), split across
    as many sections as needed; (blocks, shown in full)."""
    text, revealed = display_command_line(argv, patterns)  # secrets as fingerprinted markers, invisibles escaped
    chunks = hard_split(escape(text), CHUNK - 10)
    note = [context(":warning: The command contains invisible or control characters, shown as escapes"
                    " (\\n, \\x1b, \\u202e, \\u3164...). Check them before approving.")] if revealed else []
    if len(chunks) + len(note) > budget:
        return [section(code_block(c)) for c in chunks[: budget - 1 - len(note)]] + note, False
    return [section(code_block(c)) for c in chunks] + note, True


def status_text(record: CallRecord) -> str:
    """The card's status section: icon, state, who approved, and the state's human sentence."""
    approved = approval_line(record, mention_user, slack_date, escape)
    head = f"{icon(record)} *{state_label(record.state)}*" + (f" · {approved}" if approved else "")
    unconfirmed = unconfirmed_approver(record)
    if unconfirmed:  # on the Redis primary only: a failover now could lose it (bot/slack/unconfirmed.py)
        head += (f"\n:warning: {UNCONFIRMED_WORDS} (the approval of {mention_user(unconfirmed)} could be lost if"
                 " Redis fails over now; this card shows it if it is)")
    return head + "\n" + state_sentence(record, mention_user, slack_date, escape)


@dataclass(frozen=True)
class CardStyle:
    """How cards look in this workspace (from ``slack:`` settings): whether this card mentions the approvers
    (once per thread, not on every card), a label per tag (risk at a glance), and the tags whose Approve asks
    "are you sure?" first (a Block Kit confirm dialog)."""

    mention: bool = True
    labels: Mapping[str, str] = field(default_factory=dict)
    confirm_tags: frozenset[str] = frozenset()
    # execution.redact_patterns: what the operator's own patterns find is a secret on a card too
    redact_patterns: tuple[str, ...] = ()


def tag_line(record: CallRecord, labels: Mapping[str, str]) -> str:
    """The call's tags, each shown as its configured label (e.g. ``impact:rw`` -> ":warning: changes things")."""
    return " · ".join(labels[t] if t in labels else f"`{escape(t)}`" for t in record.tool_tags)


def render_card(record: CallRecord, policy: ApprovalPolicy, *, mention: bool = True,
                style: CardStyle | None = None) -> Message:
    """The live card of one call. Who may approve and the expiry are shown only while it awaits approval (a
    finished card has no "Expires"); Approve / Deny while it awaits, Cancel while it is approved or running."""
    style = style or CardStyle(mention=mention)
    mention = style.mention
    awaiting = record.state == CallState.awaiting_approval
    title = ":raising_hand: *Approval needed*" if awaiting else "*Tool call*"
    blocks: Blocks = [section(f"{title} · requested by {mention_user(record.requester)}")]
    fields = [text_obj(f"*Tool*\n`{escape(record.tool)}`"),
              text_obj(f"*Why approval is needed*\n{escape(record.trigger or 'policy')}")]
    if record.tool_tags:
        fields.append(text_obj(f"*Tags*\n{tag_line(record, style.labels)}"))
    if awaiting:
        fields += [text_obj(f"*Who may approve*\n{who_may_approve(record, policy, mention)}"),
                   text_obj(f"*Expires*\n{slack_date(record.expires_at)}")]
    blocks.append({"type": "section", "fields": fields})
    command, complete = _command_blocks(record.argv, MAX_BLOCKS - 7, style.redact_patterns)
    blocks.append(section("*Command*"))
    blocks += command
    if not complete:
        blocks.append(section(":warning: The command line is too long to show in full, so it cannot be approved here."))
    blocks.append(section(status_text(record)))
    buttons = _buttons(record, complete, policy)
    if set(record.tool_tags) & style.confirm_tags:
        for button in buttons:
            if button["action_id"] in (APPROVE_ACTION, GRANT_TOOL_ACTION, GRANT_COMMAND_ACTION):
                button["confirm"] = _confirm(record, style)
    if buttons:
        blocks.append({"type": "actions", "block_id": f"fisk_call:{record.id}"[:255], "elements": buttons})
    link = record.meta.get("slack_result_link")
    tail = f"call `{escape(record.id)}` · binary sha256 `{short(record.binary_digest)}`"
    tail += f" · <{link}|result>" if link else ""
    blocks.append(context(tail))
    text = f"{state_label(record.state)}: {escape(record.tool)}"
    return text, blocks


def _buttons(record: CallRecord, complete: bool, policy: ApprovalPolicy) -> list[dict[str, Any]]:
    if record.state == CallState.awaiting_approval:
        approve = [_button("Approve", APPROVE_ACTION, record, "primary")] if complete else []
        if complete and record.approvals_needed == 1 and policy.standing_refusal(record.tool_tags) is None:
            approve += [_button("Approve tool here", GRANT_TOOL_ACTION, record, ""),
                        _button("Approve command here", GRANT_COMMAND_ACTION, record, ""),
                        _minutes_menu(policy)]
        return [*approve, _button("Deny", DENY_ACTION, record, "danger")]
    if record.state in (CallState.approved, CallState.auto_approved) or (
        record.state == CallState.running and record.cancel is None
    ):
        return [_button("Cancel", CANCEL_ACTION, record, "danger")]
    return []


def _minutes_menu(policy: ApprovalPolicy) -> dict[str, Any]:
    """How long "Approve tool/command here" lasts, the default preselected. Slack sends the choice with the
    button's click (``state.values``); the server checks it against ``max_minutes`` (``chosen_minutes``)."""
    def option(minutes: float) -> dict[str, Any]:
        return {"text": {"type": "plain_text", "text": f"for {minutes:g} min"}, "value": f"{minutes:g}"}

    return {"type": "static_select", "action_id": GRANT_MINUTES_ACTION,
            "placeholder": {"type": "plain_text", "text": "for how long"},
            "options": [option(m) for m in policy.standing.choices()],
            "initial_option": option(policy.standing.default_minutes)}


def chosen_minutes_value(body: dict[str, Any]) -> str | None:
    """The duration chosen in a card's menu, as the click's payload carries it (None: none chosen)."""
    values = (body.get("state") or {}).get("values") or {}
    for block in values.values() if isinstance(values, dict) else ():
        menu = block.get(GRANT_MINUTES_ACTION) if isinstance(block, dict) else None
        if isinstance(menu, dict) and isinstance(menu.get("selected_option"), dict):
            return str(menu["selected_option"].get("value") or "")
    return None


def _button(label: str, action: str, record: CallRecord, style: str) -> dict[str, Any]:
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action,
        "value": button_value(record),
    }
    if style:
        button["style"] = style
    return button


def _confirm(record: CallRecord, style: CardStyle) -> dict[str, Any]:
    """The "are you sure?" dialog on Approve for a dangerous tool (built and length-checked by slack_sdk)."""
    tags = ", ".join(t for t in record.tool_tags if t in style.confirm_tags)
    # the command line is the model's text: escaped and verbatim, so a mention or a labelled link in it is shown
    # as typed; cut at Slack's 300 characters without splitting an escape
    command = short_command(record, style.redact_patterns)
    text = f"`{escape(record.tool)}` is tagged {escape(tags)}. Run `{escape(command)}`?"
    text = hard_split(text, 300)[0]
    return ConfirmObject(title="Approve a risky command?", text=MarkdownTextObject(text=text, verbatim=True),
                         confirm="Approve", deny="Back", style="danger").to_dict()


def render_grant(grant: Grant, now: float) -> Message:
    """The thread message of a standing approval: what it covers, who granted it, until when; Revoke while it
    is active, who revoked it once revoked."""
    scope = f"the command `{escape(grant.command)}`" if grant.argv_hash else "any command line of it"
    head = (f":unlock: *Standing approval* · {mention_user(grant.granted_by)} approved `{escape(grant.tool)}` in"
            f" this thread ({scope}) until {slack_date(grant.expires_at)}")
    if grant.revoked_by and grant.revoked_at is not None:
        head = head.replace(":unlock:", ":lock:", 1) + (
            f"\n:no_entry: Revoked by {mention_user(grant.revoked_by)} {slack_date(grant.revoked_at)}.")
    elif not grant.active(now):
        head = head.replace(":unlock:", ":lock:", 1) + "\nExpired."
    blocks: Blocks = [section(head)]
    if grant.active(now):
        blocks.append({"type": "actions", "block_id": f"fisk_grant:{grant.id}"[:255], "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Revoke"}, "action_id": REVOKE_ACTION,
             "style": "danger", "value": grant.id}]})
    blocks.append(context(f"grant `{escape(grant.id)}` · each call it approves is audited with this id"))
    return f"Standing approval of {escape(grant.tool)}", blocks


def short_command(record: CallRecord, patterns: Sequence[str] = ()) -> str:
    """The command line for a result's title: the runner's redacted argv when it has one, the program's base
    name, secrets (the operator's ``patterns`` too) redacted, invisible characters revealed, cut at
    ``SHORT_COMMAND_CHARS``."""
    argv = list((record.result or {}).get("argv_display") or record.argv)
    if argv:
        argv[0] = os.path.basename(argv[0])
    text, _ = display_command_line(argv, patterns)
    return text if len(text) <= SHORT_COMMAND_CHARS else text[: SHORT_COMMAND_CHARS - 1] + "…"


def about_line(record: CallRecord, patterns: Sequence[str] = ()) -> str:
    """Which call a thread message is about: command, id, approver, link to its card."""
    parts = [f"`{escape(short_command(record, patterns))}`", f"call `{escape(record.id)}`"]
    approved = approval_line(record, mention_user, slack_date, escape)
    if approved:
        parts.append(approved)
    link = record.meta.get("slack_card_link")
    if link:
        parts.append(f"<{link}|card>")
    return " · ".join(parts)


def render_decision_note(record: CallRecord, patterns: Sequence[str] = ()) -> Message:
    """The short thread note for a call closed without running (denied, expired, cancelled before start)."""
    sentence = state_sentence(record, mention_user, slack_date, escape)
    text = f"{icon(record)} `{escape(record.tool)}`: {sentence}"
    return text, [section(text), context(about_line(record, patterns))]


def render_result(record: CallRecord, patterns: Sequence[str] = ()) -> tuple[str, Blocks, bool]:
    """The thread reply for an executed call: (text, blocks, whether the full output must be attached)."""
    result = record.result or {}
    head = f"{icon(record)} `{escape(record.tool)}` {state_label(record.state).lower()}"
    details = []
    if result.get("exit_code") is not None or record.state == CallState.finished:
        details.append(f"exit code {result.get('exit_code')}")
    details.append(f"{float(result.get('duration_seconds') or 0):.1f}s")
    if result.get("truncated"):
        details.append(f"output capped ({int(result.get('total_bytes') or 0):,} bytes written)")
    if result.get("redactions"):
        details.append(f"{int(result['redactions'])} secret(s) redacted")
    blocks: Blocks = [section(head + " · " + " · ".join(details)), context(about_line(record, patterns))]
    if result.get("output_withheld"):  # the argv asked for a secret's value: say why the output is all markers
        blocks.append(context(f":lock: Output withheld: {escape(str(result['output_withheld']))}."))
    if record.state != CallState.finished:
        blocks.append(section(state_sentence(record, mention_user, slack_date, escape)))
    output = escape(str(result.get("output") or ""))
    attach = len(output) > RESULT_VISIBLE_CHARS
    if attach:
        output = output[: 2 * CHUNK].rsplit("\n", 1)[0]
    if output.strip():
        for chunk in hard_split(output, CHUNK - 10):
            blocks.append(section(code_block(chunk)))
    elif record.state in (CallState.finished, CallState.timed_out, CallState.cancelled):
        blocks.append(context("(no output)"))
    if attach:
        blocks.append(context("Output cut here; the full output is attached below as a snippet."))
    return head, blocks, attach
