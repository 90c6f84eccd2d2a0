"""What happens on a button click of a call's card (Approve, Deny, Cancel): plain async functions over a
``SlackDeps``, called by the intake worker from the recorded request. Every click is checked the same way first
(allowed user and channel, a value naming a known call, the call's own card), then decided by the lifecycle
store, whose answer is what the user is told."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.approvals.errors import (
    AlreadyApproved,
    AlreadyCancelling,
    ArgvMismatch,
    CallNotFound,
    InvalidTransition,
    NotAuthorized,
    NotDurable,
    PolicyError,
    TamperedRecord,
)
from bot.approvals.records import CallRecord, CallState
from bot.slack import client as api
from bot.slack.access import refusal
from bot.slack.cards import (
    APPROVE_ACTION,
    CANCEL_ACTION,
    CONFIRM_APPROVAL_ACTION,
    DENY_ACTION,
    GRANT_COMMAND_ACTION,
    GRANT_MINUTES_ACTION,
    GRANT_TOOL_ACTION,
    REVOKE_ACTION,
    button_binary,
    chosen_minutes_value,
    confirm_approval_note,
    parse_button_value,
)
from bot.slack.deny import DENIAL_NOT_CONFIRMED, open_deny_dialog
from bot.slack.grants_ui import grant_from_card, revoke_click
from bot.slack.interactions import SlackDeps, approver_groups, foreign_click, refresh_card
from bot.slack.mrkdwn import escape
from bot.slack.unconfirmed import MARK, clear_unconfirmed, mark_unconfirmed

Tell = Callable[[str], Awaitable[None]]


async def handle_action(deps: SlackDeps, body: dict[str, Any]) -> str:
    """An Approve/Deny/Cancel click. Returns what happened (for logs and tests): approved, denied, refused, stale..."""
    action = (body.get("actions") or [{}])[0]
    user = (body.get("user") or {}).get("id", "")
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id", "")
    message = body.get("message") or {}
    card_ts = message.get("ts") or (body.get("container") or {}).get("message_ts", "")
    thread_ts = message.get("thread_ts")

    async def tell(text: str) -> None:
        await api.ephemeral(deps.client, channel, user, text, thread_ts=thread_ts)

    if action.get("action_id") == GRANT_MINUTES_ACTION:
        return "chosen"  # choosing a duration changes nothing: the grant button's click reads it
    refused = refusal(deps.settings, channel, user)
    if refused:  # allowed_users and direct_messages hold for clicks too, whatever the approval policy says
        await tell(f"{refused} Nothing was changed.")
        return "refused"
    if action.get("action_id") == REVOKE_ACTION:
        return await revoke_click(deps, body, user, tell)
    try:
        call_id, argv_hash = parse_button_value(action.get("value") or "")
        binary_digest = button_binary(action.get("value") or "")
        record = await deps.store.get(call_id)
    except (ValueError, KeyError, TypeError, CallNotFound):
        await tell("This card does not belong to a call I know of; nothing was changed.")
        return "unknown"
    action_id = action.get("action_id")
    if action_id == CONFIRM_APPROVAL_ACTION:  # from the clicker's own note, not the card: the card's channel/thread
        card_ts = record.meta.get("slack_ts", "")
    mismatch = foreign_click(record, channel, card_ts, thread_ts or (body.get("container") or {}).get("thread_ts"))
    if mismatch:
        await tell(f"{mismatch}; nothing was changed.")
        return "refused"
    groups = await api.user_groups(deps.client, deps.state, user, approver_groups(deps.policy))
    if action_id == CANCEL_ACTION:
        return await cancel_click(deps, record, user, groups, tell)
    if action_id == DENY_ACTION and deps.settings.deny_reason_dialog and body.get("trigger_id"):
        return await open_deny_dialog(deps, record, user, groups, str(body["trigger_id"]), card_ts, tell)
    approve = action_id in (APPROVE_ACTION, CONFIRM_APPROVAL_ACTION, GRANT_TOOL_ACTION, GRANT_COMMAND_ACTION)
    minutes = deps.policy.standing.default_minutes
    if action_id in (GRANT_TOOL_ACTION, GRANT_COMMAND_ACTION):
        why_not = deps.policy.standing_refusal(record.tool_tags) or (
            "it needs two approvers" if record.approvals_needed > 1 else None)
        try:
            minutes = deps.policy.standing.chosen_minutes(chosen_minutes_value(body))
        except PolicyError as exc:
            why_not = why_not or str(exc)
        if why_not:
            await tell(f"This call cannot be approved for the thread: {why_not}. Nothing was changed.")
            return "refused"
    checked = record  # the copy store.approve checks against the proposal's seal: grants are made from it, never
    # from the record the approve script hands back (a Redis write between the check and the script could change it)
    try:
        if approve:
            record = await deps.store.approve(call_id, user, groups, deps.policy, argv_hash=argv_hash, known=record,
                                              binary_digest=binary_digest)
        else:
            record = await deps.store.deny(call_id, user, groups, deps.policy, known=record)
    except NotAuthorized as exc:
        await tell(f"You may not {'approve' if approve else 'deny'} this call: {exc.reason}. Nothing was changed.")
        return "refused"
    except TamperedRecord:
        await tell("This call's record was changed outside the bot (who asked, its tags or its approvals);"
                   " it cannot be approved. Nothing was changed.")
        return "refused"
    except ArgvMismatch:
        await tell("This card is stale: the command it shows is not the one waiting for approval. Nothing was changed.")
        return "refused"
    except NotDurable as exc:
        if not approve:  # denied on the primary; nothing runs without an approval even if a failover undoes it
            deps.unconfirmed.watch_denial(call_id)  # as the dialog's: a failover that loses it gives the buttons back
            await refresh_card(deps, exc.record or await deps.store.get(call_id), channel, card_ts)
            await tell(DENIAL_NOT_CONFIRMED.format(timeout_ms=exc.timeout_ms))
            return "not_durable"
        await mark_unconfirmed(deps, call_id, user)
        await refresh_card(deps, await deps.store.get(call_id), channel, card_ts)
        await tell_not_durable(deps, channel, user, thread_ts, exc, str(action.get("value") or ""),
                               grant=action_id in (GRANT_TOOL_ACTION, GRANT_COMMAND_ACTION))
        return "not_durable"
    except AlreadyApproved as exc:  # raised once this user's approval is confirmed by a replica
        current = await deps.store.get(call_id)
        if current.meta.get(MARK) == user:
            await refresh_card(deps, await clear_unconfirmed(deps, current, user), channel, card_ts)
        if exc.current_state == CallState.awaiting_approval.value:
            await tell("You have approved this call already; another approver is needed.")
        else:  # raised only once that approval is confirmed: after "click again", this is the confirmation
            await tell(f"You have already approved this call (it is {exc.current_state.replace('_', ' ')} now), and"
                       " your approval is confirmed; this click changed nothing.")
        return "already"
    except InvalidTransition as exc:
        record = await deps.store.get(call_id)
        await refresh_card(deps, record)
        word = "expired" if exc.current_state == "expired" else f"already {exc.current_state.replace('_', ' ')}"
        await tell(f"This call is {word}; your click changed nothing.")
        return "stale"
    if approve and record.meta.get(MARK):  # this confirmed write covers the unconfirmed approval before it
        record = await clear_unconfirmed(deps, record, record.meta[MARK])
    # The clicker is shown the decision at once, from here: the poster also updates the card from the lifecycle's
    # event, but it may be seconds behind under a burst, or down (the decision is told even then).
    await refresh_card(deps, record, channel, card_ts)
    if action_id in (GRANT_TOOL_ACTION, GRANT_COMMAND_ACTION):
        await grant_from_card(deps, checked, user, str(action_id), minutes)
        return "granted"
    return "approved" if approve else "denied"


async def tell_not_durable(deps: SlackDeps, channel: str, user: str, thread_ts: str | None, exc: NotDurable,
                           value: str, *, grant: bool) -> None:
    """The approval is on the Redis primary but no replica confirmed it in time: a failover now could lose it,
    so the clicker is asked to confirm it (the repeat is recognised: it never approves or runs twice)."""
    text = (f":warning: Your approval is recorded, but no Redis replica confirmed it within {exc.timeout_ms} ms,"
            " so it could be lost if Redis fails over now. Click *Confirm my approval* (or Approve on the card"
            " while it shows one) to make it durable; the call will not run twice.")
    if grant:
        text += " The standing approval for this thread was not made: ask for it again once this call is done."
    await api.ephemeral(deps.client, channel, user, text, thread_ts=thread_ts,
                        blocks=confirm_approval_note(text, value))


async def cancel_click(
    deps: SlackDeps, record: CallRecord, user: str, groups: list[str], tell: Tell
) -> str:
    """Cancel on a card: the requester or anyone who may approve the call may stop it. What the user is told
    is what the lifecycle script decided, so a click racing the call's end never claims a stop that did not
    happen."""
    try:
        updated = await deps.store.request_cancel(record.id, user, groups, deps.policy)
    except NotAuthorized as exc:
        await tell(f"You may not cancel this call: {exc.reason}. Only its requester and its approvers may.")
        return "refused"
    except AlreadyCancelling as exc:
        await tell(f"<@{escape(exc.user)}> has already asked to stop this call; the runner is stopping it.")
        return "already"
    except InvalidTransition as exc:
        await refresh_card(deps, await deps.store.get(record.id))
        if exc.current_state == CallState.awaiting_approval.value:
            await tell("This call has not been approved yet, so there is nothing to stop: Deny withdraws it."
                       " Nothing was changed.")
        else:
            await tell(f"This call had already ended ({exc.current_state.replace('_', ' ')}) before your cancel;"
                       " nothing was stopped.")
        return "stale"
    await refresh_card(deps, updated)
    if updated.state == CallState.cancelled:
        return "cancelled"
    await tell("Stopping the call: its runner sends SIGTERM, then SIGKILL if it does not stop. The card shows how"
               " it ended.")
    return "stopping"
