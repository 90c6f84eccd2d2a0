"""Incident records in Redis: one open incident per alert group (or PagerDuty incident), atomically.

Keys (prefix ``fc:{inc}`` by default; the hash tag keeps every key in one slot, so the script below runs on
Redis Cluster too):

* ``<p>:open:<source>:<sha256 of the group key>`` -> incident id while the incident is open; removed when it
  resolves, so the same group firing again later opens a new incident (and thread).
* ``<p>:incident:<id>``: hash with the source, key, route, channel, state, counters, times, the firing alerts'
  fingerprints and, once the Slack poster has posted the card, ``thread_ts`` and ``conversation``.
* ``<p>:events:<id>``: stream of what the sources said (trigger, repeats, acknowledgement, resolution) for the
  timeline.
* ``<p>:conv:<conversation>`` -> incident id (the thread's incident, for the timeline).
* ``<p>:seen:<source>:<event id>``: a delivery already handled (PagerDuty retries carry the same id).
* ``<p>:rate:<route>:<minute>``: deliveries per route per minute.

Everything expires after ``retention_seconds`` (refreshed on each delivery).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from bot.streams import text as _text

# KEYS[1] open key, KEYS[2] seen key ('' slot-mate when unused); ARGV: 1 prefix, 2 new id, 3 status, 4 now,
# 5 ttl, 6 new-incident fields (JSON object), 7 fingerprints (JSON), 8 event (JSON), 9 '1' if KEYS[2] is used
_APPLY = r"""
if ARGV[9] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[5]) then
    return {'duplicate', redis.call('GET', KEYS[1]) or '', ''}
  end
end
local status = ARGV[3]
local id = redis.call('GET', KEYS[1])
local outcome
local previous = ''
if not id then
  if status ~= 'firing' then return {'none', '', ''} end
  id = ARGV[2]
  outcome = 'new'
  local key = ARGV[1] .. ':incident:' .. id
  redis.call('SET', KEYS[1], id, 'EX', ARGV[5])
  for k, v in pairs(cjson.decode(ARGV[6])) do redis.call('HSET', key, k, v) end
  redis.call('HSET', key, 'id', id, 'state', 'open', 'deliveries', '1', 'opened_at', ARGV[4])
else
  local key = ARGV[1] .. ':incident:' .. id
  previous = redis.call('HGET', key, 'fingerprints') or '[]'
  redis.call('HINCRBY', key, 'deliveries', 1)
  outcome = 'repeat'
  if status == 'resolved' then
    redis.call('DEL', KEYS[1])
    redis.call('HSET', key, 'state', 'resolved', 'resolved_at', ARGV[4])
    outcome = 'resolved'
  elseif status == 'acknowledged' then
    redis.call('HSET', key, 'state', 'acknowledged')
  elseif status == 'firing' and redis.call('HGET', key, 'state') == 'acknowledged' then
    redis.call('HSET', key, 'state', 'open')
  end
  redis.call('EXPIRE', KEYS[1], ARGV[5])
end
local key = ARGV[1] .. ':incident:' .. id
redis.call('HSET', key, 'updated_at', ARGV[4], 'fingerprints', ARGV[7])
redis.call('EXPIRE', key, ARGV[5])
local events = ARGV[1] .. ':events:' .. id
redis.call('XADD', events, '*', 'event', ARGV[8])
redis.call('EXPIRE', events, ARGV[5])
return {outcome, id, previous}
"""


@dataclass(frozen=True)
class Applied:
    """What a delivery did: ``new`` incident, ``repeat`` of an open one, ``resolved``, ``none`` (nothing open to
    update), ``duplicate`` (this very delivery was handled before; ``incident_id`` is the incident still open
    for its key, if any)."""

    outcome: str
    incident_id: str
    previous_fingerprints: list[str]


class IncidentStore:
    def __init__(self, redis: Redis, *, prefix: str = "fc:{inc}", retention_seconds: int = 90 * 86400,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.redis = redis
        self.prefix = prefix
        self.retention = retention_seconds
        self._clock = clock
        self._apply = redis.register_script(_APPLY)

    def incident_key(self, incident_id: str) -> str:
        return f"{self.prefix}:incident:{incident_id}"

    def events_key(self, incident_id: str) -> str:
        return f"{self.prefix}:events:{incident_id}"

    def conv_key(self, conversation: str) -> str:
        return f"{self.prefix}:conv:{conversation}"

    def timeline_key(self, conversation: str) -> str:
        """The thread's timeline: a list of JSON entries (see ``recorder.py``)."""
        return f"{self.prefix}:tlog:{conversation}"

    def stream_timeline_key(self, conversation: str) -> str:
        """Where versions before the list kept a thread's timeline (a stream): read until it expires."""
        return f"{self.prefix}:tl:{conversation}"

    async def apply(
        self, *, source: str, key: str, status: str, event: dict[str, Any], fields: dict[str, str],
        fingerprints: list[str], event_id: str = "",
    ) -> Applied:
        """Open, update or resolve the incident of ``(source, key)`` in one script (safe across replicas)."""
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        open_key = f"{self.prefix}:open:{source}:{digest}"
        seen_key = f"{self.prefix}:seen:{source}:{hashlib.sha256(event_id.encode()).hexdigest()[:40]}"
        now = self._clock()
        reply = await self._apply(
            keys=[open_key, seen_key],
            args=[self.prefix, uuid.uuid4().hex[:16], status, repr(now), self.retention, json.dumps(fields),
                  json.dumps(fingerprints), json.dumps({**event, "at": now}), "1" if event_id else "0"],
        )  # fmt: skip
        outcome, incident_id, previous = (_text(x) for x in reply)
        return Applied(outcome, incident_id, json.loads(previous) if previous else [])

    async def get(self, incident_id: str) -> dict[str, str]:
        raw = await self.redis.hgetall(self.incident_key(incident_id))
        return {_text(k): _text(v) for k, v in raw.items()}

    async def claim_thread(self, incident_id: str) -> bool:
        """True for the one delivery (of any replica) that queues the incident's thread_open."""
        return bool(await self.redis.hsetnx(self.incident_key(incident_id), "thread_queued", "1"))

    async def events(self, incident_id: str) -> list[dict[str, Any]]:
        raw: Any = await self.redis.xrange(self.events_key(incident_id))
        return [json.loads(_text(fields[b"event"] if b"event" in fields else fields["event"])) for _i, fields in raw]

    async def link(self, conversation: str, incident_id: str) -> None:
        """The thread's conversation belongs to this incident (written when its first message is seen)."""
        await self.redis.set(self.conv_key(conversation), incident_id, ex=self.retention)
        await self.redis.hset(self.incident_key(incident_id), "conversation", conversation)

    async def incident_of(self, conversation: str) -> str | None:
        raw = await self.redis.get(self.conv_key(conversation))
        return _text(raw) if raw else None

    async def over_rate(self, route: str, limit: int) -> bool:
        """Fixed one-minute window per route; True when this delivery is over the limit."""
        key = f"{self.prefix}:rate:{route}:{int(self._clock() // 60)}"
        count = await self.redis.incr(key)
        if count == 1:
            await self.redis.expire(key, 120)
        return int(count) > limit
