"""The one Redis client factory every role and CLI command uses, whatever ``redis.mode`` says.

``open_redis(url, topology, ...)`` returns the same :class:`~bot.redis_connection.RedisHandle` in every mode:
``client`` for commands, ``reader`` for blocking stream reads, ``acker`` for what must be written before Slack
is answered, each on its own bounded pool (``bot/redis_pool.py``) so the connection budget of a process is the
same on one server, behind Sentinel or on a Cluster (there: per node).

Standalone goes to :func:`~bot.redis_connection.connect_redis` unchanged (URL or embedded server). Sentinel
and Cluster are checked before anything runs, and a failure says what is wrong in the operator's words (see
``bot/redis_topology.py``), with every secret scrubbed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, cast

import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.exceptions import RedisClusterException

from bot.redis_connection import RedisHandle, _client_kwargs, connect_redis
from bot.redis_pool import READERS, PoolSettings
from bot.redis_topology import (
    RedisTopology,
    TopologyError,
    cluster_client,
    explain_cluster_error,
    probe_sentinel,
    sentinel_client,
)
from bot.redis_url import RedisUnavailable, check_redis_url, describe_redis_url, scrub_password

__all__ = ["open_redis"]

_ERRORS = (redis.RedisError, RedisClusterException, OSError, ValueError, TimeoutError)


async def open_redis(
    url: str | None,
    topology: RedisTopology | None = None,
    *,
    state_dir: str | os.PathLike[str],
    timeout: float = 5.0,
    decode_responses: bool = False,
    pool: PoolSettings | None = None,
    readers: int = 0,
    acks: PoolSettings | None = None,
    client_name: str | None = None,
) -> RedisHandle:
    """Connect as ``topology.mode`` says; raise :class:`RedisUnavailable` naming the problem (never a secret)."""
    topology = topology or RedisTopology()
    if topology.mode == "standalone":
        return await connect_redis(
            url, state_dir=state_dir, timeout=timeout, decode_responses=decode_responses, pool=pool,
            readers=readers, acks=acks, client_name=client_name,
        )  # fmt: skip
    secrets = [s for s in (topology.password, topology.sentinel_password) if s]
    try:
        if topology.mode == "sentinel":
            return await _open_sentinel(topology, timeout, decode_responses, pool, readers, acks, client_name)
        if not url:
            raise RedisUnavailable("redis.mode cluster needs REDIS_URL (or redis.url): any node of the cluster")
        check_redis_url(url)
        return await _open_cluster(url, topology, timeout, decode_responses, pool, readers, acks, client_name)
    except RedisUnavailable as err:
        raise RedisUnavailable(_hide(str(err), secrets, url)) from None
    except TopologyError as err:
        raise RedisUnavailable(_hide(str(err), secrets, url)) from None


def _hide(text: str, secrets: list[str], url: str | None) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return scrub_password(text, url) if url else text


async def _open_sentinel(
    topology: RedisTopology, timeout: float, decode_responses: bool, pool: PoolSettings | None, readers: int,
    acks: PoolSettings | None, client_name: str | None,
) -> RedisHandle:
    await probe_sentinel(topology, timeout)
    kwargs = _client_kwargs("redis://sentinel", timeout, decode_responses)
    if client_name:
        kwargs["client_name"] = client_name
    client, sentinel = sentinel_client(topology, pool or PoolSettings(), kwargs)
    reader = sentinel_client(topology, PoolSettings(readers, None, READERS), kwargs, sentinel)[0] if readers else None
    acker = sentinel_client(topology, acks, kwargs, sentinel)[0] if acks is not None else None
    target = topology.describe()
    # the probe does not retry: a refused password is a ConnectionError to redis-py, retried until the timeout
    probe = sentinel.master_for(
        topology.service_name, redis_class=redis.asyncio.Redis, retry=AsyncRetry(NoBackoff(), 0),
        socket_connect_timeout=timeout, socket_timeout=timeout, db=topology.db,
        **topology.auth_kwargs(), **topology.tls_kwargs(),
    )  # fmt: skip
    try:
        await asyncio.wait_for(probe.ping(), timeout)
    except redis.AuthenticationError:
        await _close(client, reader, acker)
        raise TopologyError(f"{target}: the primary refused our credentials (REDIS_PASSWORD, redis.username)") from None
    except _ERRORS as err:
        await _close(client, reader, acker)
        raise TopologyError(f"{target}: the primary named by the sentinels does not answer ({type(err).__name__})"
                            ) from None
    finally:
        await _close(probe)
    return RedisHandle(client, target, None, "", decode_responses, reader, acker)


async def _open_cluster(
    url: str, topology: RedisTopology, timeout: float, decode_responses: bool, pool: PoolSettings | None,
    readers: int, acks: PoolSettings | None, client_name: str | None,
) -> RedisHandle:
    kwargs = _client_kwargs(url, timeout, decode_responses)
    if client_name:
        kwargs["client_name"] = client_name
    settings = pool or PoolSettings()
    target = f"Redis Cluster via {describe_redis_url(url)}"
    clients = [cluster_client(url, topology, settings, kwargs)]
    if readers:
        clients.append(cluster_client(url, topology, PoolSettings(readers, None, READERS), kwargs))
    if acks is not None:
        clients.append(cluster_client(url, topology, acks, kwargs))
    try:
        for client in clients:
            await asyncio.wait_for(client.initialize(), timeout)
    except _ERRORS as err:
        for client in clients:
            with contextlib.suppress(Exception):
                await client.aclose()
        raise TopologyError(f"{target}: {explain_cluster_error(err)}") from None
    # RedisCluster speaks the same command API as Redis (it routes each command by its key's slot); the
    # project's modules are typed against redis.asyncio.Redis.
    main = cast(redis.asyncio.Redis, clients[0])
    reader = cast(redis.asyncio.Redis, clients[1]) if readers else None
    acker = cast(redis.asyncio.Redis, clients[-1]) if acks is not None else None
    return RedisHandle(main, target, None, url, decode_responses, reader, acker)


async def _close(*clients: Any) -> None:
    for client in clients:
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aclose(close_connection_pool=True)
