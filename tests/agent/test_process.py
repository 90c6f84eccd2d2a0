"""Invariant 7 for the agent role: a real agent process SIGKILLed while calls are pending, a new one finishes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.agent import harness
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply

ROOT = Path(__file__).resolve().parents[2]
CONV = "C9:1700000000.0009"


def spawn_agent(redis_url: str, api_url: str, opsctl: Path) -> subprocess.Popen[str]:
    """Start the process; it imports, then waits for ``go`` (see agent_process.py)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.agent.agent_process", redis_url, api_url, str(opsctl)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def go(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    assert proc.stdout.readline().strip() == "imported"
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "ready"


async def wait_for(check: Callable[[], object], timeout: float = 40.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_agent_killed_while_calls_pending_then_new_process_finishes(
    redis: Redis, redis_url: str, fake: FakeAnthropic, opsctl: Path, runner: RunnerWorker
) -> None:
    fake.script(
        tool_use_reply([("toolu_k1", "service_status", '{"service": "web"}'),
                        ("toolu_k2", "service_logs", '{"service": "web", "lines": 5}')]),
        text_reply("web is up; logs are clean."),
        text_reply("Answer to the message sent meanwhile."),
    )
    store = CallStore(redis)
    first = spawn_agent(redis_url, fake.base_url, opsctl)
    second = spawn_agent(redis_url, fake.base_url, opsctl)  # importing only, until go()
    try:
        go(first)
        await bus.submit_user_message(redis, CONV, "U1", "check web", {"channel": "C9"})

        async def proposed() -> list[str]:
            events = [e for e in await harness.outbox(redis, CONV) if e.kind == "proposed"]
            return events[0].data["call_ids"] if events else []

        await wait_for(proposed)
        await wait_for(lambda: _suspended(redis))
    except BaseException:
        second.kill()
        second.wait(10)
        raise
    finally:
        first.send_signal(signal.SIGKILL)  # possibly while it still holds the conversation lock
        first.wait(10)

    ids = await proposed()
    for call_id in ids:
        await store.approve(call_id, "U2", [], ApprovalPolicy())
    for call_id in ids:
        await wait_for(lambda cid=call_id: _state_is(store, cid, CallState.finished))
    await bus.submit_user_message(redis, CONV, "U1", "meanwhile: anything else?")
    assert len(fake.message_requests) == 1

    try:
        go(second)
        await wait_for(lambda: _replies_count(redis, 2))
    finally:
        second.send_signal(signal.SIGTERM)
        try:
            second.wait(15)
        except subprocess.TimeoutExpired:
            second.kill()
            second.wait(10)
            raise

    for proc in (first, second):
        assert proc.poll() is not None, "an agent process outlived the test"
    assert harness.replies(await harness.outbox(redis, CONV)) == [
        "web is up; logs are clean.", "Answer to the message sent meanwhile."]
    assert len(fake.message_requests) == 3
    results = harness.tool_results(fake.message_requests[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_k1", "toolu_k2"]
    assert all(r["content"].startswith("exit code: 0") for r in results)
    last = fake.message_requests[2]["messages"][-1]
    assert last == {"role": "user", "content": [{"type": "text", "text": "meanwhile: anything else?"}]}
    assert [r.state for r in [await store.get(i) for i in ids]] == [CallState.finished] * 2


async def _suspended(redis: Redis) -> bool:
    return any(e.kind == "idle" and e.data.get("state") == "suspended" for e in await harness.outbox(redis, CONV))


async def _state_is(store: CallStore, call_id: str, state: CallState) -> bool:
    return (await store.get(call_id)).state == state


async def _replies_count(redis: Redis, n: int) -> bool:
    return len(harness.replies(await harness.outbox(redis, CONV))) >= n
