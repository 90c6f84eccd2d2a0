"""Standing approvals in Slack: "Approve tool here" / "Approve command here" on a card approve the call and create
a grant for the thread (``bot.approvals.grants``) lasting the minutes chosen in the card's menu, shown as a thread
message with a Revoke button; ``/fisk revoke`` revokes the grants of the user's latest thread in the channel.

Who may revoke: whoever granted it, and any listed approver (or anyone, when the policy lets anyone approve):
stopping automatic approvals only ever narrows what runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.approvals.grants import Grant, GrantError
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.slack import client as api
from bot.slack.cards import GRANT_COMMAND_ACTION, render_grant, short_command
from bot.slack.interactions import SlackDeps, approver_groups
from bot.slack.settings import parse_conversation

Tell = Callable[[str], Awaitable[None]]


async def grant_from_card(deps: SlackDeps, record: CallRecord, user: str, action_id: str, minutes: float) -> Grant:
    """After ``user`` approved ``record`` with a grant button: record the grant for ``minutes`` (checked by the
    caller against the policy) and post it in the thread."""
    exact = action_id == GRANT_COMMAND_ACTION
    grant = await deps.store.grants.create(
        record.conversation, record.tool, user, minutes,
        argv_hash=record.argv_hash if exact else "",
        command=short_command(record, deps.store.redact_patterns) if exact else "",
        tags=record.tool_tags, binary_digest=record.binary_digest,
    )
    await show_grant(deps, grant)
    return grant


async def show_grant(deps: SlackDeps, grant: Grant) -> None:
    """Post the grant's thread message, or update it in place (revoked) once posted."""
    where = parse_conversation(grant.conversation)
    if where is None:
        return
    text, blocks = render_grant(grant, deps.store.grants.now())
    ts = grant.meta.get("slack_ts")
    if ts:
        await api.update(deps.client, where[0], ts, text, blocks)
        return
    posted = await api.post(deps.client, where[0], text, blocks, thread_ts=where[1], key=f"grant:{grant.id}")
    await deps.store.grants.set_meta(grant.id, slack_ts=str(posted["ts"]))


def may_revoke(grant: Grant, user: str, groups: list[str], policy: ApprovalPolicy) -> bool:
    if user == grant.granted_by or policy.approvers.allows(user, groups):
        return True
    return policy.approvers.empty and policy.anyone_may_approve


async def revoke_click(deps: SlackDeps, body: dict[str, Any], user: str, tell: Tell) -> str:
    """Revoke on a grant's message."""
    grant_id = str(((body.get("actions") or [{}])[0]).get("value") or "")
    try:
        grant = await deps.store.grants.get(grant_id)
    except GrantError as exc:
        await tell(f"{exc}. Nothing was changed.")
        return "unknown"
    groups = await api.user_groups(deps.client, deps.state, user, approver_groups(deps.policy))
    if not may_revoke(grant, user, groups, deps.policy):
        await tell("You may not revoke this standing approval: only whoever granted it and the approvers may.")
        return "refused"
    try:
        grant = await deps.store.grants.revoke(grant.id, user)
    except GrantError as exc:
        await tell(f"{exc}; nothing was changed.")
        return "stale"
    await show_grant(deps, grant)
    return "revoked"


async def revoke_in_channel(deps: SlackDeps, channel: str, user: str) -> str:
    """``/fisk revoke``: revoke the standing approvals of the user's latest thread here; the answer says what."""
    conversation = await deps.state.last_conversation(channel, user)
    if conversation is None:
        return "There is no conversation of yours here."
    groups = await api.user_groups(deps.client, deps.state, user, approver_groups(deps.policy))
    revoked = refused = 0
    for grant in await deps.store.grants.active(conversation):
        if not may_revoke(grant, user, groups, deps.policy):
            refused += 1
            continue
        try:
            await show_grant(deps, await deps.store.grants.revoke(grant.id, user))
            revoked += 1
        except GrantError:
            continue
    if not revoked and not refused:
        return "Your latest thread here has no standing approval to revoke."
    text = f"Revoked {revoked} standing approval(s) in your latest thread here."
    return text + (f" {refused} were left: only whoever granted them and the approvers may revoke." if refused else "")
