"""Approval-to-execution figures with real processes (not a test): ``python bench/bench_approvals.py``.

Everything is real: one redis-server (AOF, everysec), ``--runners`` ``fisk-chatops serve --role runner``
processes whose catalog comes from introspecting the compiled bench tool (``bench/support.py``), and this
process playing the approving front end through ``CallStore`` (propose, then approve, as the slack role does).
Every executed call starts a real child: the tool prints its own ``CLOCK_MONOTONIC`` start time, so "child
started" is the moment the child ran, not a callback in the runner.

1. Latency, one call at a time, idle runner: approve() called -> child started (the tool's stamp) and ->
   the call finished in Redis (this process woken by the completion event). Median and p99. approve() is
   called as the slack role calls it for a click: with the record it already holds (``known``), so the
   approving side checks the proposal seal, signs the decision and runs the approve script, without re-reading
   the call; how long approve() itself took is printed too.
2. Throughput: the runner processes are stopped (SIGSTOP), N calls are proposed and approved, the runners are
   continued (SIGCONT) and timed until the N-th completion event: calls per second through 1 and 2 runner
   processes.
3. RSS of each runner process after the work (VmRSS).

With each figure: the runner process's own CPU per call (``bench/cpu.py``; the children's CPU not counted) and
the Redis commands per call, which move far less with the machine's load than latency does.
``--profile-runner FILE`` samples the runner with py-spy (``pip install py-spy``) during the latency run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redis.asyncio import Redis  # noqa: E402

from bench.cpu import CpuMeter  # noqa: E402
from bench.support import (  # noqa: E402
    APPROVER,
    RedisProcess,
    Role,
    build_tool,
    count_stream_entries,
    median_ms,
    pct,
    signer,
    started_at,
    tool_proposal,
    wait_until,
    write_config,
)
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import CallRecord  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from bot.redis_pool import MeteredPool, PoolSettings, pool_kwargs  # noqa: E402

POLICY = ApprovalPolicy.model_validate({"approvers": {"users": [APPROVER]}})


class Bench:
    def __init__(self, work: Path, redis_url: str, binary: Path) -> None:
        self.work, self.url = work, redis_url
        # the slack role's kind of client (bot/redis_connection.py): pooled connections that write a send directly
        # (bot/redis_send.py); a plain redis-py client wraps every send in a Task, so approve()'s script would reach
        # the socket a loop pass late, which the slack role's does not
        self.redis = Redis(connection_pool=MeteredPool.from_url(redis_url, **pool_kwargs(PoolSettings())))
        self.store = CallStore(self.redis, signer=signer(work))
        self.proposal = tool_proposal(binary)
        self.completions = self.store.keys.completions_stream(0)
        self.seq = 0
        self.approve_calls: list[float] = []  # how long approve() itself took (this process's share)

    async def last_completion(self) -> Any:
        last: Any = await self.redis.xrevrange(self.completions, count=1)
        return last[0][0] if last else "0-0"

    async def propose(self, n: int) -> list[CallRecord]:
        records: list[CallRecord] = []
        while len(records) < n:
            self.seq += 1
            batch = [self.proposal] * min(100, n - len(records))
            records += await self.store.propose(f"bench:c{self.seq}", batch, POLICY, "UREQ")
        return records

    async def approve(self, record: CallRecord) -> None:
        """As the slack role approves a click: with the record it already read (``known``), signing the decision."""
        await self.store.approve(record.id, APPROVER, [], POLICY, argv_hash=record.argv_hash, known=record)

    async def latency(self, samples: int) -> tuple[list[float], list[float]]:
        to_start: list[float] = []
        to_finish: list[float] = []
        for _ in range(samples):
            (proposed,) = await self.propose(1)
            call_id = proposed.id
            position = await self.last_completion()
            t0 = time.monotonic()
            await self.approve(proposed)
            self.approve_calls.append(time.monotonic() - t0)
            while True:
                reply: Any = await self.redis.xread({self.completions: position}, block=5000)
                if not reply:
                    raise TimeoutError(f"call {call_id} did not finish within 5 s")
                entries = reply[0][1]
                position = entries[-1][0]
                if any(fields[b"call_id"].decode() == call_id for _, fields in entries):
                    break
            finished = time.monotonic()
            record = await self.store.get(call_id)
            assert record.state == "finished" and record.result is not None, record
            to_start.append(started_at(record.result["output"]) - t0)
            to_finish.append(finished - t0)
        return to_start, to_finish

    async def throughput(self, runners: list[Role], n: int) -> float:
        for role in runners:
            os.kill(role.process.pid, signal.SIGSTOP)
        try:
            position = await self.last_completion()
            proposed = await self.propose(n)
            ids = [r.id for r in proposed]
            for record in proposed:
                await self.approve(record)
        finally:
            t0 = time.monotonic()
            for role in runners:
                os.kill(role.process.pid, signal.SIGCONT)
        await count_stream_entries(self.redis, self.completions, position, n, 60, "calls finished")
        elapsed = time.monotonic() - t0
        states = [(await self.store.get(i)).state for i in ids[:: max(1, n // 50)]]
        assert all(s == "finished" for s in states), states
        return n / elapsed


def cpu_line(meter: CpuMeter, calls: int, process: str) -> str:
    """``process``'s CPU and Redis's commands per call from a stopped meter."""
    return (f"{process} CPU {meter.used[process] / calls * 1e3:.3f} ms/call, Redis CPU "
            f"{meter.used['redis'] / calls * 1e3:.3f} ms/call, {meter.commands / calls:.1f} Redis commands/call")


def start_profiler(pid: int, output: str) -> subprocess.Popen[bytes]:
    """py-spy sampling ``pid`` (raw collapsed stacks, idle frames left out) until ``stop_profiler``."""
    beside = Path(sys.executable).parent / "py-spy"  # a venv's own, else the one on PATH
    command = [str(beside) if beside.exists() else "py-spy", "record", "--pid", str(pid), "--rate", "1000",
               "--nonblocking", "--format", "raw", "--output", output]
    profiler = subprocess.Popen(command,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # py-spy attaches
    return profiler


def stop_profiler(profiler: subprocess.Popen[bytes], output: str) -> None:
    profiler.send_signal(signal.SIGINT)
    profiler.wait(30)
    print(f"py-spy profile of the runner (collapsed stacks): {output}")


def start_runners(work: Path, config: Path, url: str, count: int, tag: str) -> list[Role]:
    env = {**os.environ, "REDIS_URL": url}
    roles = [Role("runner", f"runner-{tag}{i}", config, env, work / "logs") for i in range(count)]
    for role in roles:
        wait_until(role.ready, 90, f"{role.name} ready", 0.2)
    return roles


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        binary = build_tool(work / "bin")
        server = RedisProcess(work / "redis")
        config = write_config(work, binary, max_concurrency=args.concurrency)
        bench = Bench(work, server.url, binary)
        roles: list[Role] = []
        try:
            roles = start_runners(work, config, server.url, 1, "lat")
            await bench.latency(20)  # warm up: imports, regexes, page cache
            bench.approve_calls.clear()
            meter = CpuMeter({"runner": roles[0].process.pid}, server.client)
            profiler = start_profiler(roles[0].process.pid, args.profile_runner) if args.profile_runner else None
            meter.start()
            to_start, to_finish = await bench.latency(args.samples)
            meter.stop()
            if profiler is not None:
                stop_profiler(profiler, args.profile_runner)
            print(f"latency over {args.samples} calls, one at a time, 1 idle runner process:")
            print(f"  approve -> child started   median {median_ms(to_start):6.2f} ms, p99 "
                  f"{pct(to_start, 99) * 1e3:6.2f} ms")
            print(f"  approve -> finished (Redis) median {median_ms(to_finish):6.2f} ms, p99 "
                  f"{pct(to_finish, 99) * 1e3:6.2f} ms")
            print(f"  of which approve() itself  median {median_ms(bench.approve_calls):6.2f} ms (this process: "
                  "seal and sign the decision, the approve script; the run entry, or the hand-over to a parked "
                  "runner, exists before it returns)")
            print(f"  {cpu_line(meter, args.samples, 'runner')} (propose and approve included for Redis)")
            for count in (1, 2):
                if len(roles) < count:
                    roles += start_runners(work, config, server.url, count - len(roles), "tp")
                await bench.throughput(roles[:count], 100)  # warm up
                meter = CpuMeter({f"runner{i}": role.process.pid for i, role in enumerate(roles[:count])},
                                 server.client)
                meter.start()
                rate = await bench.throughput(roles[:count], args.calls)
                meter.stop()
                runners_cpu = sum(v for k, v in meter.used.items() if k != "redis")
                print(f"throughput, {count} runner process(es), {args.calls} approved calls: {rate:.0f} calls/s "
                      f"(runner CPU {runners_cpu / args.calls * 1e3:.3f} ms/call)")
            for role in roles:
                rss = (role.rss_kib() or 0) / 1024
                print(f"RSS of {role.name} (serve --role runner) after the runs: {rss:.1f} MiB")
        finally:
            for role in roles:
                role.stop()
            await bench.redis.aclose()
            server.stop()
    print(f"(Redis: AOF everysec; applications[0].max_concurrency {args.concurrency}; every call spawns the "
          "compiled bench tool)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300, help="calls in the latency run")
    parser.add_argument("--calls", type=int, default=2000, help="calls in each throughput run")
    parser.add_argument("--concurrency", type=int, default=16, help="the application's max_concurrency")
    parser.add_argument("--profile-runner", metavar="FILE", help="py-spy the runner during the latency run")
    asyncio.run(main(parser.parse_args()))
