"""Hand-overs a runner's wait moved onto its taken list (BLMOVE) and that it has not started (TAKE, before the
child starts): nothing lost, nothing run twice.

A move whose answer is lost (the connection drops after Redis moved the element and before the runner read it)
is taken by the same runner as soon as Redis answers again, and runs once (before: the element was popped, the
call sat `running` until its heartbeat lapsed and ended `interrupted` though it never started). What a dead
runner left moved is given back by the sweep and runs once elsewhere; what a restarted runner finds there it
starts itself; a call it took (TAKE) is never given back, whatever happens next."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.handover_support import FAST, proposed, trail
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.support.answer_losing_proxy import AnswerLosingProxy


async def test_a_move_whose_answer_is_lost_is_taken_by_the_same_runner_and_runs_once(redis_url: str,
                                                                                      tmp_path: Path) -> None:
    direct = Redis.from_url(redis_url)
    store = CallStore(direct)
    (call_id,) = await proposed(store, 1)
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    async with AnswerLosingProxy(host, int(port), call_id.encode()) as proxy:
        waits = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0")  # the blocking waits go through the proxy
        worker = RunnerWorker(direct, store, marker_executor(marker), runner_id="w1", reader=waits, handover=True,
                              **FAST)  # type: ignore[arg-type]
        async with running(worker):
            await wait_until(lambda: direct.exists(store.keys.parked(0)))
            await store.approve(call_id, "U_APP", [], ApprovalPolicy())  # handed over to w1, its answer lost
            await wait_until(lambda: all_terminal(store, [call_id]), timeout=20)
            await asyncio.sleep(1.0)  # a sweep (heartbeat 0.6 s) or a hand-back would act meanwhile
        await waits.aclose()
    assert proxy.lost == 1
    assert executions(marker) == [call_id]
    record = await store.get(call_id)
    assert record.state is CallState.finished, (record.state, record.result)
    assert await trail(direct, call_id) == [
        ("proposed", "awaiting_approval", "U_REQ"), ("awaiting_approval", "approved", "U_APP"),
        ("approved", "running", "runner:w1"), ("running", "finished", "runner:w1")]
    assert await direct.llen(store.keys.taken(0, "w1")) == 0
    await direct.aclose()


async def test_a_hand_over_a_dead_runner_moved_and_never_took_is_given_back_and_runs_once(
        redis: Redis, store: CallStore, tmp_path: Path) -> None:
    (call_id,) = await proposed(store, 1)
    await store.park(0, "ghost", 5.0, 0.3, 0.4)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    # the ghost's wait moved it, then the ghost died before it said it starts it
    assert await redis.lmove(store.keys.handover(0, "ghost"), store.keys.taken(0, "ghost"), "LEFT", "RIGHT")
    await asyncio.sleep(0.35)  # its heartbeat lapsed: the stale sweep still does not interrupt it, it never started
    assert await store.interrupt_stale() == []
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="alive", **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
    assert executions(marker) == [call_id]
    assert [(a, b) for a, b, _ in await trail(redis, call_id)][-4:] == [
        ("approved", "running"), ("running", "approved"), ("approved", "running"), ("running", "finished")]
    assert (await store.get(call_id)).runner == "alive"
    assert await redis.llen(store.keys.taken(0, "ghost")) == 0


async def test_a_restarted_runner_starts_what_its_previous_run_moved_and_never_took(redis: Redis, store: CallStore,
                                                                                  tmp_path: Path) -> None:
    (call_id,) = await proposed(store, 1)
    await store.park(0, "w1", 5.0, 5.0, 30.0)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    assert await redis.lmove(store.keys.handover(0, "w1"), store.keys.taken(0, "w1"), "LEFT", "RIGHT")
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w1", handover=True, sweep=False,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
    assert executions(marker) == [call_id]
    assert (await store.get(call_id)).state is CallState.finished
    assert await redis.llen(store.keys.taken(0, "w1")) == 0
    assert await redis.zcard(store.keys.handovers(0)) == 0


async def test_take_and_hand_back_exclude_each_other(redis: Redis, store: CallStore) -> None:
    first, second = await proposed(store, 2)
    for call_id in (first, second):
        await store.park(0, "r1", 5.0, 0.3, 30.0)
        await store.approve(call_id, "U_APP", [], ApprovalPolicy())
        assert await redis.lmove(store.keys.handover(0, "r1"), store.keys.taken(0, "r1"), "LEFT", "RIGHT")
    # taken first: the hand-back finds it started (it may have: the heartbeat rules apply), never gives it back
    assert await store.take_handover(first, "r1", 0.3, "n1") == "ok"
    assert await store.take_handover(first, "r1", 0.3, "n1") == "ok"  # a retry whose answer was lost: same nonce
    assert await store.take_handover(first, "r1", 0.3, "n2") == "gone"  # anything else: not started from here
    assert await store.take_handover(first, "r2", 0.3, "n1") == "gone"
    assert await store.hand_back(first, "sweep") == "taken"
    assert await store.due_hand_backs(0) == []  # never due again
    await asyncio.sleep(0.35)
    (interrupted,) = await store.interrupt_stale()  # its runner died: interrupted, outcome unknown, never re-run
    assert interrupted.id == first and interrupted.state is CallState.interrupted
    # given back first: the runner's TAKE is refused, it never starts it
    assert await store.hand_back(second, "sweep") == "ok"
    assert await store.take_handover(second, "r1", 0.3, "n3") == "gone"
    assert (await store.get(second)).state is CallState.approved
    assert await redis.llen(store.keys.taken(0, "r1")) == 0


async def test_an_element_not_claimed_for_the_runner_is_dropped_from_its_taken_list(redis: Redis, store: CallStore,
                                                                                   tmp_path: Path) -> None:
    (call_id,) = await proposed(store, 1)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())  # approved and queued, claimed by nobody
    taken = store.keys.taken(0, "w1")
    await redis.rpush(taken, f"{call_id} not json")
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w1", handover=True, sweep=False,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))  # from its run entry, once
        await asyncio.sleep(0.3)
    assert executions(marker) == [call_id]
    assert await redis.llen(taken) == 0


async def test_take_never_starts_a_call_claimed_from_a_run_entry_or_taken_already(redis: Redis,
                                                                                  store: CallStore) -> None:
    (call_id,) = await proposed(store, 1)
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    assert await store.claim(call_id, "w1") is not None  # running for w1 through its run entry
    await redis.rpush(store.keys.taken(0, "w1"), f"{call_id} copied by hand")
    assert await store.take_handover(call_id, "w1", 1.0, "n1") == "invalid"
    assert await redis.llen(store.keys.taken(0, "w1")) == 0
    (second,) = await proposed(store, 1)
    await store.park(0, "w1", 5.0, 1.0, 30.0)
    await store.approve(second, "U_APP", [], ApprovalPolicy())
    element = await redis.lmove(store.keys.handover(0, "w1"), store.keys.taken(0, "w1"), "LEFT", "RIGHT")
    assert await store.take_handover(second, "w1", 1.0, "n2") == "ok"
    await redis.rpush(store.keys.taken(0, "w1"), element)  # the same element again
    assert await store.take_handover(second, "w1", 1.0, "n3") == "invalid"
