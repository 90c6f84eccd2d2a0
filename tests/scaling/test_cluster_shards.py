"""Several key shards on a real Redis Cluster: conversations spread over primaries, one runner reads every shard,
a waiter and a consumer group see every shard's completions, the audit trail of every shard is read back; and a
Sentinel-managed primary killed with SIGKILL is replaced without the client being rebuilt."""

from __future__ import annotations

import time
from pathlib import Path

from bot.approvals.audit import read_audit
from bot.approvals.events import CompletionConsumer, wait_for_terminal
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.redis_factory import open_redis
from tests.approvals.conftest import proposal
from tests.approvals.helpers import executions, marker_executor, running
from tests.support import decision_keys
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers
from tests.support.topology_clients import open_on, sentinel_topology

SHARDS = 3


async def test_every_shard_is_run_waited_for_consumed_and_audited(redis_cluster: RedisClusterServers,
                                                                  tmp_path: Path) -> None:
    handle = await open_on("cluster", redis_cluster, tmp_path)
    redis = handle.client
    store = CallStore(redis, shards=SHARDS, signer=decision_keys.signer())
    policy = ApprovalPolicy()
    consumer = CompletionConsumer(redis, "slack", "s1", shards=SHARDS)
    await consumer.ensure_group()
    try:
        ids = []
        for n in range(12):
            (record,) = await store.propose(f"slack:C1:{n}.0", [proposal()], policy, "U")
            await store.approve(record.id, "U_APP", [], policy)
            ids.append(record.id)
        shards = {store.keys.shard_of_call(i) for i in ids}
        assert shards == {0, 1, 2}
        owners = {redis_cluster.primary_of_key(store.keys.run_stream(s)).port for s in shards}
        assert len(owners) >= 2  # the shards' hash tags really live on different primaries
        marker = tmp_path / "marker"
        worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="r1", block_seconds=0.1)
        async with running(worker):
            records = await wait_for_terminal(store, ids, timeout=15)
        assert all(r.state.value == "finished" for r in records)
        assert sorted(executions(marker)) == sorted(ids)  # each ran once
        seen: list[str] = []
        while len(seen) < len(ids):
            events = await consumer.read(block=0.2)
            assert events, f"completions missing: {set(ids) - set(seen)}"
            seen += [e.call_id for e in events]
            await consumer.ack(*events)
        assert sorted(seen) == sorted(ids)
        audit = await read_audit(redis, limit=1000, shards=SHARDS)
        assert {e.call_id for e in audit if e.to_state == "finished"} == set(ids)
    finally:
        await handle.close()


async def test_sentinel_failover_reaches_the_new_primary(tmp_path: Path) -> None:
    """A command sent as the primary dies is answered by the promoted replica within its own retries (about 5 s of
    backoff): each reconnect asks the sentinels again (``RediscoveringConnection``). redis-py alone reconnected to
    the dead address on every retry, so such a command failed even when the promotion took 2 s."""
    servers = RedisSentinelServers(tmp_path / "sentinel", password="pw-a", sentinel_password="pw-s")
    servers.start()
    try:
        handle = await open_redis(None, sentinel_topology(servers), state_dir=tmp_path)
        try:
            client = handle.client
            await client.set("before", "1")
            assert await client.execute_command("WAIT", 1, 2000) == 1  # on the replica before the kill
            old = servers.current_primary()
            old.kill()
            started = time.monotonic()
            await client.set("after", "1")  # ONE call, in flight through the failover
            written = time.monotonic() - started
            assert servers.current_primary() is not old
            assert await client.get("before") == b"1" and await client.get("after") == b"1"
            print(f"sentinel failover: the write sent at the kill was stored after {written:.1f} s")
        finally:
            await handle.close()
    finally:
        servers.stop()
