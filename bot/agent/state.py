"""Conversation state in Redis: transcript, the open turn, pending calls, queued user messages, the lock.

Nothing a restart would lose is held in memory. Every key of one conversation carries the hash tag
``{conv:<key>}`` so the fenced save (one Lua script touching lock, transcript, state and queue) runs on Redis
Cluster too. The per-user rate counter is keyed by user (its own slot) and never written in that script.

Concurrency: a conversation advances only while its process holds ``lock`` (SET NX PX with a random token,
renewed while working). Every write of transcript/state goes through ``save``, which checks the token inside
the script: a process that lost its lock (paused past the TTL) can no longer write, so two processes can
never interleave one conversation's history.
"""

from __future__ import annotations

import json
import secrets
import time
import zlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer, model_validator
from redis.asyncio import Redis

from bot.approvals.records import Proposal

_SAVE = r"""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[4])
redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[4])
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[4], ARGV[5]) end
if ARGV[6] == '1' then redis.call('DEL', KEYS[4]) end
return 1
"""
_RENEW = r"""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = r"""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_ENQUEUE = r"""
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 0 end  -- the seen set of a previous version
if redis.call('HSETNX', KEYS[1], ARGV[1], '') == 0 then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1
"""


#: A transcript whose JSON is longer than this is stored zlib-compressed: tool inputs, tool results and repeated
#: block keys compress 2-4x, and the transcript is the largest key of a conversation. Shorter ones stay JSON.
COMPRESS_ABOVE = 512
_ZLIB_MARK = b"z:"  # JSON never starts with it
#: The most a stored transcript may decompress to: far above what the agent writes (``transcript_max_bytes``, 2 MB
#: by default, plus one turn of capped tool results; all of it is sent to the model, whose context window holds a
#: few MB of text), far below what would exhaust memory. Anyone who can write Redis could otherwise store a few
#: hundred KiB that inflate a thousandfold in the agent role.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


def encode_transcript(transcript: list[dict[str, Any]]) -> bytes:
    raw = json.dumps(transcript, separators=(",", ":")).encode()
    return raw if len(raw) <= COMPRESS_ABOVE else _ZLIB_MARK + zlib.compress(raw, 6)


def decode_transcript(stored: bytes | str | None) -> list[dict[str, Any]]:
    """The transcript as ``encode_transcript`` stored it, or plain JSON (as a previous version stored it)."""
    if not stored:
        return []
    raw = stored.encode() if isinstance(stored, str) else stored
    if raw.startswith(_ZLIB_MARK):
        inflater = zlib.decompressobj()
        raw = inflater.decompress(raw[len(_ZLIB_MARK):], MAX_TRANSCRIPT_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"stored transcript inflates to more than {MAX_TRANSCRIPT_BYTES} bytes; not loaded")
    loaded: list[dict[str, Any]] = json.loads(raw)
    return loaded


class PendingCall(BaseModel):
    """One tool_use of the suspended assistant turn, in block order.

    Either planned (the ``proposal``, kept so a crash between saving and proposing is repaired by proposing
    again: the store is idempotent on tool_use ids), then proposed (``call_id``; the proposal is dropped, the
    call record holds it), or answered locally
    (``local_result``: unknown tool or invalid arguments, sent back as an is_error tool_result).
    """

    tool_use_id: str
    call_id: str | None = None
    proposal: Proposal | None = None
    local_result: str | None = None
    local_is_error: bool = True

    @model_validator(mode="before")
    @classmethod
    def _tool_use_from_call_id(cls, data: Any) -> Any:
        """A proposed call is stored without its tool_use id: the call id is made from it (``<shard>-<id>``)."""
        if isinstance(data, dict) and "tool_use_id" not in data and data.get("call_id"):
            return {**data, "tool_use_id": str(data["call_id"]).partition("-")[2]}
        return data

    @model_serializer(mode="wrap")
    def _without_derivable_tool_use_id(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.call_id is not None and self.call_id.partition("-")[2] == self.tool_use_id:
            data.pop("tool_use_id", None)
        return data


class Turn(BaseModel):
    """The user turn in progress: ``id`` is the inbox event id that started it (idempotency key)."""

    id: str
    user: str
    meta: dict[str, str] = Field(default_factory=dict)
    iterations: int = 0
    start: int = 0  # transcript index of the turn's user message


class ConvState(BaseModel):
    turn: Turn | None = None
    pending: list[PendingCall] = Field(default_factory=list)
    tokens_used: int = 0
    stopped: bool = False


class QueuedMessage(BaseModel):
    """A user message waiting for its turn; ``id`` is the inbox stream id (members sort by it)."""

    id: str
    user: str
    text: str
    meta: dict[str, str] = Field(default_factory=dict)

    def member(self) -> str:
        ms, _, seq = self.id.partition("-")
        return f"{int(ms or 0):015d}-{int(seq or 0):09d}|" + self.model_dump_json()


@dataclass
class Snapshot:
    """What ``ConversationStore.snapshot`` read: the state, who asked to stop (None: nobody), and the stored
    transcript, decoded on first use of ``transcript()``."""

    state: ConvState
    stopper: str | None
    stored_transcript: bytes | str | None
    _decoded: list[dict[str, Any]] | None = None

    def transcript(self) -> list[dict[str, Any]]:
        if self._decoded is None:
            self._decoded = decode_transcript(self.stored_transcript)
        return self._decoded


class ConversationStore:
    """Redis operations on one or many conversations (stateless: any replica may use any conversation)."""

    def __init__(self, redis: Redis, *, retention_seconds: int, prefix: str = "fc") -> None:
        self.redis = redis
        self.retention = retention_seconds
        self.prefix = prefix
        self._save = redis.register_script(_SAVE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._enqueue = redis.register_script(_ENQUEUE)

    def key(self, conversation: str, name: str) -> str:
        return f"{self.prefix}:{{conv:{conversation}}}:{name}"

    # ---------------------------------------------------------------- lock

    async def acquire(self, conversation: str, ttl: float) -> str | None:
        token = secrets.token_hex(16)
        ok = await self.redis.set(self.key(conversation, "lock"), token, nx=True, px=int(ttl * 1000))
        return token if ok else None

    async def renew(self, conversation: str, token: str, ttl: float) -> bool:
        return bool(await self._renew(keys=[self.key(conversation, "lock")], args=[token, int(ttl * 1000)]))

    async def release(self, conversation: str, token: str) -> None:
        await self._release(keys=[self.key(conversation, "lock")], args=[token])

    # ---------------------------------------------------------------- transcript and state

    async def load(self, conversation: str) -> tuple[list[dict[str, Any]], ConvState]:
        raw_t, raw_s = await self.redis.mget(self.key(conversation, "transcript"), self.key(conversation, "state"))
        transcript = decode_transcript(raw_t)
        state = ConvState.model_validate_json(raw_s) if raw_s else ConvState()
        return transcript, state

    async def snapshot(self, conversation: str, *, transcript: bool = True) -> Snapshot:
        """State, stop request and (``transcript``) the transcript still encoded, in one round trip: the
        transcript (the largest key, often compressed) is decoded only by a step that needs it; most completions
        of a multi-call turn find calls still open and need only the state."""
        names = ("state", "stop", "transcript") if transcript else ("state", "stop")
        raw_s, raw_stop, *raw_t = await self.redis.mget(*(self.key(conversation, n) for n in names))
        state = ConvState.model_validate_json(raw_s) if raw_s else ConvState()
        stopper = (raw_stop.decode() if isinstance(raw_stop, bytes) else str(raw_stop)) if raw_stop else None
        return Snapshot(state, stopper, raw_t[0] if raw_t else None)

    async def save(
        self,
        conversation: str,
        token: str,
        transcript: list[dict[str, Any]],
        state: ConvState,
        *,
        dequeue: QueuedMessage | None = None,
        clear_queue: bool = False,
    ) -> bool:
        """Write transcript and state (and remove a dequeued message) atomically, only while we hold the lock."""
        ok = await self._save(
            keys=[self.key(conversation, n) for n in ("lock", "transcript", "state", "queue")],
            args=[token, encode_transcript(transcript), state.model_dump_json(exclude_defaults=True),
                  self.retention,
                  dequeue.member() if dequeue else "", "1" if clear_queue else "0"],
        )
        return bool(ok)

    # ---------------------------------------------------------------- queue of user messages

    async def enqueue(self, conversation: str, message: QueuedMessage) -> bool:
        """Queue a user message once per inbox event id (False: a redelivery, already queued or handled)."""
        return bool(await self._enqueue(
            keys=[self.key(conversation, "handled"), self.key(conversation, "queue"), self.key(conversation, "seen")],
            args=[message.id, message.member(), self.retention],
        ))

    async def seen(self, conversation: str, event_id: str) -> bool:
        """Whether this inbox event was queued or handled already. The ids are fields of a small hash (Redis keeps
        it as a listpack; a set is a hash table before Redis 7.2); a previous version's set is still read."""
        if await self.redis.hexists(self.key(conversation, "handled"), event_id):
            return True
        return bool(await self.redis.sismember(self.key(conversation, "seen"), event_id))

    async def mark_seen(self, conversation: str, event_id: str) -> None:
        await self.redis.hset(self.key(conversation, "handled"), event_id, "")
        await self.redis.expire(self.key(conversation, "handled"), self.retention)

    async def next_queued(self, conversation: str) -> QueuedMessage | None:
        members = await self.redis.zrange(self.key(conversation, "queue"), 0, 0)
        if not members:
            return None
        raw = members[0].decode() if isinstance(members[0], bytes) else str(members[0])
        return QueuedMessage.model_validate_json(raw.partition("|")[2])

    # ---------------------------------------------------------------- stop requests

    async def request_stop(self, conversation: str, user: str) -> None:
        await self.redis.set(self.key(conversation, "stop"), user, ex=self.retention)

    async def stop_requested(self, conversation: str) -> str | None:
        raw = await self.redis.get(self.key(conversation, "stop"))
        return (raw.decode() if isinstance(raw, bytes) else str(raw)) if raw else None

    async def clear_stop(self, conversation: str) -> None:
        await self.redis.delete(self.key(conversation, "stop"))

    # ---------------------------------------------------------------- per-user rate limit

    async def rate_exceeded(self, user: str, limit: int, now: float | None = None) -> bool:
        """Fixed one-minute window per user (INCR + EXPIRE); True when this message is over the limit."""
        minute = int((now if now is not None else time.time()) // 60)
        key = f"{self.prefix}:{{user:{user}}}:rate:{minute}"
        count = await self.redis.incr(key)
        if count == 1:
            await self.redis.expire(key, 120)
        return int(count) > limit
