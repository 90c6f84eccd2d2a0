"""Run a transition script and wait until replicas acknowledge it (``WAIT``), on the connection that ran it.

Redis replicates asynchronously: a primary answers a write before any replica has it, so a decision a user was
told about can vanish in a failover. ``WAIT numreplicas timeout`` blocks until that many replicas acknowledged
every write *this connection* made, so the script and its ``WAIT`` must share one connection:

* standalone and Sentinel: a non-transactional pipeline ``[EVALSHA ..., WAIT n t]`` on one pooled connection
  (one round trip; the ``WAIT`` answers once the replicas caught up or the timeout passed);
* Cluster: the same two commands sent to the primary that owns the key's slot, on one connection of that node
  (:meth:`redis.asyncio.cluster.ClusterNode.execute_pipeline`); redis-py's cluster pipeline would send a keyless
  ``WAIT`` to another node and re-send a redirected command on another connection, so it is not used here.

How many replicas to wait for (``redis.durability.replicas``): ``auto`` waits for one when the primary reports a
connected replica (``INFO replication``, cached for ``refresh_seconds`` per primary and asked again after a
wait fell short), and also while a replica it had is disconnected, for ``remember_replica_seconds`` (a replica
cut off by a partition can still be promoted: Sentinel promotes one disconnected for less than 10 x
``down-after-milliseconds``, and it would come up without what was written meanwhile). A process that never saw
the replica (started while it was cut off) learns of it from the deployment: the sentinels, ``CLUSTER NODES``, or
the mark another process left in Redis (``bot.redis_replicas``). Where there is no replica and has been none
(standalone, the embedded server) it waits for none: no WAIT at all. A number asks for exactly
that many (``0``: never wait). A wait that falls short is reported, not raised: the write IS on the
primary, and only the caller knows what to tell the user (``bot.approvals.store``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.asyncio.sentinel import SentinelConnectionPool
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)

from bot.redis_replicas import ReplicaMarks, cluster_replicas_listed, sentinel_replicas_promotable

__all__ = ["Acknowledgement", "DurabilitySettings", "DurableScripts"]

log = logging.getLogger(__name__)

# a cluster node that no longer owns the slot, or is gone: refresh the slot table and send both again


class _NotPrimary(RuntimeError):
    """``INFO replication`` says the node is a replica: a failover the client's slot table has not caught up with."""


_REROUTE = (MovedError, AskError, TryAgainError, ClusterDownError, SlotNotCoveredError, _NotPrimary,
            redis.ConnectionError, redis.TimeoutError)
_SHORTFALL_LOG_SECONDS = 60.0
_CLUSTER_ATTEMPTS = 8  # about 5.5 s of backoff: a failover with a 1-2 s node timeout fits in it


@dataclass(frozen=True)
class DurabilitySettings:
    """``redis.durability``: ``replicas`` None = auto; ``timeout_ms`` bounds each wait (the click's extra delay
    when a replica lags)."""

    replicas: int | None = None
    timeout_ms: int = 1000
    refresh_seconds: float = 5.0
    #: auto: how long a primary that lost its replicas is still waited for (its replica may yet be promoted)
    remember_replica_seconds: float = 300.0

    def __post_init__(self) -> None:
        if self.replicas is not None and self.replicas < 0:
            raise ValueError("redis.durability.replicas must be auto or a number >= 0")
        if self.timeout_ms < 1:
            raise ValueError("redis.durability.timeout_ms must be >= 1 (0 would make WAIT block for ever)")


@dataclass(frozen=True)
class Acknowledgement:
    """How many replicas were asked for and how many acknowledged the write within the timeout."""

    wanted: int
    acked: int
    timeout_ms: int

    @property
    def durable(self) -> bool:
        return self.acked >= self.wanted


class DurableScripts:
    """Runs registered scripts followed by ``WAIT`` on the same connection (see the module docstring)."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        settings: DurabilitySettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        marks_prefix: str | None = None,
    ) -> None:
        self.client = client
        self.settings = settings or DurabilitySettings()
        # auto on a plain primary: the replica-seen mark shared by every process (``bot.redis_replicas``)
        self.marks = (ReplicaMarks(client, marks_prefix, self.settings.remember_replica_seconds, clock)
                      if marks_prefix is not None else None)
        # primary -> why auto waits for a replica none of which is connected (said when the wait falls short)
        self._missing: dict[str, str] = {}
        self._clock = clock
        self._replicas: dict[str, tuple[float, int]] = {}  # primary name -> (asked at, replicas to wait for)
        # replication history (master_replid) that had a replica -> when we first saw it without one (None: has one)
        self._lost_replica: dict[str, float | None] = {}
        self._warned_wait = False
        self._warned_info = False
        self._last_shortfall_log = float("-inf")

    @property
    def cluster(self) -> RedisCluster | None:
        client: Any = self.client
        return client if isinstance(client, RedisCluster) else None

    async def waits_for_replicas(self) -> bool:
        """Would a write now wait for a replica? (Cluster: always said yes, so callers keep to the path that
        waits.) A runner hands nothing over to itself where a claim must be confirmed by a replica before it
        starts: a hand-over is claimed in the approval's script, which only the approving side waits for."""
        if self.settings.replicas is not None:
            return self.settings.replicas > 0
        if self.cluster is not None:
            return True
        try:
            return await self._wanted("primary", self._ask_replication, self._known_replicas) > 0
        except _NotPrimary:
            return True

    async def run(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> tuple[Any, Acknowledgement]:
        """Run ``script`` on ``keys`` (all in one slot) and wait for the replicas; the script's reply and what
        the replicas acknowledged. A script error is raised; a short acknowledgement is not."""
        if self.settings.replicas == 0:
            return await script(keys=list(keys), args=list(args)), Acknowledgement(0, 0, self.settings.timeout_ms)
        cluster = self.cluster
        if cluster is not None:
            return await self._run_on_node(cluster, script, keys, args)
        try:
            wanted = await self._wanted("primary", self._ask_replication, self._known_replicas)
        except _NotPrimary:  # a demoted primary refuses the write itself (READONLY): redis-py reconnects, retries
            wanted = 0
        if wanted == 0:
            return await script(keys=list(keys), args=list(args)), Acknowledgement(0, 0, self.settings.timeout_ms)
        for _ in range(2):
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.evalsha(script.sha, len(keys), *keys, *args)
                pipe.execute_command("WAIT", wanted, self.settings.timeout_ms)
                reply, acked = await pipe.execute(raise_on_error=False)
            if isinstance(reply, NoScriptError):  # nothing ran: load it (a new primary after a failover) and again
                await self.client.script_load(script.script)
                continue
            return self._outcome("primary", reply, acked, wanted)
        raise NoScriptError(f"script {script.sha} is still not loaded after SCRIPT LOAD")

    async def _run_on_node(
        self, cluster: RedisCluster, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]
    ) -> tuple[Any, Acknowledgement]:
        for attempt in range(_CLUSTER_ATTEMPTS):
            node = None
            try:
                await cluster.initialize()  # a no-op unless redis-py dropped its slot table (after a failover)
                node = cluster.get_node_from_key(keys[0], replica=False)
                if node is None:
                    raise SlotNotCoveredError(f"no cluster node serves {keys[0]!r}")
                wanted = await self._wanted(node.name, functools.partial(_node_command, node, "INFO", "replication"),
                                            functools.partial(_cluster_replicas, node))
                if wanted == 0:
                    reply = await script(keys=list(keys), args=list(args))
                    return reply, Acknowledgement(0, 0, self.settings.timeout_ms)
                reply, acked = await _node_pipeline(
                    node, ("EVALSHA", script.sha, len(keys), *keys, *args), ("WAIT", wanted, self.settings.timeout_ms)
                )
                if isinstance(reply, NoScriptError):
                    await _node_command(node, "SCRIPT LOAD", script.script)
                    reply, acked = await _node_pipeline(
                        node, ("EVALSHA", script.sha, len(keys), *keys, *args),
                        ("WAIT", wanted, self.settings.timeout_ms),
                    )  # fmt: skip
                if isinstance(reply, _REROUTE):
                    raise reply
            except _REROUTE as err:
                # the slot moved (failover, resharding) or the node is gone: nothing or everything of the script
                # ran on the old owner; a rerun is answered by the script's own guards (approve and finish
                # recognise their repeat)
                if attempt == _CLUSTER_ATTEMPTS - 1:
                    raise
                where = node.name if node is not None else keys[0]
                log.info("durable write on %s: %s; refreshing the slot table", where, type(err).__name__)
                if node is not None:
                    self._replicas.pop(node.name, None)
                await asyncio.sleep(min(1.0, 0.25 * (attempt + 1)))
                with contextlib.suppress(*_REROUTE, RedisClusterException):  # no node answers yet: next attempt
                    await cluster.nodes_manager.initialize()
                continue
            return self._outcome(node.name, reply, acked, wanted)
        raise AssertionError("unreachable")

    def _outcome(self, primary: str, reply: Any, acked: Any, wanted: int) -> tuple[Any, Acknowledgement]:
        if isinstance(reply, Exception):
            raise reply
        if isinstance(acked, Exception):
            # e.g. an ACL user without +wait: the write happened, its durability is unknown; say so once, loudly
            if not self._warned_wait:
                log.error("WAIT refused by Redis (%s): decisions are not confirmed by a replica; grant the Redis "
                          "user the WAIT command or set redis.durability.replicas: 0", acked)
                self._warned_wait = True
            acked = 0
        ack = Acknowledgement(wanted, int(acked), self.settings.timeout_ms)
        if not ack.durable:
            self._replicas.pop(primary, None)  # ask again next time: the replica may be gone, or this a new primary
            self._explain_shortfall(primary, ack)
        return reply, ack

    def _explain_shortfall(self, primary: str, ack: Acknowledgement) -> None:
        """A fixed ``replicas: N`` the deployment does not meet, or an auto wait for a replica that is cut off,
        stalls everything (each click asks to be confirmed, each claim is given back, nothing runs) without
        saying why: say it, at most once a minute."""
        missing = self._missing.get(primary)
        if self.settings.replicas is None and missing is None:
            return  # auto and the replica is connected: a lagging replica, counted by the store's metric
        now = self._clock()
        if now - self._last_shortfall_log < _SHORTFALL_LOG_SECONDS:
            return
        self._last_shortfall_log = now
        if missing is not None:
            log.error("redis.durability.replicas auto waits for %s, which is not connected to %s: no approval, "
                      "claim or result is confirmed and approved calls do not run until it is back or gone for "
                      "remember_replica_seconds (a failover to it would lose them); reconnect or remove the replica",
                      missing, primary)
            return
        log.error("redis.durability.replicas asks for %d replica(s), %d acknowledged within %d ms on %s: until enough "
                  "replicas are connected and keep up, no approval, claim or result is confirmed and approved calls "
                  "do not run; attach replicas, or set redis.durability.replicas: auto", ack.wanted, ack.acked,
                  ack.timeout_ms, primary)

    async def _wanted(
        self, primary: str, ask_replication: Callable[[], Any], ask_topology: Callable[[str], Awaitable[int]]
    ) -> int:
        if self.settings.replicas is not None:
            return self.settings.replicas
        now = self._clock()
        cached = self._replicas.get(primary)
        if cached is None or now - cached[0] > self.settings.refresh_seconds:
            try:
                info = await ask_replication()
            except ResponseError as err:  # e.g. an ACL user without +info: auto cannot know, so it cannot wait
                if not self._warned_info:
                    log.error("INFO replication refused by Redis (%s): redis.durability.replicas auto cannot see the "
                              "replicas and waits for none; grant the Redis user the INFO command or set "
                              "redis.durability.replicas to a number", err)
                    self._warned_info = True
                wanted = 0
            else:
                wanted = await self._auto(primary, info, now, ask_topology)  # _NotPrimary: asked again next time
            cached = (now, wanted)
            self._replicas[primary] = cached
        return cached[1]

    async def _auto(
        self, primary: str, info: Any, now: float, ask_topology: Callable[[str], Awaitable[int]]
    ) -> int:
        """1 when the primary has a replica now; or had one that we noticed gone less than
        ``remember_replica_seconds`` ago (counted from when we noticed: never shorter than since the loss); or
        when the deployment knows of a replica that could be promoted though none is connected now
        (``bot.redis_replicas``: what a process started during the cut-off cannot have noticed); else 0."""
        fields = info if isinstance(info, dict) else {}
        if str(fields.get("role", "")) != "master":
            raise _NotPrimary("the node is a replica now")
        history = str(fields.get("master_replid", ""))
        connected = int(fields.get("connected_slaves", 0) or 0)
        if connected > 0:
            self._lost_replica[history] = None
            self._missing.pop(primary, None)
            if self.marks is not None and self.cluster is None:
                await self.marks.saw(history, connected)
            return 1
        if history in self._lost_replica:
            lost = self._lost_replica[history]
            if lost is None:
                self._lost_replica[history] = lost = now
            if now - lost < self.settings.remember_replica_seconds:
                self._missing[primary] = "a replica this process saw connected"
                return 1
        known = await ask_topology(history)
        if known > 0:
            self._missing[primary] = f"{known} replica(s) the deployment lists ({self._where_listed()})"
            return 1
        self._missing.pop(primary, None)
        return 0

    def _where_listed(self) -> str:
        if self.cluster is not None:
            return "CLUSTER NODES"
        if isinstance(self.client.connection_pool, SentinelConnectionPool):
            return "SENTINEL REPLICAS, or the replica mark in Redis"
        return "the replica mark in Redis"

    async def _known_replicas(self, history: str) -> int:
        """Standalone and Sentinel: replicas the sentinels could promote, or the mark a process left, whichever
        is more: a sentinel's "none" does not outweigh a replica some process saw connected within
        ``remember_replica_seconds`` (the sentinels may all have restarted during the cut-off, or be refused)."""
        promotable = await sentinel_replicas_promotable(self.client, self.settings.remember_replica_seconds)
        marked = await self.marks.expected(history) if self.marks is not None else 0
        return max(promotable or 0, marked)

    async def _ask_replication(self) -> Any:
        return await self.client.info("replication")


async def _cluster_replicas(node: ClusterNode, _history: str) -> int:
    try:
        nodes = await _node_command(node, "CLUSTER NODES")
    except ResponseError as err:  # an ACL user without +cluster|nodes: only what this process saw counts
        log.warning("CLUSTER NODES refused on %s (%s): auto cannot see replicas that are cut off", node.name, err)
        return 0
    return cluster_replicas_listed(nodes)


async def _node_pipeline(node: ClusterNode, *commands: tuple[Any, ...]) -> list[Any]:
    """Send ``commands`` on ONE connection of ``node``; each reply or the error it answered."""
    stack = [PipelineCommand(i, *command) for i, command in enumerate(commands)]
    await node.execute_pipeline(stack)
    return [command.result for command in stack]


async def _node_command(node: ClusterNode, *command: Any) -> Any:
    (reply,) = await _node_pipeline(node, command)
    if isinstance(reply, ResponseError | redis.ConnectionError | redis.TimeoutError):
        raise reply
    return reply
