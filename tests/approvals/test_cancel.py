"""Cancel a running call: the owning runner stops a real long-running subprocess (SIGTERM, then SIGKILL); the
stop request and the call's own end race in Lua scripts, so there is one final state and it is the truth."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.errors import AlreadyCancelling, InvalidTransition, NotAuthorized
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
from tests.approvals.conftest import proposal
from tests.approvals.helpers import running, wait_until
from tests.support.fisk_app import make_script

CONV = "C1/1.0"
POLICY = ApprovalPolicy(approvers={"users": ["U_APP", "U_OTHER"]})
FAST = {"heartbeat_interval": 0.1, "stale_after": 2.0, "recovery_interval": 0.1, "block_seconds": 0.1,
        "sweep": False}


async def _approved(store: CallStore, requester: str = "U_REQ") -> CallRecord:
    (record,) = await store.propose(CONV, [proposal()], POLICY, requester)
    return await store.approve(record.id, "U_APP", [], POLICY)


def _script_executor(script: Path, kill_grace: float = 5.0) -> Any:
    async def execute(record: CallRecord) -> dict[str, Any]:
        result = await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=60,
                                kill_grace=kill_grace)
        return result.as_json()

    return execute


async def _state(store: CallStore, call_id: str, state: CallState) -> bool:
    return (await store.get(call_id)).state is state


async def test_cancel_stops_a_long_running_process_and_records_who(redis: Redis, store: CallStore,
                                                                   tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = make_script(tmp_path, "long", f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                           "print('working', flush=True)\ntime.sleep(120)\n")
    record = await _approved(store)
    worker = RunnerWorker(redis, store, _script_executor(script), runner_id="r1", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: _state(store, record.id, CallState.running))
        await wait_until(lambda: _exists(pid_file))
        asked = await store.request_cancel(record.id, "U_REQ", [], POLICY)
        assert asked.state is CallState.running and asked.cancel is not None and asked.cancel.actor == "U_REQ"
        await wait_until(lambda: _state(store, record.id, CallState.cancelled))
    final = await store.get(record.id)
    assert final.result is not None and final.result["stopped_by"] == "SIGTERM"
    assert final.result["output"] == "working\n" and final.started_at is not None
    assert not _alive(int(pid_file.read_text()))
    trail = [(e.from_state, e.to_state, e.actor) for e in await read_audit(redis, call_id=record.id)]
    assert ("running", "running", "U_REQ") in trail and ("running", "cancelled", "U_REQ") in trail
    assert await redis.xlen(store.keys.completions_stream(0)) == 1


async def test_sigkill_when_the_tool_ignores_sigterm(redis: Redis, store: CallStore, tmp_path: Path) -> None:
    script = make_script(tmp_path, "stubborn", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                               "print('up', flush=True)\ntime.sleep(120)\n")
    record = await _approved(store)
    worker = RunnerWorker(redis, store, _script_executor(script, kill_grace=0.3), runner_id="r1", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: _state(store, record.id, CallState.running))
        await asyncio.sleep(0.3)
        await store.request_cancel(record.id, "U_APP", [], POLICY)
        await wait_until(lambda: _state(store, record.id, CallState.cancelled))
    result = (await store.get(record.id)).result or {}
    assert result["stopped_by"] == "SIGKILL" and result["exit_code"] == -9


async def test_cancel_before_a_runner_claims_means_it_never_runs(store: CallStore) -> None:
    record = await _approved(store)
    cancelled = await store.request_cancel(record.id, "U_OTHER", [], POLICY)
    assert cancelled.state is CallState.cancelled and cancelled.started_at is None
    assert await store.claim(record.id, "r1") is None


async def test_who_may_cancel(store: CallStore) -> None:
    record = await _approved(store)
    with pytest.raises(NotAuthorized):
        await store.request_cancel(record.id, "U_STRANGER", [], POLICY)
    await store.claim(record.id, "r1")
    await store.request_cancel(record.id, "U_REQ", [], POLICY)  # the requester may, not being an approver
    with pytest.raises(AlreadyCancelling):
        await store.request_cancel(record.id, "U_APP", [], POLICY)


async def test_cancel_after_the_end_reports_the_end(store: CallStore) -> None:
    record = await _approved(store)
    await store.claim(record.id, "r1")
    await store.finish(record.id, "r1", {"status": "finished", "exit_code": 0, "output": "done"})
    with pytest.raises(InvalidTransition) as caught:
        await store.request_cancel(record.id, "U_REQ", [], POLICY)
    assert caught.value.current_state == "finished"


async def test_tool_ending_on_its_own_after_the_request_stays_finished(redis: Redis, store: CallStore) -> None:
    """The request came first but the tool exited before the signal: the truth is "finished", and the audit
    says the stop came too late."""
    record = await _approved(store)
    await store.claim(record.id, "r1")
    await store.request_cancel(record.id, "U_REQ", [], POLICY)
    final = await store.finish(record.id, "r1", {"status": "finished", "exit_code": 0, "output": "done"})
    assert final.state is CallState.finished
    last = (await read_audit(redis, call_id=record.id))[-1]
    assert last.to_state == "finished" and "came after the call had ended" in last.reason


async def test_cancel_racing_the_end_has_one_final_state(redis_url: str) -> None:
    """Many stop requests and the runner's own finish fired together: exactly one terminal transition, and
    every caller is told the state that actually won."""
    for _ in range(20):
        clients = [Redis.from_url(redis_url) for _ in range(3)]
        stores = [CallStore(c) for c in clients]
        record = await _approved(stores[0])
        await stores[0].claim(record.id, "r1")
        outcomes = await asyncio.gather(
            stores[1].finish(record.id, "r1", {"status": "finished", "exit_code": 0}),
            *(stores[2].request_cancel(record.id, user, [], POLICY) for user in ("U_REQ", "U_APP")),
            return_exceptions=True,
        )
        final = await stores[0].get(record.id)
        assert final.state is CallState.finished
        events = await clients[0].xrange(stores[0].keys.completions_stream(0))
        assert sum(1 for _id, f in events if f[b"call_id"] == record.id.encode()) == 1
        for outcome in outcomes[1:]:
            assert isinstance(outcome, CallRecord | InvalidTransition)
            if isinstance(outcome, InvalidTransition) and not isinstance(outcome, AlreadyCancelling):
                assert outcome.current_state == "finished"
        for c in clients:
            await c.aclose()


async def test_runner_cannot_claim_cancelled_without_a_request(store: CallStore) -> None:
    record = await _approved(store)
    await store.claim(record.id, "r1")
    with pytest.raises(InvalidTransition):
        await store.finish(record.id, "r1", {"status": "cancelled", "exit_code": -15})
    assert (await store.get(record.id)).state is CallState.running


async def _exists(path: Path) -> bool:
    return path.exists() and bool(path.read_text())


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
