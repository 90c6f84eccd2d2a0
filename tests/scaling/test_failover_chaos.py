"""``kill -9`` of the Redis primary (Sentinel) or of the primary serving the calls' shard (Cluster) with a call
parked at every step of the flow, on real servers started from the bundled ``redis-server``.

One kill per topology (a failover costs seconds), with five calls, each in its own thread, caught at once:

* A: awaiting its click (clicked only after the failover);
* B: approved (the card told the clicker so), not claimed: the runner read it but waits for the app's only slot;
* C: running: the runner's child waits (for a file the test creates) through the failover;
* D: finished, result not posted: the poster is stopped;
* E: clicked while the primary is gone: the click is refused (Slack shows it failed) until it can be recorded,
  and the user clicks again, as a user does.

Then everything resumes and the invariants are checked: no call ran twice (each child logs its own start), none
ran without a human's verified decision, every call is finished or interrupted with its result in its thread (or
still awaiting its click), and every approval a card announced is still an approval after the failover.

The runner's heartbeat lapses after 1.5 s, less than a failover takes: whether the owning runner's next beat or a
recovery pass reaches the new primary first decides whether C finishes or is interrupted (then reported), and
either way it must not run again.

The front end (real bolt app over HTTP, its intake worker and poster), the runner and the store are the bot's own,
in this process, on the bot's own Sentinel/Cluster clients; Slack is the loopback fake.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, Proposal
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.fisk.introspect import parse_application
from bot.redis_connection import RedisHandle
from bot.slack import SlackSettings
from bot.slack.cards import CONFIRM_APPROVAL_ACTION, UNCONFIRMED_WORDS
from bot.tools.catalog import AppSpec, build_catalog
from bot.tools.tool import AppSettings
from tests.scaling.chaos import (
    StoppablePoster,
    eventually,
    executions,
    first_write_after,
    make_tool,
    verifying_executor,
)
from tests.slack.conftest import BOT_TOKEN, CHANNEL, Harness, make_front, serving
from tests.support import decision_keys
from tests.support.fake_slack import FakeSlack
from tests.support.redis_topologies import RedisClusterServers, RedisSentinelServers, _Node
from tests.support.topology_clients import open_on

APPROVER = "UAPPROVER"
OTHER_APPROVER = "UAPPROVER2"
RUN_SECONDS = {"A": 0.2, "B": 0.2, "C": 60.0, "D": 0.0, "E": 0.2}  # C: until the test opens its gate
APP = {"A": "fast", "B": "slow", "C": "slow", "D": "fast", "E": "fast"}  # "slow" runs one call at a time
ENDED = {CallState.finished, CallState.interrupted}

Servers = RedisClusterServers | RedisSentinelServers


@pytest.fixture(params=["sentinel", "cluster"])
def servers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Servers]]:
    """Servers of this test alone: the kill leaves the topology one node short."""
    kind = str(request.param)
    made: Servers = (RedisSentinelServers(tmp_path / "sentinel", password="data-pw", sentinel_password="sent-pw")
                     if kind == "sentinel" else RedisClusterServers(tmp_path / "cluster", password="cluster-pw"))
    made.start()
    try:
        yield kind, made
    finally:
        made.stop()


@pytest.fixture
async def handle(servers: tuple[str, Servers], tmp_path: Path) -> AsyncIterator[RedisHandle]:
    kind, made = servers
    opened = await open_on(kind, made, tmp_path)
    yield opened
    await opened.close()


def primary_of(servers: Servers, store: CallStore, call: CallRecord) -> object:
    if isinstance(servers, RedisClusterServers):
        return servers.primary_of_key(store.keys.call(call.id))
    return servers.current_primary()


async def propose(store: CallStore, policy: ApprovalPolicy, tool: Path, digest: str, log: Path, label: str,
                  n: int) -> CallRecord:
    conversation = f"slack:{CHANNEL}:{1700000100 + n}.000001"
    proposal = Proposal(tool="chaos_sleep", app=APP[label], arguments="{}", binary_digest=digest,
                        argv=[str(tool), str(log), label, str(RUN_SECONDS[label]), str(gate(log, label))])
    (record,) = await store.propose(conversation, [proposal], policy, "UREQ")
    await bus.publish(store.redis, bus.OUTBOX, bus.BusEvent("proposed", conversation, {"call_ids": [record.id]}))
    return record


def gate(log: Path, label: str) -> Path:
    """The file whose creation ends ``label``'s child (see ``chaos.TOOL``)."""
    return log.with_name(f"gate-{label}")


def card_says_approved(slack: FakeSlack, record: CallRecord, by: str = APPROVER) -> bool:
    """The card says the call is approved by ``by``, confirmed (not "not yet confirmed by a replica")."""
    card = json.dumps(slack.message(CHANNEL, record.meta["slack_ts"]))
    return f"Approved by <@{by}>" in card and UNCONFIRMED_WORDS not in card


def card_awaits_approval(slack: FakeSlack, record: CallRecord) -> bool:
    """The card is the awaiting one again, with its Approve button."""
    blocks = slack.message(CHANNEL, record.meta["slack_ts"]).get("blocks") or []
    actions = [e["action_id"] for b in blocks if b.get("type") == "actions" for e in b["elements"]]
    return "fisk_approve" in actions and "Approved by" not in json.dumps(blocks)


def result_posts(slack: FakeSlack, record: CallRecord) -> list[str]:
    """The thread's messages, other than the card, that report this call's outcome."""
    thread_ts = record.conversation.rsplit(":", 1)[1]
    texts = [json.dumps(m.get("blocks") or m.get("text")) for m in slack.thread(CHANNEL, thread_ts)
             if m["ts"] != record.meta.get("slack_ts")]
    return [t for t in texts if f"call `{record.id}`" in t]


async def test_kill_the_primary_with_a_call_at_every_step(servers: tuple[str, Servers], handle: RedisHandle,
                                                          tmp_path: Path, fixtures_dir: Path) -> None:
    kind, deployment = servers
    redis: Redis = handle.client
    store = CallStore(redis, signer=decision_keys.signer())
    policy = ApprovalPolicy(approvers={"users": [APPROVER]})
    app = parse_application((fixtures_dir / "opsctl.introspect.json").read_bytes())
    catalog = build_catalog([AppSpec(AppSettings(binary="opsctl"))], lambda _s: app)
    tool, digest = make_tool(tmp_path / "bin")
    log = tmp_path / "executions.log"
    settings = SlackSettings(mode="http", usergroup_cache_seconds=0, reclaim_idle_seconds=1)
    runner = RunnerWorker(redis, CallStore(redis), verifying_executor(decision_keys.verifier()), runner_id="r1",
                          per_app_limits={"slow": 1}, block_seconds=0.1, heartbeat_interval=0.3, stale_after=1.5,
                          grace_period=1)
    with FakeSlack(expected_token=BOT_TOKEN) as slack:
        front = make_front(slack, redis, store, policy, catalog, settings)
        async with serving(front, slack, store, redis) as harness:
            poster = StoppablePoster(front)
            stop_runner = asyncio.Event()
            runner_task = asyncio.create_task(runner.run(stop_runner))
            try:
                await _chaos(kind, deployment, harness, store, policy, poster, tool, digest, log)
            finally:
                stop_runner.set()
                await asyncio.wait_for(runner_task, 30)
                await poster.stop()


async def _chaos(kind: str, deployment: Servers, harness: Harness, store: CallStore, policy: ApprovalPolicy,
                 poster: StoppablePoster, tool: Path, digest: str, log: Path) -> None:
    slack = harness.slack
    calls = {label: await propose(store, policy, tool, digest, log, label, n) for n, label in enumerate("ABCDE")}
    poster.start()

    async def carded(label: str) -> CallRecord | None:
        latest = await store.get(calls[label].id)
        return latest if latest.meta.get("slack_ts") else None

    for label in calls:
        calls[label] = await eventually(lambda label=label: carded(label), 15, f"{label}'s card")

    async def click(label: str) -> int:
        status, _ = await harness.click(calls[label], "fisk_approve", APPROVER)
        return status

    async def state(label: str) -> CallState:
        return (await store.get(calls[label].id)).state

    # C: running, its child asleep
    assert await click("C") == 200
    await eventually(lambda: executions(log)["C"] == 1, 15, "C's child to start")
    # B: approved and announced, read by the runner, waiting for the slow app's only slot (not claimed)
    assert await click("B") == 200
    await eventually(lambda: card_says_approved(slack, calls["B"]), 15, "B's card to say approved")
    await asyncio.sleep(0.3)  # the runner reads it within its 0.1 s block
    # D: finished, result not posted (the poster is stopped first)
    await poster.stop()
    assert await click("D") == 200
    async def finished(label: str) -> bool:
        return await state(label) == CallState.finished

    await eventually(lambda: finished("D"), 15, "D to finish")
    assert await state("A") == CallState.awaiting_approval
    assert await state("B") == CallState.approved
    assert await state("C") == CallState.running
    assert result_posts(slack, calls["D"]) == []
    # the click's handler shows the decision on the card itself, so D's is shown although the poster is stopped
    told_approved = {label for label in "BCD" if card_says_approved(slack, calls[label])}
    assert told_approved == {"B", "C", "D"}

    # kill -9 of the primary that holds the calls
    victim = primary_of(deployment, store, calls["C"])
    killed_at = time.monotonic()
    victim.kill()  # type: ignore[attr-defined]

    # E: clicked during the failover window; a refused click (503: Slack shows it failed) is clicked again
    refused_clicks = 0
    while (status := await click("E")) != 200:
        assert status == 503, f"a click during the failover got HTTP {status}"
        refused_clicks += 1
        assert time.monotonic() - killed_at < 60, "clicks still refused 60 s after the kill"
        await asyncio.sleep(0.2)
    click_accepted_at = time.monotonic()
    write_at = await first_write_after(lambda: store.set_meta(calls["A"].id, probe="after-failover"))
    print(f"{kind}: kill -> first store write {write_at - killed_at:.2f} s; kill -> click on E accepted "
          f"{click_accepted_at - killed_at:.2f} s after {refused_clicks} refused clicks")

    gate(log, "C").touch()  # C's child ends now, after the failover
    poster.start()
    assert await click("A") == 200
    ids = {label: record.id for label, record in calls.items()}

    async def all_ended() -> bool:
        return all([(await store.get(call_id)).state in ENDED for call_id in ids.values()])

    await eventually(all_ended, 60, "every call to end")
    final = {label: await store.get(call_id) for label, call_id in ids.items()}
    for label in calls:
        await eventually(lambda label=label: result_posts(slack, final[label]), 20, f"{label}'s result post")
    await asyncio.sleep(0.5)  # a second post of any result would land by now

    ran = executions(log)
    print(f"{kind}: " + ", ".join(f"{label} {record.state.value}" for label, record in final.items()))
    assert all(count == 1 for count in ran.values()), f"a call ran twice: {ran}"
    for label, record in final.items():
        assert len(result_posts(slack, record)) == 1, f"{label}: result posted {len(result_posts(slack, record))}x"
        if ran[label]:  # whatever ran was approved by the human who clicked, and that decision verifies
            assert [a.user for a in record.approvals] == [APPROVER], f"{label} ran without its approval"
            decision_keys.verifier().check(record)
        if label in told_approved:  # an approval the card announced survived the failover
            assert record.state in ENDED and ran[label] == 1, f"{label}: {record.state}, ran {ran[label]}x"
        if record.state == CallState.interrupted:
            assert "interrupted" in result_posts(slack, record)[0].lower()
    # calls untouched by the failover window simply finished
    assert final["A"].state == CallState.finished and final["D"].state == CallState.finished
    assert final["E"].state in ENDED and ran["E"] <= 1




def replica_of(servers: Servers, key: str) -> _Node:
    """The replica that takes over the primary holding ``key``."""
    if isinstance(servers, RedisSentinelServers):
        primary = servers.current_primary()
        return next(n for n in servers.data_nodes if n is not primary)
    primary = servers.primary_of_key(key)
    with primary.client(servers.password) as client:
        role = client.execute_command("ROLE")
    return next(n for n in servers.nodes if n.port == int(role[2][0][1]))


def synced_replicas(node: _Node, password: str | None) -> int:
    with node.client(password) as client:
        info = client.info("replication")
    return sum(1 for k, v in info.items() if k.startswith("slave") and "online" in str(v))


async def test_an_unconfirmed_approval_lost_in_a_failover_puts_its_card_back_to_awaiting(
        servers: tuple[str, Servers], handle: RedisHandle, tmp_path: Path, fixtures_dir: Path) -> None:
    """The replica's link to the primary is down when the click is made (a wrong ``masterauth``: it keeps failing
    to resync, as after a network partition); the primary dies and that replica is promoted without the approval.
    ``redis.durability.replicas: auto`` keeps waiting for a replica it saw, after it disconnected (it can still be
    promoted), so the clicker was told the approval is not confirmed, with a button to confirm it, and the card
    said so too. After the failover, with nobody clicking, the card is the awaiting one again with its buttons,
    and another approver approves the call on the new primary; the clicker's Confirm then changes nothing."""
    kind, deployment = servers
    redis: Redis = handle.client
    store = CallStore(redis, signer=decision_keys.signer())  # redis.durability.replicas: auto
    policy = ApprovalPolicy(approvers={"users": [APPROVER, OTHER_APPROVER]})
    app = parse_application((fixtures_dir / "opsctl.introspect.json").read_bytes())
    catalog = build_catalog([AppSpec(AppSettings(binary="opsctl"))], lambda _s: app)
    tool, digest = make_tool(tmp_path / "bin")
    password = deployment.password
    with FakeSlack(expected_token=BOT_TOKEN) as slack:
        front = make_front(slack, redis, store, policy, catalog, SlackSettings(mode="http", usergroup_cache_seconds=0))
        async with serving(front, slack, store, redis) as harness:
            poster = StoppablePoster(front)
            poster.start()
            try:
                # the bot was at work before the partition: a decision waited for the replica, so it knows one
                earlier = await propose(store, policy, tool, digest, tmp_path / "log", "B", 1)
                assert (await store.approve(earlier.id, APPROVER, [], policy)).state == CallState.approved
                record = await propose(store, policy, tool, digest, tmp_path / "log", "A", 0)
                record = await eventually(lambda: _carded(store, record.id), 15, "the card")
                replica = replica_of(deployment, store.keys.call(record.id))
                with replica.client(password) as client:
                    client.config_set("masterauth", "not-the-password")
                    client.execute_command("CLIENT KILL TYPE master")
                    await eventually(lambda: client.info("replication")["master_link_status"] == "down", 10,
                                     "the replica's link to go down")
                assert (await harness.click(record, "fisk_approve", APPROVER))[0] == 200
                note = await eventually(lambda: slack.calls_to("chat.postEphemeral"), 15, "the clicker's note")
                assert "no Redis replica confirmed it" in note[0].params["text"]
                card = record.meta["slack_ts"]
                await eventually(lambda: UNCONFIRMED_WORDS in json.dumps(slack.message(CHANNEL, card)), 10,
                                 "the card to say the approval is not confirmed")
                primary = primary_of(deployment, store, record)
                assert isinstance(primary, _Node)
                primary.kill()
                with replica.client(password) as client:
                    client.config_set("masterauth", password or "")
                await eventually(lambda: primary_of(deployment, store, record) is replica, 30, "the promotion")
                lost = await eventually(lambda: store.get(record.id), 30, "the store on the new primary")
                assert lost.state == CallState.awaiting_approval  # the unconfirmed approval is gone, as warned
                # nobody clicks: the slack role notices the lost approval and the card offers Approve again
                await eventually(lambda: card_awaits_approval(slack, record), 15, "the card back to awaiting")
                primary.start()  # back as a replica of the promoted one
                await eventually(lambda: synced_replicas(replica, password) >= 1, 30, "a replica again")
                assert (await harness.click(record, "fisk_approve", OTHER_APPROVER))[0] == 200
                try:
                    approved = await eventually(lambda: _in_state(store, record.id, CallState.approved), 20,
                                                "the other approver's approval")
                except AssertionError as exc:
                    told = [c.params.get("text") for c in slack.calls_to("chat.postEphemeral")]
                    raise AssertionError(f"{exc}; the clickers were told {told}") from None
                assert [a.user for a in approved.approvals] == [OTHER_APPROVER]
                await eventually(lambda: card_says_approved(slack, record, OTHER_APPROVER), 10,
                                 "the card to say approved")
                # the first clicker's Confirm comes too late: the call is approved already, nothing changes
                assert (await harness.click(record, CONFIRM_APPROVAL_ACTION, APPROVER))[0] == 200
                await eventually(lambda: len(slack.calls_to("chat.postEphemeral")) >= 2, 10, "the late note")
                assert [a.user for a in (await store.get(record.id)).approvals] == [OTHER_APPROVER]
                print(f"{kind}: approval lost in the failover, card back to awaiting, approved by another")
            finally:
                await poster.stop()


async def _carded(store: CallStore, call_id: str) -> CallRecord | None:
    latest = await store.get(call_id)
    return latest if latest.meta.get("slack_ts") else None


async def _in_state(store: CallStore, call_id: str, state: CallState) -> CallRecord | None:
    latest = await store.get(call_id)
    return latest if latest.state == state else None
