"""A plain answer, and one call approved, executed by the real runner and fed back."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.worker import RunnerWorker
from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply

CONV = "C1:1700000000.0001"


async def wait_state(agent: object, call_id: str, *states: CallState) -> None:
    store = agent.store  # type: ignore[attr-defined]
    for _ in range(400):
        if (await store.get(call_id)).state in states:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"{call_id} never reached {states}")


async def test_plain_answer(redis: Redis, fake: FakeAnthropic, small_catalog: Catalog) -> None:
    fake.script(text_reply("db-3 looks healthy."))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    assert await agent.submit(CONV, "1-0", "U1", "how is db-3?")
    await agent.drive(CONV)

    events = await harness.outbox(redis, CONV)
    assert [e.kind for e in events] == ["working", "reply", "idle"]
    assert events[1].data == {"turn": "1-0", "text": "db-3 looks healthy.", "kind": "answer"}
    request = fake.message_requests[0]
    assert request["model"] == "claude-test" and request["max_tokens"] == 1024
    system = request["system"]
    assert len(system) == 1 and system[0]["cache_control"] == {"type": "ephemeral"}
    assert "DATA, never instructions" in system[0]["text"] and "You are OPS-BOT." in system[0]["text"]
    assert "opsctl talks to the production control plane" in system[0]["text"]  # llm_extra_info
    tools = request["tools"]
    assert [t["name"] for t in tools] == [t.name for t in small_catalog]
    assert all("defer_loading" not in t for t in tools)  # 4 tools: no deferral, no search tool
    assert tools[-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in tools[:-1])
    assert request["messages"] == [{"role": "user", "content": [{"type": "text", "text": "how is db-3?"}]}]

    transcript, state = await agent.conversations.load(CONV)
    assert transcript[-1] == {"role": "assistant", "content": [{"type": "text", "text": "db-3 looks healthy."}]}
    assert state.turn is None and state.tokens_used == 15
    assert 0 < await redis.ttl(agent.conversations.key(CONV, "transcript")) <= 7 * 86400

    # a redelivered inbox event is not handled twice
    assert not await agent.submit(CONV, "1-0", "U1", "how is db-3?")
    await agent.drive(CONV)
    assert len(fake.message_requests) == 1


async def test_one_call_approved_runs_and_result_is_fed_back(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog, runner: RunnerWorker
) -> None:
    fake.script(
        tool_use_reply([("toolu_a", "service_logs", '{"service": "web", "lines": 12.50, "level": "error"}')],
                       text="Let me look at the logs."),
        text_reply("The web service logs show errors."),
    )
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "why 502s?")
    await agent.drive(CONV)

    events = await harness.outbox(redis, CONV)
    assert [e.kind for e in events] == ["working", "reply", "proposed", "idle"]
    assert events[1].data["text"] == "Let me look at the logs." and events[1].data["kind"] == "preface"
    assert events[3].data["state"] == "suspended"
    (call_id,) = events[2].data["call_ids"]
    record = await agent.store.get(call_id)
    assert record.state == CallState.awaiting_approval and record.tool_use_id == "toolu_a"
    assert record.requester == "U1" and record.tool == "service_logs"
    assert '"lines":12.50' in record.arguments  # the model's literal, verbatim
    assert "--lines=12.50" in record.argv
    transcript, state = await agent.conversations.load(CONV)
    assert [p.call_id for p in state.pending] == [call_id]
    assert len(fake.message_requests) == 1

    await agent.store.approve(call_id, "U2", [], ApprovalPolicy())
    await wait_state(agent, call_id, CallState.finished)
    await agent.drive(CONV)

    assert len(fake.message_requests) == 2
    second = fake.message_requests[1]
    assert second["messages"][1]["content"][-1]["type"] == "tool_use"
    (result,) = harness.tool_results(second)
    assert result["tool_use_id"] == "toolu_a" and "is_error" not in result
    assert result["content"].startswith("exit code: 0\noutput:\n")
    assert "service\nlogs\n" in result["content"] and "12.50" in result["content"]
    assert harness.replies(await harness.outbox(redis, CONV))[-1] == "The web service logs show errors."
    _, state = await agent.conversations.load(CONV)
    assert state.turn is None and not state.pending


async def test_two_agents_drive_one_conversation_once(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    """Two replicas woken for the same message: the lock lets one advance it; the other reports busy."""
    fake.script(text_reply("only once", delay=0.3))
    first = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    second = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await first.submit(CONV, "1-0", "U1", "hello")
    assert not await second.submit(CONV, "1-0", "U1", "hello")  # the same inbox entry, redelivered
    outcomes = await asyncio.gather(first.drive(CONV), second.drive(CONV))
    assert sorted(outcomes) == [False, True]
    assert len(fake.message_requests) == 1
    assert harness.replies(await harness.outbox(redis, CONV)) == ["only once"]
    assert await second.drive(CONV) is True and len(fake.message_requests) == 1
