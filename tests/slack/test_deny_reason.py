"""Deny with a reason, driven through Slack as an approver would: Deny opens a modal (views.open with the
click's trigger_id), the approver types why and submits (view_submission), the card and the thread quote the
reason, and the model reads it in the refusal (the fake Anthropic records the request)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.agent import bus
from bot.agent.worker import AgentWorker
from bot.approvals.records import CallRecord, CallState
from bot.slack import catalog_for_channel, channel_of_conversation
from bot.slack.deny import DENY_REASON_VIEW
from tests.agent import harness as agent_harness
from tests.slack.conftest import CHANNEL, Harness, wait_for
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply

REASON = "not during the freeze <!channel>; check the dashboard first"


async def _card(harness: Harness, conversation: str) -> CallRecord:
    async def card() -> CallRecord | None:
        calls = await harness.store.pending(conversation)
        return calls[0] if calls and calls[0].meta.get("slack_ts") else None

    return await wait_for(card, timeout=10)


async def test_deny_reason_reaches_the_model_and_the_card(
    harness: Harness, poster: Callable[[], Awaitable[None]], opsctl: Path
) -> None:
    catalog = agent_harness.catalog_for(opsctl)
    with FakeAnthropic() as model:
        model.script(
            tool_use_reply([("toolu_1", "service_status", '{"service": "web"}')], text="Checking."),
            text_reply("Understood, I will not run it."),
        )
        agent = agent_harness.build_agent(harness.redis, model.base_url, catalog, agent_harness.settings(),
                                          harness.front.deps.policy)
        agent._catalog_for = lambda conv, _meta: catalog_for_channel(
            catalog, harness.front.settings, channel_of_conversation(conv) or "")
        stop = asyncio.Event()
        task = asyncio.create_task(AgentWorker(harness.redis, agent, block_seconds=0.05).run(stop))
        await poster()
        try:
            await harness.command("is web ok?")
            # the "asked" post is the first; the card may follow before this looks
            asked = (await wait_for(lambda: harness.slack.calls_to("chat.postMessage")))[0]
            thread_ts = asked.response["ts"]
            record = await _card(harness, f"slack:{CHANNEL}:{thread_ts}")

            await harness.click(record, "fisk_deny", "UAPPROVER")
            (opened,) = await wait_for(lambda: harness.slack.calls_to("views.open"))
            view = opened.response["view"]
            assert opened.params["trigger_id"] and view["callback_id"] == DENY_REASON_VIEW
            assert "service_status" in json.dumps(view["blocks"])
            assert (await harness.store.get(record.id)).state is CallState.awaiting_approval  # not yet

            status, _ = await harness.submit_view(view, "UAPPROVER", {"reason": {"reason": REASON}})
            assert status == 200
            await wait_for(lambda: len(model.message_requests) == 2, timeout=15)
            result = agent_harness.tool_results(model.message_requests[1])[0]
            assert "denied by UAPPROVER" in result["content"] and REASON in result["content"]
            assert "Do not retry it" in result["content"] and "is_error" not in result

            final = await harness.store.get(record.id)
            assert final.state is CallState.denied and final.decision is not None
            assert final.decision.reason == REASON
            card = json.dumps(harness.slack.message(CHANNEL, final.meta["slack_ts"]))
            escaped = "not during the freeze &lt;!channel&gt;; check the dashboard first"
            assert "Denied by <@UAPPROVER>" in card and escaped in card and "<!channel>" not in card

            async def noted() -> list[dict[str, object]]:
                return [m for m in harness.slack.thread(CHANNEL, thread_ts)
                        if m["ts"] != final.meta["slack_ts"] and escaped in json.dumps(m)]

            await wait_for(noted)
        finally:
            stop.set()
            _done, late = await asyncio.wait({task}, timeout=12)  # the agent worker lets handlers finish
            for pending in late:
                pending.cancel()


async def test_deny_without_a_reason_and_a_stranger_cannot_open_the_dialog(harness: Harness, poster) -> None:
    conversation = f"slack:{CHANNEL}:1700.000001"
    record = await harness.propose(conversation, ["opsctl", "status"])
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", conversation, {"call_ids": [record.id]}))
    await poster()
    record = await _card(harness, conversation)
    await harness.click(record, "fisk_deny", "USTRANGER")
    refusal = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "may not deny" in refusal[0].params["text"] and not harness.slack.calls_to("views.open")

    await harness.click(record, "fisk_deny", "UREQ")  # the requester may withdraw their own call
    (opened,) = await wait_for(lambda: harness.slack.calls_to("views.open"))
    await harness.submit_view(opened.response["view"], "UREQ", {"reason": {"reason": None}})

    async def denied() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.state is CallState.denied else None

    final = await wait_for(denied)
    assert final.decision is not None and final.decision.reason == "denied by UREQ"
    await wait_for(lambda: "Denied by <@UREQ>" in json.dumps(harness.slack.message(CHANNEL, final.meta["slack_ts"])))


async def test_a_dialog_that_cannot_open_denies_without_a_reason(harness: Harness, poster) -> None:
    conversation = f"slack:{CHANNEL}:1700.000001"
    record = await harness.propose(conversation, ["opsctl", "status"])
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", conversation, {"call_ids": [record.id]}))
    await poster()
    record = await _card(harness, conversation)
    harness.slack.fail_next("views.open", error="expired_trigger_id")
    await harness.click(record, "fisk_deny", "UAPPROVER")

    async def denied() -> bool:
        return (await harness.store.get(record.id)).state is CallState.denied

    await wait_for(denied)
