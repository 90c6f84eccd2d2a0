"""What the poster does with each event of the agent's outbox (contracts in ``bot/agent/bus.py``): the model's
reply (after the results it was written from), one approval card per proposed call, the working reaction or the
assistant thread's status, and the posts of front ends without a Slack thread of their own (``threads.py``).

Every handler may run again for the same event (a retry after an outage, a restart, another replica taking over
an entry): ``retry`` says an earlier attempt may have posted, and each post carries a key so the retry finds it
in the thread instead of posting twice."""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace

from bot.agent import bus
from bot.approvals.errors import CallNotFound, InvalidTransition
from bot.approvals.records import CallRecord, CallState
from bot.slack import client as api
from bot.slack import threads
from bot.slack.assistant import THINKING, in_assistant_thread, set_status, status_of_calls
from bot.slack.cards import render_card
from bot.slack.interactions import SlackDeps, card_style, refresh_card
from bot.slack.mrkdwn import escape
from bot.slack.outcomes import Outcomes
from bot.slack.render import render_reply, section, size_problem
from bot.slack.settings import parse_conversation

log = logging.getLogger(__name__)


class OutboxEvents:
    def __init__(self, deps: SlackDeps, outcomes: Outcomes) -> None:
        self.deps = deps
        self.outcomes = outcomes

    async def handle(self, event: bus.BusEvent, *, retry: bool = False, owner: str = "") -> None:
        """One outbox event (reply, proposed, working, idle...). ``retry``: an earlier attempt may have posted;
        ``owner`` names this attempt (replica and stream entry) when it posts a result first."""
        if event.kind == "reply":
            await self.outcomes.results_first(event.conversation, owner or f"{bus.OUTBOX}:{event.id}")
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

    async def post_reply(self, conversation: str, text: str, *, key: str = "", retry: bool = False) -> None:
        where = parse_conversation(conversation)
        if where is None or not text.strip():
            return
        fallback, blocks = render_reply(text)
        await api.post_once(self.deps.client, where, fallback, blocks, key, retry)

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
            mention = "1" if first else "0"
            await self.deps.store.set_meta(call_id, slack_mention=mention)
            # the card is rendered from this copy (a state that moves meanwhile is caught after posting, below)
            record = replace(record, meta={**record.meta, "slack_mention": mention})
        text, blocks = render_card(record, self.deps.policy, style=card_style(self.deps, record))
        problem = size_problem(blocks)
        if problem:
            await self.refuse_card(record, where, problem, retry)
            return
        posted = await api.post_once(self.deps.client, where, text, blocks, f"card:{call_id}", retry)
        await self.deps.store.set_meta(call_id, slack_ts=str(posted["ts"]))  # its channel: the thread's
        await self.deps.state.card_posted(record.conversation, call_id)
        # the call may have changed while we posted (a fast auto-approved run, the sweeper): show the latest. Its
        # state alone says whether it did (one field, not the whole record read and built for every card posted)
        (state,) = await self.deps.store.states([call_id])
        if state is not None and state != record.state:
            await refresh_card(self.deps, await self.deps.store.get(call_id))

    async def refuse_card(self, record: CallRecord, where: tuple[str, str], problem: str, retry: bool) -> None:
        """A card Slack could not take is never cut down to fit: the call is closed (denied, so the model hears
        it was not run) and the thread says why, in a message small enough to post.

        That message is the call's outcome, so it is posted under the hold every outcome is posted under
        (``Outcomes.hold``), taken before the close: the close writes a completion entry, and another replica's
        poster reading it would otherwise post a "denied" note too, before this one is recorded."""
        reason = f"its approval card does not fit in a Slack message ({problem})"
        log.error("poster: card of call %s refused: %s", record.id, problem)
        owner = f"card-refused:{record.id}:{uuid.uuid4().hex}"
        tried_before = await self.outcomes.hold(record.id, owner)
        async with self.outcomes.kept(record.id, owner):
            recorded = False
            try:
                try:
                    record = await self.deps.store.cancel(record.id, "slack", reason)
                except InvalidTransition:
                    record = await self.deps.store.get(record.id)
                text = (f":warning: `{escape(record.tool)}` (call `{escape(record.id)}`) cannot be shown for approval: "
                        f"{escape(reason)}. It was not run; the request is refused.")
                posted = await api.post_once(self.deps.client, where, text, [section(text)], f"card:{record.id}",
                                             retry or tried_before)
                ts = str(posted["ts"])
                # recorded, then released, in two round trips (refusals are rare): on a Redis Cluster one pipeline
                # sends the two to their nodes at once, and a poster that took the hold before the record landed
                # would look for a "note:" post, not this "card:" one, and post a note as well
                await self.deps.store.set_meta(record.id, slack_ts=ts, slack_result_ts=ts, slack_card_refused="1")
                recorded = True
            finally:
                await self.deps.state.give_outcome_back(record.conversation, record.id, owner, posted=recorded)

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
