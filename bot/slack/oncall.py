"""The Slack side of ``/fisk timeline`` and ``/fisk summary``: which thread is meant, and the reader's zone.

Slack does not say which thread a slash command was typed in, so the thread is, in order: the one named by
the argument (a message link or its ts), the one Slack sends if it ever does, or the user's latest
conversation in the channel. The work itself is in ``bot/incidents/commands.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from bot.incidents import commands
from bot.slack.access import refusal
from bot.slack.settings import conversation_key

if TYPE_CHECKING:
    from bot.slack.interactions import SlackDeps

WORDS = commands.WORDS


async def oncall_command(deps: SlackDeps, body: dict[str, Any], word: str, argument: str) -> str:
    channel, user = str(body.get("channel_id") or ""), str(body.get("user_id") or "")
    named = commands.thread_argument(argument, channel)
    if named is not None:
        if named[0] != channel:  # the upload or summary lands in that thread: ask from where it is seen
            return "Run this in the channel of that thread."
        conversation: str | None = conversation_key(*named)
    elif body.get("thread_ts"):
        conversation = conversation_key(channel, str(body["thread_ts"]))
    else:
        conversation = await deps.state.last_conversation(channel, user)
    if conversation is None:
        return f"Which thread? Use `{deps.settings.command} {word} <link to the thread's first message>`."
    if refusal(deps.settings, conversation.split(":")[1], user):
        return "Sorry, that thread is in a channel where this bot is not enabled for you."
    if word == "timeline":
        return await commands.timeline_command(deps.redis, conversation, await user_timezone(deps, user),
                                               deps.redactor)
    return await commands.summary_command(deps.redis, conversation, user, deps.redactor)


async def user_timezone(deps: SlackDeps, user: str) -> str | None:
    """The user's IANA zone from users.info (a read; None when unknown or the lookup fails)."""
    try:
        reply = await deps.client.users_info(user=user)
    except SlackApiError:
        return None
    return str((reply.get("user") or {}).get("tz") or "") or None
