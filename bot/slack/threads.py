"""Posting for front ends without a Slack thread of their own (alert intake): the ``thread_open``,
``thread_post`` and ``file`` outbox events (contracts in ``bot/agent/bus.py``).

Handled by the poster like every outbox event: retried until Slack accepts, acknowledged after. A thread is
opened once per record: its ts is written into the record, and a redelivered ``thread_open`` finds the post by
its metadata key in the channel's history instead of posting again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.agent import bus
from bot.slack import client as api
from bot.slack.interactions import SlackDeps
from bot.slack.settings import parse_conversation
from bot.streams import text as _text

log = logging.getLogger(__name__)


#: How often a post for a thread not opened yet goes back to the end of the outbox before it is given up.
REQUEUE_LIMIT = 40


async def _record(deps: SlackDeps, key: str) -> dict[str, str]:
    raw = await deps.redis.hgetall(key)
    return {_text(k): _text(v) for k, v in raw.items()}


async def open_thread(deps: SlackDeps, event: bus.BusEvent, *, retry: bool) -> None:
    data = event.data
    record_key, channel = str(data.get("record") or ""), str(data.get("channel") or "")
    if not record_key or not channel:
        log.error("poster: thread_open %s without record or channel skipped", event.id)
        return
    record = await _record(deps, record_key)
    ts = record.get("thread_ts")
    post_key = f"open:{record_key}"
    if not ts:
        found = await find_top_level(deps, channel, post_key) if retry else None
        try:
            posted = found or await api.post(deps.client, channel, str(data.get("text") or ""),
                                             list(data.get("blocks") or []), key=post_key)
        except SlackApiError as exc:
            if api.is_transient(exc):
                raise
            code = api.error_code(exc) or "refused"
            log.error("poster: Slack refused to open a thread in %s (%s)", channel, code)
            await deps.redis.hset(record_key, "thread_error", code)
            return
        ts = str(posted["ts"])
    user = str(data.get("user") or "alert")
    conversation = await deps.state.open_thread(channel, ts, user, last_ts=ts)
    await deps.redis.hset(record_key, mapping={"thread_ts": ts, "conversation": conversation})
    if record.get("brief_submitted") or not data.get("brief"):
        return
    meta = {str(k): str(v) for k, v in (data.get("meta") or {}).items()}
    await bus.submit_user_message(deps.redis, conversation, user, str(data["brief"]),
                                  {**meta, "channel": channel, "thread_ts": ts, "ts": ts})
    await deps.redis.hset(record_key, "brief_submitted", "1")


async def post_in_thread(deps: SlackDeps, event: bus.BusEvent, *, retry: bool) -> None:
    data = event.data
    record = await _record(deps, str(data.get("record") or ""))
    if not record or record.get("thread_error"):
        return  # expired, or the thread could never be opened: nothing to post into
    channel, ts = record.get("channel"), record.get("thread_ts")
    if not channel or not ts:
        await _requeue(deps, event)
        return
    card = data.get("card") or None
    if card:
        await api.update(deps.client, channel, ts, str(card.get("text") or ""), list(card.get("blocks") or []))
    text = str(data.get("text") or "")
    if text:
        key = str(data.get("key") or f"post:{event.id}")
        found = await api.find_posted(deps.client, channel, ts, key) if retry else None
        if found is None:
            blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text[:2900]}}]
            await api.post(deps.client, channel, text[:3000], blocks, thread_ts=ts, key=key)


async def _requeue(deps: SlackDeps, event: bus.BusEvent) -> None:
    """The thread's opening post is not made yet (its ``thread_open`` may even be queued behind this entry, in
    the same per-thread order): put the post back at the end of the outbox instead of blocking the thread."""
    attempt = int(event.data.get("attempt") or 0) + 1
    if attempt > REQUEUE_LIMIT:
        log.error("poster: the thread of %s never opened; a post for it is dropped", event.data.get("record"))
        return
    await asyncio.sleep(min(2.0, 0.05 * attempt))
    await bus.publish_outbox(deps.redis, "thread_post", event.conversation, {**event.data, "attempt": attempt})


async def upload_file(deps: SlackDeps, event: bus.BusEvent) -> None:
    where = parse_conversation(event.conversation)
    if where is None:
        return
    data = event.data
    await deps.client.files_upload_v2(
        channel=where[0], thread_ts=where[1], content=str(data.get("content") or ""),
        filename=str(data.get("filename") or "file.txt"), title=str(data.get("title") or ""),
        initial_comment=str(data.get("comment") or "") or None,
    )  # fmt: skip


async def find_top_level(deps: SlackDeps, channel: str, key: str) -> dict[str, Any] | None:
    """Our top-level message carrying ``key`` in its metadata among the channel's latest 200 (a redelivery
    follows the crash it repairs within minutes; no time bound, so clock skew with Slack cannot hide it)."""
    reply = await deps.client.conversations_history(channel=channel, include_all_metadata=True, limit=200)
    for message in reply.get("messages") or []:
        metadata = message.get("metadata") or {}
        if metadata.get("event_type") == api.POST_EVENT and (metadata.get("event_payload") or {}).get("key") == key:
            return {"ok": True, "channel": channel, "ts": message.get("ts")}
    return None
