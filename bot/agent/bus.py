"""The two Redis streams between front ends and the agent role, so each role can run in its own process.

* ``inbox``: what front ends send to the agent (a user's message, a request to stop a conversation).
* ``outbox``: what the agent sends to front ends (a reply to post, calls proposed for approval, working status).

Each consumer role reads with its own consumer group, so replicas of one role share the work and different
roles (Slack, console) each see every event. Tool results do not pass here: front ends read them from the
approval queue's completions stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from redis.asyncio import Redis

from bot.streams import ensure_group as ensure_group  # re-exported: each consumer of the bus creates its group
from bot.streams import text

INBOX = "fc:{agent}:inbox"
OUTBOX = "fc:{outbox}:events"
#: Entries kept in a stream no consumer group reads yet (its reader has not started); once groups read it, what
#: they all acknowledged is trimmed (``bot.roles.trim_bus_streams``). XADD itself never trims, so an entry nobody
#: has handled yet is never lost to a size cap.
STREAM_MAXLEN = 100_000
#: The group each stream is read with by the role it is for (``bot.agent.worker.GROUP``, ``bot.slack.poster.GROUP``;
#: a test keeps them equal): until it exists, what other groups (the timeline's) acknowledged is still owed to it.
READERS: dict[str, tuple[str, ...]] = {INBOX: ("agent",), OUTBOX: ("slack",)}

InboxKind = Literal["user_message", "stop", "summary"]
OutboxKind = Literal["reply", "proposed", "working", "idle", "thread_open", "thread_post", "file"]


@dataclass(frozen=True)
class BusEvent:
    """One event on either stream. ``data`` is free JSON; ``id`` is the stream entry id once read."""

    kind: str
    conversation: str
    data: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def fields(self) -> dict[str, str]:
        return {"kind": self.kind, "conversation": self.conversation, "data": json.dumps(self.data)}

    @classmethod
    def from_fields(cls, entry_id: Any, raw: Mapping[Any, Any]) -> BusEvent:
        values = {text(k): text(v) for k, v in raw.items()}
        return cls(values["kind"], values["conversation"], json.loads(values.get("data", "{}")), text(entry_id))


SUBMIT_DEDUPE_SECONDS = 86400
# XADD once per dedupe key: a front end retrying a hand-off after a failure gets the first entry's id back.
# The marker shares the inbox's hash tag ({agent}) so the script touches one slot.
_PUBLISH_ONCE = r"""
local done = redis.call('GET', KEYS[2])
if done then return done end
local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
redis.call('SET', KEYS[2], id, 'EX', ARGV[2])
return id
"""


async def publish(redis: Redis, stream: str, event: BusEvent, *, dedupe: str | None = None) -> str:
    """Append ``event``; with ``dedupe`` at most once per key (for ``SUBMIT_DEDUPE_SECONDS``): a retried
    hand-off returns the id of the entry the first attempt wrote."""
    if dedupe:
        marker = stream.rsplit(":", 1)[0] + f":once:{dedupe}"
        flat = [v for pair in event.fields().items() for v in pair]
        entry = await redis.eval(_PUBLISH_ONCE, 2, stream, marker, STREAM_MAXLEN, SUBMIT_DEDUPE_SECONDS, *flat)
    else:
        entry = await redis.xadd(stream, event.fields())  # type: ignore[arg-type]
    return entry.decode() if isinstance(entry, bytes) else str(entry)


async def submit_user_message(
    redis: Redis, conversation: str, user: str, text: str, meta: Mapping[str, str] | None = None,
    *, dedupe: str | None = None,
) -> str:
    """A front end hands a user's message to the agent role (once per ``dedupe`` key when given)."""
    return await publish(redis, INBOX, BusEvent("user_message", conversation, {"user": user, "text": text,
                                                                              "meta": dict(meta or {})}),
                         dedupe=dedupe)


async def submit_stop(redis: Redis, conversation: str, user: str, *, dedupe: str | None = None) -> str:
    """A user asked to stop: the agent cancels the conversation's pending calls."""
    return await publish(redis, INBOX, BusEvent("stop", conversation, {"user": user}), dedupe=dedupe)


async def submit_summary(redis: Redis, conversation: str, user: str, material: str) -> str:
    """A user asked for a status summary of the thread: the agent answers from ``material`` (the thread's
    timeline) with one model request and no tools, outside the conversation's transcript."""
    return await publish(redis, INBOX, BusEvent("summary", conversation, {"user": user, "material": material}))



async def read_group(
    redis: Redis, stream: str, group: str, consumer: str, *, count: int = 10, block_ms: int = 1000
) -> list[BusEvent]:
    """New events for this consumer (at-least-once: ack with ``ack`` after handling). The caller creates the group
    once (``ensure_group``) rather than on every read."""
    reply: Any = await redis.xreadgroup(group, consumer, {stream: ">"}, count=count, block=block_ms)
    events = []
    for _stream, entries in reply or []:
        for entry_id, raw in entries:
            events.append(BusEvent.from_fields(entry_id, raw))
    return events


async def ack(redis: Redis, stream: str, group: str, event: BusEvent) -> None:
    await redis.xack(stream, group, event.id)


# ---------------------------------------------------------------- outbox events published by the agent
#
# Exact ``data`` of each outbox event (``BusEvent.conversation`` is the conversation key):
#
# * ``working``  {"turn": <turn id>}                       a turn starts or resumes (show a typing indicator)
# * ``reply``    {"turn": <turn id>, "text": <str>,
#                 "kind": "answer" | "preface" | "notice"}  text to post. ``answer``: the model's final text;
#                                                          ``preface``: the model's text before tool calls;
#                                                          ``notice``: the agent's own message (budget
#                                                          exhausted, API unavailable, stopped, refusal...)
# * ``proposed`` {"turn": <turn id>, "call_ids": [<id>...]} calls recorded in the approval queue, in tool_use
#                                                          order (read them with ``CallStore.get``)
# * ``idle``     {"turn": <turn id>, "state": "done" | "suspended"}
#                                                          the turn ended, or waits for call results
#
# Delivery is at-least-once: after a crash an event may be published twice; front ends dedupe ``proposed``
# by call id.
#
# Front ends that have no thread of their own (alert intake, ``bot/incidents/``) post through the same stream:
#
# * ``thread_open`` {"record": <hash key>, "channel": <id>, "text": <str>, "blocks": [...], "user": <requester>,
#                    "brief": <str>, "meta": {...}}
#     post a new top-level message in ``channel``, write ``thread_ts`` and ``conversation`` into the Redis hash
#     ``record`` (or ``thread_error`` if Slack refuses for good), own the thread, then hand ``brief`` to the agent
#     as the thread's first message from ``user`` (meta gets channel and thread_ts). Skipped when the record
#     already has a ``thread_ts`` (a redelivery).
# * ``thread_post`` {"record": <hash key>, "key": <dedupe key>, "text": <str> | "", "card": {"text", "blocks"} |
#                    null}
#     in the thread of ``record``, post ``text`` and/or replace the top-level message with ``card``; until
#     ``thread_open`` has written the ts the event goes back to the end of the stream (``attempt`` counts).
# * ``file`` {"filename", "title", "content", "comment"}    upload a file into the conversation's thread.


async def publish_outbox(redis: Redis, kind: OutboxKind, conversation: str, data: Mapping[str, Any]) -> str:
    """The agent tells front ends something (see the event list above)."""
    return await publish(redis, OUTBOX, BusEvent(kind, conversation, dict(data)))
