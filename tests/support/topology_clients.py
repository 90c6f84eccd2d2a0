"""Open the bot's own clients (``bot.redis_factory.open_redis``) on the test Sentinel and Cluster deployments."""

from __future__ import annotations

from pathlib import Path

import redis.asyncio

from bot.redis_connection import RedisHandle
from bot.redis_factory import open_redis
from bot.redis_topology import RedisTopology
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers


def cluster_topology(servers: RedisClusterServers) -> RedisTopology:
    return RedisTopology(mode="cluster", password=servers.password)


def sentinel_topology(servers: RedisSentinelServers, **overrides: object) -> RedisTopology:
    settings: dict[str, object] = {
        "mode": "sentinel", "sentinels": tuple(servers.sentinel_addresses), "service_name": servers.SERVICE,
        "password": servers.password, "sentinel_password": servers.sentinel_password,
    }  # fmt: skip
    settings.update(overrides)
    return RedisTopology(**settings)  # type: ignore[arg-type]


async def open_on(kind: str, servers: RedisClusterServers | RedisSentinelServers, state_dir: Path,
                  readers: int = 0) -> RedisHandle:
    """The bot's handle on ``servers`` (``kind``: cluster or sentinel), with every key of earlier tests gone."""
    if isinstance(servers, RedisClusterServers):
        handle = await open_redis(servers.url.replace(f":{servers.password}@", ""), cluster_topology(servers),
                                  state_dir=state_dir, readers=readers)
        cluster = handle.client
        assert isinstance(cluster, redis.asyncio.RedisCluster)
        await cluster.flushall(target_nodes=redis.asyncio.RedisCluster.PRIMARIES)
    else:
        handle = await open_redis(None, sentinel_topology(servers), state_dir=state_dir, readers=readers)
        await handle.client.flushall()
    return handle
