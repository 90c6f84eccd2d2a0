"""Redis bytes per pending call (not a test): ``python bench/bench_redis_memory.py``.

``--calls`` calls are proposed through ``CallStore.propose`` (what the agent role does for each tool_use block,
with a realistic tool_use id, JSON arguments and argv) in threads of 3 calls, and each gets its card recorded
(``set_meta``, what the poster does): every call is then pending approval, as when a burst waits for humans.
Prints, per call: ``MEMORY USAGE`` of its call record, the sum of ``MEMORY USAGE`` over every key of the
lifecycle (record, indexes, conversation sets, run / audit / completions streams) divided by the calls, and the
growth of Redis ``used_memory`` divided by the calls. The agent's transcript and outbox are not part of this
flow; ``bench/bench_load.py`` measures the whole path with the agent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redis.asyncio import Redis  # noqa: E402

from bench.support import RedisProcess  # noqa: E402
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402

POLICY = ApprovalPolicy.model_validate({"approvers": {"users": ["UAPPROVER"]}})


def proposal(n: int, k: int) -> Proposal:
    arguments = {"service": f"web-{n % 17}", "lines": 200, "since": "15m", "grep": "error|timeout"}
    argv = ["/usr/local/bin/opsctl", "service", "logs", "--lines=200", "--since=15m", "--grep=error|timeout",
            "--", f"web-{n % 17}"]
    return Proposal(tool="service_logs", app="opsctl", arguments=json.dumps(arguments), argv=argv,
                    tool_use_id=f"toolu_01{n:08d}{k:02d}AbCdEfGhIjKlMnOp")


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisProcess(Path(tmp) / "redis")
        redis = Redis.from_url(server.url)
        store = CallStore(redis)
        try:
            before = server.used_memory()
            ids: list[str] = []
            for n in range(0, args.calls, 3):
                conversation = f"slack:C0BENCH0001:1700000000.{n:06d}"
                records = await store.propose(conversation, [proposal(n, k) for k in range(3)], POLICY, "U0REQUEST1")
                for i, record in enumerate(records):
                    await store.set_meta(record.id, slack_channel="C0BENCH0001", slack_ts=f"1700000001.{n + i:06d}")
                ids += [r.id for r in records]
            after = server.used_memory()
            per_record = [int(await redis.memory_usage(store.keys.call(i)) or 0) for i in ids[:200]]
            total = 0
            async for key in redis.scan_iter(count=1000):
                total += int(await redis.memory_usage(key, samples=0) or 0)
            fields = await redis.hlen(store.keys.call(ids[0]))
            encoding = await redis.object("encoding", store.keys.call(ids[0]))
            print(f"{len(ids)} pending calls (proposed + card recorded), 3 per thread:")
            print(f"  call record (MEMORY USAGE)          median {statistics.median(per_record):6.0f} B "
                  f"({fields} fields, encoding {encoding.decode() if isinstance(encoding, bytes) else encoding})")
            print(f"  every lifecycle key (MEMORY USAGE)  {total / len(ids):6.0f} B per call")
            print(f"  Redis used_memory growth            {(after - before) / len(ids):6.0f} B per call")
            raw = await redis.hgetall(store.keys.call(ids[0]))
            large = {k.decode(): len(v) for k, v in raw.items() if len(v) > 64}
            print(f"  record fields over hash-max-listpack-value (64 B), which make it a hashtable: {large}")
        finally:
            await redis.aclose()
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    asyncio.run(main(parser.parse_args()))
