"""A hostile or confused model: tools it was not offered, arguments built to smuggle flags or break argv, and
retries after a denial. Everything goes through the real agent (scripted Messages API), the real approval
store and the real runner; "nothing ran" is checked on the counting opsctl's execution log and in the audit
trail, not only in what the agent says."""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.tools.catalog import Catalog
from tests.adversarial.conftest import CountingApp, audit_of, ran, wait_until
from tests.agent import harness
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply

CONV = "adv:model:1"
POLICY = ApprovalPolicy()


async def _one_turn(redis: Redis, fake: FakeAnthropic, catalog: Catalog, text: str = "go") -> object:
    agent = harness.build_agent(redis, fake.base_url, catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", text)
    await agent.drive(CONV)
    return agent


async def test_tools_not_offered_are_answered_locally_and_never_run(
    redis: Redis, fake: FakeAnthropic, counted: CountingApp, counted_catalog: Catalog, run_calls
) -> None:
    await run_calls(counted_catalog)
    names = ["deploy_rollout", "db_drop", "selftest", "service status", "service_status\x00", "../opsctl",
             "SERVICE_STATUS", "tool_search_tool_bm25", "opsctl_service_status", ""]
    fake.script(
        tool_use_reply([(f"toolu_{i}", name, '{"service": "web", "database": "main"}')
                        for i, name in enumerate(names)]),
        text_reply("done"),
    )
    agent = await _one_turn(redis, fake, counted_catalog)
    offered = {t["name"] for t in fake.message_requests[0]["tools"]}
    assert offered == set(counted_catalog.names)
    assert not offered & {"db_drop", "selftest", "deploy_rollout"}
    results = harness.tool_results(fake.message_requests[1])
    assert len(results) == len(names) and all(r["is_error"] for r in results)
    assert "denied by the operator" in results[1]["content"]
    assert all("Unknown tool" in r["content"] for i, r in enumerate(results) if i != 1)
    assert await agent.store.pending(CONV) == []  # type: ignore[attr-defined]
    for i in range(len(names)):
        record = await agent.store.get(f"0-toolu_{i}")  # type: ignore[attr-defined]
        assert record.state == CallState.rejected and record.argv == []
        assert [e.to_state for e in await audit_of(redis, record.id)] == ["rejected"]
    assert counted.executions() == []


ACCEPTED = [
    # values that look like flags stay values: flag values joined with "=", positionals after "--"
    ({"service": "--help", "level": "--debug", "grep": ["-v", "--", "-e", "--follow"]},
     ["--grep=-v", "--grep=--", "--grep=-e", "--grep=--follow", "--level=--debug", "--", "--help"]),
    ({"service": "-", "since": "-1h"}, ["--since=-1h", "--", "-"]),
    ({"service": "web\nrm -rf / #", "grep": ["a\r\nb"]}, ["--grep=a\r\nb", "--", "web\nrm -rf / #"]),
    ({"service": "$(reboot)", "level": "`id`;|&"}, ["--level=`id`;|&", "--", "$(reboot)"]),
    ({"service": "web", "lines": 1e400}, ["--lines=1e400", "--", "web"]),
]


@pytest.mark.parametrize(("arguments", "tail"), ACCEPTED)
async def test_hostile_but_valid_values_reach_argv_only_as_values_and_run_only_after_approval(
    redis: Redis, fake: FakeAnthropic, counted: CountingApp, counted_catalog: Catalog, run_calls,
    arguments: dict[str, object], tail: list[str],
) -> None:
    await run_calls(counted_catalog)
    raw = json.dumps(arguments).replace('"1e400"', "1e400").replace("Infinity", "1e400")
    fake.script(tool_use_reply([("toolu_v", "service_logs", raw)]), text_reply("ok"))
    agent = await _one_turn(redis, fake, counted_catalog)
    (record,) = await agent.store.pending(CONV)  # type: ignore[attr-defined]
    assert record.argv == [str(counted.binary), "service", "logs", *tail]
    assert counted.executions() == []  # proposed, shown, not run
    await agent.store.approve(record.id, "UAPPROVER", [], POLICY)  # type: ignore[attr-defined]
    await wait_until(lambda: counted.executions())
    assert counted.executions() == [record.argv[1:]]  # exactly the approved argv, once


REFUSED = [
    ({"service": "web", "rm": "-rf"}, "unknown_property"),
    ({"service": "web", "help": True}, "unknown_property"),  # fisk's framework flag
    ({"service": "web", "follow": "yes"}, "expected_boolean"),
    ({"service": "web", "follow": 1}, "expected_boolean"),
    ({"service": {"name": "web"}}, "unsupported_value_type"),
    ({"service": ["web", ["x"]]}, "unsupported_value_type"),
    ({"service": "web", "grep": [{"a": 1}]}, "unsupported_value_type"),
    ({"service": "web", "level": {"x": {"y": "z"}}}, "unsupported_value_type"),
    ({"lines": "5"}, "missing_required"),
    ({"service": "web\u0000--follow"}, "nul_byte"),
    ({"service": "web", "grep": ["a\u0000b"]}, "nul_byte"),
    ({"service": "web", "level": {"k\u0000": "v"}}, "nul_byte"),
    ({"service": "x" * 1_000_000}, "argument_too_long"),
]


@pytest.mark.parametrize(("arguments", "kind"), REFUSED)
async def test_invalid_arguments_are_refused_before_approval_with_a_clear_error(
    redis: Redis, fake: FakeAnthropic, counted: CountingApp, counted_catalog: Catalog, run_calls,
    arguments: dict[str, object], kind: str,
) -> None:
    await run_calls(counted_catalog)
    fake.script(tool_use_reply([("toolu_bad", "service_logs", json.dumps(arguments))]), text_reply("ok"))
    agent = await _one_turn(redis, fake, counted_catalog)
    (result,) = harness.tool_results(fake.message_requests[1])
    assert result["is_error"] is True and f"Invalid arguments ({kind})" in result["content"]
    assert len(result["content"]) < 2000  # a 1 MB value is not echoed back
    assert await agent.store.pending(CONV) == []  # type: ignore[attr-defined]
    record = await agent.store.get("0-toolu_bad")  # type: ignore[attr-defined]
    assert record.state == CallState.rejected and not await ran(redis, record.id)
    assert counted.executions() == []


async def test_hidden_parameter_of_an_offered_tool_is_refused(
    redis: Redis, fake: FakeAnthropic, counted: CountingApp, counted_catalog: Catalog
) -> None:
    fake.script(tool_use_reply([("toolu_h", "service_restart", '{"service": "web", "skip-health-checks": true}')]),
                text_reply("ok"))
    agent = await _one_turn(redis, fake, counted_catalog)
    (result,) = harness.tool_results(fake.message_requests[1])
    assert "unknown property" in result["content"] and "skip-health-checks" in result["content"]
    assert await agent.store.pending(CONV) == []  # type: ignore[attr-defined]
    assert counted.executions() == []


async def test_retry_after_denial_is_a_new_call_needing_a_new_approval(
    redis: Redis, fake: FakeAnthropic, counted: CountingApp, counted_catalog: Catalog, run_calls
) -> None:
    await run_calls(counted_catalog)
    same = '{"service": "web", "force": true}'
    fake.script(
        tool_use_reply([("toolu_1", "service_restart", same)]),
        tool_use_reply([("toolu_2", "service_restart", same)], text="Retrying anyway."),  # disobeys
        tool_use_reply([("toolu_1", "service_restart", same)]),  # and replays the denied call's id
        text_reply("gave up"),
    )
    agent = await _one_turn(redis, fake, counted_catalog)
    store = agent.store  # type: ignore[attr-defined]
    (first,) = await store.pending(CONV)
    await store.deny(first.id, "UAPPROVER", [], POLICY, reason="no")
    await agent.drive(CONV)  # type: ignore[attr-defined]
    assert "Do not retry it" in harness.tool_results(fake.message_requests[1])[0]["content"]
    (second,) = await store.pending(CONV)
    assert second.id != first.id and second.state == CallState.awaiting_approval and second.approvals == []
    assert counted.executions() == []
    await store.deny(second.id, "UAPPROVER", [], POLICY)
    await agent.drive(CONV)  # type: ignore[attr-defined]
    # the replayed tool_use id resolves to the denied record: it is not re-opened, not run
    assert await store.pending(CONV) == []
    await wait_until(lambda: len(fake.message_requests) == 4)
    third = harness.tool_results(fake.message_requests[3])[0]["content"]
    assert "refused" in third
    for call_id in (first.id, second.id):
        assert (await store.get(call_id)).state == CallState.denied and not await ran(redis, call_id)
    assert counted.executions() == []
