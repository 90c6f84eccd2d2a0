"""Slack's AI app surfaces: in an assistant thread the status line follows the turn (thinking, waiting for
approval, running, cleared) through assistant.threads.setStatus; a new assistant thread gets suggested prompts;
without the feature, or outside assistant threads, the working reaction is used as before."""

from __future__ import annotations

import time

from bot.agent import bus
from bot.approvals.records import CallRecord
from tests.slack.conftest import Harness, wait_for

DM = "D0ASSIST"
CONV = f"slack:{DM}:1700.000001"


def statuses(harness: Harness) -> list[str]:
    return [c.params["status"] for c in harness.slack.calls_to("assistant.threads.setStatus") if c.status == 200]


async def test_status_line_follows_the_turn(harness: Harness, poster) -> None:
    deps = harness.front.deps
    deps.settings = deps.settings.model_copy(update={"assistant": True})
    record = await harness.propose(CONV, ["opsctl", "status"])
    for kind, data in (("working", {"turn": "t1"}), ("proposed", {"turn": "t1", "call_ids": [record.id]}),
                       ("idle", {"turn": "t1", "state": "suspended"})):
        await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent(kind, CONV, data))
    await poster()
    await wait_for(lambda: statuses(harness) == ["is thinking…", "is waiting for approval of opsctl_status…"])

    async def carded() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.meta.get("slack_ts") else None

    await wait_for(carded)
    await harness.store.approve(record.id, "UAPPROVER", [], deps.policy)
    await harness.store.claim(record.id, "runner-1")
    await wait_for(lambda: statuses(harness)[-1:] == ["is running opsctl_status…"])
    await harness.store.finish(record.id, "runner-1", {"status": "finished", "exit_code": 0, "output": "ok"})
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("working", CONV, {"turn": "t1"}))
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("idle", CONV, {"turn": "t1", "state": "done"}))
    await wait_for(lambda: statuses(harness)[-2:] == ["is thinking…", ""])
    (first,) = harness.slack.calls_to("assistant.threads.setStatus")[:1]
    assert first.params["channel_id"] == DM and first.params["thread_ts"] == "1700.000001"
    assert not harness.slack.calls_to("reactions.add")


async def test_suggested_prompts_and_reaction_fallback(harness: Harness, poster) -> None:
    deps = harness.front.deps
    deps.settings = deps.settings.model_copy(update={"assistant": True})
    started = {"type": "assistant_thread_started", "event_ts": str(time.time()),
               "assistant_thread": {"user_id": "UREQ", "channel_id": DM, "thread_ts": "1700.000009",
                                    "context": {}}}
    await harness.event(started, event_id="Ev-assistant-1")
    (call,) = await wait_for(lambda: harness.slack.calls_to("assistant.threads.setSuggestedPrompts"))
    assert call.params["channel_id"] == DM and call.params["thread_ts"] == "1700.000009"
    assert call.response["ok"] and [p["title"] for p in call.params["prompts"]] == [
        p.title for p in deps.settings.assistant_prompts]

    # a channel thread is no assistant thread: the working reaction, as without the feature
    conversation = await deps.state.open_thread("C0TEST", "1700.000002", "UREQ", last_ts="1700.000003")
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("working", conversation, {"turn": "t"}))
    await poster()
    (reaction,) = await wait_for(lambda: harness.slack.calls_to("reactions.add"))
    assert reaction.params["timestamp"] == "1700.000003"
    assert not harness.slack.calls_to("assistant.threads.setStatus")
