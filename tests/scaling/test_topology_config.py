"""redis.mode and its settings: parsed from the config, and every way a Sentinel or Cluster deployment can be
wrong ends in one sentence naming the problem, never a password (real servers: see tests/support)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, Secrets, parse_config, redis_topology
from bot.redis_factory import open_redis
from bot.redis_pool import PoolSettings
from bot.redis_send import direct_send
from bot.redis_topology import (
    MeteredSentinelPool,
    RediscoveringConnection,
    RediscoveringSSLConnection,
    RedisTopology,
    TopologyError,
    sentinel_client,
)
from bot.redis_url import RedisUnavailable
from tests.support.redis_server import RedisServer, free_port
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers, _Node
from tests.support.topology_clients import open_on, sentinel_topology

SENTINEL_CONFIG = {"redis": {"mode": "sentinel", "username": "bot", "tls": {"enabled": True, "ca_file": "/ca.pem"},
                             "sentinel": {"addresses": ["10.0.0.1:26379", "[::1]:26380", "s3"],
                                          "service_name": "fisk", "username": "watcher"}}}


def test_sentinel_settings_and_passwords_from_the_environment() -> None:
    secrets = Secrets(redis_password="data-pw", redis_sentinel_password="sentinel-pw")
    topology = redis_topology(parse_config(SENTINEL_CONFIG), secrets)
    assert topology.mode == "sentinel" and topology.service_name == "fisk"
    assert topology.sentinels == (("10.0.0.1", 26379), ("::1", 26380), ("s3", 26379))
    assert topology.auth_kwargs() == {"username": "bot", "password": "data-pw"}
    assert topology.sentinel_kwargs()["username"] == "watcher"
    assert topology.tls_kwargs() == {"ssl": True, "ssl_cert_reqs": "required", "ssl_ca_certs": "/ca.pem"}
    assert "data-pw" not in repr(topology) and "sentinel-pw" not in repr(topology)
    assert "sentinel-pw" not in topology.describe()


@pytest.mark.parametrize("tls", [True, False])
def test_sentinel_connections_rediscover_the_primary_with_and_without_tls(tls: bool) -> None:
    """Every connection to the primary asks the sentinels where it is when it (re)connects; with TLS too."""
    config = {"redis": {**SENTINEL_CONFIG["redis"], "tls": {"enabled": tls, "ca_file": "/ca.pem"}}}
    topology = redis_topology(parse_config(config), Secrets(redis_password="data-pw"))
    client, _ = sentinel_client(topology, PoolSettings(), {})
    connection = client.connection_pool.make_connection()
    # (sending without a task per command: bot/redis_send.py)
    assert type(connection) is direct_send(RediscoveringSSLConnection if tls else RediscoveringConnection)
    if tls:
        assert connection.ssl_context.ca_certs == "/ca.pem"


@pytest.mark.parametrize(
    ("redis_section", "expected"),
    [
        ({"mode": "sentinel"}, "mode sentinel needs sentinel.addresses and sentinel.service_name"),
        ({"mode": "sentinel", "sentinel": {"addresses": ["h:1"]}}, "needs sentinel.addresses and sentinel.service"),
        ({"sentinel": {"service_name": "x"}}, "sentinel.* is set but mode is standalone"),
        ({"mode": "cluster", "sentinel": {"addresses": ["h:1"]}}, "sentinel.* is set but mode is cluster"),
        ({"mode": "sentinel", "sentinel": {"addresses": ["h:port"], "service_name": "x"}}, "not a host:port"),
        ({"mode": "replicated"}, "redis.mode: Input should be 'standalone', 'sentinel' or 'cluster'"),
    ],
)
def test_bad_mode_settings_are_named(redis_section: dict[str, object], expected: str) -> None:
    with pytest.raises(ConfigError, match="redis") as caught:
        parse_config({"redis": redis_section}, "bot.yaml")
    assert expected in str(caught.value)


@pytest.mark.parametrize("address", ["redis://:hunter2@s1:26379", "user:hunter2@s1", "watcher:hunter2@s1:26379"])
def test_a_sentinel_address_with_credentials_is_refused_without_showing_them(address: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"redis": {"mode": "sentinel", "sentinel": {"addresses": [address], "service_name": "x"}}})
    assert "hunter2" not in str(caught.value)
    assert "host:port only" in str(caught.value) and "REDIS_SENTINEL_PASSWORD" in str(caught.value)


def test_a_topology_built_in_code_is_checked_too() -> None:
    with pytest.raises(TopologyError, match="needs redis.sentinel.addresses"):
        RedisTopology(mode="sentinel", service_name="x")
    with pytest.raises(TopologyError, match="must be one of standalone, sentinel, cluster"):
        RedisTopology(mode="primary")  # type: ignore[arg-type]


async def test_sentinel_unknown_primary_name(redis_sentinel: RedisSentinelServers, tmp_path: Path) -> None:
    topology = sentinel_topology(redis_sentinel, service_name="nope")
    with pytest.raises(RedisUnavailable, match="monitor no primary named 'nope'") as caught:
        await open_redis(None, topology, state_dir=tmp_path, timeout=2)
    assert "secret-pw" not in str(caught.value)


async def test_no_sentinel_reachable(tmp_path: Path) -> None:
    dead = [("127.0.0.1", free_port()), ("127.0.0.1", free_port())]
    topology = RedisTopology(mode="sentinel", sentinels=tuple(dead), service_name="fisk", sentinel_password="s-pw")
    with pytest.raises(RedisUnavailable, match="no sentinel reachable: 127.0.0.1:") as caught:
        await open_redis(None, topology, state_dir=tmp_path, timeout=1)
    assert "s-pw" not in str(caught.value)


async def test_wrong_passwords_are_named_and_not_shown(redis_sentinel: RedisSentinelServers, tmp_path: Path) -> None:
    wrong_sentinel = sentinel_topology(redis_sentinel, sentinel_password="guessed-sentinel-pw")
    with pytest.raises(RedisUnavailable, match="refused our credentials \\(REDIS_SENTINEL_PASSWORD") as caught:
        await open_redis(None, wrong_sentinel, state_dir=tmp_path, timeout=2)
    assert "guessed-sentinel-pw" not in str(caught.value)
    wrong_data = sentinel_topology(redis_sentinel, password="guessed-data-pw")
    with pytest.raises(RedisUnavailable, match="the primary refused our credentials \\(REDIS_PASSWORD") as caught:
        await open_redis(None, wrong_data, state_dir=tmp_path, timeout=2)
    assert "guessed-data-pw" not in str(caught.value)


async def test_sentinel_pools_are_bounded_like_standalone(redis_sentinel: RedisSentinelServers,
                                                           tmp_path: Path) -> None:
    handle = await open_on("sentinel", redis_sentinel, tmp_path, readers=3)
    try:
        pools = handle.pools()
        assert [type(p) for p in pools] == [MeteredSentinelPool, MeteredSentinelPool]
        assert [p.max_connections for p in pools] == [16, 3]
        assert await handle.client.set("k", "v") and await handle.reader.get("k") == b"v"
    finally:
        await handle.close()


async def test_cluster_with_uncovered_slots(tmp_path: Path) -> None:
    lone = _Node(tmp_path / "lone", ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"], cluster=True)
    lone.start()
    try:
        lone.wait_up()
        topology = RedisTopology(mode="cluster")
        with pytest.raises(RedisUnavailable, match="not all 16384 hash slots are covered by a reachable primary"):
            await open_redis(f"redis://127.0.0.1:{lone.port}", topology, state_dir=tmp_path, timeout=2)
    finally:
        lone.stop()


async def test_cluster_mode_on_a_plain_server(redis_server: RedisServer, tmp_path: Path) -> None:
    with pytest.raises(RedisUnavailable, match="is not a cluster node"):
        await open_redis(redis_server.url, RedisTopology(mode="cluster"), state_dir=tmp_path, timeout=2)


async def test_cluster_wrong_password_not_shown(redis_cluster: RedisClusterServers, tmp_path: Path) -> None:
    url = f"redis://:guessed-cluster-pw@127.0.0.1:{redis_cluster.nodes[0].port}"
    with pytest.raises(RedisUnavailable, match="refused our credentials") as caught:
        await open_redis(url, RedisTopology(mode="cluster"), state_dir=tmp_path, timeout=2)
    assert "guessed-cluster-pw" not in str(caught.value)


async def test_cluster_needs_a_seed_url(tmp_path: Path) -> None:
    with pytest.raises(RedisUnavailable, match="redis.mode cluster needs REDIS_URL"):
        await open_redis(None, RedisTopology(mode="cluster"), state_dir=tmp_path)
