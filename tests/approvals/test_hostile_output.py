"""Issue #11: output built to be expensive to sanitize cannot stall a runner.

Two real runner processes (heartbeat every 0.2 s, a call is stale after 2 s without one: the old redactor
stalled for tens of seconds, and 0.6 s flaked on a loaded machine) each run a real
tool whose output repeats every trigger word without whitespace, megabytes of it, under a 2 MiB cap. Under
the old redactor one such call held the event loop for minutes: heartbeats stopped and the other runner's
sweeper marked the call ``interrupted``, throwing the result away. Both calls must finish ``finished``, their
heartbeats must keep being refreshed while they run, and the output must come back redacted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from tests.approvals.helpers import all_terminal, executions, wait_until
from tests.approvals.test_worker import approved_calls, spawn_worker


async def test_hostile_output_under_two_runners_finishes_with_heartbeats(
    redis_url: str, redis: Redis, store: CallStore, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    options = ("--mode", "hostile", "--output-limit", str(2 << 20), "--stale-after", "2.0", "--heartbeat", "0.2")
    procs = [spawn_worker(redis_url, marker, f"runner-{i}", *options) for i in range(2)]
    try:
        ids = await approved_calls(store, 2)
        refreshes: dict[str, int] = dict.fromkeys(ids, 0)
        last_ttl: dict[str, int] = dict.fromkeys(ids, -2)

        async def done() -> bool:
            for call_id in ids:
                ttl = await redis.pttl(store.keys.heartbeat(call_id))
                if ttl > last_ttl[call_id] >= 0:  # the TTL went back up: a heartbeat arrived
                    refreshes[call_id] += 1
                last_ttl[call_id] = ttl
            return await all_terminal(store, ids)

        await wait_until(done, timeout=120)
        for call_id in ids:
            record = await store.get(call_id)
            assert record.state is CallState.finished, (call_id, record.state)
            output = (record.result or {}).get("output", "")
            assert "ghp_AbCdEf" not in output and "[REDACTED:github_token]" in output
            trail = [(e.from_state, e.to_state) for e in await read_audit(redis, call_id=call_id)]
            assert trail[-1] == ("running", "finished")
            assert refreshes[call_id] >= 2, refreshes  # heartbeats kept coming while the call ran
        assert sorted(executions(marker)) == sorted(ids)
        assert {(await store.get(i)).runner for i in ids} <= {"runner-0", "runner-1"}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            await asyncio.to_thread(proc.wait, 10)
