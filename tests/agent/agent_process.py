"""An agent role process for the crash test: ``python -m tests.agent.agent_process REDIS_URL API_URL OPSCTL``.

Prints ``imported``, waits for a line on stdin (so a test can pre-start it: importing the SDK takes seconds),
then runs a real ``AgentWorker`` until SIGTERM (the test SIGKILLs it instead, mid-conversation).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from redis.asyncio import Redis

from bot.agent.worker import AgentWorker
from tests.agent import harness


async def main(redis_url: str, api_url: str, opsctl: str) -> None:
    redis = Redis.from_url(redis_url)
    agent = harness.build_agent(redis, api_url, harness.catalog_for(Path(opsctl)), harness.settings())
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await AgentWorker(redis, agent, block_seconds=0.05, reclaim_after=0.5).run(stop)
    await redis.aclose()


if __name__ == "__main__":
    print("imported", flush=True)
    sys.stdin.readline()
    asyncio.run(main(*sys.argv[1:4]))
