"""Who may use the bot where, and how often: one gate for every Slack interaction (commands, messages, clicks).

Every listener asks the same questions in the same order, so there is no side door: ``allowed_users`` applies to
a click on someone else's card exactly as to a request, a direct message is governed by ``direct_messages``
instead of slipping past ``allowed_channels``, and a flood of requests is cut off before anything is posted.

The rate limit counts in Redis (fixed windows of ``rate_limit.window_seconds``), so every replica of the slack
role shares one count. Keys (prefix ``fc:slack`` by default, one key per operation):

* ``<p>:rate:user:<user>:<window>`` and ``<p>:rate:chan:<channel>:<window>``: requests counted in a window;
* ``<p>:rate:noted:<user>:<window>``: the user was told once in this window that they are being limited;
* ``<p>:rate:req:<request id>``: the decision for one recorded request ("1" admitted, "0" refused), so the intake
  worker retrying the handling of that request does not count it twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis

from bot.slack.settings import SlackSettings, is_direct_message

NOT_A_USER = "Sorry, you are not allowed to use this bot. Ask an administrator to add you to slack.allowed_users."
NOT_HERE = "Sorry, this bot is not enabled in this channel. Ask an administrator to add it to slack.allowed_channels."
NO_DIRECT_MESSAGES = (
    "Sorry, this bot does not take direct messages here (slack.direct_messages is off). Use it in a channel "
    "where it is enabled."
)
DIRECT_MESSAGES_LISTED_ONLY = (
    "Sorry, direct messages to this bot are open only to the users listed in slack.allowed_users. Use it in a "
    "channel where it is enabled."
)


def refusal(settings: SlackSettings, channel: str, user: str) -> str | None:
    """Why ``user`` may not use the bot in ``channel`` (a request or a click), or None when they may."""
    if not settings.user_allowed(user):
        return NOT_A_USER
    if is_direct_message(channel):
        access = settings.direct_message_access
        if access == "off":
            return NO_DIRECT_MESSAGES
        if access == "allowed_users" and user not in settings.allowed_users:
            return DIRECT_MESSAGES_LISTED_ONLY
        return None
    if settings.allowed_channels and channel not in settings.allowed_channels:
        return NOT_HERE
    return None


@dataclass(frozen=True)
class Admission:
    """The rate limit's answer: ``allowed``; when not, ``note`` is the one message to show (None when this
    user was already told in this window, so a flood of refused requests gets one note, not one each)."""

    allowed: bool
    note: str | None = None


class RateLimiter:
    def __init__(self, redis: Redis, settings: SlackSettings, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis
        self.settings = settings
        self.prefix = settings.key_prefix
        self.clock = clock

    async def admit(self, channel: str, user: str, request_id: str | None = None) -> Admission:
        """Count one request by ``user`` in ``channel``; refuse it when either limit is used up.

        With ``request_id`` (the intake entry) a second call for the same request repeats the first decision
        without counting again (and without a second note)."""
        limits = self.settings.rate_limit
        ttl = limits.window_seconds * 2
        if request_id is None:
            return await self._decide(channel, user)
        key = f"{self.prefix}:rate:req:{request_id}"
        earlier = await self.redis.get(key)
        if earlier is not None:
            return Admission(earlier in (b"1", "1"))
        admission = await self._decide(channel, user)
        await self.redis.set(key, "1" if admission.allowed else "0", ex=ttl)
        return admission

    async def _decide(self, channel: str, user: str) -> Admission:
        limits = self.settings.rate_limit
        window = int(self.clock() // limits.window_seconds)
        ttl = limits.window_seconds * 2
        over = None
        if limits.per_user and await self._count(f"user:{user}:{window}", ttl) > limits.per_user:
            over = f"you have sent more than {limits.per_user} requests"
        elif limits.per_channel and await self._count(f"chan:{channel}:{window}", ttl) > limits.per_channel:
            over = f"this channel has sent more than {limits.per_channel} requests"
        if over is None:
            return Admission(True)
        first = await self.redis.set(f"{self.prefix}:rate:noted:{user}:{window}", "1", nx=True, ex=ttl)
        if not first:
            return Admission(False)
        wait = int(limits.window_seconds - self.clock() % limits.window_seconds) + 1
        return Admission(False, f"Easy there: {over} in the last {limits.window_seconds} seconds, so I am not "
                                f"taking more for now. Please try again in about {wait} seconds.")

    async def _count(self, key: str, ttl: int) -> int:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.incr(f"{self.prefix}:rate:{key}")
            pipe.expire(f"{self.prefix}:rate:{key}", ttl)
            count, _ = await pipe.execute()
        return int(count)
