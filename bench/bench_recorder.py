"""What the timeline recorder's linger saves, and what it costs (not a test): ``python bench/bench_recorder.py``.

Real parts: one redis-server (AOF everysec) and the recorder in its own process (``TimelineRecorder`` as the
slack role runs it, ``linger_seconds`` 0 or 0.25). This process writes calls through ``CallStore`` at a steady
rate (propose, approve, claim, finish: the four audit entries of a call, a few milliseconds apart), then waits
until the recorder has caught up (``TimelineRecorder.caught_up``). Per call: the recorder process's CPU, its
reads (XREADGROUP) and timeline writes (RPUSH), every Redis command (this writer's included: the same in both
arms), Redis's CPU; and how long after the last write the timeline held everything. The two lingers alternate,
several rounds at each rate, so a figure is compared with its neighbour from the same minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from bench.cpu import process_cpu_seconds, redis_cpu_seconds  # noqa: E402
from bench.support import RedisProcess, wait_until  # noqa: E402
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from bot.incidents.recorder import TimelineRecorder  # noqa: E402
from bot.incidents.store import IncidentStore  # noqa: E402

POLICY = ApprovalPolicy.model_validate({"approvers": {"users": ["UAPPROVER"]}})
PROPOSAL = Proposal(tool="service_restart", app="opsctl", arguments='{"service": "web"}',
                    argv=["/usr/local/bin/opsctl", "service", "restart", "--", "web"])
RESULT = {"status": "finished", "exit_code": 0, "output": "restarted web\n" * 20, "duration_seconds": 0.004}


def recorder(url: str, linger: float) -> TimelineRecorder:
    client = Redis.from_url(url)
    return TimelineRecorder(client, IncidentStore(client), CallStore(client), linger_seconds=linger)


async def serve_recorder(url: str, linger: float) -> None:
    """The child: record until SIGTERM."""
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await recorder(url, linger).run(stop)


async def write_calls(url: str, rate: float, calls: int) -> float:
    """``calls`` calls at ``rate`` a second (0: as fast as this writer goes), each through its four transitions
    in a row; returns when the last was written (monotonic)."""
    client = Redis.from_url(url)
    store = CallStore(client)
    start = time.monotonic()
    try:
        for n in range(calls):
            if rate:
                await asyncio.sleep(max(0.0, start + n / rate - time.monotonic()))
            (record,) = await store.propose(f"slack:C0BENCH:1700000000.{n % 50:06d}", [PROPOSAL], POLICY, "UREQ")
            await store.approve(record.id, "UAPPROVER", [], POLICY, argv_hash=record.argv_hash, known=record)
            await store.claim(record.id, "r1")
            await store.finish(record.id, "r1", RESULT)
        return time.monotonic()
    finally:
        await client.aclose()


def command_calls(client: redis.Redis) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in client.info("commandstats").items()}


async def caught_up_at(url: str, timeout: float = 30.0) -> float:
    rec = recorder(url, 0.0)
    deadline = time.monotonic() + timeout
    try:
        while not await rec.caught_up():
            if time.monotonic() > deadline:
                raise TimeoutError("the recorder did not catch up")
            await asyncio.sleep(0.002)
        return time.monotonic()
    finally:
        await rec.redis.aclose()


def one_round(server: RedisProcess, linger: float, rate: float, calls: int) -> dict[str, float]:
    client = redis.Redis.from_url(server.url)
    client.flushall()
    child = subprocess.Popen([sys.executable, __file__, "--serve-recorder", server.url, str(linger)])
    try:
        audit = CallStore(Redis()).keys.audit_stream(0)
        wait_until(lambda: client.exists(audit), 10, "the recorder's groups", 0.01)
        time.sleep(0.2)
        cpu0, redis0, stats0 = process_cpu_seconds(child.pid), redis_cpu_seconds(client), command_calls(client)
        written = asyncio.run(write_calls(server.url, rate, calls))
        done = asyncio.run(caught_up_at(server.url))
        cpu1, redis1, stats1 = process_cpu_seconds(child.pid), redis_cpu_seconds(client), command_calls(client)
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(10)
        client.close()
    # the caught-up polling (XINFO) and the meter's INFO are this bench's, not the recorder's or the writer's
    used = {k: stats1.get(k, 0) - stats0.get(k, 0) for k in stats1 if not k.startswith(("xinfo", "info"))}
    return {
        "cpu_ms": 1000 * (cpu1 - cpu0) / calls, "redis_cpu_ms": 1000 * (redis1 - redis0) / calls,
        "reads": used.get("xreadgroup", 0) / calls, "writes": used.get("rpush", 0) / calls,
        "commands": sum(used.values()) / calls, "behind_ms": 1000 * (done - written),
    }


def main(args: argparse.Namespace) -> None:
    lingers = (0.0, 0.25)
    print(f"timeline recorder, linger 0 vs 0.25 s, {args.rounds} interleaved rounds per rate, medians; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print(f"{'calls/s':>8} {'linger':>6} {'recorder CPU/call':>18} {'reads/call':>10} {'writes/call':>11} "
          f"{'Redis cmds/call':>15} {'Redis CPU/call':>15} {'behind at the end':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisProcess(Path(tmp) / "redis")
        try:
            for rate, calls in ((5.0, args.calls_slow), (50.0, args.calls), (0.0, args.calls)):
                rows: dict[float, list[dict[str, float]]] = {linger: [] for linger in lingers}
                for _ in range(args.rounds):
                    for linger in lingers:
                        rows[linger].append(one_round(server, linger, rate, calls))
                for linger in lingers:
                    m = {k: statistics.median(r[k] for r in rows[linger]) for k in rows[linger][0]}
                    label = f"{rate:.0f}" if rate else "max"
                    print(f"{label:>8} {linger:>6.2f} {m['cpu_ms']:>15.3f} ms {m['reads']:>10.2f} "
                          f"{m['writes']:>11.2f} {m['commands']:>15.1f} {m['redis_cpu_ms']:>12.3f} ms "
                          f"{m['behind_ms']:>15.0f} ms")
        finally:
            server.stop()
    print(f"load average at the end {os.getloadavg()[0]:.2f}; 'max': as fast as one writer goes; commands include "
          "the writer's (the same in both arms)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-recorder":
        asyncio.run(serve_recorder(sys.argv[2], float(sys.argv[3])))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=400, help="calls per round at 50/s and at full speed")
    parser.add_argument("--calls-slow", type=int, default=40, help="calls per round at 5/s")
    main(parser.parse_args())
