"""``SlackSettings``: the ``slack:`` section of the configuration, and what it decides.

Secrets (bot token, app-level token, signing secret) never live here: they come from the environment
(``SLACK_BOT_TOKEN``, ``SLACK_APP_TOKEN``, ``SLACK_SIGNING_SECRET``). ``SLACK_API_URL`` overrides ``api_url``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.catalog import Catalog
from bot.tools.rule_spec import RuleSpec


class SlackStartupError(RuntimeError):
    """Tokens missing, malformed or refused by Slack: the message says which and what to do. Defined here, with
    the settings, so ``serve`` can name it without loading slack_sdk and aiohttp into a process with no Slack
    role."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


ToolRule = RuleSpec


class ChannelTools(_Section):
    """Per-channel narrowing, applied on top of the global selection (it can only remove tools)."""

    include: ToolRule = Field(default_factory=ToolRule)
    exclude: ToolRule = Field(default_factory=ToolRule)


DirectMessages = Literal["off", "allowed_users", "everyone"]


class RateLimit(_Section):
    """Requests that start or continue a conversation, counted in Redis per fixed window (replicas share it)."""

    window_seconds: int = Field(default=60, gt=0)
    per_user: int = Field(default=10, ge=0, description="requests per user per window; 0 = no per-user limit")
    per_channel: int = Field(default=30, ge=0, description="requests per channel per window; 0 = no limit")


class AssistantPrompt(_Section):
    """A suggested prompt offered when a user opens a new assistant thread."""

    title: str = Field(max_length=75)
    message: str = Field(max_length=2000)


class SlackSettings(_Section):
    mode: Literal["socket", "http"] = "socket"
    http_host: str = "0.0.0.0"
    http_port: int = Field(default=3000, ge=0, le=65535)
    http_path: str = "/slack/events"
    api_url: str | None = Field(default=None, description="Web API base URL; SLACK_API_URL overrides it")
    command: str = Field(default="/fisk", pattern=r"^/[a-z0-9_-]{1,31}$")
    allowed_channels: list[str] = Field(default_factory=list, description="channel ids; empty = all")
    allowed_users: list[str] = Field(default_factory=list, description="user ids; empty = all")
    direct_messages: DirectMessages | None = Field(
        default=None,
        description="who may use the bot in a direct message: off, allowed_users (only users listed in "
        "allowed_users), everyone (anyone allowed_users lets in); default off when allowed_channels is set, "
        "else everyone",
    )
    channels: dict[str, ChannelTools] = Field(default_factory=dict, description="per-channel tool selection")
    direct_message_tools: ChannelTools = Field(
        default_factory=ChannelTools, description="tool narrowing for direct messages, like a channel's"
    )
    rate_limit: RateLimit = Field(default_factory=RateLimit)
    working_reaction: str = "hourglass_flowing_sand"
    deny_reason_dialog: bool = Field(default=True, description="Deny opens a modal asking why (views.open)")
    assistant: bool = Field(default=False, description="the app has Slack's Agents & AI Apps feature: assistant "
                            "threads show status (setStatus) and suggested prompts; else the working reaction")
    assistant_prompts: list[AssistantPrompt] = Field(
        default_factory=lambda: [
            AssistantPrompt(title="What is unhealthy?", message="Which services are failing right now, and why?"),
            AssistantPrompt(title="Recent changes", message="What changed in the last hour that could explain errors?"),
        ],
        max_length=4, description="offered when a user opens a new assistant thread (Slack shows up to 4)")
    mention_approvers: bool = Field(default=True, description="the first card of a thread mentions the approvers "
                                    "(later cards name them without a ping); false: never")
    tag_labels: dict[str, str] = Field(
        default_factory=lambda: {"impact:ro": ":large_green_circle: read-only",
                                 "impact:rw": ":large_orange_circle: changes things"},
        description="how a tag is shown on cards (mrkdwn: emoji and words); other tags are shown as they are")
    confirm_approve_tags: list[str] = Field(
        default_factory=lambda: ["impact:rw", "ai:confirm"],
        description="Approve on a call with one of these tags asks for confirmation first")
    usergroup_cache_seconds: float = Field(default=60.0, ge=0)
    event_dedupe_seconds: int = Field(default=3600, gt=0)
    thread_retention_seconds: int = Field(default=30 * 86400, gt=0)
    key_prefix: str = "fc:slack"
    consumer: str | None = Field(default=None, description="poster consumer name; default host-pid")
    reclaim_idle_seconds: float = Field(default=60.0, gt=0, description="take over a dead replica's events")
    post_concurrency: int = Field(
        default=32, ge=1, le=1024,
        description="events the poster handles at once per replica (different threads; one thread in order)",
    )

    def user_allowed(self, user: str) -> bool:
        return not self.allowed_users or user in self.allowed_users

    @property
    def direct_message_access(self) -> DirectMessages:
        """``direct_messages`` as written, or its default: off once the operator restricted channels (a DM must
        not be a way around ``allowed_channels``), everyone (as any channel) otherwise."""
        if self.direct_messages is not None:
            return self.direct_messages
        return "off" if self.allowed_channels else "everyone"


def is_direct_message(channel: str) -> bool:
    """Slack's ids of one-to-one direct message conversations start with D."""
    return channel.startswith("D")


def catalog_for_channel(catalog: Catalog, settings: SlackSettings, channel: str) -> Catalog:
    """The tools offered in ``channel``: the global catalog narrowed by ``settings.channels[channel]``, and in a
    direct message by ``settings.direct_message_tools`` too (narrowing can only remove tools)."""
    if is_direct_message(channel):
        catalog = _narrowed(catalog, settings.direct_message_tools, "slack.direct_message_tools")
    entry = settings.channels.get(channel)
    return catalog if entry is None else _narrowed(catalog, entry, f"slack.channels.{channel}")


def _narrowed(catalog: Catalog, entry: ChannelTools, label: str) -> Catalog:
    return catalog.narrowed(entry.include.build(f"{label}.include"), entry.exclude.build(f"{label}.exclude"))


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


def card_channel(conversation: str, meta: Mapping[str, str]) -> str:
    """The channel of a call's approval card ("" while it has none): the thread's own channel, where the poster
    posts every card, so the call stores only the card's ts (``meta:slack_channel`` cost 33 bytes per pending
    call); a channel stored on the call (by an earlier version) is still the one used."""
    if meta.get("slack_channel"):
        return meta["slack_channel"]
    return (channel_of_conversation(conversation) or "") if meta.get("slack_ts") else ""
