"""What waiting for a replica (``WAIT``) costs each decision: ``python bench/bench_durability.py``.

Real parts: a primary and its replica started from the bundled ``redis-server`` on loopback (as in the tests:
``appendonly yes``, ``appendfsync everysec``), the bot's own client (``open_redis``) and ``CallStore``. Two stores
share that client: one with ``redis.durability.replicas: 0`` (the transition answers as soon as the primary ran
the script, as before), one with ``auto`` (it has a replica, so every approve, claim and finish also waits for
the replica's acknowledgement). Rounds alternate which store goes first, so both see the same machine; each
round times, per store, one Approve click's transition, the runner's claim and its finish on a fresh call
(the proposal is not timed). Printed: median and p99 per transition, with and without the wait, and the median
difference, with the load average before and after.

``--cluster`` does the same on a Redis Cluster of 3 primaries + 3 replicas (as in the tests), where the script and
its ``WAIT`` go to the primary owning the call's slot on one of that node's connections.

On a loopback replica the wait is one more round trip to the replica and back; across hosts or zones it is
the network round trip between primary and replica, and with a lagging replica up to ``timeout_ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support import pct  # noqa: E402
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from bot.redis_connection import RedisHandle  # noqa: E402
from bot.redis_durable import DurabilitySettings  # noqa: E402
from bot.redis_factory import open_redis  # noqa: E402
from tests.support import decision_keys  # noqa: E402
from tests.support.redis_topologies import RedisClusterServers, _Node, _replicas_synced, _wait  # noqa: E402
from tests.support.topology_clients import cluster_topology  # noqa: E402

APPROVER = "UAPPROVER"
POLICY = ApprovalPolicy(approvers={"users": [APPROVER]})
STEPS = ("approve", "claim", "finish")
RESULT = {"status": "finished", "exit_code": 0, "output": "ok"}


async def one_round(store: CallStore, n: int, times: dict[str, list[float]]) -> None:
    proposal = Proposal(tool="t", app="a", arguments="{}", argv=["/bin/true"], binary_digest="d")
    (call,) = await store.propose(f"slack:C1:{n}.0", [proposal], POLICY, "UREQ")
    started = time.perf_counter()
    await store.approve(call.id, APPROVER, [], POLICY)
    approved = time.perf_counter()
    claimed_record = await store.claim(call.id, "r1")
    claimed = time.perf_counter()
    assert claimed_record is not None
    await store.finish(call.id, "r1", RESULT)
    finished = time.perf_counter()
    times["approve"].append(approved - started)
    times["claim"].append(claimed - approved)
    times["finish"].append(finished - claimed)


async def bench(rounds: int, directory: Path, cluster: bool) -> None:
    if cluster:
        servers = RedisClusterServers(directory / "cluster", password="pw")
        servers.start()
        try:
            handle = await open_redis(servers.url.replace(":pw@", ""), cluster_topology(servers), state_dir=directory)
            await measure(handle, rounds)
        finally:
            servers.stop()
        return
    primary = _Node(directory / "primary", [])
    replica = _Node(directory / "replica", [])
    primary.start()
    try:
        primary.wait_up()
        replica.extra += ["--replicaof", "127.0.0.1", str(primary.port)]
        replica.start()
        replica.wait_up()
        with primary.client() as client:
            _wait(lambda: _replicas_synced(client), 20, "the replica in sync")
        await measure(await open_redis(f"redis://127.0.0.1:{primary.port}", state_dir=directory), rounds)
    finally:
        replica.stop()
        primary.stop()


async def measure(handle: RedisHandle, rounds: int) -> None:
    """Time both stores on ``handle`` (closed when done) and print the table."""
    try:
        stores = {
            "no wait (replicas: 0)": CallStore(handle.client, signer=decision_keys.signer(),
                                               durability=DurabilitySettings(replicas=0)),
            "WAIT 1 (auto)": CallStore(handle.client, signer=decision_keys.signer(),
                                       durability=DurabilitySettings()),
        }
        times = {name: {step: [] for step in STEPS} for name in stores}
        names = list(stores)
        for n in range(20):  # warm up: scripts loaded, pool connections open, replica count asked
            for name in names:
                await one_round(stores[name], -n - 1, {step: [] for step in STEPS})
        for n in range(rounds):
            for name in names if n % 2 == 0 else reversed(names):
                await one_round(stores[name], n * 2 + names.index(name), times[name])
    finally:
        await handle.close()
    print(f"{'transition':<10} {'store':<22} {'median ms':>10} {'p99 ms':>8}")
    for step in STEPS:
        for name in names:
            values = times[name][step]
            print(f"{step:<10} {name:<22} {pct(values, 50) * 1000:>10.3f} {pct(values, 99) * 1000:>8.3f}")
        extra = pct(times[names[1]][step], 50) - pct(times[names[0]][step], 50)
        print(f"{step:<10} {'WAIT adds (median)':<22} {extra * 1000:>10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500, help="timed rounds per store (default 500)")
    parser.add_argument("--cluster", action="store_true", help="on a Redis Cluster of 3 primaries + 3 replicas")
    args = parser.parse_args()
    where = "Redis Cluster 3 + 3" if args.cluster else "primary + replica"
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.rounds} rounds per store, "
          f"interleaved; {where} on loopback")
    with tempfile.TemporaryDirectory(prefix="bench-durability-") as tmp:
        asyncio.run(bench(args.rounds, Path(tmp), args.cluster))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
