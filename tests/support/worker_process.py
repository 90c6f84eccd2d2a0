"""A runner worker in its own process, so tests can SIGKILL it at precise points.

    python -m tests.support.worker_process --redis URL --runner-id ID --marker FILE [--mode run|die-after-read]
        [--sleep SECONDS] [--stale-after SECONDS] [--heartbeat SECONDS]

``run``: a real ``RunnerWorker`` whose executor appends ``<call id>`` to the marker file (the side effect the
tests count), prints ``STARTED <call id>``, sleeps, then reports ``finished``. Prints ``READY`` once consuming.

``hostile``: the executor is the real ``run_argv`` on a child that prints output built to be expensive to
sanitize (trigger words repeated without whitespace, long base64 runs, a real-looking token), with a cap of
``--output-limit`` bytes; it returns the real result.

``die-after-read``: reads ONE entry of the run stream with XREADGROUP in the runners group (exactly what a
worker does before claiming), prints ``READ <call id>`` and SIGKILLs itself: the entry is now pending for a
consumer that will never claim it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any

from redis.asyncio import Redis

from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.runner import run_argv
from bot.streams import ensure_group

# Prints ~6 MB in bursts over about a second: each trigger word repeated without whitespace (the input that
# made the old redactor quadratic: "token" x 28,000 took 41 s), base64 runs, and one token that must be redacted.
HOSTILE_CHILD = """
import random, sys, time
out = sys.stdout.buffer
rng = random.Random(11)
b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
words = ["token", "password", "secret", "key=", "token=", "aws", "Bearer ", "://", "eyJ", "xoxb-", "sig="]
for round in range(4):
    for word in words:
        out.write((word * (120000 // len(word))).encode() + b"\\n")
    out.write("".join(rng.choice(b64) for _ in range(200000)).encode() + b"\\n")
    out.flush()
    time.sleep(0.25)
out.write(b"deploy key ghp_" + b"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789" + b" end\\n")
"""


def append_marker(path: str, call_id: str) -> None:
    """The side effect tests count: one line per execution, flushed to disk before anything else happens."""
    with open(path, "a") as f:
        f.write(call_id + "\n")
        f.flush()
        os.fsync(f.fileno())


async def main(args: argparse.Namespace) -> None:
    redis = Redis.from_url(args.redis)
    store = CallStore(redis, heartbeat_ttl=args.stale_after)
    if args.mode == "die-after-read":
        stream = store.keys.run_stream(0)
        await ensure_group(redis, stream, "runners")
        print("READY", flush=True)
        reply: Any = await redis.xreadgroup("runners", args.runner_id, {stream: ">"}, count=1, block=20000)
        fields = reply[0][1][0][1]
        print("READ", fields[b"call_id"].decode(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        return

    async def executor(record: CallRecord) -> dict[str, Any]:
        append_marker(args.marker, record.id)
        if args.mode == "hostile":
            print("STARTED", record.id, flush=True)
            result = await run_argv([sys.executable, "-c", HOSTILE_CHILD], env=dict(os.environ), cwd=None,
                                    timeout=60, output_limit=args.output_limit)
            return result.as_json()
        print("STARTED", record.id, flush=True)
        await asyncio.sleep(args.sleep)
        return {"status": "finished", "exit_code": 0, "output": ""}

    worker = RunnerWorker(
        redis, store, executor, runner_id=args.runner_id, heartbeat_interval=args.heartbeat,
        stale_after=args.stale_after, block_seconds=0.2,
    )
    await worker.ensure_groups()
    print("READY", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await worker.run(stop)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", required=True)
    parser.add_argument("--runner-id", required=True)
    parser.add_argument("--marker", required=True)
    parser.add_argument("--mode", choices=["run", "hostile", "die-after-read"], default="run")
    parser.add_argument("--output-limit", type=int, default=65536)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--stale-after", type=float, default=1.0)
    parser.add_argument("--heartbeat", type=float, default=0.2)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
