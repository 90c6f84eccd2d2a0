"""``AgentWorker``: the agent role's process loop.

It consumes two kinds of streams with the consumer group ``agent`` (replicas share the work):

* the inbox (``bus.INBOX``): ``user_message`` is queued for its conversation (idempotent per entry id),
  ``stop`` cancels the conversation's pending calls;
* every shard's approvals completions stream: a call reached a terminal state, so its conversation may resume.

Each event then calls ``Agent.drive(conversation)``, and the entry is acked only after that returns, so a
process killed mid-turn leaves the entry pending; another replica takes it over with XAUTOCLAIM after
``reclaim_after`` seconds and drives the conversation from what Redis says (the per-conversation lock, whose
TTL expires with its dead holder, keeps two replicas from advancing one conversation together). Handling is
idempotent: a redelivered message is not queued twice (seen set), calls are proposed with the model's
tool_use ids (the store creates each call once), and a completion for a conversation with nothing to do is a
no-op.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.agent import bus
from bot.agent.loop import Agent
from bot.agent.summary import summarize
from bot.streams import next_read_id, stop_consumer, unseen_pending
from bot.streams import text as _text

log = logging.getLogger(__name__)

GROUP = "agent"
SEEN_KEPT = 8192  # entries whose handling this worker remembers (those it left pending are not re-read early)



class AgentWorker:
    """One agent replica: ``await AgentWorker(redis, agent).run(stop_event)``."""

    def __init__(
        self,
        redis: Redis,
        agent: Agent,
        *,
        consumer: str | None = None,
        concurrency: int = 32,
        block_seconds: float = 1.0,
        reclaim_after: float | None = None,
        reader: Redis | None = None,
    ) -> None:
        self.redis = redis
        self.reader = reader or redis  # blocking reads hold a connection: their own pool (bot/redis_pool.py)
        self.agent = agent
        self.consumer = consumer or f"agent-{uuid.uuid4().hex[:12]}"
        self.block_ms = max(1, int(block_seconds * 1000))
        self.reclaim_after = (reclaim_after if reclaim_after is not None
                              else agent.settings.reclaim_after_seconds)
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._inflight: set[str] = set()
        self._seen: OrderedDict[str, None] = OrderedDict()  # entries handed to a task, most recent last (bounded)

    def streams(self) -> list[str]:
        shards = self.agent.store.keys.all_shards()
        return [bus.INBOX, *(self.agent.store.keys.completions_stream(s) for s in shards)]

    async def run(self, stop_event: asyncio.Event) -> None:
        for stream in self.streams():
            await self._ensure_group(stream)
        loops = [asyncio.create_task(self._read_loop(s)) for s in self.streams()]
        loops.append(asyncio.create_task(self._reclaim_loop()))
        try:
            await stop_event.wait()
        finally:
            await stop_consumer(loops, self._tasks)

    async def _ensure_group(self, stream: str) -> None:
        """Create the group, retrying while Redis is unreachable (a restart of Redis must not end the role)."""
        while True:
            try:
                await bus.ensure_group(self.redis, stream, GROUP)
                return
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.warning("agent %s: creating the group on %s failed (%s); retrying", self.consumer, stream, exc)
                await asyncio.sleep(0.5)

    async def _read_loop(self, stream: str) -> None:
        """Never ends on its own: a loop that died would leave every later message unread until a restart.

        Every ``_recheck_seconds`` it reads its own pending entries once more: a read whose reply was lost (the
        connection cut after Redis delivered; redis-py retries the read itself and gets only newer entries) left
        entries delivered to this worker that nothing works on, which would otherwise wait ``reclaim_after``
        (60 s by default: under load, acknowledged requests answered minutes late). Only entries this worker never
        saw are taken up there: one it handled and left pending (failed, or its conversation busy elsewhere)
        stays the reclaim loop's, at its own pace."""
        last_id = "0"  # first our own pending entries (a restart with the same consumer name), then new ones
        clock = asyncio.get_running_loop().time
        recheck_at = clock() + self._recheck_seconds()
        while True:
            if last_id == ">" and clock() >= recheck_at:
                recheck_at = clock() + self._recheck_seconds()
                try:
                    lost = await unseen_pending(self.redis, stream, GROUP, self.consumer,
                                                    lambda i: f"{stream}/{i}" in self._seen)
                except (RedisConnectionError, RedisTimeoutError, OSError, ResponseError) as exc:
                    log.warning("agent %s: looking for lost reads of %s failed (%s)", self.consumer, stream, exc)
                    lost = []
                for entry_id, fields in lost:
                    await self._spawn(stream, _text(entry_id), fields)
                continue
            try:
                reply: Any = await self.reader.xreadgroup(
                    GROUP, self.consumer, {stream: last_id}, count=32, block=None if last_id != ">" else self.block_ms
                )
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.warning("agent %s: reading %s failed (%s)", self.consumer, stream, exc)
                await asyncio.sleep(0.5)
                continue
            except ResponseError as exc:
                if "NOGROUP" in str(exc):  # the stream was deleted (a flushed or replaced Redis): recreate it
                    log.warning("agent %s: %s lost its consumer group; recreating it", self.consumer, stream)
                    await self._ensure_group(stream)
                else:
                    log.error("agent %s: reading %s failed (%s); retrying", self.consumer, stream, exc)
                    await asyncio.sleep(1.0)
                continue
            entries = reply[0][1] if reply else []
            last_id = next_read_id(last_id, entries)
            for entry_id, fields in entries:
                await self._spawn(stream, _text(entry_id), fields)

    def _recheck_seconds(self) -> float:
        """How often the read loop looks at its own pending entries again: as often as the reclaim loop runs,
        at least every 5 s."""
        return min(max(0.05, self.reclaim_after / 2), 5.0)

    async def _reclaim_loop(self) -> None:
        while True:
            await asyncio.sleep(max(0.05, self.reclaim_after / 2))
            for stream in self.streams():
                try:
                    reply: Any = await self.redis.xautoclaim(
                        stream, GROUP, self.consumer, int(self.reclaim_after * 1000), "0-0", count=32
                    )
                except Exception as exc:
                    log.warning("agent %s: reclaiming on %s failed (%s)", self.consumer, stream, exc)
                    continue
                for entry_id, fields in reply[1] if len(reply) > 1 else []:
                    if fields is None:  # trimmed while pending
                        with contextlib.suppress(RedisError, OSError):  # still pending: acked on the next pass
                            await self.redis.xack(stream, GROUP, entry_id)
                        continue
                    await self._spawn(stream, _text(entry_id), fields)

    async def _spawn(self, stream: str, entry_id: str, fields: Any) -> None:
        key = f"{stream}/{entry_id}"
        if key in self._inflight:
            return
        await self._slots.acquire()
        self._inflight.add(key)
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > SEEN_KEPT:
            self._seen.popitem(last=False)
        task = asyncio.create_task(self._handle(stream, entry_id, fields or {}, key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, stream: str, entry_id: str, fields: Any, key: str) -> None:
        try:
            decoded = {_text(k): _text(v) for k, v in fields.items()}
            if stream == bus.INBOX:
                event = bus.BusEvent.from_fields(entry_id, fields)
                conversation = event.conversation
                if event.kind == "user_message":
                    meta = {str(k): str(v) for k, v in (event.data.get("meta") or {}).items()}
                    await self.agent.submit(conversation, entry_id, str(event.data.get("user", "")),
                                            str(event.data.get("text", "")), meta)
                elif event.kind == "stop":
                    await self.agent.stop(conversation, str(event.data.get("user", "")))
                elif event.kind == "summary":  # outside the conversation: no drive, never run twice
                    await summarize(self.agent, conversation, str(event.data.get("user", "")),
                                    str(event.data.get("material", "")))
                    await self.redis.xack(stream, GROUP, entry_id)
                    return
            else:
                conversation = decoded.get("conversation", "")
            if conversation and not await self.agent.drive(conversation):
                return  # busy elsewhere (or its holder died): left pending, redelivered by XAUTOCLAIM
            await self.redis.xack(stream, GROUP, entry_id)
        except Exception:
            log.exception("agent %s: %s %s failed; it stays pending for a retry", self.consumer, stream, entry_id)
        finally:
            self._inflight.discard(key)
            self._slots.release()
