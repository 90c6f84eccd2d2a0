"""What happens on a slash command, a message or a button click. Plain async functions over a ``SlackDeps``:
the bolt listeners in ``app.py`` only acknowledge and call these, so a test can call them directly too."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.agent import bus
from bot.approvals.errors import CallNotFound
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.sanitize.redact import Redactor, build_redactor
from bot.slack import client as api
from bot.slack import oncall
from bot.slack.access import RateLimiter, refusal
from bot.slack.cards import CardStyle, render_card
from bot.slack.mrkdwn import escape
from bot.slack.render import render_help, render_pending, render_tools, size_problem
from bot.slack.settings import SlackSettings, card_channel, catalog_for_channel, parse_conversation
from bot.slack.shown import CardsShown
from bot.slack.state import SlackState
from bot.slack.unconfirmed import UnconfirmedApprovals
from bot.tools.catalog import Catalog

log = logging.getLogger(__name__)

Respond = Callable[..., Awaitable[Any]]
ASKED_RECORD_PATIENCE_SECONDS = 300.0  # how long a recorded post waits for Redis before the request is redone
PENDING_LISTED = 40  # /fisk pending lists the oldest this many (one chat.getPermalink each)
_STOP_WORDS = {"stop", "stop!", "cancel", "abort"}
_IGNORED_SUBTYPES_OK = {None, "thread_broadcast", "file_share"}


@dataclass
class SlackDeps:
    redis: Redis
    client: AsyncWebClient
    settings: SlackSettings
    store: CallStore
    policy: ApprovalPolicy
    catalog: Catalog
    state: SlackState = field(init=False)
    limiter: RateLimiter = field(init=False)
    bot_user_id: str = ""
    # the process's configured redactor (credential values, sensitive_env_vars, redact_patterns) for exports
    redactor: Redactor = field(default_factory=build_redactor)
    # approvals no Redis replica confirmed, whose cards say so until confirmed or lost (bot/slack/unconfirmed.py)
    unconfirmed: UnconfirmedApprovals = field(default_factory=UnconfirmedApprovals)
    # what this process last showed on each card: an update that would change nothing is not sent (shown.py)
    shown: CardsShown = field(default_factory=CardsShown)

    def __post_init__(self) -> None:
        self.state = SlackState(self.redis, self.settings)
        self.limiter = RateLimiter(self.redis, self.settings)


# ---------------------------------------------------------------- slash command


async def handle_command(deps: SlackDeps, body: dict[str, Any], respond: Respond, *,
                         request_id: str | None = None) -> None:
    """``/fisk ...`` after the ack (``command_ack`` already answered refusals and help). ``request_id`` (the
    intake entry) makes a retry after a failure idempotent: one post, one hand-off to the agent."""
    channel, user = body.get("channel_id", ""), body.get("user_id", "")
    text = (body.get("text") or "").strip()
    word = text.lower()
    if word == "tools":
        tools = catalog_for_channel(deps.catalog, deps.settings, channel)
        await respond(response_type="ephemeral", text="Tools available here", blocks=render_tools(tools, deps.policy))
    elif word == "pending":
        records = (await pending_in_channel(deps, channel))[:PENDING_LISTED]
        links = {}
        for record in records:  # chat.getPermalink: Slack's own link to each card (the workspace's domain)
            card, link = record.meta.get("slack_ts"), record.meta.get("slack_card_link")
            if card and not link:  # asked once per card and kept: repeating the command costs no Web API call
                where = parse_conversation(record.conversation)
                link = await api.permalink(deps.client, card_channel(record.conversation, record.meta) or channel, card,
                                           where[1] if where else None)
                if link:
                    await deps.store.set_meta(record.id, slack_card_link=link)
            if link:
                links[record.id] = link
        await respond(response_type="ephemeral", text="Pending approvals", blocks=render_pending(records, links))
    elif word == "stop":
        conversation = None
        if body.get("thread_ts"):  # Slack does not send it today; honour it if it ever does
            conversation = await deps.state.owned(channel, str(body["thread_ts"]))
        conversation = conversation or await deps.state.last_conversation(channel, user)
        if conversation is None:
            await respond(response_type="ephemeral", text="There is no conversation of yours here to stop.")
            return
        await bus.submit_stop(deps.redis, conversation, user, dedupe=_once(request_id))
        await respond(response_type="ephemeral", text="Stopping your latest conversation in this channel.")
    elif word == "revoke":
        from bot.slack.grants_ui import revoke_in_channel  # grants_ui builds on this module: import late

        await respond(response_type="ephemeral", text=await revoke_in_channel(deps, channel, user))
    elif word.split(" ")[0] in oncall.WORDS:
        answer = await oncall.oncall_command(deps, body, word.split(" ")[0], text.partition(" ")[2])
        await respond(response_type="ephemeral", text=answer)
    else:
        await start_from_command(deps, channel, user, text, respond, request_id=request_id)


def _once(request_id: str | None) -> str | None:
    return f"slack:{request_id}" if request_id else None


async def command_ack(deps: SlackDeps, body: dict[str, Any]) -> str | None:
    """What to answer inside the 3-second ack: a refusal, help, or None (work continues after the ack).

    ``""`` means "refused, and already told": acknowledge silently and do nothing (a rate-limited flood gets one
    note, not one per command)."""
    channel, user = body.get("channel_id", ""), body.get("user_id", "")
    refused = refusal(deps.settings, channel, user)
    if refused:
        return refused
    text = (body.get("text") or "").strip().lower()
    if text in ("", "help"):
        return render_help(body.get("command") or deps.settings.command)
    if text in ("tools", "pending", "stop", "revoke"):
        return None  # ephemeral answers, stopping and revoking are never rate limited
    admission = await deps.limiter.admit(channel, user)
    return None if admission.allowed else admission.note or ""


async def start_from_command(deps: SlackDeps, channel: str, user: str, text: str, respond: Respond, *,
                             request_id: str | None = None) -> str | None:
    """Post "<@user> asked: ..." as the bot, own its thread and hand the request to the agent.

    With ``request_id`` each step is done once even when the whole is retried: the post's ts is recorded (retried
    in place while Redis is away; a crash between Slack's answer and that record is the one window where a retry
    posts again), the thread is opened idempotently and the hand-off is deduplicated."""
    ts = await deps.state.asked_ts(request_id) if request_id else None
    if ts is None:
        try:
            posted = await api.post(deps.client, channel, f"<@{user}> asked: {escape(text)}")
        except SlackApiError as exc:
            code = api.error_code(exc)
            if api.is_transient(exc):
                raise  # retried by the intake worker
            missing = code in ("not_in_channel", "channel_not_found")
            hint = " Invite me to the channel first (/invite)." if missing else ""
            await respond(response_type="ephemeral", text=f"I could not post here ({code or exc}).{hint}")
            return None
        ts = str(posted["ts"])
        if request_id:
            await _record_asked(deps, request_id, ts)
    conversation = await deps.state.open_thread(channel, ts, user, last_ts=ts)
    await bus.submit_user_message(
        deps.redis, conversation, user, text, {"channel": channel, "thread_ts": ts, "ts": ts, "source": "command"},
        dedupe=_once(request_id),
    )
    return conversation


async def _record_asked(deps: SlackDeps, request_id: str, ts: str) -> None:
    """Record the "asked" post's ts, retrying a transient Redis failure HERE: the intake worker would retry the
    whole request instead, and with no ts recorded that posts the request again and opens a second thread."""
    delay, deadline = 0.1, time.monotonic() + ASKED_RECORD_PATIENCE_SECONDS
    while True:
        try:
            await deps.state.record_asked(request_id, ts)
            return
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("slack: recording the asked post of %s failed (%s); retrying in %.1fs", request_id, exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


async def pending_in_channel(deps: SlackDeps, channel: str) -> list[CallRecord]:
    records: list[CallRecord] = []
    for conversation in await deps.state.channel_conversations(channel):
        records += await deps.store.pending(conversation)
    return sorted(records, key=lambda r: r.created_at)


# ---------------------------------------------------------------- events


def event_ignored(deps: SlackDeps, body: dict[str, Any]) -> bool:
    """Events the bot never acts on, known without Redis: its own posts, edits, deletions, joins..."""
    event = body.get("event") or {}
    if event.get("type") == "assistant_thread_started":
        return not deps.settings.assistant
    if event.get("bot_id") or event.get("subtype") not in _IGNORED_SUBTYPES_OK:
        return True
    user = event.get("user")
    return not user or not event.get("channel") or not event.get("ts") or user == deps.bot_user_id


async def handle_event(deps: SlackDeps, body: dict[str, Any], *, request_id: str | None = None) -> str | None:
    """An ``app_mention`` or ``message`` event: start, continue or stop a conversation. Returns the
    conversation it went to (None when ignored). Retried deliveries and the mention/message pair Slack sends
    for one message are handled once. ``request_id`` (the intake entry, which already dropped retried
    deliveries) makes a retry of this handling idempotent."""
    event = body.get("event") or {}
    event_id = body.get("event_id")
    if not request_id and event_id and not await deps.state.first_time("event", str(event_id)):
        return None
    if event_ignored(deps, body):
        return None
    if event.get("type") == "assistant_thread_started":
        from bot.slack.assistant import suggest_prompts  # assistant builds on this module: import late

        await suggest_prompts(deps, body)
        return None
    user, channel, ts = event["user"], event["channel"], event["ts"]
    thread_ts = event.get("thread_ts")
    mentioned = event.get("type") == "app_mention" or (
        bool(deps.bot_user_id) and f"<@{deps.bot_user_id}>" in (event.get("text") or "")
    )
    direct = event.get("channel_type") == "im"
    conversation = await deps.state.owned(channel, thread_ts) if thread_ts else None
    if conversation is None and not mentioned and not direct:
        return None  # chatter the bot is not part of
    first = (await deps.state.claim("msg", f"{channel}:{ts}", request_id) if request_id
             else await deps.state.first_time("msg", f"{channel}:{ts}"))
    if not first:
        return None  # the other event of the app_mention + message pair
    refused = refusal(deps.settings, channel, user)
    if refused:
        await api.ephemeral(deps.client, channel, user, refused, thread_ts=thread_ts)
        return None
    text = clean_text(event.get("text") or "", deps.bot_user_id)
    stopping = conversation is not None and text.lower() in _STOP_WORDS
    if not stopping:
        admission = await deps.limiter.admit(channel, user, request_id)
        if not admission.allowed:
            if admission.note:
                await api.ephemeral(deps.client, channel, user, admission.note, thread_ts=thread_ts)
            return None
    if conversation is not None:
        if stopping:
            await bus.submit_stop(deps.redis, conversation, user, dedupe=_once(request_id))
            return conversation
        await deps.state.touch(conversation, channel, user, last_ts=ts)
    else:
        conversation = await deps.state.open_thread(channel, thread_ts or ts, user, last_ts=ts)
    meta = {"channel": channel, "thread_ts": parse_conversation(conversation)[1], "ts": ts,  # type: ignore[index]
            "source": "dm" if direct else "mention" if mentioned else "thread"}
    await bus.submit_user_message(deps.redis, conversation, user, text, meta, dedupe=_once(request_id))
    return conversation


def clean_text(text: str, bot_user_id: str) -> str:
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", "", text)
    return text.strip()


# ---------------------------------------------------------------- shared by the click handlers (clicks.py)


def foreign_click(record: CallRecord, channel: str, card_ts: str, thread_ts: str | None) -> str | None:
    """Why a click may not decide ``record`` (None when it may): a click counts only on the call's own card, in
    the call's own channel and thread. The button value names a call, but a value is easy to carry elsewhere."""
    where = parse_conversation(record.conversation)
    channel_of_card, card = card_channel(record.conversation, record.meta), record.meta.get("slack_ts")
    if where is None or not channel_of_card or not card:
        return "This call has no approval card yet (try again in a moment)"
    if channel != channel_of_card or card_ts != card or channel != where[0] or (thread_ts and thread_ts != where[1]):
        return "This button does not belong to this call's card"
    return None


def approver_groups(policy: ApprovalPolicy) -> set[str]:
    groups = set(policy.approvers.groups)
    for approvers in policy.per_tag.values():
        groups |= set(approvers.groups)
    return groups


def card_style(deps: SlackDeps, record: CallRecord) -> CardStyle:
    """The card's look: it mentions the approvers only if it was the thread's first card (``slack_mention``)."""
    settings = deps.settings
    return CardStyle(mention=settings.mention_approvers and record.meta.get("slack_mention") == "1",
                     labels=settings.tag_labels, confirm_tags=frozenset(settings.confirm_approve_tags),
                     redact_patterns=deps.store.redact_patterns)


async def refresh_card(deps: SlackDeps, record: CallRecord, channel: str = "", ts: str = "", *,
                       newest: bool = False) -> bool:
    """Re-render a call's card in place from the record; False when the card is unknown.

    Several writers update one card (a click's handler, the poster's progress and completion entries, on any
    replica), each from the record it read. So after its update each writer reads the call again and, if it
    moved on meanwhile, shows the newer state: whichever update lands last, its writer then shows a state at
    least as new as the store's, so a late "approved" never stays over "finished".

    ``newest``: the caller made the call's last change itself -- the poster that held an ended call's outcome
    and recorded its result -- so there is nothing newer to read back (any other writer still reads back after
    its own update, so a later update of an older state is still corrected).

    A card this process last updated to exactly the same text and blocks (``shown.py``: the click's handler
    showed the approval, then the poster reads the same state from the approval's progress entry) is not sent
    again, and with nothing sent there is nothing of ours to correct: no read back either.

    A read back that finds the call ended with its outcome not yet recorded corrects nothing either: whoever posts
    that outcome (``outcomes.py``) records it, then updates the card from the ended record, so its update is sent
    after this read, hence after ours landed, and is the one the card keeps. Showing the end here as well cost a
    burst of clicks a ``chat.update`` for every other call (the call ends while the click's update is on its way),
    overwritten moments later with the result's link."""
    for _ in range(4):
        sent = await _update_card(deps, record, channel, ts)
        if sent is None:
            return False
        if newest or not sent:
            return True
        try:
            latest = await deps.store.get(record.id)
        except CallNotFound:
            return True
        if (latest.state, latest.cancel, latest.meta) == (record.state, record.cancel, record.meta):
            return True
        if outcome_to_come(latest):
            return True
        record = latest
    return True


def outcome_to_come(record: CallRecord) -> bool:
    """The call has ended and its outcome (result or note) is still to be posted: the poster that posts it
    updates the card afterwards (every ended call but a rejected one, which never had a card, has an outcome)."""
    return (record.terminal and record.state is not CallState.rejected
            and not record.meta.get("slack_result_ts"))


async def _update_card(deps: SlackDeps, record: CallRecord, channel: str, ts: str) -> bool | None:
    """Show the record on its card: True when sent, False when the card shows it already, None when the card is
    unknown or must be left as it is."""
    channel = card_channel(record.conversation, record.meta) or channel
    ts = record.meta.get("slack_ts") or ts
    if not channel or not ts or record.meta.get("slack_card_refused"):
        return None  # unknown, or its message is the refusal of a card that could not fit: leave that
    text, blocks = render_card(record, deps.policy, style=card_style(deps, record))
    if deps.shown.unchanged(channel, ts, text, blocks) or await deps.shown.same_in_flight(channel, ts, text, blocks):
        return False
    problem = size_problem(blocks)
    if problem:  # the poster refused this card when it was proposed: its message says so, leave it
        log.warning("card of call %s not updated: %s", record.id, problem)
        return None
    with deps.shown.sending(channel, ts, text, blocks):
        await api.update(deps.client, channel, ts, text, blocks)
    return True
