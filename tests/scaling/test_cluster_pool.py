"""On a Redis Cluster the bot's bounded clients wait for a free connection, as they do on one server.

redis-py's cluster pool refuses a command at once (``MaxConnectionsError``) when a node's connections are all
busy; the slack role's two acknowledgement connections then answered all but two of a burst of Slack requests
with a 503 or "could not start" (found by ``bench/bench_call_cost.py --cluster``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import redis.asyncio

from bot.redis_factory import open_redis
from bot.redis_pool import ACKS, PoolSettings
from bot.slack.intake import Intake
from bot.slack.settings import SlackSettings
from tests.support.redis_topologies import RedisClusterServers
from tests.support.topology_clients import cluster_topology


async def test_a_burst_through_two_acknowledgement_connections_is_recorded_whole(
    redis_cluster: RedisClusterServers, tmp_path: Path
) -> None:
    handle = await open_redis(redis_cluster.url.replace(f":{redis_cluster.password}@", ""),
                              cluster_topology(redis_cluster), state_dir=tmp_path,
                              acks=PoolSettings(2, 2.0, ACKS))
    try:
        intake = Intake(handle.acker, SlackSettings(mode="http"))
        burst = await asyncio.gather(*(intake.record("command", {"text": f"request {i}"}, signature=f"v0=sig{i}")
                                       for i in range(40)))  # every one within the 2 s a Slack ack may wait
        assert [r.outcome for r in burst] == ["recorded"] * 40
        cluster = handle.acker
        assert isinstance(cluster, redis.asyncio.RedisCluster)
        node = cluster.get_node_from_key(intake.stream)
        assert node is not None and len(node._connections) <= 2  # the bound holds: they waited, none was added
    finally:
        await handle.close()


async def test_a_wait_that_runs_out_fails_clearly(redis_cluster: RedisClusterServers, tmp_path: Path) -> None:
    handle = await open_redis(redis_cluster.url.replace(f":{redis_cluster.password}@", ""),
                              cluster_topology(redis_cluster), state_dir=tmp_path, pool=PoolSettings(1, 0.2))
    try:
        blocked = asyncio.create_task(handle.client.execute_command("BLPOP", "fc:{nothing}:list", "1"))
        await asyncio.sleep(0.1)  # the one connection is taken by the blocking pop
        try:
            await handle.client.get("fc:{nothing}:key")
        except redis.ConnectionError as exc:
            assert "No connection available" in str(exc)
        else:
            raise AssertionError("a command got a connection past the bound")
        assert await blocked is None
    finally:
        await handle.close()
