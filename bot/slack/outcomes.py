"""Posting what became of a call: its card brought up to date at every transition, and its result (or, for a call
that never ran, a short note) posted in its thread exactly once, the two linked to each other.

Exactly once across replicas and restarts: whoever posts a call's outcome -- its completion entry on any replica,
or a reply that must not overtake it (``results_first``) -- holds ``outcome:<call>`` while it posts (a holder that
dies loses it ``OUTCOME_HOLD_SECONDS`` after its last renewal; a live one renews it while Slack keeps it waiting);
the others wait until the post is recorded on the call
(``slack_result_ts``). One that takes over after an earlier attempt looks for that attempt's message in the
thread (by its metadata key, ``client.post_once``) before posting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from redis.exceptions import RedisError
from slack_sdk.errors import SlackApiError

from bot.approvals.errors import CallNotFound
from bot.approvals.records import CallRecord, CallState
from bot.slack import client as api
from bot.slack.assistant import in_assistant_thread, set_status, status_of_calls
from bot.slack.cards import render_decision_note, render_result
from bot.slack.interactions import SlackDeps, refresh_card
from bot.slack.settings import card_channel, parse_conversation

log = logging.getLogger(__name__)

RESULT_STATES = {CallState.finished, CallState.timed_out, CallState.failed_to_start, CallState.interrupted,
                 CallState.refused, CallState.cancelled}
NOTE_STATES = {CallState.denied, CallState.expired}
#: how long a poster task that died while posting a call's result keeps others from posting it: the delay a thread
#: sees when a Slack replica dies mid-post. A live holder renews the hold every ``OUTCOME_RENEW_SECONDS`` however
#: long Slack keeps it waiting (a 429's Retry-After, a slow upload), so the hold can be short without a slow
#: poster losing it to another that would post the result a second time.
OUTCOME_HOLD_SECONDS = 10
OUTCOME_RENEW_SECONDS = 3.0
OUTCOME_POLL_SECONDS = 0.05


class Outcomes:
    def __init__(self, deps: SlackDeps, *, hold_seconds: int = OUTCOME_HOLD_SECONDS,
                 renew_seconds: float = OUTCOME_RENEW_SECONDS) -> None:
        self.deps = deps
        self.hold_seconds, self.renew_seconds = hold_seconds, renew_seconds
        self._held: dict[tuple[str, str], int] = {}  # (call, owner) -> bodies of ``kept`` holding it now
        self._renewal: asyncio.TimerHandle | None = None  # the next renewal of every hold in ``_held``
        self._renewing: set[asyncio.Task[None]] = set()  # renewals on their way (referenced until done)

    async def handle_completion(self, call_id: str, *, retry: bool = False, final: bool = True, owner: str = "",
                                event_state: str | None = None, record: CallRecord | None = None) -> None:
        """A call moved (progress: approved, running, stop requested) or ended (completions): post its result
        or note once, then bring its card up to date. ``owner`` names this attempt (replica and stream entry).

        ``event_state``: the state a progress entry announced. When the call has moved on since, a later entry
        (progress or completion: every state change writes one) shows the newer state, so this one does not
        update the card: a poster that is behind (a burst, a restart) updates each card once, not once per
        transition it missed. ``record``: the call as the poster read it with its batch of entries (one round
        trip for the batch), or None to read it here."""
        if record is None:
            try:
                record = await self.deps.store.get(call_id)
            except CallNotFound:
                return
        if parse_conversation(record.conversation) is None:
            return  # another front end's call
        if not final and event_state and record.state.value != event_state:
            return
        newest = False
        if final and record.terminal and not record.meta.get("slack_result_ts"):
            record, newest = await self._post_outcome(record, retry=retry, owner=owner)
        await refresh_card(self.deps, record, newest=newest)
        if (not final and record.state == CallState.running  # the assistant thread says what runs now
                and in_assistant_thread(self.deps, record.conversation) is not None):
            await set_status(self.deps, record.conversation, await status_of_calls(self.deps, record.conversation))

    async def post_outcome(self, record: CallRecord, *, retry: bool, owner: str) -> CallRecord:
        """Post an ended call's result (or note) once, whichever replica and whichever path gets there first: its
        completion entry, or a reply that must not overtake it (``results_first``). The first holds
        ``outcome:<call>`` while it posts; the others wait until the post is recorded (or the hold of a poster
        that died lapses), and one that takes over after an earlier attempt looks in the thread before posting."""
        return (await self._post_outcome(record, retry=retry, owner=owner))[0]

    async def _post_outcome(self, record: CallRecord, *, retry: bool, owner: str) -> tuple[CallRecord, bool]:
        """``post_outcome``, and whether this attempt posted it (its record is then the newest there is)."""
        state, owner = self.deps.state, owner or uuid.uuid4().hex
        while True:
            held, tried_before = await state.take_outcome(record.id, owner, self.hold_seconds)
            if held:
                break
            await asyncio.sleep(OUTCOME_POLL_SECONDS)
            record = await self.deps.store.get(record.id)
            if record.meta.get("slack_result_ts"):
                return record, False
        async with self.kept(record.id, owner):
            return await self._post_held(record, owner, retry=retry, tried_before=tried_before)

    async def _post_held(self, record: CallRecord, owner: str, *, retry: bool,
                         tried_before: bool) -> tuple[CallRecord, bool]:
        """Post the outcome whose hold ``owner`` has, record it and give the hold back (``_post_outcome``)."""
        state = self.deps.state
        posted, recorded = False, False
        try:
            if tried_before:  # someone held it before us and may have posted it: the record we have may be older
                record = await self.deps.store.get(record.id)
            if record.meta.get("slack_result_ts"):  # posted by the holder we waited for
                return record, False
            # the record is terminal and we hold its outcome: only our own meta writes change it now, so it is
            # kept up to date here instead of being read again after each of them
            written = dict(record.meta)  # as stored: what differs at the end is written with the release
            record = await self._link_card(record)
            if record.state in RESULT_STATES and record.started_at is not None:
                record = await self.post_result(record, retry=retry or tried_before, record_it=False)
            elif record.state in RESULT_STATES or record.state in NOTE_STATES:
                record = await self.post_note(record, retry=retry or tried_before, record_it=False)
            posted = True
            # the post's ts and links are recorded and the hold released in one round trip, in that order
            meta = {k: v for k, v in record.meta.items() if written.get(k) != v}
            await self._record_and_give_back(record, owner, meta)
            recorded = True
        finally:
            if not recorded:
                await state.give_outcome_back(record.conversation, record.id, owner, posted=posted)
        return record, True

    @contextlib.asynccontextmanager
    async def kept(self, call_id: str, owner: str) -> AsyncIterator[None]:
        """Renew ``owner``'s hold on the call's outcome while the body runs, so only a holder that died lets it
        lapse (``hold_seconds`` after its last renewal).

        Every hold this poster has is renewed together, in one round trip every ``renew_seconds``, by one timer
        (``_renew_due``): a hold is taken for every result posted, and a task of its own per hold (created,
        cancelled, gathered) cost more CPU than the post's own Redis writes. A hold is renewed within
        ``renew_seconds`` of being taken, as before."""
        key = (call_id, owner)
        self._held[key] = self._held.get(key, 0) + 1
        if self._renewal is None:
            self._renewal = asyncio.get_running_loop().call_later(self.renew_seconds, self._renew_due)
        try:
            yield
        finally:
            left = self._held.pop(key, 0) - 1
            if left > 0:
                self._held[key] = left
            if not self._held and self._renewal is not None:  # nothing to renew: no timer left behind
                self._renewal.cancel()
                self._renewal = None

    def _renew_due(self) -> None:
        """The timer of ``kept``: renew every hold held now (in a task), and come back while any is held."""
        self._renewal = None
        if not self._held:
            return
        task = asyncio.get_running_loop().create_task(self._renew(list(self._held)))
        self._renewing.add(task)
        task.add_done_callback(self._renewing.discard)
        self._renewal = asyncio.get_running_loop().call_later(self.renew_seconds, self._renew_due)

    async def _renew(self, holds: list[tuple[str, str]]) -> None:
        try:
            renewed = await self.deps.state.renew_outcomes(holds, self.hold_seconds)
        except (RedisError, OSError) as exc:  # a Redis blip: tried again next period while the holds last
            log.warning("poster: could not renew the holds on posting %d outcomes: %s", len(holds), exc)
            return
        for (call_id, owner), still_ours in zip(holds, renewed, strict=True):
            if not still_ours and (call_id, owner) in self._held:
                # lapsed (this process could not reach Redis for a whole hold) and maybe taken: the taker looks
                # in the thread before posting; nothing renews a hold that is someone else's
                log.warning("poster: the hold on posting %s's outcome lapsed while %s posted it", call_id, owner)
                del self._held[(call_id, owner)]

    async def hold(self, call_id: str, owner: str) -> bool:
        """Take the hold on posting the call's outcome for ``owner``, waiting while another poster has it; True
        when someone held it before (what they posted must be looked for first). For a poster that closes a call
        itself and posts why (a card too big for Slack): holding it before the close writes the completion
        entry keeps another replica's poster from posting a note of its own meanwhile."""
        while True:
            held, tried_before = await self.deps.state.take_outcome(call_id, owner, self.hold_seconds)
            if held:
                return tried_before
            await asyncio.sleep(OUTCOME_POLL_SECONDS)

    async def _record_and_give_back(self, record: CallRecord, owner: str, meta: dict[str, str]) -> None:
        """Record the posted outcome's ``meta`` on the call and release ``owner``'s hold, in one round trip. In
        that order on one Redis; a Redis Cluster sends the two to their nodes at once, so a poster waiting for
        the hold may take it before the record lands: it then finds the post by its key (``take_outcome``'s
        "tried before"), the same key, since the record's state names it, and posts nothing twice."""
        async with self.deps.redis.pipeline(transaction=False) as pipe:
            if meta:
                self.deps.store.queue_set_meta(pipe, record.id, **meta)
            self.deps.state.queue_give_outcome_back(pipe, record.conversation, record.id, owner, posted=True)
            replies = await pipe.execute()
        if meta and not replies[0]:
            raise CallNotFound(record.id)

    async def results_first(self, conversation: str, owner: str) -> None:
        """A reply is written from the results of the thread's calls, so it goes after them. One replica keeps
        that order by handling a thread's entries in turn; with several, another replica may still be posting a
        result the agent has already answered from. Post it here first (once: ``post_outcome``).

        Posted as a first attempt: an earlier attempt at the outcome, whichever path made it (a completion entry, this
        reply before a restart, another replica), held it first, so the hold says "tried before" and the thread is
        searched then (``_post_held``). Searching it every time cost a ``conversations.replies`` (the whole thread
        read back) for every result a reply overtook: most results of a burst, whose completions wait behind it."""
        for call_id in await self.deps.state.awaiting_outcome(conversation):
            record = await self.deps.store.find(call_id)
            if record is None:
                await self.deps.state.outcome_posted(conversation, call_id)
                continue
            if not record.terminal or record.meta.get("slack_result_ts"):
                continue
            try:
                record = await self.post_outcome(record, retry=False, owner=owner)
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
        """The card's permalink, so the result can link to it: in the returned record's meta, stored with the
        result's own ts and link (``_link_result``, one write for both)."""
        channel, ts = card_channel(record.conversation, record.meta), record.meta.get("slack_ts")
        if channel and ts and not record.meta.get("slack_card_link"):
            where = parse_conversation(record.conversation)
            link = await api.permalink(self.deps.client, channel, ts, where[1] if where else None)
            if link:
                return replace(record, meta={**record.meta, "slack_card_link": link})
        return record

    async def _link_result(self, record: CallRecord, posted: dict[str, Any], record_it: bool) -> CallRecord:
        """The record with the posted result's ts and link (and the card's link), stored unless ``record_it`` is
        False (the caller stores them with writes of its own)."""
        where = parse_conversation(record.conversation)
        link = await api.permalink(self.deps.client, where[0], str(posted["ts"]), where[1]) if where else None
        meta = {"slack_result_ts": str(posted["ts"])}
        if link:
            meta["slack_result_link"] = link
        if record.meta.get("slack_card_link"):
            meta["slack_card_link"] = record.meta["slack_card_link"]
        if not record_it:
            return replace(record, meta={**record.meta, **meta})
        return await self._set_meta(record, **meta)

    async def _set_meta(self, record: CallRecord, **meta: str) -> CallRecord:
        """Store ``meta`` on the call and return the record as it is now stored (no read back)."""
        await self.deps.store.set_meta(record.id, **meta)
        return replace(record, meta={**record.meta, **meta})

    async def post_result(self, record: CallRecord, *, retry: bool = False, record_it: bool = True) -> CallRecord:
        """Post the call's result in its thread once; returns the record with the result's ts and link (stored on
        the call unless ``record_it`` is False)."""
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
        posted = await api.post_once(self.deps.client, where, text, blocks, f"result:{record.id}", retry)
        return await self._link_result(record, posted, record_it)

    async def post_note(self, record: CallRecord, *, retry: bool = False, record_it: bool = True) -> CallRecord:
        where = parse_conversation(record.conversation)
        if where is None or record.meta.get("slack_result_ts"):
            return record
        text, blocks = render_decision_note(record, self.deps.store.redact_patterns)
        posted = await api.post_once(self.deps.client, where, text, blocks, f"note:{record.id}", retry)
        return await self._link_result(record, posted, record_it)
