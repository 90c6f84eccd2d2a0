"""The runner worker: exactly-once execution under concurrency, crashes (real SIGKILL) and Redis restarts."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.errors import InvalidTransition
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.logcontext import current as log_ids
from tests.approvals.conftest import proposal
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.support.redis_server import RedisServer

CONV = "C1/1.0"
FAST = {"heartbeat_interval": 0.1, "stale_after": 0.6, "reclaim_after": 0.3, "recovery_interval": 0.1,
        "block_seconds": 0.1}


async def approved_calls(store: CallStore, n: int, policy: ApprovalPolicy | None = None) -> list[str]:
    policy = policy or ApprovalPolicy()
    records = await store.propose(CONV, [proposal() for _ in range(n)], policy, "U_REQ")
    for r in records:
        await store.approve(r.id, "U_APP", [], policy)
    return [r.id for r in records]


async def test_100_concurrent_approvals_one_wins_runs_once(redis_url: str, tmp_path: Path):
    clients = [Redis.from_url(redis_url) for _ in range(5)]
    stores = [CallStore(c) for c in clients]
    policy = ApprovalPolicy()
    (rec,) = await stores[0].propose(CONV, [proposal()], policy, "U_REQ")
    results = await asyncio.gather(
        *(stores[i % 5].approve(rec.id, f"U{i}", [], policy) for i in range(100)), return_exceptions=True
    )
    wins = [r for r in results if isinstance(r, CallRecord)]
    assert len(wins) == 1 and wins[0].state is CallState.approved
    assert all(isinstance(r, InvalidTransition) for r in results if not isinstance(r, CallRecord))
    assert await clients[0].xlen(stores[0].keys.run_stream(0)) == 1
    marker = tmp_path / "marker"
    worker = RunnerWorker(clients[1], stores[1], marker_executor(marker), runner_id="w1", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(stores[0], [rec.id]))
    assert executions(marker) == [rec.id]
    assert (await stores[0].get(rec.id)).state is CallState.finished
    for c in clients:
        await c.aclose()


async def test_two_workers_race_each_call_runs_once(redis_url: str, tmp_path: Path):
    marker = tmp_path / "marker"
    clients = [Redis.from_url(redis_url) for _ in range(3)]
    store = CallStore(clients[0])
    workers = [
        RunnerWorker(c, CallStore(c), marker_executor(marker, 0.01), runner_id=f"w{i}", **FAST)  # type: ignore[arg-type]
        for i, c in enumerate(clients[1:])
    ]
    async with running(workers[0]), running(workers[1]):
        ids = await approved_calls(store, 60)
        await wait_until(lambda: all_terminal(store, ids))
    done = executions(marker)
    assert sorted(done) == sorted(ids)
    runners = {(await store.get(i)).runner for i in ids}
    assert runners == {"w0", "w1"}  # both took work
    for c in clients:
        await c.aclose()


def spawn_worker(redis_url: str, marker: Path, runner_id: str, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.worker_process", "--redis", redis_url, "--runner-id", runner_id,
         "--marker", str(marker), *extra],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "READY"
    return proc


async def test_worker_killed_after_read_before_claim_call_runs_once(
    redis_url: str, redis: Redis, store: CallStore, tmp_path: Path
):
    marker = tmp_path / "marker"
    proc = spawn_worker(redis_url, marker, "doomed", "--mode", "die-after-read")
    (call_id,) = await approved_calls(store, 1)
    assert proc.stdout is not None
    line = await asyncio.to_thread(proc.stdout.readline)
    assert line.split() == ["READ", call_id]
    assert await asyncio.to_thread(proc.wait, 10) == -9
    assert (await store.get(call_id)).state is CallState.approved
    pending: Any = await redis.xpending(store.keys.run_stream(0), "runners")
    assert pending["pending"] == 1
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="rescuer", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
        await asyncio.sleep(0.5)  # further recovery passes must not run it again
    assert executions(marker) == [call_id]
    rec = await store.get(call_id)
    assert rec.state is CallState.finished and rec.runner == "rescuer"
    pending = await redis.xpending(store.keys.run_stream(0), "runners")
    assert pending["pending"] == 0


async def test_worker_killed_during_execution_becomes_interrupted_never_rerun(
    redis_url: str, redis: Redis, store: CallStore, tmp_path: Path
):
    marker = tmp_path / "marker"
    proc = spawn_worker(redis_url, marker, "victim", "--sleep", "60", "--stale-after", "0.6")
    (call_id,) = await approved_calls(store, 1)
    assert proc.stdout is not None
    line = await asyncio.to_thread(proc.stdout.readline)
    assert line.split() == ["STARTED", call_id]
    proc.kill()
    await asyncio.to_thread(proc.wait, 10)
    assert (await store.get(call_id)).state is CallState.running
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="survivor", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
        await asyncio.sleep(0.8)  # the pending entry is reclaimed meanwhile; it must not run again
    rec = await store.get(call_id)
    assert rec.state is CallState.interrupted and rec.runner == "victim"
    assert executions(marker) == [call_id]
    trail = [(e.from_state, e.to_state, e.actor) for e in await read_audit(redis, call_id=call_id)]
    assert trail[-2:] == [("approved", "running", "runner:victim"), ("running", "interrupted", "sweeper")]
    pending: Any = await redis.xpending(store.keys.run_stream(0), "runners")
    assert pending["pending"] == 0


async def test_executor_error_marks_interrupted(redis: Redis, store: CallStore):
    async def broken(record: CallRecord) -> dict[str, Any]:
        raise RuntimeError("boom")

    (call_id,) = await approved_calls(store, 1)
    async with running(RunnerWorker(redis, store, broken, runner_id="w", **FAST)):  # type: ignore[arg-type]
        await wait_until(lambda: all_terminal(store, [call_id]))
    rec = await store.get(call_id)
    assert rec.state is CallState.interrupted
    assert rec.result is not None and "boom" in rec.result["error"]


async def test_failed_to_start_result_is_stored(redis: Redis, store: CallStore):
    async def cannot(record: CallRecord) -> dict[str, Any]:
        return {"status": "failed_to_start", "error": "no such file"}

    (call_id,) = await approved_calls(store, 1)
    async with running(RunnerWorker(redis, store, cannot, runner_id="w", **FAST)):  # type: ignore[arg-type]
        await wait_until(lambda: all_terminal(store, [call_id]))
    assert (await store.get(call_id)).state is CallState.failed_to_start


async def test_graceful_stop_finishes_short_calls_interrupts_long_ones(
    redis: Redis, store: CallStore, tmp_path: Path
):
    started = asyncio.Event()

    async def executor(record: CallRecord) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(0.1 if record.tool == "short" else 30)
        return {"status": "finished", "exit_code": 0}

    policy = ApprovalPolicy()
    short, long_ = await store.propose(CONV, [proposal("short"), proposal("long")], policy, "U")
    worker = RunnerWorker(redis, store, executor, runner_id="w", grace_period=0.5, **FAST)  # type: ignore[arg-type]
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    for r in (short, long_):
        await store.approve(r.id, "U_APP", [], policy)
    await wait_until(lambda: _states_are(store, [short.id, long_.id], CallState.running))
    stop.set()
    await asyncio.wait_for(task, 10)
    assert (await store.get(short.id)).state is CallState.finished
    rec = await store.get(long_.id)
    assert rec.state is CallState.interrupted and rec.decision is not None


async def _states_are(store: CallStore, ids: list[str], state: CallState) -> bool:
    for call_id in ids:
        if (await store.get(call_id)).state is not state:
            return False
    return True


async def test_per_app_limit(redis: Redis, store: CallStore):
    active = 0
    peak = 0

    async def executor(record: CallRecord) -> dict[str, Any]:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.05)
        active -= 1
        return {"status": "finished", "exit_code": 0}

    ids = await approved_calls(store, 4)
    worker = RunnerWorker(redis, store, executor, runner_id="w", per_app_limits={"opsctl": 1}, **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, ids))
    assert peak == 1


async def test_redis_restart_with_persistence_loses_nothing(tmp_path: Path):
    server = RedisServer(tmp_path / "redis", appendonly=True)
    server.start()
    redis = Redis.from_url(server.url)
    clients = [redis]
    store = CallStore(redis)
    marker = tmp_path / "marker"
    policy = ApprovalPolicy(two_person_tags=["rw"])
    try:
        worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w", **FAST)  # type: ignore[arg-type]
        async with running(worker):
            first, second = await store.propose(CONV, [proposal(), proposal(tags=["rw"])], policy, "U_REQ")
            await store.approve(first.id, "U_A", [], policy)
            await store.approve(second.id, "U_A", [], policy)  # 1 of 2
            await wait_until(lambda: all_terminal(store, [first.id]))
            server.kill()
            await asyncio.sleep(0.3)
            server.start()
            # The test side uses a fresh client (a pooled connection of the old one fails once, as it would
            # for any front end); the worker keeps its client and must recover on its own.
            fresh = Redis.from_url(server.url)
            clients.append(fresh)
            store = CallStore(fresh)
            rec = await store.get(second.id)
            assert rec.state is CallState.awaiting_approval and [a.user for a in rec.approvals] == ["U_A"]
            assert (await store.get(first.id)).state is CallState.finished
            await store.approve(second.id, "U_B", [], policy)
            await wait_until(lambda: all_terminal(store, [second.id]))
        assert sorted(executions(marker)) == sorted([first.id, second.id])
        trail = [(e.call_id, e.to_state) for e in await read_audit(fresh, limit=100)]
        assert trail.count((second.id, "finished")) == 1 and len(trail) == 9
    finally:
        for client in clients:
            await client.aclose()
        server.stop()


@pytest.mark.parametrize("sweep", [True])
async def test_worker_sweeps_expired_calls(redis: Redis, sweep: bool):
    store = CallStore(redis)
    (rec,) = await store.propose(CONV, [proposal()], ApprovalPolicy(expire_after_seconds=0.2), "U")
    async with running(RunnerWorker(redis, store, marker_executor(Path("/dev/null")), runner_id="w", **FAST)):  # type: ignore[arg-type]
        await wait_until(lambda: all_terminal(store, [rec.id]))
    assert (await store.get(rec.id)).state is CallState.expired


async def test_a_woken_worker_sends_the_claim_before_its_next_read(redis_url: str, tmp_path: Path):
    """The claim is on the way to the child's start; the worker's next XREADGROUP is not, so it goes second
    (Redis's MONITOR shows the order the server received them), also with work prepared while the claim is in
    Redis (the runner verifies the decision ahead). The run entry is acknowledged by the script that stores the
    result, not by an XACK of its own.

    Each approval waits until MONITOR has shown the worker's blocking read (a read of new entries after its last
    claim), and the check waits until MONITOR has shown a command sent after the calls finished: conditions, not
    time, so a loaded machine changes how long it takes, never what is compared."""
    # the reader's socket timeout well past the 5 s block: at redis-py's default (5 s) a loaded machine let the
    # blocked read time out and be sent again, a read MONITOR then showed between the approval and the claim
    client, watcher = Redis.from_url(redis_url), Redis.from_url(redis_url)
    reader = Redis.from_url(redis_url, socket_timeout=30.0)
    store = CallStore(client)
    prepared: list[dict[str, str]] = []
    worker = RunnerWorker(client, store, marker_executor(tmp_path / "marker"), runner_id="w-order",  # type: ignore[arg-type]
                          reader=reader, prepare=prepared.append, **{**FAST, "block_seconds": 5.0})
    seen: list[str] = []
    sentinel = f"ECHO order-check-{tmp_path.name}"
    async with watcher.monitor() as monitor, running(worker):
        async def watch() -> None:
            async for entry in monitor.listen():
                command = entry["command"]
                if command.startswith("XREADGROUP") and "STREAMS" in command and " > " in f"{command} ":
                    seen.append("read")
                elif command.startswith(f"EVALSHA {store._claim.sha}"):
                    seen.append("claim")
                elif command.startswith(f"EVALSHA {store._approve.sha}"):
                    seen.append("approve")
                elif command.startswith("XACK") and entry.get("client_type") != "lua":
                    seen.append("xack")
                elif command.startswith(sentinel):
                    seen.append("sentinel")

        async def blocking_read_waits() -> bool:  # the worker's read of new entries, sent after its last claim
            last_claim = len(seen) - 1 - seen[::-1].index("claim") if "claim" in seen else -1
            return "read" in seen[last_claim + 1:]

        async def sentinel_seen() -> bool:
            return "sentinel" in seen

        watching = asyncio.create_task(watch())
        for _ in range(2):  # the first call loads the scripts (NOSCRIPT, SCRIPT LOAD, again): the second is timed
            await wait_until(blocking_read_waits)
            (call_id,) = await approved_calls(store, 1)
            await wait_until(lambda: all_terminal(store, [call_id]))  # noqa: B023 (awaited in this iteration)
        await client.execute_command(*sentinel.split())  # MONITOR shows commands in order: all before it are in
        await wait_until(sentinel_seen)
        watching.cancel()
    last_approve = len(seen) - 1 - seen[::-1].index("approve")
    assert seen[last_approve + 1:last_approve + 3] == ["claim", "read"], seen
    assert "xack" not in seen
    assert [fields["call_id"] for fields in prepared] == executions(tmp_path / "marker")
    assert all("decision" in fields for fields in prepared)  # the run entry's (empty: this store signs nothing)
    assert (await client.xpending(store.keys.run_stream(0), "runners"))["pending"] == 0
    for c in (client, reader, watcher):
        await c.aclose()


async def test_a_failing_prepare_does_not_stop_the_call(redis_url: str, tmp_path: Path):
    """Work done ahead is never a check by itself: if it fails, the call is claimed and run as it would be."""
    client = Redis.from_url(redis_url)
    store = CallStore(client)

    def broken(fields: dict[str, str]) -> None:
        raise RuntimeError("prepare failed")

    marker = tmp_path / "marker"
    worker = RunnerWorker(client, store, marker_executor(marker), runner_id="w-prep", prepare=broken,  # type: ignore[arg-type]
                          **FAST)
    async with running(worker):
        ids = await approved_calls(store, 3)
        await wait_until(lambda: all_terminal(store, ids))
    assert sorted(executions(marker)) == sorted(ids)
    assert [(await store.get(i)).state for i in ids] == [CallState.finished] * 3
    await client.aclose()


async def test_the_running_line_is_logged_after_the_executors_first_step_with_the_calls_ids(redis_url: str):
    """Logging is bookkeeping the child's start does not wait for: the executor's first step (where a real one
    spawns the child) runs before the "running" line is written, and the line still carries the call's ids."""
    client = Redis.from_url(redis_url)
    store = CallStore(client)
    events: list[tuple[str, str]] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "running" in record.getMessage():
                events.append(("logged", log_ids().get("call_id", "")))

    async def executor(record: CallRecord) -> dict[str, Any]:
        events.append(("started", record.id))
        await asyncio.sleep(0.01)
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    worker_log = logging.getLogger("bot.approvals.worker")
    recorder, level = Recorder(), worker_log.level
    worker_log.addHandler(recorder)
    worker_log.setLevel(logging.INFO)
    try:
        async with running(RunnerWorker(client, store, executor, runner_id="w-log", **FAST)):  # type: ignore[arg-type]
            ids = await approved_calls(store, 3)
            await wait_until(lambda: all_terminal(store, ids))
    finally:
        worker_log.removeHandler(recorder)
        worker_log.setLevel(level)
    for call_id in ids:
        assert [e for e in events if e[1] == call_id] == [("started", call_id), ("logged", call_id)], events
    await client.aclose()
