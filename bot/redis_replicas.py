"""Which replicas *should* exist for a primary, even when none is connected to it right now.

``redis.durability.replicas: auto`` must not conclude "no replica, wait for none" from ``INFO replication`` alone:
a process that starts while its primary's replica is cut off would see ``connected_slaves:0``, acknowledge writes
no replica has, and a failover to that replica (a double fault) would lose them: a claim lost that way lets a
second runner run the call again. So auto also asks what the deployment itself knows:

* Sentinel: ``SENTINEL REPLICAS <service>`` lists every replica the sentinels monitor. One they can reach (not
  ``s_down``/``o_down``/disconnected), with a ``replica-priority`` other than 0 and a replication link down for
  less than ``remember_replica_seconds``, may be promoted (Sentinel itself refuses unreachable replicas and
  priority 0, and those whose link was down for more than 10 x ``down-after-milliseconds``). Every sentinel is
  asked, and the most any one lists counts: a sentinel restarted during the cut-off lists none;
* Cluster: ``CLUSTER NODES`` on the primary lists its replicas; one not flagged ``fail``/``noaddr`` can start a
  failover of that primary (``fail?`` is only the primary's view: cut off from it alone, the replica can still be
  elected by the others);
* standalone and Sentinel alike: a mark kept in Redis itself, one key per replication history that had a
  connected replica, living ``remember_replica_seconds`` (a quarter more at most) after the last process saw one
  (``SET ... EX``: Redis's clock, shared by every process). Under Sentinel it counts too: the sentinels may all
  have been restarted during the cut-off, or refuse the question.

Every answer is "how many replicas to expect", never an error: a question Redis refuses (ACL) counts as "none
known" and is logged once (an error naming what to allow); a question that fails otherwise (a sentinel down)
counts as no answer from it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis.asyncio
from redis.asyncio.sentinel import SentinelConnectionPool

__all__ = ["ReplicaMarks", "cluster_replicas_listed", "sentinel_replicas_promotable"]

log = logging.getLogger(__name__)

# "fail?" is not among them: the answering primary's own view (no pong from the replica), which the majority that
# would promote the replica need not share
_CLUSTER_DOWN_FLAGS = frozenset({"fail", "noaddr", "handshake"})


async def sentinel_replicas_promotable(client: redis.asyncio.Redis, within_seconds: float) -> int | None:
    """Replicas the sentinels of ``client``'s primary could promote; None when ``client`` is not Sentinel-managed
    or no sentinel answered (the caller falls back to what else it knows).

    Every sentinel is asked and the largest answer counts: one sentinel's list is its own view, and a sentinel
    started or reset while the replica was cut off has never heard of it (sentinels learn replicas from the
    primary's ``INFO``, which no longer lists it), while the others still know it and would promote it."""
    pool = client.connection_pool
    if not isinstance(pool, SentinelConnectionPool):
        return None
    # together: one sentinel that does not answer costs its timeout once, not once per sentinel after it
    answers = await asyncio.gather(*(_promotable_per(sentinel, pool.service_name, within_seconds)
                                     for sentinel in pool.sentinel_manager.sentinels))
    known = [answer for answer in answers if answer is not None]
    return max(known) if known else None


async def _promotable_per(sentinel: redis.asyncio.Redis, service: str, within_seconds: float) -> int | None:
    try:
        replicas = await sentinel.sentinel_slaves(service)
    except redis.ResponseError as err:  # an ACL without +sentinel|replicas: say so, it hides replicas
        _warn_refused(err)
        return None
    except (redis.RedisError, OSError) as err:
        log.debug("SENTINEL REPLICAS on one sentinel failed: %s", type(err).__name__)
        return None
    return sum(1 for replica in replicas if _promotable(replica, within_seconds))


_refusal_warned = False


def _warn_refused(err: Exception) -> None:
    global _refusal_warned
    if not _refusal_warned:
        log.error("redis.durability.replicas auto: a sentinel refused SENTINEL REPLICAS (%s): it cannot tell of a "
                  "replica that is cut off; allow the sentinel user +sentinel|replicas, or set "
                  "redis.durability.replicas to a number", err)
        _refusal_warned = True


def _promotable(replica: dict[str, Any], within_seconds: float) -> bool:
    if replica.get("is_sdown") or replica.get("is_odown") or replica.get("is_disconnected"):
        return False
    if int(replica.get("slave-priority", 100) or 0) == 0:  # replica-priority 0: never promoted
        return False
    link_down_ms = int(replica.get("master-link-down-time", 0) or 0)
    return link_down_ms < within_seconds * 1000


def cluster_replicas_listed(nodes: Any) -> int:
    """Replicas of the node that answered ``CLUSTER NODES`` (its ``myself`` line) that the cluster does not
    consider failed (``fail``, agreed by the majority; ``fail?`` is the answering primary's view alone): each can
    start a failover of that primary. ``nodes``: the raw text, or redis-py's parsed
    form (address -> fields)."""
    rows = list(_node_rows(nodes))
    myself = next((node_id for node_id, flags, _master in rows if "myself" in flags), None)
    if myself is None:
        return 0
    return sum(1 for _id, flags, master in rows
               if master == myself and "slave" in flags and not flags & _CLUSTER_DOWN_FLAGS)


def _node_rows(nodes: Any) -> Iterator[tuple[str, frozenset[str], str]]:
    """(node id, flags, id of its primary or "-") per node."""
    if isinstance(nodes, dict):
        for fields in nodes.values():
            yield str(fields["node_id"]), frozenset(str(fields["flags"]).split(",")), str(fields["master_id"])
        return
    text = nodes.decode() if isinstance(nodes, bytes) else str(nodes)
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            yield fields[0], frozenset(fields[2].split(",")), fields[3]


class ReplicaMarks:
    """The plain primary's memory of having had a replica, kept in Redis so every process shares it.

    While the replica stays connected a process rewrites the mark once every quarter of
    ``remember_replica_seconds`` (not at every ``INFO`` refresh: that would add a round trip to a write every few
    seconds), with that quarter added to its TTL: the mark outlives the last sighting by ``remember_replica_seconds``
    at least, by a quarter more at most."""

    def __init__(self, client: redis.asyncio.Redis, prefix: str, remember_seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.prefix = prefix
        self.remember_seconds = max(1, math.ceil(remember_seconds))
        # the TTL: a quarter more than remembered (whole seconds), the quarter being how long a mark is not rewritten
        self.ttl_seconds = max(self.remember_seconds, math.ceil(remember_seconds * 1.25))
        self.rewrite_after = self.ttl_seconds - self.remember_seconds  # 0 (a remember of a few seconds): each time
        self._clock = clock
        self._written: dict[str, tuple[float, int]] = {}  # history -> (when this process wrote it, replicas)
        self._warned = False

    def key(self, history: str) -> str:
        return f"{self.prefix}:replica-seen:{history}"

    async def saw(self, history: str, replicas: int) -> None:
        """The primary of replication history ``history`` has ``replicas`` connected now."""
        now = self._clock()
        written = self._written.get(history)
        if written is not None and written[1] == replicas and now - written[0] < self.rewrite_after:
            return
        try:
            await self.client.set(self.key(history), replicas, ex=self.ttl_seconds)
        except redis.ResponseError as err:  # ACL without +set on the key, a read-only node: the caller still waits
            self._warn(err)
            return
        self._written[history] = (now, replicas)

    async def expected(self, history: str) -> int:
        """Replicas some process saw connected to ``history``'s primary within ``remember_replica_seconds``."""
        try:
            value = await self.client.get(self.key(history))
        except redis.ResponseError as err:
            self._warn(err)
            return 0
        return int(value) if value is not None else 0

    def _warn(self, err: Exception) -> None:
        if not self._warned:
            log.error("redis.durability.replicas auto cannot keep its replica mark in Redis (%s): a process started "
                      "while the replica is cut off will not know it exists; allow the key %s:* or set "
                      "redis.durability.replicas to a number", err, self.prefix)
            self._warned = True
