"""``SlackSettings``: the ``slack:`` section of the configuration, and what it decides.

Secrets (bot token, app-level token, signing secret) never live here: they come from the environment
(``SLACK_BOT_TOKEN``, ``SLACK_APP_TOKEN``, ``SLACK_SIGNING_SECRET``). ``SLACK_API_URL`` overrides ``api_url``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.catalog import Catalog
from bot.tools.selection import RuleSpec


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


ToolRule = RuleSpec


class ChannelTools(_Section):
    """Per-channel narrowing, applied on top of the global selection (it can only remove tools)."""

    include: ToolRule = Field(default_factory=ToolRule)
    exclude: ToolRule = Field(default_factory=ToolRule)


class SlackSettings(_Section):
    mode: Literal["socket", "http"] = "socket"
    http_host: str = "0.0.0.0"
    http_port: int = Field(default=3000, ge=0, le=65535)
    http_path: str = "/slack/events"
    api_url: str | None = Field(default=None, description="Web API base URL; SLACK_API_URL overrides it")
    command: str = Field(default="/fisk", pattern=r"^/[a-z0-9_-]{1,31}$")
    allowed_channels: list[str] = Field(default_factory=list, description="channel ids; empty = all")
    allowed_users: list[str] = Field(default_factory=list, description="user ids; empty = all")
    channels: dict[str, ChannelTools] = Field(default_factory=dict, description="per-channel tool selection")
    working_reaction: str = "hourglass_flowing_sand"
    mention_approvers: bool = Field(default=True, description="cards mention approvers (else plain ids)")
    usergroup_cache_seconds: float = Field(default=60.0, ge=0)
    event_dedupe_seconds: int = Field(default=3600, gt=0)
    thread_retention_seconds: int = Field(default=30 * 86400, gt=0)
    key_prefix: str = "fc:slack"
    consumer: str | None = Field(default=None, description="poster consumer name; default host-pid")
    reclaim_idle_seconds: float = Field(default=60.0, gt=0, description="take over a dead replica's events")

    def channel_allowed(self, channel: str) -> bool:
        # Direct messages are governed by allowed_users only: a DM id is never listed as a channel.
        return not self.allowed_channels or channel in self.allowed_channels or channel.startswith("D")

    def user_allowed(self, user: str) -> bool:
        return not self.allowed_users or user in self.allowed_users

    def refusal(self, channel: str, user: str) -> str | None:
        """Why this user may not use the bot here, or None when allowed."""
        if not self.user_allowed(user):
            return "Sorry, you are not allowed to use this bot. Ask an administrator to add you to allowed_users."
        if not self.channel_allowed(channel):
            return "Sorry, this bot is not enabled in this channel. Ask an administrator to add it to allowed_channels."
        return None


def catalog_for_channel(catalog: Catalog, settings: SlackSettings, channel: str) -> Catalog:
    """The tools offered in ``channel``: the global catalog narrowed by ``settings.channels[channel]``."""
    entry = settings.channels.get(channel)
    if entry is None:
        return catalog
    label = f"slack.channels.{channel}"
    include = entry.include.build(f"{label}.include")
    exclude = entry.exclude.build(f"{label}.exclude")
    return catalog.narrowed(include, exclude)


def conversation_key(channel: str, thread_ts: str) -> str:
    return f"slack:{channel}:{thread_ts}"


def parse_conversation(conversation: str) -> tuple[str, str] | None:
    """(channel, thread_ts) of a Slack conversation key, or None if the key is not a Slack one."""
    kind, _, rest = conversation.partition(":")
    channel, _, thread_ts = rest.partition(":")
    if kind != "slack" or not channel or not thread_ts:
        return None
    return channel, thread_ts


def channel_of_conversation(conversation: str) -> str | None:
    parsed = parse_conversation(conversation)
    return parsed[0] if parsed else None
