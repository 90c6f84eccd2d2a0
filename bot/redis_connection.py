"""Connect to Redis: a configured ``REDIS_URL``, or the embedded real Redis server (``bot/redis_embedded.py``).

``connect_redis(url, state_dir=...)`` returns a :class:`RedisHandle` whose ``client`` is a
``redis.asyncio.Redis``; ``connect_redis_sync`` is the same for CLI commands, with a plain ``redis.Redis``.

Choices:

- ``decode_responses=False`` by default: replies are ``bytes`` (stream fields, hashes and values alike), so
  arbitrary command output survives unchanged. Pass ``decode_responses=True`` for ``str`` replies.
- With a URL, redis-py's ``from_url`` does all the parsing: ``redis://``, ``rediss://`` (TLS, with
  ``?ssl_cert_reqs=...&ssl_ca_certs=...`` query options), ``unix://``, user names and passwords (percent-encoded
  in the URL) reach redis-py unchanged. Before returning, one PING must answer within ``timeout`` seconds, else
  :class:`RedisUnavailable` names the target (host:port, never the password: ``bot/redis_url.py``). The
  returned client keeps redis-py's default retries for later transient failures; the startup probe does not
  retry.
- With no URL, the embedded server in ``<state_dir>/redis/`` is started or reused; only the handle that started
  it stops it on ``close()``.
- The async client's connections come from a bounded pool that waits for a free connection
  (``bot/redis_pool.py``); blocking stream readers get their own pool (``readers``), sized by the caller, and
  so do the few commands that must answer Slack within its 3 seconds (``acks``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.retry import Retry

from bot.redis_embedded import EmbeddedRedis
from bot.redis_pool import READERS, MeteredPool, PoolSettings, collect_pool_metrics, pool_kwargs
from bot.redis_url import RedisUnavailable, check_redis_url, describe_redis_url, scrub_password

__all__ = ["RedisHandle", "SyncRedisHandle", "connect_redis", "connect_redis_sync"]


def _error_text(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}" if type(err).__name__ not in text else text



# -- handles -------------------------------------------------------------------------------------------------


@dataclass
class RedisHandle:
    """An async client plus, for the embedded case, the server it talks to."""

    client: redis.asyncio.Redis
    target: str  # what we connected to, for logs: host:port or the unix socket; never a password
    embedded: EmbeddedRedis | None = None
    url: str = field(default="", repr=False)  # the effective URL (may hold a password)
    decode_responses: bool = False
    #: a client for blocking stream reads (XREADGROUP BLOCK) on its own pool; ``client`` when none was asked for
    readers: redis.asyncio.Redis | None = None
    #: a client for the writes that must be made before Slack is answered, on connections background work
    #: cannot take; ``client`` when none was asked for
    acks: redis.asyncio.Redis | None = None

    @property
    def reader(self) -> redis.asyncio.Redis:
        return self.readers if self.readers is not None else self.client

    @property
    def acker(self) -> redis.asyncio.Redis:
        return self.acks if self.acks is not None else self.client

    def pools(self) -> list[MeteredPool]:
        found = [c.connection_pool for c in (self.client, self.readers, self.acks) if c is not None]
        return [p for p in found if isinstance(p, MeteredPool)]

    def collect_metrics(self) -> None:
        collect_pool_metrics(*self.pools())

    def sync_client(self) -> redis.Redis:
        """A new plain ``redis.Redis`` to the same server (close it yourself)."""
        return redis.Redis.from_url(self.url, decode_responses=self.decode_responses)

    async def close(self) -> None:
        try:
            for extra in (self.readers, self.acks, self.client):
                if extra is None:
                    continue
                if isinstance(extra, redis.asyncio.RedisCluster):  # owns its node pools; no such argument
                    await extra.aclose()
                else:
                    await extra.aclose(close_connection_pool=True)
        finally:
            if self.embedded is not None:
                await asyncio.to_thread(self.embedded.stop)

    async def __aenter__(self) -> RedisHandle:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


@dataclass
class SyncRedisHandle:
    client: redis.Redis
    target: str
    embedded: EmbeddedRedis | None = None
    url: str = field(default="", repr=False)

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.embedded is not None:
                self.embedded.stop()

    def __enter__(self) -> SyncRedisHandle:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _resolve(url: str | None, state_dir: str | os.PathLike[str]) -> tuple[str, str, EmbeddedRedis | None]:
    """(effective url, description, embedded server or None); starts or reuses the embedded server."""
    if url:
        check_redis_url(url)
        return url, describe_redis_url(url), None
    embedded = EmbeddedRedis(state_dir)
    embedded.start()
    return embedded.url, f"embedded Redis at {embedded.socket_path}", embedded


def _probe_kwargs(timeout: float) -> dict[str, object]:
    return {
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(NoBackoff(), 0),
        "single_connection_client": True,
    }


def _client_kwargs(url: str, timeout: float, decode_responses: bool, asynchronous: bool = True) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "decode_responses": decode_responses,
        "socket_connect_timeout": timeout,
        "health_check_interval": 30,  # PING a connection idle this long before reusing it
        # A pooled connection broken by a Redis restart fails once; retry it on a fresh connection instead.
        "retry": (AsyncRetry if asynchronous else Retry)(ExponentialBackoff(cap=2.0, base=0.1), 5),
        "retry_on_error": [redis.ConnectionError, redis.TimeoutError],
    }
    if not url.startswith("unix:"):
        kwargs["socket_keepalive"] = True  # TCP only; unix socket connections reject the option
    return kwargs


def _unavailable(url: str, target: str, err: BaseException) -> RedisUnavailable:
    return RedisUnavailable(f"cannot reach Redis at {target}: {scrub_password(_error_text(err), url)}")


_PROBE_ERRORS = (redis.RedisError, OSError, ValueError, TimeoutError, asyncio.TimeoutError)


def _pooled_client(url: str, settings: PoolSettings, kwargs: dict[str, Any]) -> redis.asyncio.Redis:
    pool = MeteredPool.from_url(url, **kwargs, **pool_kwargs(settings))
    return redis.asyncio.Redis(connection_pool=pool)


async def connect_redis(
    url: str | None,
    *,
    state_dir: str | os.PathLike[str],
    timeout: float = 5.0,
    decode_responses: bool = False,
    pool: PoolSettings | None = None,
    readers: int = 0,
    acks: PoolSettings | None = None,
    client_name: str | None = None,
) -> RedisHandle:
    """Connect to ``url``, or start/reuse the embedded server in ``state_dir`` when ``url`` is None or empty.

    ``pool`` bounds the command connections (default ``PoolSettings()``); ``readers`` > 0 opens a second pool of
    that many connections for blocking stream reads (``handle.reader``); ``acks`` a third one for what must be
    written before Slack is answered (``handle.acker``). ``client_name`` is set on every
    connection (``CLIENT SETNAME``), so ``CLIENT LIST`` shows whose connections they are.

    Raises :class:`RedisUnavailable` when no PING answers within ``timeout`` seconds."""
    # The embedded server is started from this (the main) thread, not a worker thread: its parent-death signal
    # fires when the forking thread exits (see die_with_parent). It blocks the loop for the ~0.1 s Redis takes to
    # start, once, before anything else runs.
    effective, target, embedded = _resolve(url, state_dir)
    try:
        probe = redis.asyncio.Redis.from_url(effective, **_probe_kwargs(timeout))  # type: ignore[arg-type]
        try:
            await asyncio.wait_for(probe.ping(), timeout)
        finally:
            with contextlib.suppress(Exception):
                await probe.aclose()
        kwargs = _client_kwargs(effective, timeout, decode_responses)
        if client_name:
            kwargs["client_name"] = client_name
        client = _pooled_client(effective, pool or PoolSettings(), kwargs)
        reader = (_pooled_client(effective, PoolSettings(readers, None, READERS), kwargs) if readers > 0 else None)
        acker = _pooled_client(effective, acks, kwargs) if acks is not None else None
    except _PROBE_ERRORS as err:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)
        raise _unavailable(effective, target, err) from None
    return RedisHandle(client, target, embedded, effective, decode_responses, reader, acker)


def connect_redis_sync(
    url: str | None,
    *,
    state_dir: str | os.PathLike[str],
    timeout: float = 5.0,
    decode_responses: bool = False,
) -> SyncRedisHandle:
    """:func:`connect_redis` for synchronous code (CLI commands): a plain ``redis.Redis``."""
    effective, target, embedded = _resolve(url, state_dir)
    try:
        probe = redis.Redis.from_url(effective, **_probe_kwargs(timeout))
        try:
            probe.ping()
        finally:
            with contextlib.suppress(Exception):
                probe.close()
        client = redis.Redis.from_url(effective, **_client_kwargs(effective, timeout, decode_responses, False))
    except _PROBE_ERRORS as err:
        if embedded is not None:
            embedded.stop()
        raise _unavailable(effective, target, err) from None
    return SyncRedisHandle(client, target, embedded, effective)
