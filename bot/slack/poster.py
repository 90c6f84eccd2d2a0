"""The poster: consumes the agent's outbox and the approvals' completions and progress streams (consumer group
``slack``) and posts to Slack: one live card per call, updated in place at every transition, and one result
(or note) per finished call, the two linked to each other. An entry is acknowledged only after Slack accepted
what it asked for; while Slack is down or rate-limits us the entry is retried with backoff (in order), and
entries left pending by a crash -- ours or another replica's -- are read again, so no card, answer or result
is lost. Per-call progress is kept on the
call record (``slack_ts`` of the card, ``slack_result_ts``) so a re-delivered entry does not post twice.

Entries of different threads are handled in parallel (``slack.post_concurrency`` at once per replica); the
entries of one thread (one conversation, across the outbox and completions streams) are chained so they are
posted in the order this replica read them. Slack's per-method limits are kept by the client
(``bot/slack/ratelimit.py``)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from slack_sdk.errors import SlackApiError

from bot.agent import bus
from bot.approvals.errors import CallNotFound, InvalidTransition
from bot.approvals.records import CallRecord, CallState
from bot.slack import client as api
from bot.slack import threads
from bot.slack.assistant import THINKING, in_assistant_thread, set_status, status_of_calls
from bot.slack.cards import render_card, render_decision_note, render_result
from bot.slack.interactions import SlackDeps, card_style, refresh_card
from bot.slack.mrkdwn import escape
from bot.slack.render import render_reply, section, size_problem
from bot.slack.retry import pause, until_done
from bot.slack.settings import card_channel, parse_conversation
from bot.slack.unconfirmed import watch_unconfirmed
from bot.streams import stop_consumer
from bot.streams import text as _text

log = logging.getLogger(__name__)

GROUP = "slack"
_RESULT_STATES = {CallState.finished, CallState.timed_out, CallState.failed_to_start, CallState.interrupted,
                  CallState.refused, CallState.cancelled}
_NOTE_STATES = {CallState.denied, CallState.expired}
#: how long a poster task that died while posting a call's result keeps others from posting it (a live one renews
#: it at every attempt and gives it up when done)
OUTCOME_HOLD_SECONDS = 60
OUTCOME_POLL_SECONDS = 0.05
READ_AHEAD_FACTOR = 8  # entries read ahead per handling slot (post_concurrency)


class Poster:
    def __init__(
        self, deps: SlackDeps, *, consumer: str | None = None, block_seconds: float = 1.0,
        backoff: tuple[float, float] = (0.2, 30.0), reader: Redis | None = None,
    ) -> None:  # fmt: skip
        self.deps = deps
        self.reader = reader or deps.redis  # blocking reads hold a connection: their own pool
        self.consumer = consumer or deps.settings.consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.block_ms = max(1, int(block_seconds * 1000))
        self.backoff = backoff
        self.concurrency = deps.settings.post_concurrency
        self._slots = asyncio.Semaphore(self.concurrency)  # entries being handled (posting) at once
        # entries read and not done yet, most of them waiting for an earlier entry of their thread: a slot is
        # taken only once an entry's turn has come, so a thread with many entries does not hold them all
        self._read_ahead = asyncio.Semaphore(self.concurrency * READ_AHEAD_FACTOR)
        self._tails: dict[str, asyncio.Task[None]] = {}  # conversation -> its last scheduled entry
        self._inflight: set[asyncio.Task[None]] = set()
        self._inflight_ids: set[tuple[str, str]] = set()
        keys = deps.store.keys
        self._completions = {keys.completions_stream(s) for s in keys.all_shards()}
        self._progress = {keys.progress_stream(s) for s in keys.all_shards()}

    # ---------------------------------------------------------------- loops

    def streams(self) -> list[str]:
        keys = self.deps.store.keys
        return [bus.OUTBOX, *(keys.completions_stream(s) for s in keys.all_shards()),
                *(keys.progress_stream(s) for s in keys.all_shards())]

    async def run(self, stop_event: asyncio.Event) -> None:
        tasks = [asyncio.create_task(self._loop(stream, stop_event)) for stream in self.streams()]
        tasks.append(asyncio.create_task(watch_unconfirmed(self.deps, stop_event)))  # cards a failover made wrong
        try:
            await stop_event.wait()
        finally:
            await stop_consumer(tasks, self._inflight, grace=0)  # not acknowledged yet: read again after a restart

    async def _loop(self, stream: str, stop_event: asyncio.Event) -> None:
        redis = self.deps.redis
        await self._until_ok(lambda: bus.ensure_group(redis, stream, GROUP), stop_event)
        last_id = "0"  # our own pending entries first (a restart), then new ones
        history = True
        loop = asyncio.get_running_loop()
        next_claim = 0.0
        while not stop_event.is_set():
            idle = self.deps.settings.reclaim_idle_seconds
            try:
                entries = await self._read(stream, last_id if history else ">", block=not history)
                if history and entries:
                    last_id = entries[-1][0]  # entries are still pending while handled: read past them
                elif history:
                    history = False
                if not history and loop.time() >= next_claim:
                    # Take over entries idle that long: a dead replica's, or ours that failed and were left
                    # pending (not only at start-up: a failed entry must not wait for a restart).
                    next_claim = loop.time() + max(0.05, idle / 2)
                    await self._keep_claimed(stream)
                    reply: Any = await redis.xautoclaim(stream, GROUP, self.consumer, int(idle * 1000), "0-0",
                                                        count=50)
                    entries += [(_text(i), _fields(f)) for i, f in (reply[1] or []) if f]
            except ResponseError as exc:
                if "NOGROUP" in str(exc):
                    await self._until_ok(lambda: bus.ensure_group(redis, stream, GROUP), stop_event)
                else:  # never let the loop die: every later post of this stream would wait for a restart
                    log.error("poster: reading %s failed (%s); retrying", stream, exc)
                    await pause(stop_event, 1.0)
                continue
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.warning("poster: reading %s failed (%s); retrying", stream, exc)
                await pause(stop_event, 1.0)
                continue
            for entry_id, fields in entries:
                if (stream, entry_id) in self._inflight_ids:
                    continue  # reclaimed while we still handle it
                await self._read_ahead.acquire()  # back-pressure: a bounded number of entries read and not done
                self._dispatch(stream, entry_id, fields, stop_event)

    async def _keep_claimed(self, stream: str) -> None:
        """Reset the idle time of the entries this replica is still working on (retrying a Slack outage, say),
        so another replica does not take them over as a dead reader's: both would then post them."""
        ids: list[str | bytes | int | memoryview] = [entry_id for s, entry_id in self._inflight_ids if s == stream]
        if ids:
            await self.deps.redis.xclaim(stream, GROUP, self.consumer, 0, ids, justid=True)

    def _dispatch(self, stream: str, entry_id: str, fields: dict[str, str], stop_event: asyncio.Event) -> None:
        """Handle the entry in its own task, after the previous entry of the same thread (per-thread order)."""
        thread = fields.get("conversation") or f"{stream}/{entry_id}"
        previous = self._tails.get(thread)
        task = asyncio.create_task(self._process(stream, entry_id, fields, previous, stop_event))
        self._tails[thread] = task
        self._inflight.add(task)
        self._inflight_ids.add((stream, entry_id))

        def finished(done: asyncio.Task[None]) -> None:
            self._inflight.discard(done)
            self._inflight_ids.discard((stream, entry_id))
            if self._tails.get(thread) is done:
                del self._tails[thread]

        task.add_done_callback(finished)

    async def _process(self, stream: str, entry_id: str, fields: dict[str, str],
                       previous: asyncio.Task[None] | None, stop_event: asyncio.Event) -> None:
        try:
            if previous is not None:
                await asyncio.wait({previous})  # its outcome is its own business; only the order matters here
            async with self._slots:
                if stream in self._progress:
                    # a progress entry only brings a card up to date (idempotent, posts nothing): no record of
                    # its handling is needed to keep a retry from posting twice, only the acknowledgement
                    handled = await self._until_ok(lambda: self._show_progress(fields), stop_event)
                    if handled:
                        await self._until_ok(lambda: self.deps.redis.xack(stream, GROUP, entry_id), stop_event)
                    return
                handled = await self._until_ok(lambda: self._handle_once(stream, entry_id, fields), stop_event)
                if handled:  # done and acknowledged together: a crash before this re-reads it as a retry
                    await self._until_ok(lambda: self.deps.state.finish(stream, entry_id, GROUP), stop_event)
        except asyncio.CancelledError:
            raise
        except Exception:  # left pending: read again by this replica after a restart or taken over by another
            log.exception("poster: %s entry %s failed; left pending", stream, entry_id)
        finally:
            self._read_ahead.release()

    async def _read(self, stream: str, last_id: str, *, block: bool) -> list[tuple[str, dict[str, str]]]:
        reply: Any = await self.reader.xreadgroup(
            GROUP, self.consumer, {stream: last_id}, count=self.concurrency, block=self.block_ms if block else None
        )
        return [(_text(i), _fields(f)) for _s, entries in reply or [] for i, f in entries if f]

    async def _until_ok(self, work: Callable[[], Awaitable[Any]], stop_event: asyncio.Event) -> bool:
        return await until_done(work, stop_event, self.backoff, "poster")

    async def _handle_once(self, stream: str, entry_id: str, fields: dict[str, str]) -> None:
        state = self.deps.state
        done, retry = await state.start(stream, entry_id)
        if done:
            return
        if stream == bus.OUTBOX:
            try:
                event = bus.BusEvent.from_fields(entry_id, fields)
            except (KeyError, ValueError):
                log.error("poster: malformed outbox entry %s skipped: %r", entry_id, fields)
            else:
                await self.handle(event, retry=retry)
        elif fields.get("call_id"):
            await self.handle_completion(fields["call_id"], retry=retry, owner=f"{self.consumer}:{stream}:{entry_id}")

    async def _show_progress(self, fields: dict[str, str]) -> None:
        # only the completions stream posts results: a progress event read late (the call has ended since)
        # must not race it into posting the same result twice
        if fields.get("call_id"):
            await self.handle_completion(fields["call_id"], final=False, event_state=fields.get("state"))

    # ---------------------------------------------------------------- events

    async def handle(self, event: bus.BusEvent, *, retry: bool = False) -> None:
        """One outbox event (reply, proposed, working, idle). ``retry``: an earlier attempt may have posted."""
        if event.kind == "reply":
            await self.results_first(event.conversation, f"{self.consumer}:{bus.OUTBOX}:{event.id}")
            await self.post_reply(event.conversation, str(event.data.get("text") or ""),
                                  key=f"reply:{event.id}", retry=retry)
        elif event.kind == "proposed":
            for call_id in event.data.get("call_ids") or []:
                await self.post_card(str(call_id), retry=retry)
        elif event.kind in ("working", "idle"):
            status = THINKING if event.kind == "working" else ""
            # the status line names the call a suspended turn waits for; only an assistant thread has one, and
            # reading the thread's calls for it on every completion of a multi-call turn cost the busiest role
            suspended = event.kind == "idle" and event.data.get("state") == "suspended"
            if suspended and in_assistant_thread(self.deps, event.conversation) is not None:
                status = await status_of_calls(self.deps, event.conversation)
            if not await set_status(self.deps, event.conversation, status):
                await self.working(event.conversation, event.kind == "working")
        elif event.kind == "thread_open":
            await threads.open_thread(self.deps, event, retry=retry)
        elif event.kind == "thread_post":
            await threads.post_in_thread(self.deps, event, retry=retry)
        elif event.kind == "file":
            await threads.upload_file(self.deps, event)

    async def handle_completion(self, call_id: str, *, retry: bool = False, final: bool = True,
                                owner: str = "", event_state: str | None = None) -> None:
        """A call moved (progress: approved, running, stop requested) or ended (completions): post its result
        or note once, then bring its card up to date. ``owner`` names this attempt (replica and stream entry).

        ``event_state``: the state a progress entry announced. When the call has moved on since, a later entry
        (progress or completion: every state change writes one) shows the newer state, so this one does not
        update the card: a poster that is behind (a burst, a restart) updates each card once, not once per
        transition it missed."""
        try:
            record = await self.deps.store.get(call_id)
        except CallNotFound:
            return
        if parse_conversation(record.conversation) is None:
            return  # another front end's call
        if not final and event_state and record.state.value != event_state:
            return
        if final and record.terminal and not record.meta.get("slack_result_ts"):
            record = await self.post_outcome(record, retry=retry, owner=owner)
        await self.show_latest(record)
        if not final and record.state == CallState.running:  # the assistant thread says what runs now
            await set_status(self.deps, record.conversation, await status_of_calls(self.deps, record.conversation))

    async def post_outcome(self, record: CallRecord, *, retry: bool, owner: str) -> CallRecord:
        """Post an ended call's result (or note) once, whichever replica and whichever path gets there first: its
        completion entry, or a reply that must not overtake it (``results_first``). The first holds
        ``outcome:<call>`` while it posts; the others wait until the post is recorded (or the hold of a poster
        that died lapses), and one that takes over after an earlier attempt looks in the thread before posting."""
        state, owner = self.deps.state, owner or uuid.uuid4().hex
        while True:
            held, tried_before = await state.take_outcome(record.id, owner, OUTCOME_HOLD_SECONDS)
            if held:
                break
            await asyncio.sleep(OUTCOME_POLL_SECONDS)
            record = await self.deps.store.get(record.id)
            if record.meta.get("slack_result_ts"):
                return record
        posted = False
        try:
            if tried_before:  # someone held it before us and may have posted it: the record we have may be older
                record = await self.deps.store.get(record.id)
            if record.meta.get("slack_result_ts"):  # posted by the holder we waited for
                return record
            # the record is terminal and we hold its outcome: only our own meta writes change it now, so it is
            # kept up to date here instead of being read again after each of them
            record = await self._link_card(record)
            if record.state in _RESULT_STATES and record.started_at is not None:
                record = await self.post_result(record, retry=retry or tried_before)
            elif record.state in _RESULT_STATES or record.state in _NOTE_STATES:
                record = await self.post_note(record, retry=retry or tried_before)
            posted = True
        finally:
            await state.give_outcome_back(record.conversation, record.id, owner, posted=posted)
        return record

    async def results_first(self, conversation: str, owner: str) -> None:
        """A reply is written from the results of the thread's calls, so it goes after them. One replica keeps
        that order by handling a thread's entries in turn; with several, another replica may still be posting a
        result the agent has already answered from. Post it here first (once: ``post_outcome``)."""
        for call_id in await self.deps.state.awaiting_outcome(conversation):
            record = await self.deps.store.find(call_id)
            if record is None:
                await self.deps.state.outcome_posted(conversation, call_id)
                continue
            if not record.terminal or record.meta.get("slack_result_ts"):
                continue
            try:
                record = await self.post_outcome(record, retry=True, owner=owner)
            except SlackApiError as exc:
                if api.is_transient(exc):
                    raise
                log.error("poster: the result of %s could not be posted (%s); the reply goes on", call_id,
                          api.error_code(exc))
                continue
            await self.show_latest(record)

    async def show_latest(self, record: CallRecord) -> None:
        """Update the card (``refresh_card`` reads the call again after updating, so an older state is never
        the last one shown)."""
        await refresh_card(self.deps, record)

    async def _link_card(self, record: CallRecord) -> CallRecord:
        """The card's permalink (chat.getPermalink), so the result can link to it: in the returned record's meta,
        stored with the result's own ts and link (``_link_result``, one write for both)."""
        channel, ts = card_channel(record.conversation, record.meta), record.meta.get("slack_ts")
        if channel and ts and not record.meta.get("slack_card_link"):
            where = parse_conversation(record.conversation)
            link = await api.permalink(self.deps.client, channel, ts, where[1] if where else None)
            if link:
                return record.model_copy(update={"meta": {**record.meta, "slack_card_link": link}})
        return record

    async def _link_result(self, record: CallRecord, posted: dict[str, Any]) -> CallRecord:
        where = parse_conversation(record.conversation)
        link = await api.permalink(self.deps.client, where[0], str(posted["ts"]), where[1]) if where else None
        meta = {"slack_result_ts": str(posted["ts"])}
        if link:
            meta["slack_result_link"] = link
        if record.meta.get("slack_card_link"):
            meta["slack_card_link"] = record.meta["slack_card_link"]
        return await self._set_meta(record, **meta)

    async def _set_meta(self, record: CallRecord, **meta: str) -> CallRecord:
        """Store ``meta`` on the call and return the record as it is now stored (no read back)."""
        await self.deps.store.set_meta(record.id, **meta)
        return record.model_copy(update={"meta": {**record.meta, **meta}})

    async def _post_once(self, where: tuple[str, str], text: str, blocks: list[dict[str, Any]], key: str,
                         retry: bool) -> dict[str, Any]:
        """Post in the thread, unless an earlier attempt that died before recording it already did."""
        if retry and key:
            found = await api.find_posted(self.deps.client, where[0], where[1], key)
            if found is not None:
                log.info("poster: %s was already posted before a restart; not posting it again", key)
                return found
        return await api.post(self.deps.client, where[0], text, blocks, thread_ts=where[1], key=key or None)

    async def post_reply(self, conversation: str, text: str, *, key: str = "", retry: bool = False) -> None:
        where = parse_conversation(conversation)
        if where is None or not text.strip():
            return
        fallback, blocks = render_reply(text)
        await self._post_once(where, fallback, blocks, key, retry)

    async def post_card(self, call_id: str, *, retry: bool = False) -> None:
        try:
            record = await self.deps.store.get(call_id)
        except CallNotFound:
            log.warning("poster: proposed call %s is unknown", call_id)
            return
        where = parse_conversation(record.conversation)
        if where is None or record.meta.get("slack_ts") or record.state == CallState.rejected:
            return
        if "slack_mention" not in record.meta:  # the approvers are pinged by the thread's first card only
            first = await self.deps.state.first_time("mentioned", record.conversation,
                                                     self.deps.settings.thread_retention_seconds)
            await self.deps.store.set_meta(call_id, slack_mention="1" if first else "0")
            record = await self.deps.store.get(call_id)
        text, blocks = render_card(record, self.deps.policy, style=card_style(self.deps, record))
        problem = size_problem(blocks)
        if problem:
            await self.refuse_card(record, where, problem, retry)
            return
        posted = await self._post_once(where, text, blocks, f"card:{call_id}", retry)
        await self.deps.store.set_meta(call_id, slack_ts=str(posted["ts"]))  # its channel: the thread's
        await self.deps.state.card_posted(record.conversation, call_id)
        # the call may have changed while we posted (a fast auto-approved run, the sweeper): show the latest
        latest = await self.deps.store.get(call_id)
        if latest.state != record.state:
            await refresh_card(self.deps, latest)

    async def refuse_card(self, record: CallRecord, where: tuple[str, str], problem: str, retry: bool) -> None:
        """A card Slack could not take is never cut down to fit: the call is closed (denied, so the model hears
        it was not run) and the thread says why, in a message small enough to post."""
        reason = f"its approval card does not fit in a Slack message ({problem})"
        log.error("poster: card of call %s refused: %s", record.id, problem)
        try:
            record = await self.deps.store.cancel(record.id, "slack", reason)
        except InvalidTransition:
            record = await self.deps.store.get(record.id)
        text = (f":warning: `{escape(record.tool)}` (call `{escape(record.id)}`) cannot be shown for approval: "
                f"{escape(reason)}. It was not run; the request is refused.")
        posted = await self._post_once(where, text, [section(text)], f"card:{record.id}", retry)
        await self.deps.store.set_meta(record.id, slack_ts=str(posted["ts"]),
                                       slack_result_ts=str(posted["ts"]), slack_card_refused="1")

    async def post_result(self, record: CallRecord, *, retry: bool = False) -> CallRecord:
        """Post the call's result in its thread once; returns the record with the result's ts and link."""
        where = parse_conversation(record.conversation)
        if where is None or record.meta.get("slack_result_ts"):
            return record
        text, blocks, attach = render_result(record, self.deps.store.redact_patterns)
        if attach and not record.meta.get("slack_file"):
            output = str((record.result or {}).get("output") or "")
            await self.deps.client.files_upload_v2(
                channel=where[0], thread_ts=where[1], content=output,
                filename=f"{record.tool}-{record.id}.txt", title=f"{record.tool} output",
            )  # fmt: skip
            record = await self._set_meta(record, slack_file="1")
        posted = await self._post_once(where, text, blocks, f"result:{record.id}", retry)
        return await self._link_result(record, posted)

    async def post_note(self, record: CallRecord, *, retry: bool = False) -> CallRecord:
        where = parse_conversation(record.conversation)
        if where is None or record.meta.get("slack_result_ts"):
            return record
        text, blocks = render_decision_note(record, self.deps.store.redact_patterns)
        posted = await self._post_once(where, text, blocks, f"note:{record.id}", retry)
        return await self._link_result(record, posted)

    async def working(self, conversation: str, on: bool) -> None:
        if not self.deps.settings.working_reaction:
            return  # the operator turned the reaction off (it costs two Web API calls per turn)
        info = await self.deps.state.thread_info(conversation)
        channel, name = info.get("channel"), self.deps.settings.working_reaction
        if not channel:
            return
        if on:
            ts = info.get("last_ts") or info.get("thread_ts")
            if not ts or info.get("reacted_ts") == ts:
                return
            if info.get("reacted_ts"):
                await api.react(self.deps.client, channel, info["reacted_ts"], name, add=False)
            await api.react(self.deps.client, channel, ts, name, add=True)
            await self.deps.state.set_thread_field(conversation, "reacted_ts", ts)
        elif info.get("reacted_ts"):
            await api.react(self.deps.client, channel, info["reacted_ts"], name, add=False)
            await self.deps.state.set_thread_field(conversation, "reacted_ts", "")



def _fields(raw: Any) -> dict[str, str]:
    return {_text(k): _text(v) for k, v in raw.items()}
