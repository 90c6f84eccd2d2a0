"""Bounded Redis connection pools: a process opens a known number of connections, whatever the load.

redis-py's default asyncio pool opens a new connection for every concurrent command and, past
``max_connections``, fails the command at once with ``ConnectionError: Too many connections``. Under a burst
that turned into HTTP 500s and lost requests. Here every process has two pools:

* ``commands``: every ordinary command shares ``max_connections`` connections; a command that finds them all
  busy WAITS for one (``BlockingConnectionPool``) for up to ``pool_timeout_seconds`` before failing with a
  ``ConnectionError`` that callers treat as transient (they retry);
* ``readers``: blocking stream reads (``XREADGROUP ... BLOCK``) hold their connection for the whole block, so
  they get their own pool sized to the number of reading loops the process runs. They never starve commands
  and commands never delay them.

* ``acks`` (slack role only, ``ACK_CONNECTIONS``): the writes that must be made before Slack is answered (recording
  a request, the rate-limit check) have connections of their own, so a busy agent or poster can never make an
  acknowledgement miss Slack's 3 seconds.

So a process never holds more than ``max_connections + readers (+ acks)`` connections, and the number does not
grow with open conversations. ``pool_kwargs`` is the one place that turns settings into redis-py pool arguments, so
a client factory for another deployment mode (Sentinel, Cluster) can build its pools the same way.

Metrics (label ``pool``): connections in use and idle, tasks waiting for a connection, and waits that timed out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis.asyncio.connection import BlockingConnectionPool, ConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.metrics import REDIS_POOL_CONNECTIONS, REDIS_POOL_LIMIT, REDIS_POOL_TIMEOUTS, REDIS_POOL_WAITING
from bot.redis_send import direct_send

__all__ = ["MeteredPool", "PoolSettings", "collect_pool_metrics", "pool_kwargs"]

COMMANDS = "commands"
READERS = "readers"
ACKS = "acks"


ACK_CONNECTIONS = 2  # one record takes well under a millisecond: two connections take thousands a second
ACK_TIMEOUT_SECONDS = 2.0  # Slack wants its answer within 3 s; a refusal it can act on beats a timeout


@dataclass(frozen=True)
class PoolSettings:
    """How many connections one pool may open and how long a command waits for one."""

    max_connections: int = 16
    timeout_seconds: float | None = 5.0  # None: wait for ever (the readers pool, sized to its readers)
    name: str = COMMANDS


def pool_kwargs(settings: PoolSettings) -> dict[str, Any]:
    """Keyword arguments for ``MeteredPool(...)`` / ``MeteredPool.from_url(url, ...)`` beside the connection
    options: the bound, the wait, the metrics label."""
    return {
        "max_connections": settings.max_connections,
        "timeout": settings.timeout_seconds,
        "pool_name": settings.name,
    }


class MeteredPool(BlockingConnectionPool):
    """``BlockingConnectionPool`` that reports waiting tasks and wait timeouts to Prometheus, and whose connections
    send without a task per command (``bot.redis_send``).

    A command that finds a connection free while no other task is on the waiting path takes it directly: the
    waiting path (the pool's condition, a timeout armed and cancelled, its observability hooks) cost each command
    more client CPU than its own send, and a role sends dozens per call. No wake-up can be lost: every task that
    enters the waiting path is counted (``_slow``) until it holds a connection or gives up, a release hands the
    connection back without notifying only while that count is 0, and a direct take happens only then too, in
    one step of the event loop (nothing awaited between seeing the connection free and taking it). A release that
    started with nobody waiting and finds someone counted once the connection is back notifies then, under the
    condition: that waiter either saw the connection when it looked (under the condition, before it sleeps) or
    is asleep by the time the condition is ours, and is woken. While anyone waits, everything goes through the
    condition, in order, as before."""

    def __init__(self, *args: Any, pool_name: str = COMMANDS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connection_class = direct_send(self.connection_class)
        self.pool_name = pool_name
        self.waiting = 0
        self.timeouts = 0
        self.taken_directly = 0  # connections handed out without the waiting path (tests, benches)
        self._slow = 0  # tasks on the waiting path now (contended or not)
        REDIS_POOL_LIMIT.labels(pool_name).set(self.max_connections)

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        if not self._slow and not self._condition.locked() and self.can_get_connection():
            connection = self.get_available_connection()  # nothing awaited since the check: it is still free
            self.taken_directly += 1
            try:
                await self.ensure_connection(connection)
            except BaseException:
                await self.release(connection)
                raise
            return connection
        self._slow += 1
        try:
            if self.can_get_connection():
                return await super().get_connection()
            self.waiting += 1
            REDIS_POOL_WAITING.labels(self.pool_name).inc()
            try:
                return await super().get_connection()
            except RedisConnectionError as exc:
                if str(exc) == "No connection available.":  # BlockingConnectionPool's wait timed out
                    self.timeouts += 1
                    REDIS_POOL_TIMEOUTS.labels(self.pool_name).inc()
                raise
            finally:
                self.waiting -= 1
                REDIS_POOL_WAITING.labels(self.pool_name).dec()
        finally:
            self._slow -= 1

    async def release(self, connection: Any) -> None:
        if self._slow or self._condition.locked():
            await super().release(connection)  # under the condition, waking a waiter
            return
        await ConnectionPool.release(self, connection)  # nobody was waiting: no one to notify...
        if self._slow:  # ...unless a task started to wait while the release ran (it may have awaited)
            async with self._condition:
                self._condition.notify()

    def in_use(self) -> int:
        return len(self._in_use_connections)

    def idle(self) -> int:
        return len(self._available_connections)


def collect_pool_metrics(*pools: MeteredPool) -> None:
    """Set the in-use/idle gauges (at scrape time: the pool knows, no bookkeeping on every command)."""
    for pool in pools:
        REDIS_POOL_CONNECTIONS.labels(pool.pool_name, "in_use").set(pool.in_use())
        REDIS_POOL_CONNECTIONS.labels(pool.pool_name, "idle").set(pool.idle())
