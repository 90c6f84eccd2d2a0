"""Session-wide real parts: one Redis server for the whole test session, flushed per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.support.redis_server import RedisServer
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers

# The real fisk fixtures live in the repository, so a clone with nothing beside it can run every test.
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fisk"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """No AOF: with ``appendfsync always`` every write waited for an fsync (~6 ms each on this disk, against
    0.07 ms), and no test kills or restarts this shared server. The tests of what survives a Redis crash start
    their own server with AOF and fsync always (``RedisServer(...)`` in test_intake, test_intake_chaos,
    test_worker), so durability is still tested where it is the point."""
    server = RedisServer(tmp_path_factory.mktemp("redis"), appendonly=False)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    yield redis_server.url


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    """An async client on the flushed test Redis."""
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def opsctl(tmp_path: Path, fixtures_dir: Path) -> Path:
    """An executable that plays the real opsctl fixture (introspection bytes, then argv echo)."""
    from tests.support.fisk_app import make_fisk_app

    return make_fisk_app(tmp_path / "bin", fixtures_dir / "opsctl.introspect.json")


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A real Redis Cluster (3 primaries + 3 replicas, password-protected), formed once per session."""
    servers = RedisClusterServers(tmp_path_factory.mktemp("cluster"), password="cluster-secret-pw")
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


@pytest.fixture(scope="session")
def redis_sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisSentinelServers]:
    """A real primary + replica watched by 3 sentinels (data and sentinel passwords), started once per session."""
    servers = RedisSentinelServers(tmp_path_factory.mktemp("sentinel"), password="data-secret-pw",
                                   sentinel_password="sentinel-secret-pw")
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()
