"""``redis.durability``: how many replicas a transition waits for, on real servers.

* auto on a server with no replica (standalone, the embedded server): no WAIT is ever sent (no cost);
* a number of replicas the server does not have: every approval is reported unconfirmed, and its repeat too;
* auto with the replica killed: approvals stay unconfirmed while that replica could still be promoted
  (``remember_replica_seconds``), then the repeat is confirmed with nothing to wait for; ``replicas: 1`` keeps
  refusing to call it durable until a replica is back;
* the setting as the configuration file and the environment give it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis as sync_redis
from redis.asyncio import Redis

from bot.approvals.errors import AlreadyApproved, NotDurable
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.config import ConfigError, durability_settings, load_config
from bot.metrics import REGISTRY
from bot.redis_durable import DurabilitySettings
from tests.approvals.conftest import proposal
from tests.support import decision_keys
from tests.support.redis_topologies import _Node, _replicas_synced, _wait

POLICY = ApprovalPolicy()


class Pair:
    """A primary and its replica (no sentinels: nothing promotes anything here)."""

    def __init__(self, directory: Path) -> None:
        self.primary = _Node(directory / "primary", [])
        self.replica = _Node(directory / "replica", [])

    def start(self) -> None:
        self.primary.start()
        self.primary.wait_up()
        self.replica.extra += ["--replicaof", "127.0.0.1", str(self.primary.port)]
        self.start_replica()

    def start_replica(self) -> None:
        self.replica.start()
        self.replica.wait_up()
        with self.primary.client() as client:
            _wait(lambda: _replicas_synced(client), 20, "the replica in sync")

    def stop(self) -> None:
        self.replica.stop()
        self.primary.stop()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    servers = Pair(tmp_path / "pair")
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


def store_on(client: Redis, **settings: object) -> CallStore:
    return CallStore(client, signer=decision_keys.signer(), durability=DurabilitySettings(**settings))  # type: ignore[arg-type]


async def awaiting(store: CallStore, n: int = 0) -> str:
    (record,) = await store.propose(f"slack:C1:{n}.0", [proposal()], POLICY, "U_REQ")
    return record.id


def unconfirmed(transition: str) -> float:
    value = REGISTRY.get_sample_value("fisk_chatops_redis_unconfirmed_writes_total", {"transition": transition})
    return value or 0.0


async def wait_calls(client: Redis) -> int:
    stats = await client.info("commandstats")
    return int(stats.get("cmdstat_wait", {}).get("calls", 0))


async def test_auto_without_a_replica_sends_no_wait(redis: Redis) -> None:
    store = store_on(redis)
    before = await wait_calls(redis)
    for n in range(3):
        call_id = await awaiting(store, n)
        assert (await store.approve(call_id, "U_APP", [], POLICY)).state is CallState.approved
        assert await store.claim(call_id, "r1") is not None
        await store.finish(call_id, "r1", {"status": "finished", "exit_code": 0, "output": ""})
    assert await wait_calls(redis) == before


async def test_more_replicas_than_the_server_has_is_never_durable(
    redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    store = store_on(redis, replicas=1, timeout_ms=50)
    call_id = await awaiting(store)
    before = {t: unconfirmed(t) for t in ("approval", "claim")}
    for _ in range(2):  # the repeat is recognised (no double-click error), and still not confirmed
        with pytest.raises(NotDurable) as caught:
            await store.approve(call_id, "U_APP", [], POLICY)
        assert (caught.value.wanted, caught.value.acked, caught.value.timeout_ms) == (1, 0, 50)
    assert await redis.xlen(store.keys.run_stream(0)) == 1  # approved once, on the primary
    with pytest.raises(NotDurable):
        await store.claim(call_id, "r1")
    assert (await store.get(call_id)).state is CallState.approved  # the claim was given back
    assert unconfirmed("approval") == before["approval"] + 2  # counted for the operators' alerts
    assert unconfirmed("claim") == before["claim"] + 1
    # and the operator is told why nothing runs (once a minute, not at every click)
    said = [r.getMessage() for r in caplog.records if "redis.durability.replicas asks for 1" in r.getMessage()]
    assert len(said) == 1 and "approved calls do not run" in said[0] and "auto" in said[0]


async def test_replicas_zero_never_waits(redis: Redis) -> None:
    store = store_on(redis, replicas=0)
    before = await wait_calls(redis)
    call_id = await awaiting(store)
    await store.approve(call_id, "U_APP", [], POLICY)
    assert await wait_calls(redis) == before


async def test_auto_waits_for_a_lost_replica_for_a_while_and_a_fixed_number_until_it_is_back(pair: Pair) -> None:
    client = Redis(host="127.0.0.1", port=pair.primary.port)
    auto = store_on(client, timeout_ms=200, refresh_seconds=300,  # the count is kept until a wait falls short
                    remember_replica_seconds=1.5)
    strict = store_on(client, replicas=1, timeout_ms=200)
    try:
        first = await awaiting(auto, 1)
        await auto.approve(first, "U_APP", [], POLICY)  # the primary has a replica: confirmed by it
        assert await wait_calls(client) >= 1  # (two when the script had to be loaded first)
        pair.replica.kill()
        # (the primary sees the link close at once, or when a child the replica had forked for an AOF rewrite,
        # which holds the socket too, exits)
        with sync_redis.Redis(port=pair.primary.port) as primary:
            _wait(lambda: primary.info("replication")["connected_slaves"] == 0, 20, "the primary to drop the replica")
        second, third = await awaiting(auto, 2), await awaiting(auto, 3)
        with pytest.raises(NotDurable):  # the click is told to confirm
            await auto.approve(second, "U_APP", [], POLICY)
        with pytest.raises(NotDurable):  # asked again: no replica connected, but it could yet be promoted
            await auto.approve(second, "U_APP", [], POLICY)
        await asyncio.sleep(1.6)  # remember_replica_seconds from when it was first seen gone
        with pytest.raises(AlreadyApproved) as confirmed:  # gone long enough: nothing to wait for
            await auto.approve(second, "U_APP", [], POLICY)
        assert confirmed.value.current_state == "approved"
        with pytest.raises(NotDurable):  # replicas: 1 means one replica, or not durable
            await strict.approve(third, "U_APP", [], POLICY)
        pair.start_replica()
        patient = store_on(client, replicas=1, timeout_ms=5000)  # a loaded machine's replica may ack late
        with pytest.raises(AlreadyApproved):  # back: the repeat is confirmed by the replica
            await patient.approve(third, "U_APP", [], POLICY)
        with sync_redis.Redis(port=pair.replica.port) as replica:
            assert replica.hget(strict.keys.call(third), "state") == b"approved"
    finally:
        await client.aclose()


async def test_a_redis_user_without_info_or_wait_is_told_about_loudly(
    redis: Redis, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    await redis.execute_command("ACL", "SETUSER", "limited", "on", ">limited-pw", "~*", "&*", "+@all", "-info",
                                "-wait")
    client = Redis.from_url(redis_url, username="limited", password="limited-pw")
    try:
        auto = store_on(client)  # cannot see the replicas: waits for none, and says why
        first = await awaiting(auto, 1)
        assert (await auto.approve(first, "U_APP", [], POLICY)).state is CallState.approved
        assert "INFO replication refused by Redis" in caplog.text and "redis.durability.replicas" in caplog.text
        strict = store_on(client, replicas=1, timeout_ms=50)  # asked to wait and cannot: never called durable
        second = await awaiting(strict, 2)
        with pytest.raises(NotDurable):
            await strict.approve(second, "U_APP", [], POLICY)
        assert "WAIT refused by Redis" in caplog.text
    finally:
        await client.aclose()
        await redis.execute_command("ACL", "DELUSER", "limited")


def test_settings_from_the_configuration_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = load_config(None)
    assert durability_settings(default) == DurabilitySettings(replicas=None, timeout_ms=1000)
    path = tmp_path / "c.yaml"
    path.write_text("redis:\n  durability:\n    replicas: 2\n    timeout_ms: 250\n    remember_replica_seconds: 60\n")
    assert durability_settings(load_config(path)) == DurabilitySettings(replicas=2, timeout_ms=250,
                                                                        remember_replica_seconds=60)
    for bad, words in [("replicas: always", "redis.durability.replicas"), ("replicas: -1", "auto or a number"),
                       ("timeout_ms: 0", "redis.durability.timeout_ms")]:
        path.write_text(f"redis:\n  durability:\n    {bad}\n")
        with pytest.raises(ConfigError, match=words):
            load_config(path)


def test_the_example_configuration_waits_for_a_replica_when_there_is_one() -> None:
    example = Path(__file__).resolve().parents[2] / "config" / "fisk-chatops.yaml"
    assert durability_settings(load_config(example)) == DurabilitySettings(replicas=None, timeout_ms=1000)


async def test_a_process_started_after_the_replica_was_lost_waits_for_it_from_the_mark_in_redis(pair: Pair) -> None:
    """On a plain primary nothing lists replicas that are gone: ``auto`` keeps a mark in Redis for each
    replication history that had one, so a process started after the loss still waits for it (as the process that
    saw it does), for ``remember_replica_seconds`` after the last sighting (the mark's TTL), then not any more."""
    client = Redis(host="127.0.0.1", port=pair.primary.port)
    try:
        seen = store_on(client, timeout_ms=200, remember_replica_seconds=60)
        await seen.approve(await awaiting(seen, 1), "U_APP", [], POLICY)  # confirmed by the replica, and marked
        (mark,) = await client.keys("fc:durability:replica-seen:*")
        assert 60 <= await client.ttl(mark) <= 75  # remember_replica_seconds, and a quarter until rewritten
        pair.replica.kill()
        with sync_redis.Redis(port=pair.primary.port) as primary:
            _wait(lambda: primary.info("replication")["connected_slaves"] == 0, 20, "the primary to drop the replica")
        late = store_on(client, timeout_ms=200, remember_replica_seconds=60)  # started after the loss
        second = await awaiting(late, 2)
        before = unconfirmed("approval")
        with pytest.raises(NotDurable):
            await late.approve(second, "U_APP", [], POLICY)
        assert unconfirmed("approval") == before + 1
        await client.delete(mark)  # what its TTL does remember_replica_seconds after the last sighting
        with pytest.raises(AlreadyApproved):  # nothing left to wait for: the repeat is confirmed
            await late.approve(second, "U_APP", [], POLICY)
    finally:
        await client.aclose()


async def test_a_connected_replica_costs_the_mark_one_write_per_quarter_of_remember_not_one_per_refresh(
    pair: Pair,
) -> None:
    """The replica-seen mark is on the path of a write (after ``INFO``, before the script): rewritten at every
    refresh it cost a round trip every ``refresh_seconds``. Rewritten once per quarter of
    ``remember_replica_seconds`` (its TTL a quarter longer), it still outlives the last sighting by the full time."""
    client = Redis(host="127.0.0.1", port=pair.primary.port)
    try:
        store = store_on(client, timeout_ms=1000, refresh_seconds=0.05, remember_replica_seconds=60)
        await store.approve(await awaiting(store, 1), "U_APP", [], POLICY)
        (mark,) = await client.keys("fc:durability:replica-seen:*")
        first = await client.pttl(mark)
        await asyncio.sleep(1.2)
        await store.approve(await awaiting(store, 2), "U_APP", [], POLICY)  # INFO asked again: the replica is there
        assert await client.pttl(mark) < first - 1000  # not rewritten
    finally:
        await client.aclose()
