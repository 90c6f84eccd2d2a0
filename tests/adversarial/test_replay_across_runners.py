"""A genuine approval replayed to a second runner within the decision's validity never runs the call again.

The record of "executed" that every runner shares is the call's own state in Redis: the claim (a run entry's) and
the hand-over's TAKE move a call out of `approved` atomically, once, and nothing but a Redis writer moves it back.
So, with two real runners (production executor, each with its own replay memory: the second has never seen the
decision), every way to bring the same approval to the second runner after the first ran it is refused before
anything starts: the same click again, the call's run entry queued again with its decision, and the hand-over's
element (record and decision) on the second runner's taken list when it starts and on its hand-over list while it
is parked. The counting tool logs every execution on the filesystem: one.

What this does not cover, by design (README, *Threat model*): a Redis writer who also rewrites the call's state
to `approved`. Anything Redis holds that writer can delete too (a per-decision "executed" key included), so no
marker in Redis stops them; each runner's own memory does, and `decisions.valid_seconds` bounds the rest."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from bot.approvals.errors import AlreadyApproved
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.tools.catalog import Catalog
from tests.adversarial.conftest import CountingApp, approved_call_executor, audit_of
from tests.adversarial.test_trust import status_proposal
from tests.approvals.helpers import running
from tests.slack.conftest import CHANNEL
from tests.support import decision_keys
from tests.support.waiting import wait_for

CONV = f"slack:{CHANNEL}:1700.000009"
POLICY = ApprovalPolicy()


@contextlib.asynccontextmanager
async def runner(redis: Redis, tools: Catalog, runner_id: str) -> AsyncIterator[RunnerWorker]:
    """A real runner with its own decision verifier (its own replay memory, as a second replica has)."""
    worker = RunnerWorker(redis, CallStore(redis, heartbeat_ttl=2.0),
                          approved_call_executor(tools, verifier=decision_keys.verifier()), runner_id=runner_id,
                          block_seconds=0.05, stale_after=2.0, reclaim_after=0.3, recovery_interval=0.1,
                          handover=True, grace_period=1)
    async with running(worker):
        yield worker


async def test_an_approval_replayed_to_another_runner_never_runs_the_call_again(
        redis: Redis, counted: CountingApp, counted_catalog: Catalog) -> None:
    store = CallStore(redis, signer=decision_keys.signer())
    (call,) = await store.propose(CONV, [status_proposal(counted_catalog, "web")], POLICY, "UREQ")
    async with runner(redis, counted_catalog, "w1"):
        await wait_for(lambda: redis.exists(store.keys.parked(0)), 10)
        approved = await store.approve(call.id, "UAPP", [], POLICY, argv_hash=call.argv_hash)  # handed to w1

        async def finished() -> bool:
            return (await store.get(call.id)).state is CallState.finished

        await wait_for(finished, 15)
    assert counted.executions() == [["service", "status", "--", "web"]]
    token = (await store.get(call.id)).signed_decision
    assert token and token == approved.signed_decision
    element = await _element_as_handed_over(redis, store, call.id)
    # the hand-over as the approval's script wrote it, on w2's taken list (what a restarted w2 takes first)
    await redis.rpush(store.keys.taken(0, "w2"), element)

    async with runner(redis, counted_catalog, "w2") as second:
        # the same approver clicks again: answered as done, nothing queued
        with pytest.raises(AlreadyApproved):
            await store.approve(call.id, "UAPP", [], POLICY, argv_hash=call.argv_hash)
        # the call's run entry queued again, decision and all (what the approval's script writes)
        await redis.xadd(store.keys.run_stream(0), {"call_id": call.id, "app": call.app, "decision": token})
        # and onto w2's hand-over list, as if handed over to w2 while it is parked: the state decides, not the list
        await wait_for(lambda: redis.exists(store.keys.parked(0)), 10)
        await redis.rpush(store.keys.handover(0, "w2"), element)

        async def all_looked_at() -> bool:
            lists = [store.keys.handover(0, "w2"), store.keys.taken(0, "w2")]
            return (await redis.xlen(store.keys.run_stream(0)) == 0
                    and all([await redis.llen(key) == 0 for key in lists]) and not second._inflight)

        await wait_for(all_looked_at, 15)
        await asyncio.sleep(0.5)
    assert counted.executions() == [["service", "status", "--", "web"]]  # once, ever
    final = await store.get(call.id)
    assert final.state is CallState.finished and final.runner == "w1"
    trail = [(e.from_state, e.to_state) for e in await audit_of(redis, call.id)]
    assert trail.count(("approved", "running")) == 1 and trail[-1] == ("running", "finished")


async def _element_as_handed_over(redis: Redis, store: CallStore, call_id: str) -> bytes:
    """The hand-over element the approval's script pushed (``<id> <record JSON>``), rebuilt from the call as it was
    handed over: running for w1 (the result and the end left out), with its decision."""
    flat: list[str] = []
    for name, value in (await redis.hgetall(store.keys.call(call_id))).items():
        if name.decode() in ("result", "claim"):
            continue
        flat += [name.decode(), "running" if name == b"state" else value.decode()]
    body = (await redis.get(store.keys.body(call_id))).decode()
    return f"{call_id} {json.dumps([flat, body])}".encode()
