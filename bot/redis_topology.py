"""Beyond one Redis: build the client for a standalone server, a Sentinel-managed primary or a Redis Cluster.

:class:`RedisTopology` is what the configuration says (``redis.mode`` and its settings plus the passwords from the
environment); :func:`build_client` turns it into the one kind of async client every role uses, with the bounded
pools of ``bot/redis_pool.py``; :func:`probe` checks it answers and turns what went wrong into a sentence that
names the problem (no sentinel reachable, unknown primary name, cluster slots not covered, a refused password)
and never a secret.

Why each mode is built this way:

* **standalone**: ``redis://``/``rediss://``/``unix://`` URL, as before (``bot/redis_connection.py``).
* **sentinel**: redis-py's ``Sentinel(...).master_for(service)``. Its connections ask the sentinels for the
  current primary whenever they (re)connect, so after a failover the retried command reaches the new primary.
  Everything goes to the primary: the approval lifecycle reads its own writes, so no work reads replicas.
* **cluster**: redis-py's ``RedisCluster``, seeded by the URL's host. Keys of one shard share a hash tag
  (``bot/approvals/keys.py``), so every script and transaction stays in one slot; the cluster client follows
  ``MOVED``/``ASK`` and refreshes its slot table after a failover.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

import redis
import redis.asyncio
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection
from redis.backoff import NoBackoff
from redis.exceptions import RedisClusterException

from bot.metrics import REDIS_POOL_TIMEOUTS
from bot.redis_pool import MeteredPool, PoolSettings, pool_kwargs

__all__ = ["MODES", "MeteredSentinelPool", "RedisTopology", "TopologyError", "parse_address"]

Mode = Literal["standalone", "sentinel", "cluster"]
MODES: tuple[str, ...] = ("standalone", "sentinel", "cluster")


class TopologyError(RuntimeError):
    """The Redis deployment is not usable as configured; the message says why and holds no secret."""


_HOST = re.compile(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+")  # a name, IPv4 or IPv6 (brackets stripped)


def parse_address(text: str) -> tuple[str, int]:
    """``host:port`` (or ``[v6]:port``; port 26379 when omitted, the Sentinel default) -> (host, port).

    A URL or ``user:password@host`` is refused without being repeated: the message would show the password."""
    if "@" in text or "/" in text:
        raise ValueError("not a host:port address (a URL or credentials?): give host:port only; the sentinels' "
                         "password goes in REDIS_SENTINEL_PASSWORD, their user in redis.sentinel.username")
    host, sep, port = text.strip().rpartition(":")
    if not sep or "]" in port:
        host, port = text.strip(), "26379"
    host = host.strip("[]")
    if not _HOST.fullmatch(host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"not a host:port address: {text!r}")
    return host, int(port)


@dataclass(frozen=True)
class RedisTopology:
    """How to reach Redis beyond the URL. Passwords come from the environment and are never shown (repr=False)."""

    mode: Mode = "standalone"
    #: sentinel mode: the sentinels' addresses and the name they monitor the primary under
    sentinels: tuple[tuple[str, int], ...] = ()
    service_name: str = ""
    #: ACL user names (None: the default user, or the one in the URL)
    username: str | None = None
    sentinel_username: str | None = None
    password: str | None = field(default=None, repr=False)
    sentinel_password: str | None = field(default=None, repr=False)
    #: TLS to the data nodes (and to the sentinels when ``sentinel_tls``)
    tls: bool = False
    sentinel_tls: bool = False
    tls_ca_file: str | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    #: sentinel mode: the database number on the primary (a cluster has only database 0)
    db: int = 0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise TopologyError(f"redis.mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.mode == "sentinel":
            if not self.sentinels:
                raise TopologyError("redis.mode sentinel needs redis.sentinel.addresses (host:port of each sentinel)")
            if not self.service_name:
                raise TopologyError("redis.mode sentinel needs redis.sentinel.service_name (the monitored primary)")

    def describe(self) -> str:
        """What we connect to, for logs and errors: never a password."""
        if self.mode == "sentinel":
            where = ", ".join(f"{h}:{p}" for h, p in self.sentinels)
            return f"Sentinel primary {self.service_name!r} via {where}" + (" (TLS)" if self.tls else "")
        return self.mode

    def tls_kwargs(self) -> dict[str, Any]:
        if not self.tls:
            return {}
        kwargs: dict[str, Any] = {"ssl": True, "ssl_cert_reqs": "required"}
        if self.tls_ca_file:
            kwargs["ssl_ca_certs"] = self.tls_ca_file
        if self.tls_cert_file:
            kwargs["ssl_certfile"] = self.tls_cert_file
        if self.tls_key_file:
            kwargs["ssl_keyfile"] = self.tls_key_file
        return kwargs

    def auth_kwargs(self) -> dict[str, Any]:
        """Credentials for the data nodes given outside the URL (the URL's own win where both are set)."""
        kwargs: dict[str, Any] = {}
        if self.username:
            kwargs["username"] = self.username
        if self.password:
            kwargs["password"] = self.password
        return kwargs

    def sentinel_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"socket_connect_timeout": 2.0, "socket_timeout": 2.0}
        if self.sentinel_username:
            kwargs["username"] = self.sentinel_username
        if self.sentinel_password:
            kwargs["password"] = self.sentinel_password
        if self.sentinel_tls:
            kwargs.update(self.tls_kwargs() or {"ssl": True})
        return kwargs


class RediscoveringConnection(SentinelManagedConnection):
    """A connection to the primary that asks the sentinels where the primary is every time it (re)connects.

    redis-py's own connects through the sentinels only when taken from the pool; a connection that breaks
    inside a command's retries reconnects to the address it had. After a failover every retry of a command
    started before it went to the dead primary until the retries ran out (about 5 s with our backoff), however
    fast the sentinels promoted the replica. The retries themselves are the command's (``retry``), so the
    socket connect is not retried again underneath them."""

    async def connect_to(self, address: Any) -> None:
        self.host, self.port = address  # just discovered by connect(): no second round of questions
        await super().connect_check_health(check_health=self.connection_pool.check_connection,
                                           retry_socket_connect=False)

    async def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if self.is_connected:
            return
        if self.connection_pool.is_master:
            self.host, self.port = await self.connection_pool.get_master_address()
        await super().connect_check_health(check_health=check_health, retry_socket_connect=False)


class RediscoveringSSLConnection(RediscoveringConnection, SSLConnection):
    """The same over TLS."""


class MeteredSentinelPool(SentinelConnectionPool, MeteredPool):
    """redis-py's Sentinel pool (connections to whoever is primary now) with the bounded, waiting, metered
    behaviour of :class:`MeteredPool`: the same bound in every mode."""

    def __init__(self, service_name: str, sentinel_manager: Sentinel, **kwargs: Any) -> None:
        tls = kwargs.pop("ssl", False)
        kwargs.setdefault("connection_class", RediscoveringSSLConnection if tls else RediscoveringConnection)
        super().__init__(service_name, sentinel_manager, **kwargs)


def sentinel_client(
    topology: RedisTopology, settings: PoolSettings, kwargs: dict[str, Any], sentinel: Sentinel | None = None
) -> tuple[redis.asyncio.Redis, Sentinel]:
    """A client of the current primary behind the sentinels (one :class:`Sentinel` may serve several pools)."""
    sentinel = sentinel or Sentinel(list(topology.sentinels), sentinel_kwargs=topology.sentinel_kwargs())
    data = {**kwargs, **topology.auth_kwargs(), **topology.tls_kwargs(), "db": topology.db}
    client = sentinel.master_for(
        topology.service_name, redis_class=redis.asyncio.Redis, connection_pool_class=MeteredSentinelPool,
        check_connection=True, **data, **pool_kwargs(settings),
    )  # fmt: skip
    return client, sentinel


class ClusterConnection(Connection):
    """A cluster node's connection that reports being closed under a command as the connection error it is.

    redis-py's cluster client disconnects a node's connections (after a failover, a refreshed slot table) while
    other tasks may be sending on them; the send then dereferences the closed writer and raises
    ``AttributeError: 'NoneType' object has no attribute 'writelines'``, an error no retry path knows: the
    poster's pipelined finish and the runner's writes failed outright and their entries waited for the 60 s
    reclaim. As a ``ConnectionError`` the cluster client reconnects and retries it like any dropped connection
    (nothing was written on the closed connection)."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        try:
            await super().send_packed_command(command, check_health)
        except AttributeError as err:
            if self._writer is not None:
                raise
            await self.disconnect(nowait=True)
            raise redis.ConnectionError(f"connection to {self.host}:{self.port} closed under the command") from err

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)
        except AttributeError as err:
            if self._reader is not None:
                raise
            await self.disconnect(nowait=True)
            raise redis.ConnectionError(f"connection to {self.host}:{self.port} closed under the reply") from err


class ClusterSSLConnection(ClusterConnection, SSLConnection):
    """The same over TLS."""


class _GatedPipeline(ClusterPipeline):
    """A cluster pipeline that waits for its turn as the client's single commands do (at most one connection
    per node per pipeline, so the bound per node holds)."""

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        cluster = self.cluster_client
        assert isinstance(cluster, WaitingRedisCluster)
        async with cluster.turn():
            return await super().execute(raise_on_error, allow_redirections)


class WaitingRedisCluster(RedisCluster):
    """``RedisCluster`` whose commands wait for a free connection, as the standalone pools do.

    redis-py's cluster pool never waits: a command that finds a node's ``max_connections`` busy fails at once with
    ``MaxConnectionsError``, and the client, taking that for a broken node, rediscovers the whole cluster before
    retrying (seconds under load). The slack role's two acknowledgement connections then refused all but two of a
    burst of Slack requests (a 503 for a click, "could not start" for a command). Here at most ``max_connections``
    commands run at once through this client (whatever their nodes, so never more on one node); the others wait
    up to ``wait_seconds`` (None: for ever) and then fail with a ``ConnectionError`` the callers retry, counted in
    ``fisk_chatops_redis_pool_timeouts_total``. Pipelines wait for a turn too (one connection per node each).
    Its nodes' connections are :class:`ClusterConnection` (closed under a command: a retried connection error)."""

    def __init__(self, *args: Any, wait_seconds: float | None = None, pool_name: str = "commands",
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._free = asyncio.Semaphore(int(kwargs.get("max_connections") or 2**31))
        self._wait_seconds = wait_seconds
        self._pool_name = pool_name
        tls = self.nodes_manager.connection_kwargs.get("connection_class") is SSLConnection
        connection_class = ClusterSSLConnection if tls else ClusterConnection
        self.nodes_manager.connection_kwargs["connection_class"] = connection_class  # nodes found later
        for node in [*self.nodes_manager.startup_nodes.values(), *self.nodes_manager.nodes_cache.values()]:
            node.connection_class = connection_class

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait up to ``wait_seconds`` for one of the ``max_connections`` turns (a counted ConnectionError if none)."""
        try:
            await asyncio.wait_for(self._free.acquire(), self._wait_seconds)
        except TimeoutError:
            REDIS_POOL_TIMEOUTS.labels(self._pool_name).inc()
            raise redis.ConnectionError("No connection available.") from None
        try:
            yield
        finally:
            self._free.release()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.turn():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            raise RedisClusterException("shard_hint is deprecated in cluster mode")
        return _GatedPipeline(self, transaction)  # type: ignore[abstract]  # as redis-py builds its own


def cluster_client(url: str, topology: RedisTopology, settings: PoolSettings, kwargs: dict[str, Any]) -> RedisCluster:
    """A cluster client seeded by ``url``'s host; at most ``settings.max_connections`` commands at once (so
    connections to each node), a command waiting up to ``settings.timeout_seconds`` for its turn
    (:class:`WaitingRedisCluster`)."""
    options = {k: v for k, v in kwargs.items() if k not in {"retry", "retry_on_error", "client_name"}}
    if "client_name" in kwargs:
        options["client_name"] = kwargs["client_name"]
    return WaitingRedisCluster.from_url(
        url, max_connections=settings.max_connections, require_full_coverage=True,
        wait_seconds=settings.timeout_seconds, pool_name=settings.name,
        **options, **topology.auth_kwargs(), **topology.tls_kwargs(),
    )  # fmt: skip


async def probe_sentinel(topology: RedisTopology, timeout: float) -> tuple[str, int]:
    """Ask each sentinel for the primary; raise :class:`TopologyError` that says which of the failures it was."""
    unreachable: list[str] = []
    refused: list[str] = []
    unknown: list[str] = []
    for host, port in topology.sentinels:
        where = f"{host}:{port}"
        options = {**topology.sentinel_kwargs(), "socket_connect_timeout": timeout, "socket_timeout": timeout}
        # no retries: a refused password is a ConnectionError to redis-py, retried until the timeout otherwise
        client = redis.asyncio.Redis(host=host, port=port, retry=AsyncRetry(NoBackoff(), 0), **options)
        try:
            reply = await asyncio.wait_for(
                client.execute_command("SENTINEL GET-MASTER-ADDR-BY-NAME", topology.service_name), timeout
            )
        except redis.AuthenticationError:
            refused.append(where)
            continue
        except redis.ResponseError as err:
            if "NOAUTH" in str(err) or "WRONGPASS" in str(err) or "NOPERM" in str(err):
                refused.append(where)
            else:
                unreachable.append(f"{where} ({type(err).__name__})")
            continue
        except (redis.RedisError, OSError, TimeoutError) as err:
            unreachable.append(f"{where} ({type(err).__name__})")
            continue
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()
        if not reply:
            unknown.append(where)
            continue
        addr_host, addr_port = reply
        return (addr_host.decode() if isinstance(addr_host, bytes) else str(addr_host)), int(addr_port)
    if unknown:
        raise TopologyError(
            f"the sentinels at {', '.join(unknown)} monitor no primary named {topology.service_name!r} "
            "(redis.sentinel.service_name)"
        )
    if refused:
        raise TopologyError(
            f"the sentinels at {', '.join(refused)} refused our credentials (REDIS_SENTINEL_PASSWORD, "
            "redis.sentinel.username)"
        )
    raise TopologyError(f"no sentinel reachable: {', '.join(unreachable)}")


def explain_cluster_error(err: BaseException) -> str:
    """The cluster client's startup failures in the operator's words."""
    causes = [err]
    while causes[-1].__cause__ is not None and len(causes) < 5:  # redis-py wraps the node's error
        causes.append(causes[-1].__cause__)
    text = " ".join(str(c) for c in causes)
    if any(isinstance(c, redis.AuthenticationError) for c in causes):
        err = redis.AuthenticationError()
    if "slots are not covered" in text or "CLUSTERDOWN" in text:
        return "not all 16384 hash slots are covered by a reachable primary (is every shard's primary up?)"
    if isinstance(err, redis.AuthenticationError) or "WRONGPASS" in text or "NOAUTH" in text:
        return "the cluster refused our credentials (the password in REDIS_URL or REDIS_PASSWORD, redis.username)"
    if "cluster support disabled" in text or "cluster mode is not enabled" in text.lower():
        return "the server is not a cluster node (cluster-enabled no): use redis.mode standalone or sentinel"
    return f"{type(err).__name__}"
