"""The Slack front end: bolt ``AsyncApp`` (Socket Mode or HTTP), approval cards, results, the poster.

Talks to the agent only through ``bot.agent.bus`` and to the lifecycle only through ``bot.approvals``.

The names below are loaded on first use (PEP 562), so importing ``bot.slack.settings`` (the configuration
does) does not load slack-bolt into processes that never talk to Slack, such as a runner.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.slack.app import SlackFrontEnd
    from bot.slack.client import SlackStartupError
    from bot.slack.settings import SlackSettings, catalog_for_channel, channel_of_conversation, parse_conversation

_WHERE = {
    "SlackFrontEnd": "bot.slack.app",
    "SlackStartupError": "bot.slack.client",
    "SlackSettings": "bot.slack.settings",
    "catalog_for_channel": "bot.slack.settings",
    "channel_of_conversation": "bot.slack.settings",
    "parse_conversation": "bot.slack.settings",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'bot.slack' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "SlackFrontEnd",
    "SlackSettings",
    "SlackStartupError",
    "catalog_for_channel",
    "channel_of_conversation",
    "parse_conversation",
]
