"""A busy team while Redis stalls and then restarts: a burst of signed /fisk requests (50 in flight, a command pool
smaller than that) against the real bolt app over HTTP and a real redis-server that is SIGSTOPped for 3 s, resumed,
then killed and restarted mid-burst. No 5xx; every request is either refused with the ephemeral "could not start"
or acknowledged, and every acknowledged one reaches the agent's inbox exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections import Counter
from pathlib import Path

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.redis_connection import connect_redis
from bot.redis_pool import PoolSettings
from bot.slack.intake import COULD_NOT_CONFIRM, COULD_NOT_START
from bot.slack.settings import SlackSettings
from bot.tools.catalog import Catalog
from tests.slack.conftest import make_front, serving, wait_for
from tests.slack.test_intake import inbox
from tests.support.fake_slack import FakeSlack
from tests.support.redis_server import RedisServer

REQUESTS = 240


async def test_a_burst_through_a_redis_stall_and_restart_loses_nothing_acknowledged(
    tmp_path: Path, slack: FakeSlack, policy: ApprovalPolicy, catalog: Catalog, settings: SlackSettings,
) -> None:
    server = RedisServer(tmp_path / "redis")  # AOF with fsync always: what was acknowledged survives the kill
    server.start()
    handle = await connect_redis(server.url, state_dir=".", readers=1, pool=PoolSettings(8, 5.0))
    front = make_front(slack, handle.client, CallStore(handle.client), policy, catalog, settings, reader=handle.reader)
    answers: dict[str, tuple[int, str]] = {}
    try:
        async with serving(front, slack, CallStore(handle.client), handle.client) as h:
            in_flight = asyncio.Semaphore(50)

            async def request(i: int) -> None:
                async with in_flight:  # one channel and user each: the per-channel rate limit stays out of it
                    answers[f"req {i}"] = await h.command(f"req {i}", user=f"U{i:04d}", channel=f"C{i:04d}")

            async def chaos() -> None:
                assert server.process is not None
                await asyncio.sleep(0.3)
                os.kill(server.process.pid, signal.SIGSTOP)
                await asyncio.sleep(3)
                os.kill(server.process.pid, signal.SIGCONT)
                await asyncio.sleep(0.3)
                server.kill()
                await asyncio.sleep(1)
                server.start()

            await asyncio.gather(chaos(), *(request(i) for i in range(REQUESTS)))
            assert {status for status, _ in answers.values()} == {200}  # no 5xx, no 401
            said = {text: json.loads(body)["text"] for text, (_, body) in answers.items() if body}
            refused = {text for text, reply in said.items() if reply == COULD_NOT_START}
            unsure = {text for text, reply in said.items() if reply == COULD_NOT_CONFIRM}  # may or may not start
            assert set(said) == refused | unsure  # no other reply
            assert refused | unsure, "the burst should overlap the stall"
            acknowledged = set(answers) - refused - unsure

            async def all_started() -> Counter[str] | None:
                started = Counter(m.data["text"] for m in await inbox(handle.client))
                return started if acknowledged <= set(started) else None

            started = await wait_for(all_started, timeout=30)
            assert max(started.values()) == 1  # none started twice
            await asyncio.sleep(1.0)  # a refused request recorded after all would have started by now
            started = Counter(m.data["text"] for m in await inbox(handle.client))
            assert refused.isdisjoint(started), f"told nothing was started, yet started: {refused & set(started)}"
            assert acknowledged, "the burst should get some requests through"
    finally:
        await handle.close()
        server.stop()
