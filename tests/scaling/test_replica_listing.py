"""Which replicas ``CLUSTER NODES`` makes ``auto`` wait for (``bot/redis_replicas.py``), read from the real
cluster's own answer."""

from __future__ import annotations

from typing import Any

from bot.redis_replicas import cluster_replicas_listed
from tests.support.redis_topologies import RedisClusterServers


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
