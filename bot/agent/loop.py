"""``Agent``: advances conversations, one step at a time, from the state stored in Redis.

``drive(conversation)`` takes the conversation's lock and loops on what the stored state says to do next:
propose calls that were planned but not proposed yet, resume when every call of the suspended turn is
terminal, call the model for an open turn, or start a turn for the oldest queued user message. It returns
when the conversation is suspended (calls await approval or run) or idle. Because every decision is made from
Redis, a process killed at any point is replaced by any other replica calling ``drive`` again (see
``worker.py`` for what triggers it). After releasing the lock ``drive`` checks once more for work that arrived
while it held the lock, so a message or completion whose own ``drive`` found the lock taken is not stranded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from redis.asyncio import Redis

from bot.agent import bus
from bot.agent.model import ModelClient, ModelUnavailable
from bot.agent.prompt import system_blocks, tools_param
from bot.agent.results import record_result, result_block
from bot.agent.settings import AgentSettings
from bot.agent.state import ConversationStore, ConvState, PendingCall, QueuedMessage, Snapshot, Turn
from bot.agent.steps import Step, plan_calls, step_outcome
from bot.agent.transcript import append_user_text, cap_transcript
from bot.approvals.errors import ApprovalError
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.cancelling import cancel_and_wait
from bot.fisk.environment import scrub_environment
from bot.logcontext import log_context
from bot.sanitize import Redactor, build_redactor, clean_model_text
from bot.tools.catalog import Catalog

log = logging.getLogger(__name__)

Transcript = list[dict[str, Any]]


class LockLost(Exception):
    """Our conversation lock expired and someone else may hold it: stop writing, let them continue."""


class Agent:
    """The conversation engine. Stateless between calls: any replica can drive any conversation."""

    def __init__(
        self,
        redis: Redis,
        store: CallStore,
        catalog: Catalog,
        policy: ApprovalPolicy,
        model: ModelClient,
        settings: AgentSettings,
        *,
        prefix: str = "fc",
        catalog_for: Callable[[str, Mapping[str, str]], Catalog] | None = None,
        sensitive_env_vars: Iterable[str] = (),
        tool_search: bool = True,
        redactor: Redactor | None = None,
    ) -> None:
        self.redis = redis
        self.tool_search = tool_search
        self.store = store
        self.catalog = catalog
        self.policy = policy
        self.model = model
        self.settings = settings
        self.conversations = ConversationStore(
            redis, retention_seconds=settings.transcript_retention_seconds, prefix=prefix
        )
        self._catalog_for = catalog_for
        # What the model writes is redacted like tool output before it leaves the agent: a model that was
        # talked into "printing the token" (or guessed one) must not get it posted. The role passes the
        # process's configured redactor (bot.wiring.text_redactor: the operator's redact_patterns too); without
        # one, the same detectors and the values of this process's credentials.
        self._redactor = redactor or build_redactor(
            scrub_environment(None, sensitive_env_vars).removed_values.values())

    # ---------------------------------------------------------------- inbox entry points

    async def submit(
        self, conversation: str, event_id: str, user: str, text: str, meta: Mapping[str, str] | None = None
    ) -> bool:
        """Queue a user message (idempotent per inbox event id); False if refused or a redelivery.
        Call ``drive`` afterwards (also after False: a redelivery may follow a crash mid-turn)."""
        if await self.conversations.seen(conversation, event_id):
            return False
        if await self.conversations.rate_exceeded(user, self.settings.user_rate_limit_per_minute):
            await self.conversations.mark_seen(conversation, event_id)
            await self._reply(conversation, event_id, "notice",
                              f"You are sending messages too fast (limit: {self.settings.user_rate_limit_per_minute}"
                              " per minute). This message was not processed; send it again in a minute.")
            return False
        message = QueuedMessage(id=event_id, user=user, text=text, meta=dict(meta or {}))
        return await self.conversations.enqueue(conversation, message)

    async def stop(self, conversation: str, user: str) -> None:
        """Cancel the conversation's pending calls now (no lock needed: the store is atomic) and flag the stop
        for whoever drives the conversation; call ``drive`` afterwards."""
        await self.conversations.request_stop(conversation, user)
        await self._cancel_open(conversation, user)

    # ---------------------------------------------------------------- driving

    async def drive(self, conversation: str) -> bool:
        """See ``_drive``; every log line inside carries the conversation id."""
        with log_context(conversation=conversation):
            return await self._drive(conversation)

    async def _drive(self, conversation: str) -> bool:
        """Advance the conversation as far as it goes. False if another process holds its lock: that holder
        re-checks for work after releasing, but it may also have died, so the caller should retry later (the
        worker leaves the event unacked; XAUTOCLAIM redelivers it after the lock's TTL has had time to run out)."""
        for _ in range(1000):
            token = await self.conversations.acquire(conversation, self.settings.lock_ttl_seconds)
            if token is None:
                return False
            try:
                await self._locked(conversation, token)
            finally:
                await self.conversations.release(conversation, token)
            if not await self.has_work(conversation):
                return True
        log.error("conversation %s: drive made no progress", conversation)
        return True

    async def _locked(self, conversation: str, token: str) -> None:
        """Run ``_advance`` while renewing the lock; cancel it if the lock is lost, or if this is cancelled itself
        (a stopping worker, a renewal that failed): the work must never go on without its owner or its lock."""
        work = asyncio.create_task(self._advance(conversation, token))
        ttl = self.settings.lock_ttl_seconds
        lost = False
        try:
            while not work.done():
                done, _ = await asyncio.wait({work}, timeout=ttl / 3)
                if done:
                    break
                if not await self.conversations.renew(conversation, token, ttl):
                    lost = True
                    break
        finally:
            if not work.done():  # lost, cancelled or failed here: stop it, until it has really ended (3.11)
                await cancel_and_wait([work])
        try:
            await work
        except LockLost:  # a fenced save refused: the lock expired before the renewal noticed
            log.warning("conversation %s: lock lost while saving; another replica continues", conversation)
        except asyncio.CancelledError:
            if not lost:
                raise
            log.warning("conversation %s: lock lost; another replica continues", conversation)

    async def has_work(self, conversation: str) -> bool:
        """Whether ``_advance`` would do something now (asked after every drive, so it reads only the state and
        the states of the pending calls, never the transcript or whole call records)."""
        snapshot = await self.conversations.snapshot(conversation, transcript=False)
        state = snapshot.state
        if snapshot.stopper is not None:
            return True
        if state.pending:
            return await self._settled(state)
        if state.turn is not None:
            return True
        return await self.conversations.next_queued(conversation) is not None

    async def _advance(self, conversation: str, token: str) -> None:
        while True:
            snapshot = await self.conversations.snapshot(conversation)
            state = snapshot.state
            if snapshot.stopper is not None:
                await self._handle_stop(conversation, token, snapshot.transcript(), state, snapshot.stopper)
                continue
            if state.pending:
                if not await self._resume(conversation, token, snapshot, state):
                    return  # suspended: calls still await approval or run
                if state.turn is None:
                    continue
            elif state.turn is None:
                message = await self.conversations.next_queued(conversation)
                if message is None:
                    return
                await self._start_turn(conversation, token, snapshot.transcript(), state, message)
            await self._step(conversation, token, snapshot.transcript(), state)

    async def _start_turn(
        self, conversation: str, token: str, transcript: Transcript, state: ConvState, message: QueuedMessage
    ) -> None:
        append_user_text(transcript, message.text)
        cap_transcript(transcript, self.settings.transcript_max_messages, self.settings.transcript_max_bytes,
                       len(transcript) - 1)
        state.turn = Turn(id=message.id, user=message.user, meta=message.meta, start=len(transcript) - 1)
        await self._save(conversation, token, transcript, state, dequeue=message)
        await self._publish("working", conversation, {"turn": message.id})

    async def _resume(self, conversation: str, token: str, snapshot: Snapshot, state: ConvState) -> bool:
        """Propose what is planned but not proposed; when every call is terminal, append the tool_result message
        (results in tool_use order) and return True. The transcript is decoded only when it is written."""
        turn_id = state.turn.id if state.turn else ""
        unproposed = [p for p in state.pending if p.proposal is not None and p.call_id is None]
        if unproposed:
            records = await self.store.propose(
                conversation, [p.proposal for p in unproposed if p.proposal is not None], self.policy,
                state.turn.user if state.turn else "unknown",
            )
            by_tool_use = {r.tool_use_id: r.id for r in records}
            for p in unproposed:
                p.call_id = by_tool_use.get(p.tool_use_id)
                if p.call_id is not None:  # the call record holds it now: not kept twice in Redis
                    p.proposal = None
            await self._save(conversation, token, snapshot.transcript(), state)
            await self._publish("proposed", conversation, {"turn": turn_id, "call_ids": [r.id for r in records]})
        terminal = await self._all_terminal(state)
        if terminal is None:
            await self._publish("idle", conversation, {"turn": turn_id, "state": "suspended"})
            return False
        blocks = [
            result_block(p.tool_use_id, p.local_result, p.local_is_error) if p.local_result is not None
            else record_result(p.tool_use_id, terminal.get(p.tool_use_id))
            for p in state.pending
        ]
        transcript = snapshot.transcript()
        transcript.append({"role": "user", "content": blocks})
        state.pending = []
        if state.stopped or state.turn is None:
            await self._end(conversation, token, transcript, state, None)
            return True
        await self._save(conversation, token, transcript, state)
        await self._publish("working", conversation, {"turn": turn_id})
        return True

    async def _settled(self, state: ConvState) -> bool:
        """Whether every pending call is proposed and terminal (or gone): one round trip reading only their
        states, so a completion that leaves calls open (most of a multi-call turn's) parses no call record."""
        call_ids = [p.call_id for p in state.pending if p.local_result is None]
        if any(call_id is None for call_id in call_ids):
            return False
        states = await self.store.states([c for c in call_ids if c is not None])
        return all(s is None or s.terminal for s in states)

    async def _all_terminal(self, state: ConvState) -> dict[str, CallRecord | None] | None:
        """Records of the pending calls by tool_use id if every one is terminal (or gone), else None."""
        if not await self._settled(state):
            return None
        asked = [p for p in state.pending if p.local_result is None and p.call_id is not None]
        found = await self.store.find_many([p.call_id for p in asked if p.call_id is not None])
        # a terminal state is final: read again, each record is still terminal or gone (retention)
        return {p.tool_use_id: record for p, record in zip(asked, found, strict=True)}

    async def _step(self, conversation: str, token: str, transcript: Transcript, state: ConvState) -> None:
        """One model request for the open turn, and what its stop_reason calls for."""
        turn = state.turn
        assert turn is not None
        limits = self.settings
        if turn.iterations >= limits.max_iterations_per_turn:
            await self._end(conversation, token, transcript, state, (
                "notice", f"I stopped: this request reached its limit of {limits.max_iterations_per_turn} model"
                " steps. Send a message to continue."))
            return
        if state.tokens_used >= limits.max_conversation_tokens:
            await self._end(conversation, token, transcript, state, (
                "notice", f"This conversation has used its token budget ({state.tokens_used} of"
                f" {limits.max_conversation_tokens} tokens). Please start a new conversation."))
            return
        turn.iterations += 1
        catalog = self._catalog(conversation, turn.meta)
        try:
            response = await self.model.create(
                system_blocks(limits.system_prompt, catalog), tools_param(catalog, tool_search=self.tool_search),
                transcript,
            )
        except ModelUnavailable as exc:
            again = "; send another message to try again" if exc.retryable else ""
            await self._end(conversation, token, transcript, state, (
                "notice", f"I could not get an answer: {exc}. Your message is kept{again}."))
            return
        state.tokens_used += response.tokens
        step: Step = step_outcome(response, transcript, turn.start, limits.max_tokens)
        if step.pending_tool_uses:
            state.pending = plan_calls(step.pending_tool_uses, response.tool_inputs, catalog)
            await self._save(conversation, token, transcript, state)
            if step.reply:
                await self._reply(conversation, turn.id, "preface", step.reply)
            await self._audit_local(conversation, turn.user, state.pending, step.pending_tool_uses)
        elif step.end:
            await self._end(conversation, token, transcript, state, (step.kind, step.reply) if step.reply else None)
        else:
            await self._save(conversation, token, transcript, state)

    async def _end(
        self, conversation: str, token: str, transcript: Transcript, state: ConvState,
        reply: tuple[str, str] | None,
    ) -> None:
        turn_id = state.turn.id if state.turn else ""
        if reply is not None:  # at-least-once: published before the state that closes the turn is saved
            await self._reply(conversation, turn_id, reply[0], reply[1])
        state.turn = None
        state.stopped = False
        await self._save(conversation, token, transcript, state)
        await self._publish("idle", conversation, {"turn": turn_id, "state": "done"})

    async def _handle_stop(
        self, conversation: str, token: str, transcript: Transcript, state: ConvState, user: str
    ) -> None:
        """Cancel what can be cancelled (again: calls proposed after ``stop`` ran), drop queued messages, tell
        the user, and end the turn without another model request once the running calls are done."""
        running = await self._cancel_open(conversation, user)
        turn_id = state.turn.id if state.turn else ""
        text = "Stopped." if state.turn else "Stopped. Nothing was in progress."
        if state.pending:
            text += " Pending calls were cancelled."
        if running:
            text += f" {running} call(s) already running will finish; nothing else will run for this request."
        await self._reply(conversation, turn_id, "notice", text)
        state.stopped = True
        for p in state.pending:
            if p.call_id is None and p.proposal is not None:  # planned, not proposed yet: never propose it
                p.proposal, p.local_is_error = None, False
                p.local_result = "Not run: the user stopped the conversation. Do not retry it."
        if not state.pending:
            state.turn = None
            state.stopped = False
        await self._save(conversation, token, transcript, state, clear_queue=True)
        await self.conversations.clear_stop(conversation)
        if not state.pending:
            await self._publish("idle", conversation, {"turn": turn_id, "state": "done"})

    async def _cancel_open(self, conversation: str, user: str) -> int:
        """Cancel every open call of the conversation; returns how many could not be (already running)."""
        running = 0
        for record in await self.store.open_calls(conversation):
            try:
                await self.store.cancel(record.id, actor=user, reason=f"conversation stopped by {user}")
            except ApprovalError:
                running += 1
        return running

    async def _audit_local(
        self, conversation: str, user: str, pending: list[PendingCall], blocks: list[dict[str, Any]]
    ) -> None:
        """Record locally answered tool_uses as ``rejected`` in the audit trail (never shown for approval)."""
        names = {b.get("id"): b for b in blocks}
        for p in pending:
            if p.local_result is None:
                continue
            block = names.get(p.tool_use_id) or {}
            with contextlib.suppress(ApprovalError):
                await self.store.reject(
                    conversation, tool=str(block.get("name", "")), arguments=json.dumps(block.get("input", {})),
                    reason=p.local_result[:500], requester=user, tool_use_id=p.tool_use_id,
                )

    # ---------------------------------------------------------------- helpers

    def _catalog(self, conversation: str, meta: Mapping[str, str]) -> Catalog:
        return self._catalog_for(conversation, meta) if self._catalog_for else self.catalog

    async def _save(self, conversation: str, token: str, transcript: Transcript, state: ConvState,
                    **kw: Any) -> None:
        if not await self.conversations.save(conversation, token, transcript, state, **kw):
            raise LockLost(conversation)

    async def say(self, conversation: str, kind: str, text: str) -> None:
        """Post text to the conversation's thread outside any turn (summaries, notices)."""
        await self._reply(conversation, "", kind, text)

    async def _reply(self, conversation: str, turn_id: str, kind: str, text: str) -> None:
        # The model's text gets what tool output gets: no terminal or bidi controls, no known secrets.
        text = await clean_model_text(self._redactor, text)
        await self._publish("reply", conversation, {"turn": turn_id, "text": text, "kind": kind})

    async def _publish(self, kind: bus.OutboxKind, conversation: str, data: dict[str, Any]) -> None:
        await bus.publish_outbox(self.redis, kind, conversation, data)
