"""Slack's AI app surfaces (the app has the Agents & AI Apps feature, ``slack.assistant: true``).

In an assistant thread (a direct message with the app) the thread's status line says what the bot is doing:
``assistant.threads.setStatus`` while the model thinks, while a call waits for approval and while it runs, and
cleared when the turn is done. When a user opens a new assistant thread (``assistant_thread_started``), it gets
suggested prompts (``assistant.threads.setSuggestedPrompts``). Everywhere else, and when the feature is off or a
status call is refused, the working reaction is used as before.

Bolt's ``AsyncAssistant`` middleware is not used: it acknowledges and handles assistant events in its own
listeners, which would bypass the intake (a request is recorded in Redis before Slack is acknowledged). The
recorded event goes through ``handle_event`` like any other and calls the same Web API methods.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.approvals.records import CallState
from bot.slack import client as api
from bot.slack.interactions import SlackDeps
from bot.slack.settings import parse_conversation

log = logging.getLogger(__name__)

THINKING = "is thinking…"


def in_assistant_thread(deps: SlackDeps, conversation: str) -> tuple[str, str] | None:
    """(channel, thread_ts) when the conversation is an assistant thread whose status line we may set."""
    where = parse_conversation(conversation)
    if not deps.settings.assistant or where is None or not where[0].startswith("D"):
        return None
    return where


async def set_status(deps: SlackDeps, conversation: str, status: str) -> bool:
    """Set (``""``: clear) the assistant thread's status; False when this is no assistant thread or Slack
    refused (the caller falls back to the reaction). Outages raise, to be retried by the poster."""
    where = in_assistant_thread(deps, conversation)
    if where is None:
        return False
    try:
        await deps.client.assistant_threads_setStatus(channel_id=where[0], thread_ts=where[1], status=status)
    except SlackApiError as exc:
        if api.is_transient(exc):
            raise
        log.warning("assistant.threads.setStatus in %s refused (%s); using the reaction", conversation,
                    api.error_code(exc))
        return False
    return True


async def status_of_calls(deps: SlackDeps, conversation: str) -> str:
    """What a suspended turn waits for: a call running, else a call awaiting approval, else nothing."""
    calls = await deps.store.open_calls(conversation)
    running = [c for c in calls if c.state == CallState.running]
    if running:
        return f"is running {running[0].tool}…"
    awaiting = [c for c in calls if c.state == CallState.awaiting_approval]
    if awaiting:
        more = f" (and {len(awaiting) - 1} more)" if len(awaiting) > 1 else ""
        return f"is waiting for approval of {awaiting[0].tool}{more}…"
    return ""


def is_thread_started(body: dict[str, Any]) -> bool:
    return (body.get("event") or {}).get("type") == "assistant_thread_started"


async def suggest_prompts(deps: SlackDeps, body: dict[str, Any]) -> None:
    """A user opened a new assistant thread: offer the configured prompts."""
    thread = (body.get("event") or {}).get("assistant_thread") or {}
    channel, ts = thread.get("channel_id"), thread.get("thread_ts")
    prompts = [p.model_dump() for p in deps.settings.assistant_prompts]
    if not channel or not ts or not prompts or not deps.settings.assistant:
        return
    await deps.client.assistant_threads_setSuggestedPrompts(channel_id=channel, thread_ts=ts, prompts=prompts)
