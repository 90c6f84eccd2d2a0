"""Decisions wait for a replica (``WAIT``) on the real Sentinel deployment and the real Cluster.

A replica is paused with SIGSTOP (its connection stays up, it just stops acknowledging, as a replica stalled by
a slow disk or a long fork does) and resumed with SIGCONT. Each test would fail without the WAIT: the approval
would return while the replica is stopped, and a transition no replica had would be reported as done.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.errors import AlreadyApproved, NotDurable
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.metrics import REGISTRY
from bot.redis_connection import RedisHandle
from bot.redis_durable import DurabilitySettings
from tests.approvals.conftest import proposal
from tests.approvals.helpers import executions, marker_executor, running, wait_until
from tests.support import decision_keys
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers, _Node, _replicas_synced, _wait
from tests.support.topology_clients import open_on

POLICY = ApprovalPolicy()


@contextlib.contextmanager
def paused(node: _Node) -> Iterator[None]:
    """SIGSTOP ``node`` for the duration (always resumed, even when the test fails)."""
    assert node.process is not None and node.alive
    os.kill(node.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(node.process.pid, signal.SIGCONT)


class Deployment:
    """The bot's client on one of the two topologies, and where a key's primary and replica run."""

    def __init__(self, kind: str, servers: RedisClusterServers | RedisSentinelServers, handle: RedisHandle) -> None:
        self.kind = kind
        self.servers = servers
        self.handle = handle

    @property
    def client(self) -> Redis:
        return self.handle.client

    def store(self, timeout_ms: int = 300, **kwargs: object) -> CallStore:
        return CallStore(self.client, signer=decision_keys.signer(),
                         durability=DurabilitySettings(timeout_ms=timeout_ms), **kwargs)  # type: ignore[arg-type]

    def replica_of(self, key: str) -> _Node:
        """The replica of the primary that holds ``key`` now (roles may have moved in earlier failover tests)."""
        if isinstance(self.servers, RedisSentinelServers):
            primary = self.servers.current_primary()
            return next(n for n in self.servers.data_nodes if n is not primary)
        primary = self.servers.primary_of_key(key)
        with primary.client(self.servers.password) as client:
            role = client.execute_command("ROLE")
        port = int(role[2][0][1])
        return next(n for n in self.servers.nodes if n.port == port)

    def replica_pending(self, node: _Node, stream: str, group: str) -> int:
        """Entries of ``group`` not acknowledged on ``node`` (a replica: what a failover would bring back)."""
        with node.client(self.servers.password) as client:
            if self.kind == "cluster":
                client.execute_command("READONLY")
            return int(client.xpending(stream, group)["pending"])

    def read_replica(self, node: _Node, key: str, field: str) -> str | None:
        with node.client(self.servers.password) as client:
            if self.kind == "cluster":
                client.execute_command("READONLY")
            value = client.hget(key, field)
        return value.decode() if isinstance(value, bytes) else value


@pytest.fixture(params=["sentinel", "cluster"])
async def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Deployment]:
    servers: RedisClusterServers | RedisSentinelServers = request.getfixturevalue(f"redis_{request.param}")
    handle = await open_on(request.param, servers, tmp_path)
    try:
        yield Deployment(request.param, servers, handle)
    finally:
        await handle.close()


async def awaiting_call(store: CallStore, conversation: str = "slack:C1:1.0") -> str:
    (record,) = await store.propose(conversation, [proposal()], POLICY, "U_REQ")
    return record.id


async def test_approve_returns_only_once_the_replica_has_it(deployment: Deployment) -> None:
    store = deployment.store(timeout_ms=10_000)
    call_id = await awaiting_call(store)
    key = store.keys.call(call_id)
    replica = deployment.replica_of(key)
    with paused(replica):
        approving = asyncio.create_task(store.approve(call_id, "U_APP", [], POLICY))
        await asyncio.sleep(0.5)
        assert not approving.done(), "approve answered while the only replica was stopped"
    record = await asyncio.wait_for(approving, 10)
    assert record.state is CallState.approved
    # answered: so the replica has it, now, without waiting for replication to catch up
    assert deployment.read_replica(replica, key, "state") == "approved"


async def test_an_approval_no_replica_acknowledged_asks_for_a_repeat_that_confirms_it(deployment: Deployment) -> None:
    store = deployment.store(timeout_ms=200)
    call_id = await awaiting_call(store)
    key = store.keys.call(call_id)
    replica = deployment.replica_of(key)
    with paused(replica):
        with pytest.raises(NotDurable) as caught:
            await store.approve(call_id, "U_APP", [], POLICY)
        assert (caught.value.wanted, caught.value.acked) == (1, 0)
        assert (await store.get(call_id)).state is CallState.approved  # written on the primary all the same
    # the same approver again: not a double click refused, but the approval confirmed, and nothing new enqueued
    with pytest.raises(AlreadyApproved) as again:
        await store.approve(call_id, "U_APP", [], POLICY)
    assert again.value.current_state == "approved"
    assert deployment.read_replica(replica, key, "state") == "approved"
    assert await deployment.client.xlen(store.keys.run_stream(0)) == 1
    assert [a.user for a in (await store.get(call_id)).approvals] == ["U_APP"]


async def test_a_denial_returns_only_once_the_replica_has_it_and_says_when_none_did(deployment: Deployment) -> None:
    """Told "denied", the denier can rely on it: a failover right after cannot make the call approvable again."""
    store = deployment.store(timeout_ms=10_000)
    call_id = await awaiting_call(store)
    key = store.keys.call(call_id)
    replica = deployment.replica_of(key)
    with paused(replica):
        denying = asyncio.create_task(store.deny(call_id, "U_APP", [], POLICY))
        await asyncio.sleep(0.5)
        assert not denying.done(), "deny answered while the only replica was stopped"
    assert (await asyncio.wait_for(denying, 10)).state is CallState.denied
    assert deployment.read_replica(replica, key, "state") == "denied"

    short = deployment.store(timeout_ms=200)
    other = await awaiting_call(short)
    with paused(deployment.replica_of(short.keys.call(other))):
        with pytest.raises(NotDurable) as caught:
            await short.deny(other, "U_APP", [], POLICY)
        assert caught.value.what == "denial" and caught.value.record.state is CallState.denied
        cancelled = await asyncio.wait_for(short.cancel(await awaiting_call(short), "U_REQ"), 5)
        assert cancelled.state is CallState.denied  # a cancel waits as well, and is counted, not raised


async def test_a_claim_no_replica_acknowledged_is_given_back_unstarted_and_runs_once_later(
    deployment: Deployment, tmp_path: Path
) -> None:
    store = deployment.store(timeout_ms=200, heartbeat_ttl=5.0)
    call_id = await awaiting_call(store)
    await store.approve(call_id, "U_APP", [], POLICY)
    marker = tmp_path / "marker"
    worker = RunnerWorker(deployment.client, store, marker_executor(marker), runner_id="r1", block_seconds=0.1,
                          reclaim_after=0.5, recovery_interval=0.2, sweep=False)
    replica = deployment.replica_of(store.keys.call(call_id))
    with paused(replica):
        with pytest.raises(NotDurable):
            await store.claim(call_id, "r0")
        record = await store.get(call_id)
        assert record.state is CallState.approved and record.runner is None and not executions(marker)
        assert not await deployment.client.exists(store.keys.heartbeat(call_id))
        async with running(worker):
            await asyncio.sleep(0.8)  # the worker reads the entry and claims: no replica, so it runs nothing
        assert not executions(marker)
        assert (await store.get(call_id)).state is CallState.approved
        given_back = [e for e in await read_audit(deployment.client, call_id=call_id) if
                      (e.from_state, e.to_state) == ("running", "approved")]
        assert len(given_back) >= 2 and "given back before it started" in given_back[0].reason
    async with running(worker):  # resumed: the pending entry is taken over and the call runs, once
        await wait_until(lambda: _state_is(store, call_id, CallState.finished), 15)
    assert executions(marker) == [call_id]
    assert deployment.read_replica(replica, store.keys.call(call_id), "state") == "finished"


async def test_a_result_no_replica_acknowledged_is_stored_again_until_one_does(
    deployment: Deployment, tmp_path: Path
) -> None:
    store = deployment.store(timeout_ms=200, heartbeat_ttl=5.0)
    call_id = await awaiting_call(store)
    await store.approve(call_id, "U_APP", [], POLICY)
    replica = deployment.replica_of(store.keys.call(call_id))
    release = asyncio.Event()
    ran: list[str] = []

    async def executor(record):  # type: ignore[no-untyped-def]
        ran.append(record.id)
        await release.wait()
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    worker = RunnerWorker(deployment.client, store, executor, runner_id="r1", block_seconds=0.1, sweep=False)
    async with running(worker):
        await wait_until(lambda: _state_is(store, call_id, CallState.running), 10)
        with paused(replica):
            release.set()
            await wait_until(lambda: _state_is(store, call_id, CallState.finished), 10)  # on the primary
            await asyncio.sleep(0.6)
            # the worker keeps confirming; the run entry was acknowledged by the same script that stored the result,
            # so on the replica the acknowledgement arrives with the result, never before it
            assert len(worker._inflight) == 1
        await wait_until(lambda: _pending_is(deployment.client, store, 0), 10)
        await wait_until(lambda: _nothing_in_flight(worker), 10)
    assert ran == [call_id]
    assert deployment.read_replica(replica, store.keys.call(call_id), "state") == "finished"
    assert deployment.replica_pending(replica, store.keys.run_stream(0), "runners") == 0


async def _state_is(store: CallStore, call_id: str, state: CallState) -> bool:
    return (await store.get(call_id)).state is state


async def _nothing_in_flight(worker: RunnerWorker) -> bool:
    return not worker._inflight


async def _pending_is(client: Redis, store: CallStore, count: int) -> bool:
    return int((await client.xpending(store.keys.run_stream(0), "runners"))["pending"]) == count


async def test_cluster_approval_after_a_failover_the_client_has_not_seen_waits_on_the_new_primary(
    redis_cluster: RedisClusterServers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A manual failover (CLUSTER FAILOVER: the replica takes over, nothing lost) that the bot's client has not
    noticed: its slot table still names the old primary, now a replica. The durable write finds out (ROLE, or
    MOVED), refreshes the table and runs, and waits, on the new primary; the old one, its replica now, has it."""
    handle = await open_on("cluster", redis_cluster, tmp_path)
    deployment = Deployment("cluster", redis_cluster, handle)
    store = deployment.store(timeout_ms=5000)
    try:
        (record,) = await store.propose("slack:C1:1.0", [proposal()], POLICY, "U_REQ")
        key = store.keys.call(record.id)
        old = redis_cluster.primary_of_key(key)
        new = deployment.replica_of(key)
        _manual_failover(redis_cluster, new, key)
        try:
            with caplog.at_level("INFO", logger="bot.redis_durable"):
                approved = await store.approve(record.id, "U_APP", [], POLICY, known=record)
            assert approved.state is CallState.approved
            assert "refreshing the slot table" in caplog.text
            assert deployment.read_replica(old, key, "state") == "approved"
        finally:
            _manual_failover(redis_cluster, old, key)  # as it was, for the tests after this one
    finally:
        await handle.close()


def _manual_failover(servers: RedisClusterServers, replica: _Node, key: str) -> None:
    """Make ``replica`` the primary of ``key``'s slot, nothing lost. A manual failover the old primary does not
    complete within its timeout (5 s) is dropped silently (e.g. right after a replica was stopped), so it is asked
    again, the last times without the old primary's agreement (TAKEOVER).

    Done means the replica says it is a primary (ROLE) and the cluster's slot table names it: on a loaded machine
    gossip takes seconds to tell the others, and a promotion can even be undone by a concurrent vote, so each
    attempt waits for both, and a node that is a primary already is not asked for a failover (an error)."""
    servers.wait_healthy(60)
    with servers.primary_of_key(key).client(servers.password) as primary:
        _wait(lambda: _replicas_synced(primary), 30, "the replica in sync before the failover")
    attempts = 5
    for attempt in range(attempts):
        if _serves(servers, replica, key):
            break
        with replica.client(servers.password) as client:
            if not _is_primary(client):
                client.execute_command("CLUSTER FAILOVER", *(["TAKEOVER"] if attempt >= attempts - 2 else []))
        try:
            _wait(lambda: _serves(servers, replica, key), 6, "the replica to take over, and the cluster to agree")
            break
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    with replica.client(servers.password) as client:
        _wait(lambda: _replicas_synced(client), 30, "the old primary to follow the new one")
    servers.wait_healthy(60)


def _serves(servers: RedisClusterServers, node: _Node, key: str) -> bool:
    return _took_over(servers, node) and servers.primary_of_key(key).port == node.port


def _took_over(servers: RedisClusterServers, node: _Node) -> bool:
    with node.client(servers.password) as client:
        return _is_primary(client)


def _is_primary(client: redis.Redis) -> bool:
    role = client.execute_command("ROLE")
    return bool(role) and (role[0].decode() if isinstance(role[0], bytes) else str(role[0])) == "master"


async def test_a_claim_held_up_by_a_briefly_stalled_replica_is_claimed_again_soon(
    deployment: Deployment, tmp_path: Path
) -> None:
    store = deployment.store(timeout_ms=200, heartbeat_ttl=5.0)
    call_id = await awaiting_call(store)
    await store.approve(call_id, "U_APP", [], POLICY)
    marker = tmp_path / "marker"
    # no take-over of pending entries within the test: only the worker's own claiming again can run it
    worker = RunnerWorker(deployment.client, store, marker_executor(marker), runner_id="r1", block_seconds=0.1,
                          reclaim_after=600, sweep=False)
    async with running(worker):
        with paused(deployment.replica_of(store.keys.call(call_id))):
            await asyncio.sleep(0.6)
            assert not executions(marker)
        await wait_until(lambda: _state_is(store, call_id, CallState.finished), 10)
    assert executions(marker) == [call_id]
    audit = await read_audit(deployment.client, call_id=call_id)
    assert [e.to_state for e in audit].count("running") >= 2  # claimed, given back, claimed again


@contextlib.contextmanager
def link_cut(deployment: Deployment, key: str) -> Iterator[_Node]:
    """Cut the replication link of ``key``'s replica (a wrong ``masterauth``, as in a partition: the sentinels and
    the cluster bus still see the replica, which could be promoted); restored and resynced afterwards."""
    password = deployment.servers.password
    replica = deployment.replica_of(key)
    primary = (deployment.servers.current_primary() if isinstance(deployment.servers, RedisSentinelServers)
               else deployment.servers.primary_of_key(key))
    with replica.client(password) as client:
        client.config_set("masterauth", "not-the-password")
        client.execute_command("CLIENT KILL TYPE master")
    with primary.client(password) as client:
        _wait(lambda: int(client.info("replication")["connected_slaves"]) == 0, 20, "the primary to lose its replica")
    try:
        yield replica
    finally:
        with replica.client(password) as client:
            client.config_set("masterauth", password or "")
        with primary.client(password) as client:
            _wait(lambda: _replicas_synced(client), 30, "the replica back in sync")


async def test_a_process_started_while_the_replica_is_cut_off_still_waits_for_it(
    deployment: Deployment, caplog: pytest.LogCaptureFixture
) -> None:
    """``auto`` learns the replica from the deployment (SENTINEL REPLICAS, CLUSTER NODES), not only from the
    primary's connected replicas: a process that never saw the replica connected must not acknowledge a click or
    spawn on a claim that a failover to that replica would lose (the claim lost, another runner would run the call
    again). The shortfall goes through the usual path: NotDurable, the metric, an error naming the replica."""
    seed = deployment.store()
    call_id = await awaiting_call(seed)
    key = seed.keys.call(call_id)
    with link_cut(deployment, key):
        late = deployment.store(timeout_ms=200)  # a process started during the cut: it has seen no replica
        before = {t: unconfirmed(t) for t in ("approval", "claim")}
        with pytest.raises(NotDurable) as caught:
            await late.approve(call_id, "U_APP", [], POLICY)
        assert (caught.value.wanted, caught.value.acked) == (1, 0)
        with pytest.raises(NotDurable):
            await late.claim(call_id, "r1")
        assert (await late.get(call_id)).state is CallState.approved  # given back before anything was spawned
        assert unconfirmed("approval") == before["approval"] + 1 and unconfirmed("claim") == before["claim"] + 1
        said = [r.getMessage() for r in caplog.records if "redis.durability.replicas auto waits for" in r.getMessage()]
        assert said and "the deployment lists" in said[0], caplog.text
    with pytest.raises(AlreadyApproved):  # the replica is back: the repeat is confirmed, nothing stalls
        await late.approve(call_id, "U_APP", [], POLICY)


def unconfirmed(transition: str) -> float:
    value = REGISTRY.get_sample_value("fisk_chatops_redis_unconfirmed_writes_total", {"transition": transition})
    return value or 0.0


async def test_a_sentinel_that_never_heard_of_the_cut_off_replica_does_not_outvote_what_else_knows_it(
    redis_sentinel: RedisSentinelServers, tmp_path: Path
) -> None:
    """Sentinels learn replicas from the primary's ``INFO``: one restarted (here: reset) while the replica is cut
    off lists none, though the others still know the replica and would promote it. Neither its "none" nor that of
    every sentinel outweighs the replica-seen mark a process left in Redis: a process started during the cut-off
    still waits for the replica (before: it asked the first sentinel that answered, and it said none)."""
    handle = await open_on("sentinel", redis_sentinel, tmp_path)
    deployment = Deployment("sentinel", redis_sentinel, handle)
    try:
        seed = deployment.store()
        call_id = await awaiting_call(seed)
        await seed.approve(call_id, "U_APP", [], POLICY)  # confirmed: the replica is seen, the mark written
        other = await awaiting_call(seed)
        (mark,) = await deployment.client.keys("*:durability:replica-seen:*")
        kept = await deployment.client.get(mark)
        asked_first = handle.client.connection_pool.sentinel_manager.sentinels[0]  # type: ignore[attr-defined]
        first_port = int(asked_first.connection_pool.connection_kwargs["port"])
        sentinels = sorted(redis_sentinel.sentinels, key=lambda node: node.port != first_port)
        with link_cut(deployment, seed.keys.call(other)):
            _reset(redis_sentinel, sentinels[:1])
            await deployment.client.delete(mark)  # only the other sentinels know the replica now
            with pytest.raises(NotDurable):
                await deployment.store(timeout_ms=200).approve(other, "U_APP", [], POLICY)
            _reset(redis_sentinel, sentinels[1:])  # no sentinel knows it: the mark does
            await deployment.client.set(mark, kept, ex=60)
            with pytest.raises(NotDurable):
                await deployment.store(timeout_ms=200).deny(await awaiting_call(seed), "U_APP", [], POLICY)
    finally:
        await handle.close()
        _wait(redis_sentinel._sentinels_agree, 30, "the reset sentinels to know the replica again")


def _reset(servers: RedisSentinelServers, sentinels: list[_Node]) -> None:
    """``SENTINEL RESET``: what a restarted sentinel knows, the primary and what its ``INFO`` lists (no replica)."""
    for node in sentinels:
        with redis.Redis(host="127.0.0.1", port=node.port, password=servers.sentinel_password) as sentinel:
            sentinel.execute_command("SENTINEL RESET", servers.SERVICE)
            _wait(lambda s=sentinel: not s.execute_command("SENTINEL REPLICAS", servers.SERVICE), 10,  # type: ignore[misc]
                  "the reset sentinel to list no replica")
