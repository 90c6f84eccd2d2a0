"""Deny with a reason: Deny on a card opens a modal (views.open with the click's trigger_id) asking why, the
reason optional; its submission denies the call with that reason, which the model receives in the refusal's
tool_result ("Their reason, in their words: ...") and the card and thread note quote.

The modal carries the call id, the argv hash and the card's place in ``private_metadata``; Slack returns it
untouched, but it is still checked like a click: the submitter must be allowed here and may deny this call, the
call must still await approval, and the card named must be the call's own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import ContextBlock, InputBlock, MarkdownTextObject, PlainTextInputElement, SectionBlock
from slack_sdk.models.views import View

from bot.approvals.errors import CallNotFound, InvalidTransition, NotAuthorized, NotDurable
from bot.approvals.records import CallRecord, CallState
from bot.sanitize import reveal_invisible
from bot.slack import client as api
from bot.slack.access import refusal
from bot.slack.cards import short_command
from bot.slack.interactions import SlackDeps, approver_groups, foreign_click, refresh_card
from bot.slack.mrkdwn import escape
from bot.slack.settings import card_channel

log = logging.getLogger(__name__)

DENY_REASON_VIEW = "fisk_deny_reason"
REASON_BLOCK = REASON_ACTION = "reason"
MAX_REASON_CHARS = 500
Tell = Callable[[str], Awaitable[None]]


def deny_view(record: CallRecord, channel: str, card_ts: str, patterns: Sequence[str] = ()) -> dict[str, Any]:
    """The modal (built and length-checked by slack_sdk's models) asking why this call is denied."""
    metadata = json.dumps({"call": record.id, "argv": record.argv_hash, "channel": channel, "card": card_ts})
    view = View(
        type="modal",
        callback_id=DENY_REASON_VIEW,
        title="Deny this call",
        submit="Deny",
        close="Back",
        private_metadata=metadata,
        blocks=[
            SectionBlock(text=MarkdownTextObject(
                text=f"Deny `{escape(record.tool)}`: `{escape(short_command(record, patterns))}`?", verbatim=True)),
            InputBlock(
                block_id=REASON_BLOCK,
                label="Why? (optional)",
                optional=True,
                element=PlainTextInputElement(action_id=REASON_ACTION, multiline=True, max_length=MAX_REASON_CHARS,
                                              placeholder="e.g. not during the freeze; check the dashboard first"),
            ),
            ContextBlock(elements=[MarkdownTextObject(
                text="The assistant reads your reason; it will not retry this call.", verbatim=True)]),
        ],
    )
    return view.to_dict()


async def open_deny_dialog(deps: SlackDeps, record: CallRecord, user: str, groups: list[str], trigger_id: str,
                           card_ts: str, tell: Tell) -> str:
    """Deny clicked: refuse at once who may not deny, else open the reason modal. If Slack will not open it
    (the trigger expired: it lives 3 seconds), the call is denied without a reason rather than left waiting."""
    try:
        if user != record.requester:
            deps.policy.check_approver(record, user, groups)
    except NotAuthorized as exc:
        await tell(f"You may not deny this call: {exc.reason}. Nothing was changed.")
        return "refused"
    if record.state != CallState.awaiting_approval:
        await refresh_card(deps, record)
        await tell(f"This call is already {record.state.value.replace('_', ' ')}; your click changed nothing.")
        return "stale"
    channel = card_channel(record.conversation, record.meta)
    try:
        await deps.client.views_open(trigger_id=trigger_id, view=deny_view(
            record, channel, card_ts, deps.store.redact_patterns))
    except SlackApiError as exc:
        if api.is_transient(exc):
            raise
        log.warning("views.open for call %s failed (%s); denying without a reason", record.id, api.error_code(exc))
        return await deny_with_reason(deps, record.id, user, groups, "", tell)
    return "asked"


async def handle_deny_submission(deps: SlackDeps, body: dict[str, Any]) -> str:
    """The reason modal was submitted: deny the call with the reason given (checked like a click)."""
    user = (body.get("user") or {}).get("id", "")
    view = body.get("view") or {}
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
        call_id, channel, card_ts = str(meta["call"]), str(meta["channel"]), str(meta["card"])
        record = await deps.store.get(call_id)
    except (ValueError, KeyError, TypeError, CallNotFound):
        log.warning("deny dialog submitted by %s for an unknown call: %r", user, view.get("private_metadata"))
        return "unknown"
    where = record.conversation.split(":")

    async def tell(text: str) -> None:
        await api.ephemeral(deps.client, channel, user, text, thread_ts=where[-1] if len(where) == 3 else None)

    refused = refusal(deps.settings, channel, user)
    mismatch = foreign_click(record, channel, card_ts, None) or (
        "This dialog is for another command line" if meta.get("argv") != record.argv_hash else None)
    if refused or mismatch:
        await tell(f"{refused or mismatch}. Nothing was changed.")
        return "refused"
    groups = await api.user_groups(deps.client, deps.state, user, approver_groups(deps.policy))
    return await deny_with_reason(deps, call_id, user, groups, submitted_reason(view), tell)


DENIAL_NOT_CONFIRMED = (
    ":warning: Your denial is recorded, but no Redis replica confirmed it within {timeout_ms} ms: if Redis fails"
    " over now it could be lost, and the call would wait for approval again (it cannot run without one, and it"
    " expires unanswered). Its card then offers Approve / Deny again: deny it again there."
)


def submitted_reason(view: dict[str, Any]) -> str:
    """The reason typed in the modal: stripped, invisible characters shown as escapes, at most 500 chars."""
    values = ((view.get("state") or {}).get("values") or {}).get(REASON_BLOCK) or {}
    raw = str((values.get(REASON_ACTION) or {}).get("value") or "").strip()
    shown, _ = reveal_invisible(raw.replace("\r\n", "\n").replace("\n", " "))
    return shown[:MAX_REASON_CHARS]


async def deny_with_reason(deps: SlackDeps, call_id: str, user: str, groups: list[str], reason: str,
                           tell: Tell) -> str:
    try:
        record = await deps.store.deny(call_id, user, groups, deps.policy, reason=reason)
    except NotAuthorized as exc:
        await tell(f"You may not deny this call: {exc.reason}. Nothing was changed.")
        return "refused"
    except InvalidTransition as exc:
        await refresh_card(deps, await deps.store.get(call_id))
        word = "expired" if exc.current_state == "expired" else f"already {exc.current_state.replace('_', ' ')}"
        await tell(f"This call is {word}; your denial changed nothing.")
        return "stale"
    except NotDurable as exc:
        deps.unconfirmed.watch_denial(call_id)  # a failover that loses it must not leave the card saying "Denied"
        await refresh_card(deps, exc.record or await deps.store.get(call_id))
        await tell(DENIAL_NOT_CONFIRMED.format(timeout_ms=exc.timeout_ms))
        return "not_durable"
    await refresh_card(deps, record)
    return "denied"
