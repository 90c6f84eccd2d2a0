"""The shared base of ``CallStore``: its settings and registered scripts, the reads, and closing a call.

``CallStore`` (``store.py``) is assembled from three parts that each own one side of the lifecycle: creation
(``store_creation.py``), human decisions (``store_decisions.py``) and the runner's transitions
(``store_runs.py``). They all build on this class, which keeps what they share: the Redis client, the key
layout, the scripts registered once per store, the record reads any caller needs, and ``_close_call``
(used by a denial, a cancel and the expiry sweeper alike). No state is kept in memory: any replica can serve
any call.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from redis.asyncio import Redis

from bot.approvals import scripts
from bot.approvals.decisions import DecisionSigner
from bot.approvals.errors import CallNotFound, NotDurable
from bot.approvals.grants import GrantStore
from bot.approvals.keys import Keys
from bot.approvals.records import CallRecord, CallState, epoch_text
from bot.approvals.replies import unwrap_reply
from bot.metrics import UNCONFIRMED_WRITES
from bot.redis_durable import DurabilitySettings, DurableScripts
from bot.streams import text as _text

# one logger for the whole store, named as before it was split, so operators' log filters keep working
log = logging.getLogger("bot.approvals.store")


class StoreBase:
    """What every part of ``CallStore`` shares: the connection, keys, registered scripts, reads, closing a call."""

    def __init__(
        self,
        redis: Redis,
        *,
        retention_seconds: float = 7 * 86400,
        key_prefix: str = "fc",
        shards: int = 1,
        heartbeat_ttl: float = 10.0,
        clock: Callable[[], float] = time.time,
        signer: DecisionSigner | None = None,
        redact_patterns: Sequence[str] = (),
        durability: DurabilitySettings | None = None,
    ) -> None:
        self.redis = redis
        # approve, claim and finish wait for replicas (redis.durability; auto: one when the primary has any, or
        # should have one: a replica the sentinels or the cluster list, or one a process saw, marked in Redis)
        self.durable = DurableScripts(redis, durability, marks_prefix=f"{key_prefix}:durability")
        # execution.redact_patterns: also applied to the command line kept on the record and the audit trail
        self.redact_patterns = tuple(redact_patterns)
        self.signer = signer
        self.keys = Keys(key_prefix, shards)
        self.retention_seconds = retention_seconds
        self.heartbeat_ttl = heartbeat_ttl
        self._clock = clock
        self.grants = GrantStore(redis, self.keys, retention_seconds=retention_seconds, clock=clock, signer=signer)
        self._create = redis.register_script(scripts.CREATE)
        self._approve = redis.register_script(scripts.APPROVE)
        self._close = redis.register_script(scripts.CLOSE)
        self._claim = redis.register_script(scripts.CLAIM)
        self._heartbeat = redis.register_script(scripts.HEARTBEAT)
        self._finish = redis.register_script(scripts.FINISH)
        self._interrupt = redis.register_script(scripts.INTERRUPT)
        self._set_meta = redis.register_script(scripts.SET_META)
        self._cancel_running = redis.register_script(scripts.CANCEL)
        self._release = redis.register_script(scripts.RELEASE)
        self._handback = redis.register_script(scripts.HANDBACK)
        self._unpark = redis.register_script(scripts.UNPARK)
        self._take = redis.register_script(scripts.TAKE)
        self._demote = redis.register_script(scripts.DEMOTE)

    # ---------------------------------------------------------------- reads

    async def find(self, call_id: str) -> CallRecord | None:
        try:
            key = self.keys.call(call_id)
        except ValueError:
            return None
        # A pipeline, not a script: Redis holds scripts back during CLIENT PAUSE WRITE (FAILOVER and CLUSTER
        # FAILOVER pause writes for up to seconds) but keeps answering plain reads, and the poster and recorder
        # must keep reading then. One round trip: both keys are in one slot.
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(key)
            pipe.get(self.keys.body(call_id))
            raw, body = await pipe.execute()
        return CallRecord.from_redis(raw, body, call_id) if raw else None

    def clock(self) -> float:
        """Now, by the clock the store's transitions are stamped with (epoch seconds)."""
        return self._clock()

    def _call_keys(self, call_ids: Sequence[str]) -> list[str | None]:
        """The record key of each call, None for an id no key can be made of (the batch reads answer None)."""
        keys: list[str | None] = []
        for call_id in call_ids:
            try:
                keys.append(self.keys.call(call_id))
            except ValueError:
                keys.append(None)
        return keys

    async def find_many(self, call_ids: Sequence[str]) -> list[CallRecord | None]:
        """``find`` of each call, in one round trip (None: no such call, or an id no key can be made of)."""
        keys = self._call_keys(call_ids)
        replies: list[Any] = []
        if any(keys):
            async with self.redis.pipeline(transaction=False) as pipe:
                for call_id, key in zip(call_ids, keys, strict=True):
                    if key is not None:
                        pipe.hgetall(key)
                        pipe.get(self.keys.body(call_id))
                replies = await pipe.execute()
        pairs = iter(zip(replies[0::2], replies[1::2], strict=True))
        records: list[CallRecord | None] = []
        for call_id, key in zip(call_ids, keys, strict=True):
            raw, body = next(pairs) if key is not None else ({}, None)
            records.append(CallRecord.from_redis(raw, body, call_id) if raw else None)
        return records

    async def states(self, call_ids: Sequence[str]) -> list[CallState | None]:
        """The lifecycle state of each call, in one round trip of one-field reads (None: no such call): what a
        caller that only asks "is it over yet?" needs, without building whole records."""
        keys = self._call_keys(call_ids)
        replies: list[Any] = []
        if any(keys):
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    if key is not None:
                        pipe.hget(key, "state")
                replies = await pipe.execute()
        answers = iter(replies)
        states: list[CallState | None] = []
        for key in keys:
            raw = next(answers) if key is not None else None
            states.append(CallState(_text(raw)) if raw else None)
        return states

    async def human_decision_wait(self, call_id: str) -> float | None:
        """Seconds from proposal to a human's decision; None for a policy decision, no decision or no call."""
        return (await self.human_decision_waits([call_id]))[0]

    async def human_decision_waits(self, call_ids: Sequence[str]) -> list[float | None]:
        """``human_decision_wait`` of each call, in one round trip (a pipeline of two-field reads, not whole
        records): the runner's metrics loop asks this for every batch of completions."""
        keys = self._call_keys(call_ids)
        readable = [k for k in keys if k is not None]
        replies: list[Any] = []
        if readable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in readable:
                    pipe.hmget(key, ["created_at", "decision"])
                replies = await pipe.execute()
        answers = iter(replies)
        return [_decision_wait(*next(answers)) if key is not None else None for key in keys]

    async def get(self, call_id: str) -> CallRecord:
        record = await self.find(call_id)
        if record is None:
            raise CallNotFound(call_id)
        return record

    async def pending(self, conversation: str) -> list[CallRecord]:
        """Calls of a thread awaiting approval, oldest first."""
        return await self._records(await self._conversation_calls(conversation, awaiting_only=True))

    async def open_calls(self, conversation: str) -> list[CallRecord]:
        """Calls of a thread that are not terminal yet (awaiting, approved, running), oldest first."""
        return await self._records(await self._conversation_calls(conversation, awaiting_only=False))

    async def _conversation_calls(self, conversation: str, *, awaiting_only: bool) -> set[str]:
        """Ids from the thread's hash of open calls, and from the sets an earlier version kept them in."""
        shard = self.keys.shard_for_conversation(conversation)
        earlier = self.keys.conv_pending if awaiting_only else self.keys.conv_open
        async with self.redis.pipeline(transaction=False) as pipe:  # one round trip: one slot
            pipe.hgetall(self.keys.conv_calls(shard, conversation))
            pipe.smembers(earlier(shard, conversation))
            calls, before = await pipe.execute()
        ids = {_text(k) for k, v in calls.items() if not awaiting_only or _text(v) == "p"}
        return ids | {_text(i) for i in before}

    # ---------------------------------------------------------------- shared helpers

    async def _immutable_view(self, call_id: str, known: CallRecord | None) -> CallRecord:
        """A record to take the fixed fields from: the caller's copy of this call, else read now."""
        if known is not None and known.id == call_id:
            return known
        return await self.get(call_id)

    async def _close_call(
        self,
        call_id: str,
        actor: str,
        reason: str,
        allowed: str,
        target: CallState,
        mode: str,
        now: float | None = None,
        durable: str | None = None,
    ) -> CallRecord:
        """``durable``: a decision a person is told about ("denial", "cancel"), so it waits for the replicas as
        approve does. A denial no replica acknowledged raises ``NotDurable`` (carrying the record: it IS denied on
        the primary) so the denier is told a failover could still undo it; a cancel is counted and logged (its
        callers tell nobody more than "stopped"). Lost in a failover, either leaves the call awaiting (nothing
        runs without an approval; the sweeper expires it) or approved-not-run for a cancel of an approved call."""
        try:
            key = self.keys.call(call_id)
        except ValueError as exc:
            raise CallNotFound(call_id) from exc
        moment = self._clock() if now is None else now
        keys = [key]
        args = [*self._common(self.keys.shard_of_call(call_id), moment), call_id, actor, reason, allowed,
                target.value, mode]
        if durable is None:
            return unwrap_reply(await self._close(keys=keys, args=args), call_id)
        reply, ack = await self.durable.run(self._close, keys, args)
        result = unwrap_reply(reply, call_id)
        if not ack.durable:
            UNCONFIRMED_WRITES.labels(durable).inc()
            log.warning("call %s: %s by %s is on the Redis primary only (%d of %d replicas within %d ms)", call_id,
                        durable, actor, ack.acked, ack.wanted, ack.timeout_ms, extra={"call_id": call_id})
            if durable == "denial":
                raise NotDurable(durable, call_id, ack.wanted, ack.acked, ack.timeout_ms, record=result)
        return result

    def _common(self, shard: int, now: float) -> list[str]:
        min_ms = max(0, int((now - self.retention_seconds) * 1000))
        return [self.keys.base(shard), epoch_text(now), str(int(self.retention_seconds)), f"{min_ms}-0"]

    def _new_id(self, shard: int, tool_use_id: str | None) -> str:
        return f"{shard}-{tool_use_id or uuid.uuid4().hex}"

    async def _records(self, raw_ids: Iterable[Any]) -> list[CallRecord]:
        records = []
        for raw_id in raw_ids:
            record = await self.find(_text(raw_id))
            if record is not None:
                records.append(record)
        return sorted(records, key=lambda r: (r.created_at, r.id))


def _decision_wait(created: Any, decision: Any) -> float | None:
    """Seconds from ``created_at`` to the decision's time, when a human (not the policy) decided."""
    if not created or not decision:
        return None
    try:  # a malformed record (Redis writer) must not end the runner whose metrics loop asks this
        data = json.loads(decision)
        if data.get("actor") == "policy":
            return None
        return max(0.0, float(data["at"]) - float(created))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
