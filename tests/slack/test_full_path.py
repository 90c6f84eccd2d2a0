"""The whole path with real parts: /fisk -> agent (scripted Messages API) -> card -> signed approve click ->
runner executes the real opsctl fixture -> result in the thread -> the model's final answer in the thread."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.agent.worker import AgentWorker
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.slack import catalog_for_channel, channel_of_conversation
from tests.agent import harness as agent_harness
from tests.slack.conftest import CHANNEL, Harness, wait_for
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply


async def test_command_to_card_to_click_to_result_to_answer(
    harness: Harness, poster: Callable[[], Awaitable[None]], opsctl: Path
) -> None:
    front = harness.front
    catalog = agent_harness.catalog_for(opsctl)
    with FakeAnthropic() as model:
        model.script(
            tool_use_reply([("toolu_1", "service_status", '{"service": "web"}')], text="Checking."),
            text_reply("**web** is *running* on <!channel>-free hosts."),
        )
        agent = agent_harness.build_agent(
            harness.redis, model.base_url, catalog, agent_harness.settings(), front.deps.policy
        )
        agent._catalog_for = lambda conv, _meta: catalog_for_channel(
            catalog, front.settings, channel_of_conversation(conv) or ""
        )
        runner = RunnerWorker(harness.redis, CallStore(harness.redis, heartbeat_ttl=2.0), agent_harness.execute,
                              runner_id="r1", block_seconds=0.05, stale_after=2.0, sweep=False, grace_period=1)
        stop = asyncio.Event()
        tasks = [asyncio.create_task(AgentWorker(harness.redis, agent, block_seconds=0.05).run(stop)),
                 asyncio.create_task(runner.run(stop))]
        await poster()
        try:
            await harness.command("is web ok?")
            asked = (await wait_for(lambda: harness.slack.calls_to("chat.postMessage")))[0]  # the thread opens first
            thread_ts = asked.response["ts"]
            conversation = f"slack:{CHANNEL}:{thread_ts}"

            async def card() -> object:
                calls = await harness.store.pending(conversation)
                return calls and calls[0].meta.get("slack_ts") and calls[0]

            record = await wait_for(card, timeout=10)
            assert record.argv[0] == str(opsctl) and record.argv[1:3] == ["service", "status"]
            assert "web" in record.argv
            await harness.click(record, "fisk_approve", "UAPPROVER")

            def answer() -> list[dict[str, object]]:
                return [m for m in harness.slack.thread(CHANNEL, thread_ts) if "running" in json.dumps(m)]

            await wait_for(answer, timeout=15)
            final = await harness.store.get(record.id)
            assert final.state == CallState.finished
            thread = harness.slack.thread(CHANNEL, thread_ts)
            texts = [json.dumps(m.get("blocks") or m.get("text")) for m in thread if m["ts"] != final.meta["slack_ts"]]
            result = [t for t in texts if "exit code 0" in t]
            assert len(result) == 1 and "status" in result[0]  # the echoed argv is the output
            card = json.dumps(harness.slack.message(CHANNEL, final.meta["slack_ts"]))
            assert "Approved by <@UAPPROVER>" in card and "Finished: exit code 0" in card and "Expires" not in card
            assert f"<{final.meta['slack_result_link']}|result>" in card  # the card links to its result...
            assert f"<{final.meta['slack_card_link']}|card>" in result[0]  # ...and the result to its card
            assert f"call `{final.id}`" in result[0] and "service status" in result[0]
            reply = answer()[-1]["blocks"][0]["text"]["text"]  # type: ignore[index]
            assert reply == "*web* is _running_ on &lt;!channel&gt;-free hosts."
        finally:
            stop.set()
            _done, late = await asyncio.wait(tasks, timeout=12)  # the agent worker lets handlers finish
            for task in late:
                task.cancel()
