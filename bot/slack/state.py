"""What the Slack role keeps in Redis, so any replica can serve any request (no state in memory).

Keys (prefix ``fc:slack`` by default; every operation touches one key, so Redis Cluster needs no hash tags):

* ``<p>:conv:<conversation>``: hash of a thread the bot owns: channel, thread_ts, started_by, last_ts (the
  latest user message, where the working reaction goes), reacted_ts (where it currently is). Its existence
  is what "the bot owns this thread" means. Expires ``thread_retention_seconds`` after the last activity.
* ``<p>:chan:<channel>``: sorted set of the channel's conversations by last activity (``/fisk pending``).
* ``<p>:last:<channel>:<user>``: the user's latest conversation in a channel (``/fisk stop`` outside a thread).
* ``<p>:event:<event_id>`` and ``<p>:msg:<channel>:<ts>``: SET NX markers deduplicating Slack's retried
  deliveries and the app_mention/message pair Slack sends for one message.
* ``<p>:sig:<signature>``: SET NX marker refusing a replayed signed HTTP request.
* ``<p>:ugroup:<group>``: cached members of a user group (JSON list), ``usergroup_cache_seconds``.
* ``<p>:done:<stream>:<entry id>``: the poster handled this stream entry (skip it if re-delivered).
* ``<p>:cards:<conversation>``: set of the thread's calls whose card is posted and whose result (or note) is
  not posted yet: what a reply must not overtake (``Poster.results_first``).
* ``<p>:outcome:<call id>``: which poster task (replica + stream entry) is posting the call's result or note
  now; ``<p>:outcome-tried:<call id>``: someone started to, so a later poster looks in the thread first.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from bot.slack.settings import SlackSettings, conversation_key
from bot.streams import text as _text

CHANNEL_CONVERSATIONS_KEPT = 200
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
_RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end return 0"



class SlackState:
    def __init__(self, redis: Redis, settings: SlackSettings) -> None:
        self.redis = redis
        self.settings = settings
        self.prefix = settings.key_prefix

    def _conv(self, conversation: str) -> str:
        return f"{self.prefix}:conv:{conversation}"

    # ------------------------------------------------------------ dedupe

    async def first_time(self, kind: str, ident: str, ttl: int | None = None) -> bool:
        """True the first time ``(kind, ident)`` is seen within ``ttl`` seconds."""
        ok = await self.redis.set(
            f"{self.prefix}:{kind}:{ident}", "1", nx=True, ex=ttl or self.settings.event_dedupe_seconds
        )
        return bool(ok)

    async def claim(self, kind: str, ident: str, owner: str, ttl: int | None = None) -> bool:
        """Like ``first_time``, but retry-safe: True for the first ``owner`` to claim ``(kind, ident)`` and again
        for that same owner (a request retried after a failure keeps what it claimed)."""
        key = f"{self.prefix}:{kind}:{ident}"
        if await self.redis.set(key, owner, nx=True, ex=ttl or self.settings.event_dedupe_seconds):
            return True
        return _text(await self.redis.get(key) or b"") == owner

    async def asked_ts(self, request_id: str) -> str | None:
        """The ts of the "asked" post a slash command (intake entry ``request_id``) already made, if any."""
        raw = await self.redis.get(f"{self.prefix}:asked:{request_id}")
        return _text(raw) if raw else None

    async def record_asked(self, request_id: str, ts: str) -> None:
        await self.redis.set(f"{self.prefix}:asked:{request_id}", ts, ex=self.settings.event_dedupe_seconds)

    # ------------------------------------------------------------ conversations

    async def open_thread(self, channel: str, thread_ts: str, user: str, last_ts: str) -> str:
        conversation = conversation_key(channel, thread_ts)
        key = self._conv(conversation)
        await self.redis.hset(
            key,
            mapping={"channel": channel, "thread_ts": thread_ts, "started_by": user, "last_ts": last_ts},
        )
        await self.touch(conversation, channel, user)
        return conversation

    async def owned(self, channel: str, thread_ts: str) -> str | None:
        conversation = conversation_key(channel, thread_ts)
        return conversation if await self.redis.exists(self._conv(conversation)) else None

    async def touch(self, conversation: str, channel: str, user: str, last_ts: str | None = None) -> None:
        key = self._conv(conversation)
        ttl = self.settings.thread_retention_seconds
        if last_ts:
            await self.redis.hset(key, "last_ts", last_ts)
        await self.redis.expire(key, ttl)
        chan = f"{self.prefix}:chan:{channel}"
        await self.redis.zadd(chan, {conversation: time.time()})
        await self.redis.zremrangebyrank(chan, 0, -CHANNEL_CONVERSATIONS_KEPT - 1)
        await self.redis.expire(chan, ttl)
        await self.redis.set(f"{self.prefix}:last:{channel}:{user}", conversation, ex=ttl)

    async def thread_info(self, conversation: str) -> dict[str, str]:
        raw = await self.redis.hgetall(self._conv(conversation))
        return {_text(k): _text(v) for k, v in raw.items()}

    async def set_thread_field(self, conversation: str, field: str, value: str) -> None:
        if value:
            await self.redis.hset(self._conv(conversation), field, value)
        else:
            await self.redis.hdel(self._conv(conversation), field)

    async def channel_conversations(self, channel: str, limit: int = 50) -> list[str]:
        raw = await self.redis.zrevrange(f"{self.prefix}:chan:{channel}", 0, limit - 1)
        return [_text(c) for c in raw]

    async def last_conversation(self, channel: str, user: str) -> str | None:
        raw = await self.redis.get(f"{self.prefix}:last:{channel}:{user}")
        return _text(raw) if raw else None

    # ------------------------------------------------------------ user groups

    async def cached_group(self, group: str) -> list[str] | None:
        raw = await self.redis.get(f"{self.prefix}:ugroup:{group}")
        return json.loads(raw) if raw else None

    async def cache_group(self, group: str, members: list[str]) -> None:
        ttl = self.settings.usergroup_cache_seconds
        if ttl > 0:
            await self.redis.set(f"{self.prefix}:ugroup:{group}", json.dumps(members), px=int(ttl * 1000))

    # ------------------------------------------------------------ poster progress

    async def card_posted(self, conversation: str, call_id: str) -> None:
        """The call's card is in the thread; its result or note is still to come."""
        key = f"{self.prefix}:cards:{conversation}"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(key, call_id)
            pipe.expire(key, self.settings.thread_retention_seconds)
            await pipe.execute()

    async def outcome_posted(self, conversation: str, call_id: str) -> None:
        await self.redis.srem(f"{self.prefix}:cards:{conversation}", call_id)

    async def take_outcome(self, call_id: str, owner: str, ttl: int) -> tuple[bool, bool]:
        """(held, tried before): hold the posting of the call's result for ``owner`` (a holder that is still
        working, retrying a slow Slack, renews it; one that died loses it ``ttl`` seconds after its last try), and
        whether anyone started posting it before (then what they posted must be looked for first)."""
        hold, tried = f"{self.prefix}:outcome:{call_id}", f"{self.prefix}:outcome-tried:{call_id}"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(hold, owner, nx=True, ex=ttl)
            pipe.get(hold)
            pipe.set(tried, "1", nx=True, ex=self.settings.event_dedupe_seconds)
            fresh, holder, first_try = await pipe.execute()
        if not fresh:
            if _text(holder or b"") != owner:
                return False, True
            await self.redis.expire(hold, ttl)
        return True, not first_try

    async def renew_outcome(self, call_id: str, owner: str, ttl: int) -> bool:
        """Extend ``owner``'s hold of ``take_outcome`` to ``ttl`` seconds from now; False when it is not
        ``owner``'s any more (it lapsed and another poster took it)."""
        return bool(await self.redis.eval(_RENEW, 1, f"{self.prefix}:outcome:{call_id}", owner, ttl))

    async def renew_outcomes(self, holds: Sequence[tuple[str, str]], ttl: int) -> list[bool]:
        """``renew_outcome`` of every ``(call id, owner)`` hold, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for call_id, owner in holds:
                pipe.eval(_RENEW, 1, f"{self.prefix}:outcome:{call_id}", owner, ttl)
            return [bool(renewed) for renewed in await pipe.execute()]

    async def give_outcome_back(self, conversation: str, call_id: str, owner: str, *, posted: bool) -> None:
        """Release the hold of ``take_outcome`` (if ``owner`` still has it); ``posted``: the result is in the
        thread, nothing of the call is left for a reply to wait for."""
        async with self.redis.pipeline(transaction=False) as pipe:
            self.queue_give_outcome_back(pipe, conversation, call_id, owner, posted=posted)
            await pipe.execute()

    def queue_give_outcome_back(self, pipe: Any, conversation: str, call_id: str, owner: str, *,
                                posted: bool) -> None:
        """``give_outcome_back`` queued on the caller's pipeline, after the write that records the post."""
        if posted:
            pipe.srem(f"{self.prefix}:cards:{conversation}", call_id)
        pipe.eval(_RELEASE, 1, f"{self.prefix}:outcome:{call_id}", owner)

    async def awaiting_outcome(self, conversation: str) -> list[str]:
        """The thread's carded calls whose result or note is not posted yet (terminal or not)."""
        return sorted(_text(c) for c in await self.redis.smembers(f"{self.prefix}:cards:{conversation}"))

    def _done_key(self, stream: str, entry_id: str) -> str:
        return f"{self.prefix}:done:{stream}:{entry_id}"

    async def start(self, stream: str, entry_id: str) -> tuple[bool, bool]:
        """(already done, retry), in one round trip. Handling of an entry is recorded as started; retry is True
        when an earlier attempt started and never finished (a crash, ours or another replica's), so what it
        posted must be looked for before posting again."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(self._done_key(stream, entry_id))
            pipe.set(f"{self.prefix}:attempt:{stream}:{entry_id}", "1", nx=True, ex=self.settings.event_dedupe_seconds)
            done, fresh = await pipe.execute()
        return bool(done), not fresh

    async def start_many(self, stream: str, entry_ids: Sequence[str]) -> list[tuple[bool, bool]]:
        """``start`` of each entry of a batch, in one round trip."""
        if not entry_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for entry_id in entry_ids:
                pipe.exists(self._done_key(stream, entry_id))
                pipe.set(f"{self.prefix}:attempt:{stream}:{entry_id}", "1", nx=True,
                         ex=self.settings.event_dedupe_seconds)
            replies = await pipe.execute()
        return [(bool(replies[i]), not replies[i + 1]) for i in range(0, len(replies), 2)]

    async def finish(self, stream: str, entry_id: str, group: str) -> None:
        """Record the entry as done and acknowledge it to the consumer group, in one round trip."""
        await self.finish_many([(stream, entry_id, True)], group)

    async def finish_many(self, entries: Sequence[tuple[str, str, bool]], group: str) -> None:
        """Acknowledge entries ``(stream, entry id, record it as done)`` to the consumer group, each recorded as
        done first when asked (a re-delivered one is then skipped), in one round trip."""
        acks: dict[str, list[str]] = {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream, entry_id, done in entries:
                if done:
                    pipe.set(self._done_key(stream, entry_id), "1", ex=self.settings.event_dedupe_seconds)
                acks.setdefault(stream, []).append(entry_id)
            for stream, ids in acks.items():
                pipe.xack(stream, group, *ids)
            await pipe.execute()

