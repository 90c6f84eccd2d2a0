"""What one agent process sustains (not a test): ``python bench/bench_agent.py``.

Real parts: one redis-server (AOF, everysec), ``--agents`` ``fisk-chatops serve --role agent`` processes (catalog
from introspecting the compiled bench tool), the loopback fake Messages API answering every request at once with
a fixed scripted response. This process plays the slack role's side of the bus: it puts user messages on the
inbox (``bus.submit_user_message``, as the intake worker does) and reads the outbox.

Two kinds of turn, N each, every one in a conversation of its own (distinct users: the per-user rate limit
stays out of the way):

* ``text``: the model answers with a short text; the turn is one model request, the transcript saved, the reply
  published;
* ``propose``: the model answers with one ``tool_use`` of the bench tool; the agent validates it, renders argv,
  proposes the call (one Lua script), publishes "proposed" and suspends the turn (the call awaits approval).

The agents are stopped (SIGSTOP) while the N messages are queued, continued (SIGCONT) and timed until the N-th
reply (or "proposed") event is on the outbox: turns per second, and the CPU each agent process and Redis used
per turn (``bench/cpu.py``). The fake model is a threaded HTTP server in this process: its own CPU is not
counted, but on a small machine it competes with the agents for cores.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from bench.cpu import CpuMeter  # noqa: E402
from bench.support import (  # noqa: E402
    TOOL,
    RedisProcess,
    Role,
    build_tool,
    count_stream_entries,
    wait_until,
    write_config,
)
from bot.agent import bus  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_use_reply  # noqa: E402

CHANNEL = "C0AGENT"


class FixedModel(FakeAnthropic):
    """Answers every request with the same scripted response (a fresh tool_use id each time: a call id is made
    from it, and one id proposed twice would be one call)."""

    def __init__(self) -> None:
        super().__init__()
        self.mode = "text"
        self._ids = itertools.count(1)

    def _next(self, request: RecordedRequest) -> Reply:  # nothing recorded: a bench makes many requests
        if self.mode == "text":
            return text_reply("Checked: web is up on every host.")
        return tool_use_reply([(f"toolu_bench{next(self._ids):08d}", TOOL, {})], text="Listing the users.")


class Bench:
    def __init__(self, url: str) -> None:
        self.redis = Redis.from_url(url)
        self.seq = 0

    async def outbox_end(self) -> Any:
        last: Any = await self.redis.xrevrange(bus.OUTBOX, count=1)
        return last[0][0] if last else "0-0"

    async def run(self, agents: list[Role], n: int, kind: str, meter: CpuMeter) -> tuple[float, dict[str, float]]:
        """Queue ``n`` user messages while the agents are stopped, then time them to ``n`` ``kind`` events."""
        for role in agents:
            os.kill(role.process.pid, signal.SIGSTOP)
        try:
            position = await self.outbox_end()
            for _ in range(n):
                self.seq += 1
                ts = f"1700000000.{self.seq:06d}"
                await bus.submit_user_message(self.redis, f"slack:{CHANNEL}:{ts}", f"U{self.seq:08d}",
                                              "is the web tier ok?", {"channel": CHANNEL, "thread_ts": ts, "ts": ts})
        finally:
            meter.start()
            t0 = time.monotonic()
            for role in agents:
                os.kill(role.process.pid, signal.SIGCONT)
        await count_stream_entries(self.redis, bus.OUTBOX, position, n, 120, f"{kind} events",
                                   lambda fields: fields[b"kind"] == kind.encode()
                                   and (kind != "reply" or b"web is up" in fields[b"data"]))
        elapsed = time.monotonic() - t0
        return n / elapsed, meter.stop()


def start_agents(work: Path, config: Path, env: dict[str, str], count: int) -> list[Role]:
    agents = [Role("agent", f"agent-{i}", config, env, work / "logs") for i in range(count)]
    for role in agents:
        wait_until(role.ready, 90, f"{role.name} ready", 0.2)
    return agents


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp, FixedModel() as model:
        work = Path(tmp)
        binary = build_tool(work / "bin")
        server = RedisProcess(work / "redis")
        config = write_config(work, binary, agent={"user_rate_limit_per_minute": 1000})
        env = {**os.environ, "REDIS_URL": server.url, "ANTHROPIC_API_KEY": "bench-key",
               "ANTHROPIC_BASE_URL": model.base_url}
        bench = Bench(server.url)
        client = redis.Redis.from_url(server.url)
        agents: list[Role] = []
        try:
            agents = start_agents(work, config, env, args.agents)
            meter = CpuMeter({role.name: role.process.pid for role in agents}, client)
            print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.agents} agent process(es)")
            for kind, event in (("text", "reply"), ("propose", "proposed")):
                model.mode = kind
                await bench.run(agents, 50, event, meter)  # warm up: imports, connections, page cache
                rates, used = [], []
                for _ in range(args.rounds):
                    rate, cpu = await bench.run(agents, args.turns, event, meter)
                    rates.append(rate)
                    used.append(cpu)
                agent_ms = sorted(sum(v for k, v in cpu.items() if k != "redis") * 1000 / args.turns for cpu in used)
                redis_ms = sorted(cpu["redis"] * 1000 / args.turns for cpu in used)
                print(f"{kind:8s} turns: {', '.join(f'{r:.0f}' for r in rates)} turns/s "
                      f"(median {sorted(rates)[len(rates) // 2]:.0f}); CPU per turn: agent "
                      f"{agent_ms[len(agent_ms) // 2]:.2f} ms, Redis {redis_ms[len(redis_ms) // 2]:.3f} ms (medians)")
            for role in agents:
                print(f"RSS of {role.name} after the runs: {(role.rss_kib() or 0) / 1024:.1f} MiB")
        finally:
            for role in agents:
                role.stop()
            client.close()
            await bench.redis.aclose()
            server.stop()
    print(f"({args.turns} turns per round, {args.rounds} rounds; each turn in a conversation of its own; the fake "
          "model answers at once)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="turns per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", type=int, default=1, help="agent processes")
    asyncio.run(main(parser.parse_args()))
