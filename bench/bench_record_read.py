"""What reading one call record costs the reading process (not a test): ``python bench/bench_record_read.py``.

Real parts: one redis-server (AOF everysec) and the project's own client (``connect_redis``: the pooled client
every role uses). The slack role reads a call's record five or six times between a click and the posted result
(the click's check, the card's read-back, the progress and completion entries, the timeline recorder), each a
hash and a body. Two ways of making that one round trip are timed against the same calls, alternating in rounds:
a pipeline of HGETALL and GET (what ``CallStore.find`` sends), and one script replying both (tried and given up:
Redis holds scripts back during ``CLIENT PAUSE WRITE``, which FAILOVER uses, while plain reads go on), each
followed by building the record. Printed: the reading process's CPU per read (median of
the rounds) and the ratio; Redis's own CPU per read beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cpu import redis_cpu_seconds  # noqa: E402
from bench.support import RedisProcess  # noqa: E402
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import CallRecord, Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from bot.redis_connection import connect_redis  # noqa: E402

# Hash and body in one script: faster for the client, but held back during a write pause (see the docstring).
ONE_SCRIPT = "return {redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[2])}"


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisProcess(Path(tmp) / "redis")
        handle = await connect_redis(server.url, state_dir=tmp)
        try:
            store = CallStore(handle.client)
            policy = ApprovalPolicy.model_validate({"approvers": {"users": ["UAPPROVER"]}})
            ids = []
            for n in range(args.calls):
                [record] = await store.propose(f"slack:C0BENCH:1700000000.{n:06d}", [Proposal(
                    tool="service_status", app="opsctl", arguments=f'{{"service": "web-{n}"}}',
                    argv=["/usr/local/bin/opsctl", "service", "status", f"web-{n}"])], policy, "UREQ")
                await store.set_meta(record.id, slack_channel="C0BENCH", slack_ts=f"1700000001.{n:06d}")
                ids.append(record.id)

            read_script = handle.client.register_script(ONE_SCRIPT)

            async def scripted(call_id: str) -> CallRecord | None:
                reply: Any = await read_script(keys=[store.keys.call(call_id), store.keys.body(call_id)])
                return CallRecord.from_reply(reply, call_id) if reply and reply[0] else None

            ways: dict[str, Callable[[str], Awaitable[Any]]] = {
                "pipeline HGETALL + GET (find)": store.find, "one script (not used)": scripted}
            for read in ways.values():  # warm up: scripts loaded, connections open
                for call_id in ids:
                    assert await read(call_id) is not None
            client_cpu: dict[str, list[float]] = {name: [] for name in ways}
            redis_cpu: dict[str, list[float]] = {name: [] for name in ways}
            for _ in range(args.rounds):
                for name, read in ways.items():
                    redis_before, before = redis_cpu_seconds(server.client), time.process_time()
                    for call_id in ids:
                        await read(call_id)
                    client_cpu[name].append((time.process_time() - before) / len(ids))
                    redis_cpu[name].append((redis_cpu_seconds(server.client) - redis_before) / len(ids))
        finally:
            await handle.close()
            server.stop()
    print(f"one call record read ({args.calls} calls x {args.rounds} rounds, alternating; medians):")
    for name in ways:
        print(f"  {name:<38} reader CPU {statistics.median(client_cpu[name]) * 1e6:6.1f} us per read, "
              f"Redis CPU {statistics.median(redis_cpu[name]) * 1e6:5.1f} us")
    before, now = (statistics.median(v) for v in client_cpu.values())
    print(f"  reader CPU ratio, script / pipeline: {now / before:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=9)
    asyncio.run(main(parser.parse_args()))
