"""Tool use: parallel calls with mixed outcomes, invalid arguments, tool search deferral, pause_turn, queueing
and stop. Everything runs against the real SDK, the scripted Messages API and the real Redis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from redis.asyncio import Redis

from bot.agent.results import REFUSED
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.worker import RunnerWorker
from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.agent.test_basic import CONV, wait_state
from tests.support.fake_anthropic import (
    FakeAnthropic,
    pause_turn_reply,
    server_tool_search_reply,
    text_reply,
    tool_use_reply,
)

POLICY = ApprovalPolicy()


async def test_three_parallel_calls_one_denied_one_expired(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog, runner: RunnerWorker
) -> None:
    fake.script(
        tool_use_reply([
            ("toolu_1", "service_status", '{"service": "web"}'),
            ("toolu_2", "service_restart", '{"service": "web"}'),
            ("toolu_3", "auth_user_list", '{"limit": 5}'),
        ]),
        text_reply("Status is fine; I did not restart."),
    )
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "check web")
    await agent.drive(CONV)
    proposed = [e for e in await harness.outbox(redis, CONV) if e.kind == "proposed"]
    assert len(proposed) == 1  # proposed together
    ids = proposed[0].data["call_ids"]
    assert [(await agent.store.get(i)).tool_use_id for i in ids] == ["toolu_1", "toolu_2", "toolu_3"]

    await agent.store.deny(ids[1], "U2", [], POLICY, reason="not now")
    await agent.drive(CONV)  # a completion arrives: still two open, stays suspended
    assert len(fake.message_requests) == 1
    await agent.store.approve(ids[0], "U2", [], POLICY)
    await wait_state(agent, ids[0], CallState.finished)
    await agent.drive(CONV)
    assert len(fake.message_requests) == 1
    await agent.store.expire_due(datetime.now(UTC) + timedelta(hours=1))
    await agent.drive(CONV)

    assert len(fake.message_requests) == 2
    results = harness.tool_results(fake.message_requests[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2", "toolu_3"]
    assert results[0]["content"].startswith("exit code: 0") and "is_error" not in results[0]
    assert "denied by U2" in results[1]["content"] and "is_error" not in results[1]
    assert results[1]["content"] == REFUSED.format(how="denied by U2") + " Their reason, in their words: not now"
    assert "Do not retry it" in results[1]["content"] and "work around" in results[1]["content"]
    assert "nobody approved it before the approval expired" in results[2]["content"]
    assert "is_error" not in results[2]
    assert fake.message_requests[1]["messages"][-1]["content"] == results  # tool_results only, first
    assert harness.replies(await harness.outbox(redis, CONV))[-1] == "Status is fine; I did not restart."


async def test_denial_without_reason_says_who_once(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog, runner: RunnerWorker
) -> None:
    fake.script(tool_use_reply([("toolu_1", "service_restart", '{"service": "web"}')]), text_reply("Understood."))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "restart web")
    await agent.drive(CONV)
    (proposed,) = [e for e in await harness.outbox(redis, CONV) if e.kind == "proposed"]
    await agent.store.deny(proposed.data["call_ids"][0], "U1", [], POLICY)
    await agent.drive(CONV)
    (result,) = harness.tool_results(fake.message_requests[1])
    assert result["content"] == REFUSED.format(how="denied by U1")
    assert result["content"].count("denied by U1") == 1


async def test_invalid_unknown_and_denied_tools_answered_locally_then_corrected(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(
        tool_use_reply([
            ("toolu_bad", "service_logs", '{"lines": "many", "bogus": 1}'),
            ("toolu_unknown", "rm_rf", "{}"),
            ("toolu_denied", "db_drop", '{"database": "main"}'),
        ]),
        tool_use_reply([("toolu_ok", "service_logs", '{"service": "web", "lines": 20}')]),
    )
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "logs please")
    await agent.drive(CONV)

    assert len(fake.message_requests) == 2  # all answered locally: the loop continued at once
    results = harness.tool_results(fake.message_requests[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_bad", "toolu_unknown", "toolu_denied"]
    assert all(r["is_error"] is True for r in results)
    bad = results[0]["content"]
    assert "Invalid arguments" in bad and "service" in bad and "lines" in bad and "since" in bad  # roster
    assert "Unknown tool 'rm_rf'" in results[1]["content"]
    assert "denied by the operator's configuration" in results[2]["content"]
    # nothing reached a human: only the corrected call is awaiting approval
    pending = await agent.store.pending(CONV)
    assert [r.tool_use_id for r in pending] == ["toolu_ok"]
    assert pending[0].argv[1:] == ["service", "logs", "--lines=20", "--", "web"]
    rejected = await agent.store.find("0-toolu_bad")
    assert rejected is not None and rejected.state == CallState.rejected  # audited, never shown


async def test_deferral_and_server_tool_blocks_echoed(
    redis: Redis, fake: FakeAnthropic, full_catalog: Catalog
) -> None:
    search = server_tool_search_reply(
        "restart service", ["service_restart"], server_tool_id="srvtoolu_1", text="Found it.",
        then_calls=[("toolu_r", "service_restart", '{"service": "api"}')],
    )
    fake.script(search, text_reply("Not restarted."))
    agent = harness.build_agent(redis, fake.base_url, full_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "restart api")
    await agent.drive(CONV)

    tools = fake.message_requests[0]["tools"]
    assert len(full_catalog) >= 10 and "db_drop" not in [t["name"] for t in tools]
    assert tools[-1] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25",
                         "cache_control": {"type": "ephemeral"}}
    by_name = {t["name"]: t for t in tools[:-1]}
    assert "defer_loading" not in by_name["service_status"]  # ai:no_defer
    assert all(t.get("defer_loading") is True for n, t in by_name.items() if n != "service_status")

    (call,) = await agent.store.pending(CONV)
    await agent.store.deny(call.id, "U2", [], POLICY)
    await agent.drive(CONV)
    second = fake.message_requests[1]
    assert second["tools"] == tools  # deferred tools stay in every request
    assistant = second["messages"][1]
    sent = search.payload["content"]
    assert assistant["content"][0] == sent[0] and assistant["content"][1] == sent[1]  # unchanged
    assert assistant["content"][0]["type"] == "server_tool_use"
    assert assistant["content"][1]["type"] == "tool_search_tool_result"
    assert assistant["content"][3]["id"] == "toolu_r"


async def test_pause_turn_sends_assistant_content_back(
    redis: Redis, fake: FakeAnthropic, full_catalog: Catalog
) -> None:
    paused = pause_turn_reply(query="logs")
    fake.script(paused, text_reply("Done searching."))
    agent = harness.build_agent(redis, fake.base_url, full_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "find log tools")
    await agent.drive(CONV)
    assert len(fake.message_requests) == 2
    messages = fake.message_requests[1]["messages"]
    assert messages[-1] == {"role": "assistant", "content": paused.payload["content"]}
    assert harness.replies(await harness.outbox(redis, CONV)) == ["Done searching."]


async def test_message_while_pending_is_queued_and_stop_cancels(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(
        tool_use_reply([("toolu_1", "service_status", "{}")]),
        text_reply("Status: ok."),
        text_reply("Second answer."),
        tool_use_reply([("toolu_2", "service_restart", '{"service": "web"}'),
                        ("toolu_3", "service_status", "{}")]),
    )
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "status?")
    await agent.drive(CONV)
    await agent.submit(CONV, "2-0", "U1", "and then?")  # arrives while toolu_1 awaits approval
    await agent.drive(CONV)
    assert len(fake.message_requests) == 1
    (call,) = await agent.store.pending(CONV)
    await agent.store.deny(call.id, "U2", [], POLICY)
    await agent.drive(CONV)
    assert len(fake.message_requests) == 3  # resumed, answered, then the queued message
    third = fake.message_requests[2]["messages"]
    assert third[-1] == {"role": "user", "content": [{"type": "text", "text": "and then?"}]}
    assert harness.replies(await harness.outbox(redis, CONV))[-2:] == ["Status: ok.", "Second answer."]

    await agent.submit(CONV, "3-0", "U1", "restart web")
    await agent.drive(CONV)
    assert len(await agent.store.pending(CONV)) == 2
    await agent.submit(CONV, "4-0", "U1", "queued before stop")
    await agent.stop(CONV, "U1")
    await agent.drive(CONV)
    assert await agent.store.open_calls(CONV) == []
    for call_id in ("0-toolu_2", "0-toolu_3"):
        record = await agent.store.get(call_id)
        assert record.state == CallState.denied and record.decision and "stopped" in record.decision.reason
    assert len(fake.message_requests) == 4  # no model request after the stop
    events = await harness.outbox(redis, CONV)
    assert events[-2].kind == "reply" and events[-2].data["text"].startswith("Stopped.")
    assert events[-1].kind == "idle" and events[-1].data["state"] == "done"
    transcript, state = await agent.conversations.load(CONV)
    assert state.turn is None and not state.pending
    assert [b["tool_use_id"] for b in transcript[-1]["content"]] == ["toolu_2", "toolu_3"]  # pairs complete
    assert await agent.conversations.next_queued(CONV) is None

    fake.script(text_reply("Fresh start."))
    await agent.submit(CONV, "5-0", "U1", "hello again")
    await agent.drive(CONV)
    assert harness.replies(await harness.outbox(redis, CONV))[-1] == "Fresh start."
