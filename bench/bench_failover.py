"""How long the bot cannot decide anything after ``kill -9`` of its Redis primary: ``python bench/bench_failover.py``.

Real parts: for each round a fresh deployment from the bundled ``redis-server`` (Sentinel: 1 primary + 1 replica +
3 sentinels, ``down-after-milliseconds 1000``; Cluster: 3 primaries + 3 replicas, ``cluster-node-timeout 1000``,
as in the tests), the bot's own client (``open_redis``: ``Sentinel.master_for`` / ``RedisCluster``) and
``CallStore``. Each round proposes a call, kills the primary holding it (SIGKILL: no goodbye to the replicas or
the sentinels), and then retries the Approve transition as a click handler would until it succeeds. Printed per
topology, median and worst over the rounds:

* ``first transition``: from the kill to the first approve stored (the bot is unavailable for decisions);
* ``new primary named``: from the kill to the deployment naming a new primary (the sentinels'
  GET-MASTER-ADDR-BY-NAME; on Cluster, CLUSTER SLOTS of a surviving node for the call's slot); the rest is the
  client finding it (redis-py retries a failed command with exponential backoff, up to 2 s between tries).

On Cluster only the killed primary's slots (the shards it serves) wait; the others keep working.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redis.exceptions import RedisClusterException, RedisError  # noqa: E402

from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from bot.redis_factory import open_redis  # noqa: E402
from tests.support import decision_keys  # noqa: E402
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers  # noqa: E402
from tests.support.topology_clients import cluster_topology, sentinel_topology  # noqa: E402

APPROVER = "UAPPROVER"
POLICY = ApprovalPolicy(approvers={"users": [APPROVER]})
OUTAGE = (RedisError, RedisClusterException, OSError, TimeoutError)


async def one_round(kind: str, directory: Path) -> tuple[float, float]:
    """(kill -> first approve stored, kill -> new primary named) in seconds."""
    servers = (RedisSentinelServers(directory, password="pw") if kind == "sentinel"
               else RedisClusterServers(directory, password="pw"))
    servers.start()
    try:
        if isinstance(servers, RedisSentinelServers):
            handle = await open_redis(None, sentinel_topology(servers), state_dir=directory)
        else:
            handle = await open_redis(servers.url.replace(":pw@", ""), cluster_topology(servers), state_dir=directory)
        try:
            store = CallStore(handle.client, signer=decision_keys.signer())
            proposal = Proposal(tool="t", app="a", arguments="{}", argv=["/bin/true"], binary_digest="d")
            (call,) = await store.propose("slack:C1:1.0", [proposal], POLICY, "UREQ")
            await handle.client.execute_command("WAIT", 1, 2000)  # the proposal is on the replica
            victim = (servers.current_primary() if isinstance(servers, RedisSentinelServers)
                      else servers.primary_of_key(store.keys.call(call.id)))
            promoted = asyncio.create_task(asyncio.to_thread(_promoted, servers, victim, store.keys.call(call.id)))
            killed = time.monotonic()
            victim.kill()
            while True:
                try:
                    await store.approve(call.id, APPROVER, [], POLICY)
                    break
                except OUTAGE:
                    if time.monotonic() - killed > 60:
                        raise
                    await asyncio.sleep(0.01)
            decided = time.monotonic() - killed
            return decided, (await promoted) - killed
        finally:
            await handle.close()
    finally:
        servers.stop()


def _promoted(servers: RedisSentinelServers | RedisClusterServers, victim: object, key: str) -> float:
    """The monotonic time the deployment named a new primary (for ``key``'s slot, on Cluster)."""
    while True:
        try:
            if isinstance(servers, RedisSentinelServers):
                if servers.current_primary() is not victim:
                    return time.monotonic()
            elif servers.primary_of_key(key) is not victim:
                return time.monotonic()
        except (RuntimeError, StopIteration, *OUTAGE):
            pass
        time.sleep(0.01)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="failovers per topology (default 3)")
    parser.add_argument("--topology", choices=["sentinel", "cluster", "both"], default="both")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    kinds = ["sentinel", "cluster"] if args.topology == "both" else [args.topology]
    with tempfile.TemporaryDirectory(prefix="bench-failover-") as tmp:
        for kind in kinds:
            samples = [await one_round(kind, Path(tmp) / f"{kind}{n}") for n in range(args.rounds)]
            decided = [s[0] for s in samples]
            promoted = [s[1] for s in samples]
            print(f"{kind:8} kill -9 -> first transition: median {statistics.median(decided):.2f} s, "
                  f"worst {max(decided):.2f} s; -> new primary named: median {statistics.median(promoted):.2f} s "
                  f"({args.rounds} rounds: {', '.join(f'{d:.2f}' for d in decided)})")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
