"""Approval-lifecycle figures on a real Redis (not a test): run ``python bench/bench_approvals.py``.

Measures (1) approve-to-execution-start latency: approve() called, time until the worker's executor starts,
one call at a time with an idle worker; (2) throughput: N calls approved up front, time until all are
terminal, through one and through two RunnerWorkers (each with its own Redis client, same process and event
loop, trivial executor). Prints median / p99 latency and calls per second.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redis.asyncio import Redis  # noqa: E402

from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import CallRecord, Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from bot.approvals.worker import RunnerWorker  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

POLICY = ApprovalPolicy()
PROPOSAL = Proposal(tool="opsctl_status", app="opsctl", arguments="{}", argv=["status"])


async def latency(url: str, samples: int) -> list[float]:
    redis = Redis.from_url(url)
    store = CallStore(redis)
    started: dict[str, float] = {}
    event = asyncio.Event()

    async def executor(record: CallRecord) -> dict[str, Any]:
        started[record.id] = time.perf_counter()
        event.set()
        return {"status": "finished", "exit_code": 0}

    worker_redis = Redis.from_url(url)
    worker = RunnerWorker(worker_redis, CallStore(worker_redis), executor, runner_id="lat")
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    await asyncio.sleep(0.2)
    out = []
    for _ in range(samples):
        (rec,) = await store.propose("bench/lat", [PROPOSAL], POLICY, "U")
        event.clear()
        t0 = time.perf_counter()
        await store.approve(rec.id, "U_APP", [], POLICY)
        await event.wait()
        out.append(started[rec.id] - t0)
    stop.set()
    await task
    await redis.aclose()
    await worker_redis.aclose()
    return out


async def throughput(url: str, n: int, workers: int) -> float:
    redis = Redis.from_url(url)
    await redis.flushall()
    store = CallStore(redis)
    done = asyncio.Event()
    count = 0

    async def executor(record: CallRecord) -> dict[str, Any]:
        return {"status": "finished", "exit_code": 0}

    records = []
    for i in range(0, n, 100):
        records += await store.propose(f"bench/tp{i}", [PROPOSAL] * min(100, n - i), POLICY, "U")
    for rec in records:
        await store.approve(rec.id, "U_APP", [], POLICY)
    clients = [Redis.from_url(url) for _ in range(workers)]
    runners = [
        RunnerWorker(c, CallStore(c), executor, runner_id=f"w{i}", concurrency=32) for i, c in enumerate(clients)
    ]
    watcher = Redis.from_url(url)

    async def watch() -> None:
        nonlocal count
        last = "0"
        while count < n:
            reply: Any = await watcher.xread({store.keys.completions_stream(0): last}, count=1000, block=1000)
            for _, entries in reply or []:
                count += len(entries)
                last = entries[-1][0]
        done.set()

    stop = asyncio.Event()
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(r.run(stop)) for r in runners]
    watch_task = asyncio.create_task(watch())
    await done.wait()
    elapsed = time.perf_counter() - t0
    stop.set()
    await asyncio.gather(*tasks, watch_task)
    for c in [*clients, watcher, redis]:
        await c.aclose()
    return n / elapsed


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp), appendonly=True)
        server.start()
        try:
            lat = sorted(await latency(server.url, 300))
            p99 = lat[int(len(lat) * 0.99) - 1]
            print(f"approve -> exec start latency over {len(lat)} calls: "
                  f"median {statistics.median(lat) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms")
            for workers in (1, 2):
                rate = await throughput(server.url, 2000, workers)
                print(f"throughput with {workers} worker(s), 2000 approved calls: {rate:.0f} calls/s")
        finally:
            server.stop()
    print("(Redis: appendonly yes, appendfsync always; workers share one Python process and event loop)")


if __name__ == "__main__":
    asyncio.run(main())
