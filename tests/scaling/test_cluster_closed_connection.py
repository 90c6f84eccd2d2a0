"""A connection closed under a command on Redis Cluster is a connection error the client retries.

redis-py's asyncio cluster client answered a command or pipeline whose connection another task closed meanwhile
(a node dropped after a failover, its connections disconnected) with ``AttributeError: 'NoneType' object has no
attribute 'writelines'``: not an error its retries know, so the poster's pipelined finish and the chaos test's
writes failed outright and their entries waited for the 60 s reclaim (:class:`bot.redis_topology.ClusterConnection`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import redis.asyncio

from bot.redis_factory import open_redis
from bot.redis_pool import PoolSettings
from tests.support.redis_topologies import RedisClusterServers
from tests.support.topology_clients import cluster_topology


async def _close_connections_under_load(cluster: redis.asyncio.RedisCluster, stop: asyncio.Event) -> int:
    closed = 0
    while not stop.is_set():
        for node in cluster.get_nodes():
            for connection in list(node._connections):
                if connection.is_connected:
                    await connection.disconnect(nowait=True)
                    closed += 1
        await asyncio.sleep(0.1)  # bursts, as a pipeline retry's aclose() does: retries get their turn between
    return closed


async def test_commands_and_pipelines_survive_connections_closed_under_them(
    redis_cluster: RedisClusterServers, tmp_path: Path
) -> None:
    handle = await open_redis(redis_cluster.url.replace(f":{redis_cluster.password}@", ""),
                              cluster_topology(redis_cluster), state_dir=tmp_path, pool=PoolSettings(8, 5.0))
    cluster = handle.client
    assert isinstance(cluster, redis.asyncio.RedisCluster)

    async def write(i: int) -> int:
        key = f"fc:{{closing{i % 6}}}:n"
        if i % 2:
            async with cluster.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.expire(key, 60)
                reply = await pipe.execute()
            return int(reply[0])
        return int(await cluster.incr(key))

    try:
        stop = asyncio.Event()
        closer = asyncio.create_task(_close_connections_under_load(cluster, stop))
        try:
            outcomes = await asyncio.gather(*(write(i) for i in range(600)), return_exceptions=True)
        finally:
            stop.set()
            closed = await closer
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        assert closed > 0
        assert not [e for e in errors if isinstance(e, AttributeError)], errors[:3]
        assert not errors, [f'{type(e).__name__}: {e}' for e in errors[:6]]  # retried, none lost
    finally:
        await handle.close()
