"""Every transition and every refusal of the lifecycle, against the real Redis."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis, RedisCluster

from bot.approvals.audit import read_audit
from bot.approvals.errors import AlreadyApproved, ArgvMismatch, CallNotFound, InvalidTransition, NotAuthorized
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState, Proposal, hash_argv
from bot.approvals.store import CallStore
from bot.streams import ensure_group
from tests.approvals.conftest import proposal

CONV = "C1/1700000000.000100"


async def transitions(redis: Redis, call_id: str) -> list[tuple[str, str, str]]:
    return [(e.from_state, e.to_state, e.actor) for e in await read_audit(redis, call_id=call_id, limit=100)]


async def awaiting(store: CallStore, policy: ApprovalPolicy, **kw: object) -> str:
    (rec,) = await store.propose(CONV, [proposal(**kw)], policy, "U_REQ")  # type: ignore[arg-type]
    assert rec.state is CallState.awaiting_approval
    return rec.id


async def test_propose_awaits_approval_and_is_pending(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    (rec,) = await store.propose(CONV, [proposal()], policy, "U_REQ")
    assert rec.state is CallState.awaiting_approval
    assert rec.trigger == "default policy"
    assert rec.argv_hash == hash_argv(["status", "--host", "db-3"])
    assert rec.requester == "U_REQ" and rec.approvals == [] and rec.decision is None
    assert [r.id for r in await store.pending(CONV)] == [rec.id]
    assert await redis.xlen(store.keys.run_stream(0)) == 0
    assert await transitions(redis, rec.id) == [("proposed", "awaiting_approval", "U_REQ")]


async def test_full_lifecycle_approve_claim_finish(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    call_id = await awaiting(store, policy)
    rec = await store.approve(call_id, "U_APP", [], policy, argv_hash=hash_argv(["status", "--host", "db-3"]))
    assert rec.state is CallState.approved
    assert [a.user for a in rec.approvals] == ["U_APP"]
    assert rec.decision is not None and rec.decision.actor == "U_APP"
    assert await store.pending(CONV) == []
    assert await redis.xlen(store.keys.run_stream(0)) == 1
    claimed = await store.claim(call_id, "r1")
    assert claimed is not None and claimed.state is CallState.running and claimed.runner == "r1"
    assert await store.claim(call_id, "r2") is None
    assert await store.heartbeat(call_id, "r1") is True
    assert await store.heartbeat(call_id, "r2") is False
    done = await store.finish(call_id, "r1", {"status": "finished", "exit_code": 0, "output": "ok"})
    assert done.state is CallState.finished and done.result == {"status": "finished", "exit_code": 0, "output": "ok"}
    assert done.terminal
    assert await store.heartbeat(call_id, "r1") is False
    assert await transitions(redis, call_id) == [
        ("proposed", "awaiting_approval", "U_REQ"),
        ("awaiting_approval", "approved", "U_APP"),
        ("approved", "running", "runner:r1"),
        ("running", "finished", "runner:r1"),
    ]
    events = await redis.xrange(store.keys.completions_stream(0))
    assert len(events) == 1
    assert events[0][1][b"call_id"].decode() == call_id and events[0][1][b"state"] == b"finished"
    assert events[0][1][b"open"] == b"0"


@pytest.mark.parametrize("status", ["timed_out", "failed_to_start"])
async def test_finish_other_statuses(store: CallStore, policy: ApprovalPolicy, status: str):
    call_id = await awaiting(store, policy)
    await store.approve(call_id, "U_APP", [], policy)
    await store.claim(call_id, "r1")
    assert (await store.finish(call_id, "r1", {"status": status})).state == status


async def test_finish_refuses_bad_status_and_wrong_runner(store: CallStore, policy: ApprovalPolicy):
    call_id = await awaiting(store, policy)
    await store.approve(call_id, "U_APP", [], policy)
    await store.claim(call_id, "r1")
    with pytest.raises(ValueError):
        await store.finish(call_id, "r1", {"status": "approved"})
    with pytest.raises(InvalidTransition):
        await store.finish(call_id, "r2", {"status": "finished"})


async def test_record_result_checks_like_finish_without_returning_the_record(store: CallStore, policy: ApprovalPolicy):
    call_id = await awaiting(store, policy)
    await store.approve(call_id, "U_APP", [], policy)
    await store.claim(call_id, "r1")
    with pytest.raises(ValueError):
        await store.record_result(call_id, "r1", {"status": "approved"})
    with pytest.raises(InvalidTransition):
        await store.record_result(call_id, "r2", {"status": "finished"})
    assert await store.record_result(call_id, "r1", {"status": "finished", "exit_code": 0, "output": "ok"}) is None
    record = await store.get(call_id)
    assert record.state is CallState.finished and record.result is not None and record.result["output"] == "ok"
    with pytest.raises(CallNotFound):
        await store.record_result("0-unknown", "r1", {"status": "finished", "exit_code": 0})


async def test_record_result_acknowledges_the_run_entry_whatever_it_answers(
    store: CallStore, policy: ApprovalPolicy, redis: Redis
):
    """The entry that brought a claimed call has done its work: the finish script acknowledges it (one round trip
    fewer per call), also when it refuses the result, and never another group's or entry's."""
    stream = store.keys.run_stream(0)
    await ensure_group(redis, stream, "runners")
    await ensure_group(redis, stream, "others")
    ids = [await awaiting(store, policy) for _ in range(2)]
    for call_id in ids:
        await store.approve(call_id, "U_APP", [], policy)
    entries = {}
    for group in ("runners", "others"):
        reply = await redis.xreadgroup(group, "c1", {stream: ">"}, count=10)
        entries[group] = [entry_id.decode() for entry_id, _ in reply[0][1]]
    first, second = ids
    await store.claim(first, "r1")
    with pytest.raises(InvalidTransition):  # not running for r2: refused, still acknowledged
        await store.record_result(first, "r2", {"status": "finished"}, run_entry=("runners", entries["runners"][0]))
    assert [p["message_id"].decode() for p in await redis.xpending_range(stream, "runners", "-", "+", 10)] == [
        entries["runners"][1]]
    done = {"status": "finished", "exit_code": 0}
    await store.record_result(first, "r1", done, run_entry=("runners", entries["runners"][0]))
    assert (await store.get(first)).state is CallState.finished
    assert (await redis.xpending(stream, "others"))["pending"] == 2  # another group's entries are its own
    await store.claim(second, "r1")
    await store.record_result(second, "r1", {"status": "finished", "exit_code": 0})  # no entry given: none acked
    assert (await redis.xpending(stream, "runners"))["pending"] == 1


async def test_auto_approved_is_enqueued_and_audited(store: CallStore, redis: Redis):
    policy = ApprovalPolicy(auto_approve={"tools": ["_status$"]})
    (rec,) = await store.propose(CONV, [proposal()], policy, "U_REQ")
    assert rec.state is CallState.auto_approved
    assert rec.decision is not None and rec.decision.actor == "policy"
    assert rec.trigger.startswith("auto_approve rule tools[0]")
    assert await redis.xlen(store.keys.run_stream(0)) == 1
    assert await transitions(redis, rec.id) == [("proposed", "auto_approved", "policy")]
    assert (await store.claim(rec.id, "r1")) is not None


async def test_batch_propose_mixed_and_idempotent(store: CallStore, redis: Redis):
    policy = ApprovalPolicy(auto_approve={"tags": ["ro"]})
    props = [
        Proposal(tool="a", app="x", arguments="{}", argv=["a"], tags=["ro"], tool_use_id="toolu_1"),
        Proposal(tool="b", app="x", arguments="{}", argv=["b"], tool_use_id="toolu_2"),
    ]
    first = await store.propose(CONV, props, policy, "U_REQ")
    assert [r.state for r in first] == [CallState.auto_approved, CallState.awaiting_approval]
    again = await store.propose(CONV, props, policy, "U_REQ")
    assert [r.id for r in again] == [r.id for r in first]
    assert await redis.xlen(store.keys.run_stream(0)) == 1
    assert len(await store.open_calls(CONV)) == 2


async def test_ai_deny_is_rejected_never_enqueued(store: CallStore, redis: Redis):
    policy = ApprovalPolicy(auto_approve={"tools": [".*"]})
    (rec,) = await store.propose(CONV, [proposal(tags=["ai:deny"])], policy, "U_REQ")
    assert rec.state is CallState.rejected
    assert await redis.xlen(store.keys.run_stream(0)) == 0
    assert await store.claim(rec.id, "r1") is None


async def test_reject_records_terminal_and_completion(store: CallStore, redis: Redis):
    rec = await store.reject(CONV, tool="nope", arguments="{}", reason="unknown tool", requester="U_REQ")
    assert rec.state is CallState.rejected and rec.decision is not None
    assert rec.decision.reason == "unknown tool"
    assert await store.pending(CONV) == []
    assert await transitions(redis, rec.id) == [("proposed", "rejected", "agent")]
    assert await redis.xlen(store.keys.completions_stream(0)) == 1


async def test_deny_then_refusals(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    call_id = await awaiting(store, policy)
    rec = await store.deny(call_id, "U_APP", [], policy, reason="not now")
    assert rec.state is CallState.denied and rec.decision is not None and rec.decision.reason == "not now"
    with pytest.raises(InvalidTransition) as exc:
        await store.approve(call_id, "U_OTHER", [], policy)
    assert exc.value.current_state == "denied"
    with pytest.raises(InvalidTransition):
        await store.deny(call_id, "U_APP", [], policy)
    assert await store.claim(call_id, "r1") is None
    assert await redis.xlen(store.keys.run_stream(0)) == 0


async def test_double_approve_refused(store: CallStore, policy: ApprovalPolicy):
    call_id = await awaiting(store, policy)
    await store.approve(call_id, "U_APP", [], policy)
    with pytest.raises(InvalidTransition) as exc:
        await store.approve(call_id, "U_APP2", [], policy)
    assert exc.value.current_state == "approved"


async def test_unknown_call_id(store: CallStore, policy: ApprovalPolicy):
    for bad in ["0-doesnotexist", "garbage"]:
        with pytest.raises(CallNotFound):
            await store.approve(bad, "U", [], policy)
        with pytest.raises(CallNotFound):
            await store.get(bad)
    with pytest.raises(CallNotFound):
        await store.cancel("0-nothing", "U", "stop")
    with pytest.raises(CallNotFound):
        await store.set_meta("0-nothing", channel="C1")


async def test_a_record_is_read_while_redis_holds_writes_back(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    """FAILOVER (and CLUSTER FAILOVER) pause writes with CLIENT PAUSE WRITE for up to seconds; Redis holds scripts
    back then but answers plain reads, so the poster and recorder must still read a call's record. A script
    would wait here for the whole 10 s pause; the wait below gives up after 3."""
    call_id = await awaiting(store, policy)
    await _on_every_node(redis, "CLIENT", "PAUSE", 10_000, "WRITE")
    try:
        record = await asyncio.wait_for(store.find(call_id), 3)
        assert record is not None and record.id == call_id and record.state is CallState.awaiting_approval
    finally:
        await _on_every_node(redis, "CLIENT", "UNPAUSE")


async def _on_every_node(redis: Redis | RedisCluster, *command: object) -> None:
    """A server command for the whole deployment (test_on_cluster.py runs these tests on a Redis Cluster too)."""
    if not isinstance(redis, RedisCluster):
        await redis.execute_command(*command)
        return
    for node in redis.get_nodes():
        auth = {k: node.connection_kwargs[k] for k in ("username", "password") if node.connection_kwargs.get(k)}
        client = Redis(host=node.host, port=node.port, **auth)
        try:
            await client.execute_command(*command)
        finally:
            await client.aclose()


async def test_argv_hash_mismatch(store: CallStore, policy: ApprovalPolicy):
    call_id = await awaiting(store, policy)
    with pytest.raises(ArgvMismatch):
        await store.approve(call_id, "U_APP", [], policy, argv_hash=hash_argv(["status", "--host", "db-4"]))
    assert (await store.get(call_id)).state is CallState.awaiting_approval


async def test_non_approver_refused(store: CallStore):
    policy = ApprovalPolicy(approvers={"users": ["U_BOSS"], "groups": ["S_ONCALL"]})
    call_id = await awaiting(store, policy)
    with pytest.raises(NotAuthorized):
        await store.approve(call_id, "U_RANDOM", ["S_OTHER"], policy)
    with pytest.raises(NotAuthorized):
        await store.deny(call_id, "U_RANDOM", [], policy)
    assert (await store.approve(call_id, "U_ONCALLER", ["S_ONCALL"], policy)).state is CallState.approved


async def test_requester_may_deny_own_call(store: CallStore):
    policy = ApprovalPolicy(approvers={"users": ["U_BOSS"]}, forbid_self_approval=True)
    call_id = await awaiting(store, policy)
    assert (await store.deny(call_id, "U_REQ", [], policy)).state is CallState.denied


async def test_self_approval_forbidden(store: CallStore):
    policy = ApprovalPolicy(forbid_self_approval=True)
    call_id = await awaiting(store, policy)
    with pytest.raises(NotAuthorized):
        await store.approve(call_id, "U_REQ", [], policy)
    assert (await store.approve(call_id, "U_OTHER", [], policy)).state is CallState.approved


async def test_self_approval_allowed_by_default(store: CallStore, policy: ApprovalPolicy):
    call_id = await awaiting(store, policy)
    assert (await store.approve(call_id, "U_REQ", [], policy)).state is CallState.approved


async def test_two_person_rule(store: CallStore, redis: Redis):
    policy = ApprovalPolicy(two_person_tags=["impact:rw"])
    call_id = await awaiting(store, policy, tags=["impact:rw"])
    first = await store.approve(call_id, "U_A", [], policy)
    assert first.state is CallState.awaiting_approval and [a.user for a in first.approvals] == ["U_A"]
    assert await redis.xlen(store.keys.run_stream(0)) == 0
    with pytest.raises(AlreadyApproved):
        await store.approve(call_id, "U_A", [], policy)
    second = await store.approve(call_id, "U_B", [], policy)
    assert second.state is CallState.approved and [a.user for a in second.approvals] == ["U_A", "U_B"]
    assert await redis.xlen(store.keys.run_stream(0)) == 1
    assert await transitions(redis, call_id) == [
        ("proposed", "awaiting_approval", "U_REQ"),
        ("awaiting_approval", "awaiting_approval", "U_A"),
        ("awaiting_approval", "approved", "U_B"),
    ]


async def test_per_tag_approvers(store: CallStore):
    policy = ApprovalPolicy(per_tag={"impact:rw": {"groups": ["S_DBA"]}})
    call_id = await awaiting(store, policy, tags=["impact:rw"])
    with pytest.raises(NotAuthorized):
        await store.approve(call_id, "U_DEV", ["S_DEV"], policy)
    assert (await store.approve(call_id, "U_DBA", ["S_DBA"], policy)).state is CallState.approved


async def test_expiry_by_sweeper(redis: Redis):
    clock = [1_000_000.0]
    store = CallStore(redis, clock=lambda: clock[0])
    policy = ApprovalPolicy(expire_after_seconds=60)
    call_id = await awaiting(store, policy)
    other = await awaiting(store, policy)
    assert await store.expire_due() == []
    clock[0] += 61
    closed = await store.expire_due()
    assert sorted(r.id for r in closed) == sorted([call_id, other])
    assert all(r.state is CallState.expired for r in closed)
    assert await store.expire_due() == []
    with pytest.raises(InvalidTransition) as exc:
        await store.approve(call_id, "U_APP", [], policy)
    assert exc.value.current_state == "expired"
    assert await transitions(redis, call_id) == [
        ("proposed", "awaiting_approval", "U_REQ"),
        ("awaiting_approval", "expired", "sweeper"),
    ]
    assert await store.pending(CONV) == []


async def test_expire_due_with_explicit_now(store: CallStore, policy: ApprovalPolicy):
    call_id = await awaiting(store, policy)
    assert await store.expire_due(datetime.now(UTC)) == []
    closed = await store.expire_due(datetime.now(UTC) + timedelta(seconds=policy.expire_after_seconds + 1))
    assert [r.id for r in closed] == [call_id]


async def test_click_on_expired_card_expires_it(redis: Redis):
    clock = [1_000_000.0]
    store = CallStore(redis, clock=lambda: clock[0])
    policy = ApprovalPolicy(expire_after_seconds=10)
    call_id = await awaiting(store, policy)
    clock[0] += 11
    with pytest.raises(InvalidTransition) as exc:
        await store.approve(call_id, "U_APP", [], policy)
    assert exc.value.current_state == "expired"
    assert (await store.get(call_id)).state is CallState.expired
    assert await redis.xlen(store.keys.run_stream(0)) == 0


async def test_cancel_awaiting_and_approved(store: CallStore, policy: ApprovalPolicy):
    a = await awaiting(store, policy)
    b = await awaiting(store, policy)
    await store.approve(b, "U_APP", [], policy)
    assert (await store.cancel(a, "U_REQ", "conversation stopped")).state is CallState.denied
    assert (await store.cancel(b, "U_REQ", "conversation stopped")).state is CallState.denied
    assert await store.claim(b, "r1") is None


async def test_cancel_refused_once_running(store: CallStore, policy: ApprovalPolicy):
    a = await awaiting(store, policy)
    await store.approve(a, "U_APP", [], policy)
    await store.claim(a, "r1")
    with pytest.raises(InvalidTransition):
        await store.cancel(a, "U_REQ", "stop")


async def test_interrupt_and_stale_detection(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    a = await awaiting(store, policy)
    await store.approve(a, "U_APP", [], policy)
    await store.claim(a, "r1", heartbeat_ttl=0.3)
    assert await store.interrupt_stale() == []
    with pytest.raises(InvalidTransition):
        await store.mark_interrupted(a, "x", only_if_stale=True)
    time.sleep(0.4)
    (rec,) = await store.interrupt_stale()
    assert rec.state is CallState.interrupted and rec.result is not None
    with pytest.raises(InvalidTransition):
        await store.finish(a, "r1", {"status": "finished"})
    assert (await transitions(redis, a))[-1] == ("running", "interrupted", "sweeper")


async def test_mark_interrupted_directly(store: CallStore, policy: ApprovalPolicy):
    a = await awaiting(store, policy)
    with pytest.raises(InvalidTransition):
        await store.mark_interrupted(a, "not running")
    await store.approve(a, "U_APP", [], policy)
    await store.claim(a, "r1")
    rec = await store.mark_interrupted(a, "runner stopping", actor="runner:r1")
    assert rec.state is CallState.interrupted


async def test_meta_and_conversation_open_count(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    a = await awaiting(store, policy)
    b = await awaiting(store, policy)
    await store.set_meta(a, channel="C1", ts="1.2")
    assert (await store.get(a)).meta == {"channel": "C1", "ts": "1.2"}
    await store.deny(a, "U_APP", [], policy)
    await store.deny(b, "U_APP", [], policy)
    opens = [e[1][b"open"] for e in await redis.xrange(store.keys.completions_stream(0))]
    assert opens == [b"1", b"0"]


async def test_records_expire_after_retention(redis: Redis, policy: ApprovalPolicy):
    store = CallStore(redis, retention_seconds=3600)
    a = await awaiting(store, policy)
    ttl = await redis.ttl(store.keys.call(a))
    assert 3500 < ttl <= 3600


async def test_read_audit_since_and_table(store: CallStore, policy: ApprovalPolicy, redis: Redis):
    from bot.approvals.audit import format_audit_table

    before = datetime.now(UTC) - timedelta(seconds=1)
    a = await awaiting(store, policy)
    await store.deny(a, "U_APP", [], policy, reason="no")
    entries = await read_audit(redis, since=before, limit=10)
    assert [(e.call_id, e.to_state) for e in entries] == [(a, "awaiting_approval"), (a, "denied")]
    assert len(await read_audit(redis, limit=1)) == 1
    assert await read_audit(redis, since=datetime.now(UTC) + timedelta(seconds=5), limit=10) == []
    table = format_audit_table(entries)
    assert table.splitlines()[0].startswith("TIME (UTC)")
    assert "awaiting_approval -> denied" in table and "U_APP" in table and table.endswith("no")


async def test_human_decision_wait_reads_only_what_the_metric_needs(redis: Redis, policy: ApprovalPolicy) -> None:
    now = [1000.0]
    store = CallStore(redis, clock=lambda: now[0])
    call_id = await awaiting(store, policy)
    assert await store.human_decision_wait(call_id) is None  # not decided yet
    now[0] += 42.5
    await store.approve(call_id, "U_APP", [], policy)
    assert await store.human_decision_wait(call_id) == 42.5
    auto = ApprovalPolicy.model_validate({"auto_approve": {"tools": ["^opsctl_status$"]}})
    (rec,) = await store.propose(CONV, [proposal()], auto, "U_REQ")
    assert rec.state is CallState.auto_approved
    assert await store.human_decision_wait(rec.id) is None  # the policy decided: no human wait
    assert await store.human_decision_wait("0-unknown") is None
    assert await store.human_decision_wait("not an id") is None
    # the metrics loop asks for a whole batch at once: answers in the order asked, unknown ids included
    assert await store.human_decision_waits([rec.id, "not an id", call_id, "0-unknown"]) == [None, None, 42.5, None]
    assert await store.human_decision_waits([]) == []


async def test_approve_with_a_known_record_still_checks_everything_that_can_change(
        store: CallStore, redis: Redis) -> None:
    """A click handler passes the record it read; approvers and tags come from it, but state, argv hash and
    who already approved are re-checked in the script, and another call's record is never taken."""
    policy = ApprovalPolicy.model_validate({"approvers": {"users": ["U_APP", "U_BOSS"]},
                                            "per_tag": {"prod": {"users": ["U_BOSS"]}}})
    first = await awaiting(store, policy)
    restricted = await awaiting(store, policy, tags=["prod"])
    stale = await store.get(first)
    with pytest.raises(NotAuthorized):
        await store.approve(first, "U_OTHER", [], policy, known=stale)
    with pytest.raises(NotAuthorized):  # first's record says "no tags", but it is not this call's record
        await store.approve(restricted, "U_APP", [], policy, known=stale)
    with pytest.raises(ArgvMismatch):
        await store.approve(first, "U_APP", [], policy, argv_hash=hash_argv(["other"]), known=stale)
    await store.deny(first, "U_APP", [], policy, known=stale)
    with pytest.raises(InvalidTransition):  # the copy says awaiting; Redis says denied
        await store.approve(first, "U_APP", [], policy, known=stale)
    approved = await store.approve(restricted, "U_BOSS", [], policy, known=await store.get(restricted))
    assert approved.state is CallState.approved


async def test_a_malformed_decision_time_is_no_wait_not_an_error(redis: Redis, policy: ApprovalPolicy) -> None:
    """The runner's metrics loop reads these for every completion, and an exception there ends the runner process
    (again after each restart: the entry stays pending): a record Redis holds malformed counts no wait."""
    store = CallStore(redis)
    call_ids = [await awaiting(store, policy) for _ in range(4)]
    for call_id, decision in zip(call_ids, ["not json", "[1]", '{"at": "soon"}', '{"actor": "U1"}'], strict=True):
        await redis.hset(store.keys.call(call_id), "decision", decision)
    assert await store.human_decision_waits(call_ids) == [None, None, None, None]


async def test_find_many_reads_each_call_in_order(store: CallStore, policy: ApprovalPolicy) -> None:
    first, second = await awaiting(store, policy), await awaiting(store, policy)
    await store.set_meta(second, slack_ts="1.2")
    unknown = first[:-4] + "ffff"  # a well-formed id of a call that does not exist
    found = await store.find_many([second, unknown, "not an id", first])
    assert [r.id if r else None for r in found] == [second, None, None, first]
    assert found[0] == await store.get(second) and found[0].meta["slack_ts"] == "1.2"  # type: ignore[union-attr]
    assert found[3] == await store.get(first)
    assert await store.find_many([]) == []


async def test_set_meta_queued_on_a_callers_pipeline(store: CallStore, policy: ApprovalPolicy, redis: Redis) -> None:
    call_id = await awaiting(store, policy)
    async with redis.pipeline(transaction=False) as pipe:
        store.queue_set_meta(pipe, call_id, slack_result_ts="1.5", slack_result_link="https://x/p15")
        store.queue_set_meta(pipe, call_id[:-4] + "ffff", slack_result_ts="1.6")  # no such call
        pipe.set("fc:test:after", "1")  # the caller's own write, in the same round trip
        replies = await pipe.execute()
    assert replies == [1, 0, True]
    meta = (await store.get(call_id)).meta
    assert meta["slack_result_ts"] == "1.5" and meta["slack_result_link"] == "https://x/p15"
