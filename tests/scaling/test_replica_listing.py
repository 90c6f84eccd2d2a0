"""Which replicas ``CLUSTER NODES`` makes ``auto`` wait for (``bot/redis_replicas.py``), read from the real
cluster's own answer."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import redis
from redis.asyncio.sentinel import Sentinel

from bot.redis_replicas import cluster_replicas_listed, sentinel_replicas_promotable
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers


def _nodes_of_a_primary(servers: RedisClusterServers) -> dict[str, Any]:
    for node in servers.primaries:
        with node.client(servers.password) as client:
            nodes = client.execute_command("CLUSTER NODES")
        if any("myself" in fields["flags"] and "master" in fields["flags"] for fields in nodes.values()):
            return dict(nodes)
    raise AssertionError("no primary among the first three nodes")


def _flag_own_replica(nodes: dict[str, Any], flags: str) -> dict[str, Any]:
    myself = next(fields["node_id"] for fields in nodes.values() if "myself" in fields["flags"])
    (address,) = [a for a, fields in nodes.items() if fields["master_id"] == myself]
    return {**nodes, address: {**nodes[address], "flags": flags}}


def test_a_replica_only_its_primary_cannot_reach_is_still_waited_for(redis_cluster: RedisClusterServers) -> None:
    """``fail?`` is the primary's own view (no pong for ``cluster-node-timeout``): cut off from its primary alone,
    the replica is reachable by the others, and if the primary then fails the majority promotes it (within
    ``cluster-replica-validity-factor``) without what the primary acknowledged meanwhile. Only ``fail`` (the
    majority agrees it is down) means it cannot be promoted; a dead replica goes from ``fail?`` to ``fail`` within
    a few node timeouts, so counting ``fail?`` costs little (before: ``fail?`` counted as gone)."""
    nodes = _nodes_of_a_primary(redis_cluster)
    assert cluster_replicas_listed(nodes) == 1
    assert cluster_replicas_listed(_flag_own_replica(nodes, "slave,fail?")) == 1
    assert cluster_replicas_listed(_flag_own_replica(nodes, "slave,fail")) == 0
    assert cluster_replicas_listed(_flag_own_replica(nodes, "slave,noaddr")) == 0


async def test_a_sentinel_refusing_sentinel_replicas_is_an_error_once_not_a_silent_none(
    redis_sentinel: RedisSentinelServers, caplog: pytest.LogCaptureFixture
) -> None:
    """A sentinel user allowed to find the primary but not to list its replicas (ACL): auto cannot see a cut-off
    replica there, which must be said (before: a debug line), once; the answer is "no sentinel answered" and the
    caller falls back to the replica-seen mark."""
    limited, secret = "fc-no-replicas", "limited-secret-pw"
    rules = ["on", f">{secret}", "-@all", "+ping", "+auth", "+hello", "+client", "+sentinel|masters",
             "+sentinel|master", "+sentinel|get-master-addr-by-name", "+sentinel|sentinels"]  # no REPLICAS/SLAVES
    for node in redis_sentinel.sentinels:
        with redis.Redis(host="127.0.0.1", port=node.port, password=redis_sentinel.sentinel_password) as admin:
            admin.execute_command("ACL", "SETUSER", limited, "reset", *rules)
    sentinel = Sentinel(redis_sentinel.sentinel_addresses, sentinel_kwargs={"username": limited, "password": secret},
                        password=redis_sentinel.password)
    client = sentinel.master_for(redis_sentinel.SERVICE)
    try:
        assert await client.ping()  # it finds the primary
        with caplog.at_level(logging.ERROR, logger="bot.redis_replicas"):
            assert await sentinel_replicas_promotable(client, 300) is None
            assert await sentinel_replicas_promotable(client, 300) is None
        said = [r for r in caplog.records if "refused SENTINEL REPLICAS" in r.getMessage()]
        assert len(said) == 1 and said[0].levelno == logging.ERROR, caplog.text
    finally:
        await client.aclose()
        for s in sentinel.sentinels:
            await s.aclose()
        for node in redis_sentinel.sentinels:
            with redis.Redis(host="127.0.0.1", port=node.port, password=redis_sentinel.sentinel_password) as admin:
                admin.acl_deluser(limited)

