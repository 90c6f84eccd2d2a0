"""The Slack front end: bolt ``AsyncApp`` (Socket Mode or HTTP), approval cards, results, the poster.

Talks to the agent only through ``bot.agent.bus`` and to the lifecycle only through ``bot.approvals``.
"""

from bot.slack.app import SlackFrontEnd
from bot.slack.client import SlackStartupError
from bot.slack.settings import SlackSettings, catalog_for_channel, channel_of_conversation, parse_conversation

__all__ = [
    "SlackFrontEnd",
    "SlackSettings",
    "SlackStartupError",
    "catalog_for_channel",
    "channel_of_conversation",
    "parse_conversation",
]
