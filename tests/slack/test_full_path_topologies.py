"""The whole path (message -> proposal -> click -> run -> result -> answer) on a real Redis Cluster (3 primaries +
3 replicas) and a real Sentinel deployment (primary + replica + 3 sentinels), through the bot's own client factory.

The ``redis`` fixture is overridden here, so every part of the path (the Slack front end, its intake and poster,
the agent, the runner) talks to the cluster or the sentinel-managed primary. On the Cluster, a script or read
whose keys span hash slots fails (redis-py refuses it before sending, the server answers CROSSSLOT).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.slack.test_full_path import test_command_to_card_to_click_to_result_to_answer as full_path
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers
from tests.support.topology_clients import open_on

__all__ = ["full_path"]


@pytest.fixture(params=["cluster", "sentinel"])
async def redis(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Redis]:
    servers: RedisClusterServers | RedisSentinelServers = request.getfixturevalue(f"redis_{request.param}")
    handle = await open_on(request.param, servers, tmp_path)
    yield handle.client
    await handle.close()


test_full_path_on_topology = full_path
