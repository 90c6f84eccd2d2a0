"""Hand-overs whose move is the take (this version's runners): the process that parked moves the element onto its
own list (``moved:<runner>:<token>``) and starts the child with no TAKE round trip on the way.

What that opens, each checked here against a real Redis: a call once moved is never given back (it may have
started), so a process that dies after the move leaves it `interrupted`, never run again, by a new process of the
same runner id too; a stop after the move is a stop request, and one the process set aside unstarted still never
runs; a copy of an element (written by hand) never starts a call twice; what an earlier process's park brought is
run once, through TAKE. The lost move reply is in ``test_handover_taken.py``."""

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
from tests.support.delaying_proxy import DelayingProxy


async def test_a_hand_over_starts_without_take_and_runs_once(redis_url: str, tmp_path: Path) -> None:
    """The parked process's wait moves the call and it starts it: Redis's MONITOR sees no TAKE, and the call's end
    empties the process's moved list and the hand-over index."""
    client, reader, watcher = Redis.from_url(redis_url), Redis.from_url(redis_url), Redis.from_url(redis_url)
    store = CallStore(client)
    marker = tmp_path / "marker"
    # a heartbeat long enough that a loaded machine's slow loop pass never makes the move look late (TAKE then)
    worker = RunnerWorker(client, store, marker_executor(marker), runner_id="w-fast", reader=reader, handover=True,
                          **{**FAST, "stale_after": 5.0})  # type: ignore[arg-type]
    ids = await proposed(store, 3)
    takes: list[str] = []
    sentinel = f"ECHO moved-check-{tmp_path.name}"
    async with watcher.monitor() as monitor, running(worker):
        async def watch() -> None:
            async for entry in monitor.listen():
                if entry["command"].startswith(f"EVALSHA {store._take.sha}"):
                    takes.append(entry["command"])
                elif entry["command"].startswith(sentinel):
                    takes.append("sentinel")

        watching = asyncio.create_task(watch())
        for call_id in ids:
            await wait_until(lambda: client.exists(store.keys.parked(0)))
            await store.approve(call_id, "U_APP", [], ApprovalPolicy())
            await wait_until(lambda: all_terminal(store, [call_id]))  # noqa: B023 (awaited in this iteration)
        await client.execute_command(*sentinel.split())
        await wait_until(lambda: _has(takes, "sentinel"))
        watching.cancel()
        moved = store.keys.moved(0, "w-fast", worker._token)
    assert takes == ["sentinel"]
    assert executions(marker) == ids
    for call_id in ids:
        assert await trail(client, call_id) == [
            ("proposed", "awaiting_approval", "U_REQ"), ("awaiting_approval", "approved", "U_APP"),
            ("approved", "running", "runner:w-fast"), ("running", "finished", "runner:w-fast")]
        record = await store.get(call_id)
        assert record.state is CallState.finished and record.runner == "w-fast"
    assert not await client.exists(moved)
    assert await client.zcard(store.keys.handovers(0)) == 0
    assert await client.llen(store.keys.taken(0, "w-fast")) == 0
    for c in (client, reader, watcher):
        await c.aclose()


async def _has(items: list[str], item: str) -> bool:
    return item in items


async def test_a_call_an_earlier_process_moved_is_never_run_again_and_ends_interrupted(
        redis: Redis, store: CallStore, tmp_path: Path) -> None:
    """A process of runner w1 moved the call (it may have started the child) and died. Neither the sweep nor a
    new process of w1 runs it again: its heartbeat lapses and it ends `interrupted`, as a claimed call does, and
    its end removes the element from the dead process's moved list."""
    (call_id,) = await proposed(store, 1)
    await store.park(0, "w1", 5.0, 0.3, 0.2, "dead")
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    dead_list = store.keys.moved(0, "w1", "dead")
    assert await redis.lmove(store.keys.handover(0, "w1"), dead_list, "LEFT", "RIGHT")
    await asyncio.sleep(0.25)
    assert await store.due_hand_backs(0) == [call_id]
    assert await store.hand_back(call_id, "sweep") == "taken"  # it may have started: never given back
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w1", handover=True,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, [call_id]))
        await asyncio.sleep(0.3)
    assert executions(marker) == []
    record = await store.get(call_id)
    assert record.state is CallState.interrupted
    assert [(a, b) for a, b, _ in await trail(redis, call_id)][-2:] == [("approved", "running"),
                                                                        ("running", "interrupted")]
    assert not await redis.exists(dead_list)
    assert await redis.zcard(store.keys.handovers(0)) == 0


async def test_a_stop_after_the_move_is_a_stop_request_and_a_set_aside_call_never_starts(
        redis: Redis, store: CallStore) -> None:
    """After the move the call may have started: Cancel asks its runner to stop it (as for a claim). A process that
    set the element aside instead (no slot) finds the request in TAKE: the call ends cancelled, never run."""
    (call_id,) = await proposed(store, 1)
    policy = ApprovalPolicy()
    await store.park(0, "r1", 5.0, 10.0, 5.0, "tok")
    await store.approve(call_id, "U_APP", [], policy)
    element = await redis.lmove(store.keys.handover(0, "r1"), store.keys.moved(0, "r1", "tok"), "LEFT", "RIGHT")
    requested = await store.request_cancel(call_id, "U_REQ", [], policy)
    assert requested.state is CallState.running and requested.cancel is not None
    assert await store.set_aside(0, "r1", "tok", element, 5.0)
    assert await store.set_aside(0, "r1", "tok", element, 5.0)  # a retry whose answer was lost: done already
    assert await redis.llen(store.keys.taken(0, "r1")) == 1
    assert await store.take_handover(call_id, "r1", 10.0, "n1") == "gone"
    record = await store.get(call_id)
    assert record.state is CallState.cancelled and record.result is not None
    assert "never ran" in record.result["error"]
    assert await redis.llen(store.keys.taken(0, "r1")) == 0
    assert await redis.zcard(store.keys.handovers(0)) == 0
    assert not await store.set_aside(0, "r1", "tok", element, 5.0)  # on neither list: not put back
    assert await redis.llen(store.keys.taken(0, "r1")) == 0


async def test_a_set_aside_call_is_given_back_by_the_sweep_if_its_process_dies(redis: Redis,
                                                                               store: CallStore) -> None:
    """Set aside onto the taken list (not started), the hand-over is due for the sweep again, even if the sweep
    had found it moved before: a process that dies while it waits for a slot loses nothing."""
    (call_id,) = await proposed(store, 1)
    await store.park(0, "r1", 5.0, 0.3, 0.1, "tok")
    await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    element = await redis.lmove(store.keys.handover(0, "r1"), store.keys.moved(0, "r1", "tok"), "LEFT", "RIGHT")
    await asyncio.sleep(0.15)
    assert await store.hand_back(call_id, "sweep") == "taken"
    assert await store.set_aside(0, "r1", "tok", element, 0.1)
    await asyncio.sleep(0.35)
    assert await store.interrupt_stale() == []  # not started: not interrupted
    assert await store.due_hand_backs(0) == [call_id]
    assert await store.hand_back(call_id, "sweep") == "ok"
    record = await store.get(call_id)
    assert record.state is CallState.approved and record.runner is None
    assert await redis.xlen(store.keys.run_stream(0)) == 1


async def test_a_copy_of_a_hand_over_element_never_starts_the_call_twice(redis: Redis, store: CallStore,
                                                                        tmp_path: Path) -> None:
    """An element copied onto the runner's hand-over list by hand, once while the call runs and once after it
    ended: the process started the call once, and the copies are not run (the test's executor checks no
    signed decision, so the runner's replay memory is not what stops them)."""
    (call_id,) = await proposed(store, 1)
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker, sleep=0.5), runner_id="w1", handover=True,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: redis.exists(store.keys.parked(0)))
        await store.approve(call_id, "U_APP", [], ApprovalPolicy())
        await wait_until(lambda: _ran(marker, call_id))
        (element,) = await redis.lrange(store.keys.moved(0, "w1", worker._token), 0, -1)
        await redis.rpush(store.keys.handover(0, "w1"), element)  # while it runs
        await wait_until(lambda: all_terminal(store, [call_id]))
        await redis.rpush(store.keys.handover(0, "w1"), element)  # after it ended
        await wait_until(lambda: _list_empty(redis, store.keys.handover(0, "w1")))
        await asyncio.sleep(0.3)
    assert executions(marker) == [call_id]
    assert (await store.get(call_id)).state is CallState.finished
    assert not await redis.exists(store.keys.moved(0, "w1", worker._token))
    assert await redis.llen(store.keys.taken(0, "w1")) == 0


async def _ran(marker: Path, call_id: str) -> bool:
    return call_id in executions(marker)


async def _list_empty(redis: Redis, key: str) -> bool:
    return await redis.llen(key) == 0


async def test_what_an_earlier_park_brought_runs_once_through_take(redis: Redis, store: CallStore,
                                                                   tmp_path: Path) -> None:
    """An approval found the park of an earlier process of w1 (one that stopped or died while parked, or a runner
    of the previous version, which parks without a token): the new process's wait moves it, sees that the mark
    names another process, sets it aside and runs it through TAKE, once."""
    ids = await proposed(store, 2)
    for call_id, token in zip(ids, ("earlier", ""), strict=True):
        await store.park(0, "w1", 5.0, 5.0, 30.0, token)
        await store.approve(call_id, "U_APP", [], ApprovalPolicy())
    assert await redis.llen(store.keys.handover(0, "w1")) == 2
    marker = tmp_path / "marker"
    worker = RunnerWorker(redis, store, marker_executor(marker), runner_id="w1", handover=True, sweep=False,
                          **FAST)  # type: ignore[arg-type]
    async with running(worker):
        await wait_until(lambda: all_terminal(store, ids))
    assert sorted(executions(marker)) == sorted(ids)
    for call_id in ids:
        assert (await store.get(call_id)).state is CallState.finished
    assert await redis.llen(store.keys.taken(0, "w1")) == 0
    assert not await redis.exists(store.keys.moved(0, "w1", worker._token))
    assert await redis.zcard(store.keys.handovers(0)) == 0


async def test_a_move_whose_answer_is_lost_just_before_a_stop_is_given_back_unstarted(redis_url: str,
                                                                                      tmp_path: Path) -> None:
    """The runner stops right after a failed wait whose move Redis did: on its way out it reads its moved list once
    more and gives the call back (approved again, a run entry, never run), instead of leaving it to lapse into
    `interrupted`."""
    direct = Redis.from_url(redis_url)
    store = CallStore(direct)
    (call_id,) = await proposed(store, 1)
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    async with AnswerLosingProxy(host, int(port), call_id.encode()) as proxy:
        waits = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0")
        worker = RunnerWorker(direct, store, marker_executor(marker), runner_id="w1", reader=waits, handover=True,
                              sweep=False, **FAST)  # type: ignore[arg-type]
        async with running(worker):
            await wait_until(lambda: direct.exists(store.keys.parked(0)))
            await store.approve(call_id, "U_APP", [], ApprovalPolicy())
            await wait_until(lambda: _lost(proxy))  # the stop comes within the wait's first retry pause (0.1 s)
        await waits.aclose()
    assert executions(marker) == []
    record = await store.get(call_id)
    assert record.state is CallState.approved and record.runner is None, (record.state, record.runner)
    assert (await trail(direct, call_id))[-1] == ("running", "approved", "runner:w1")
    assert await direct.xlen(store.keys.run_stream(0)) == 1
    assert not await direct.exists(store.keys.moved(0, "w1", worker._token))
    assert await direct.llen(store.keys.taken(0, "w1")) == 0
    await direct.aclose()


async def _lost(proxy: AnswerLosingProxy) -> bool:
    return bool(proxy.lost)


async def test_a_move_whose_wait_is_cut_off_at_the_stop_is_given_back_unstarted(redis_url: str,
                                                                                 tmp_path: Path) -> None:
    """A stop that has to cut off a wait (its reply held up longer than the stop waits for it, ``block + 2 s``)
    after Redis moved the call onto the process's own list: nothing here read the reply, so nothing started it. On
    its way out the runner reads its moved list once more and gives the call back (approved again, a run entry,
    never run), instead of leaving it running with no one to run it until it lapses into `interrupted`."""
    direct = Redis.from_url(redis_url)
    store = CallStore(direct)
    (call_id,) = await proposed(store, 1)
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    settings = {**FAST, "stale_after": 30.0, "block_seconds": 0.5}  # the heartbeat does not lapse meanwhile
    async with DelayingProxy(host, int(port), b"BLMOVE", delay=4.0) as proxy:
        waits = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0")
        worker = RunnerWorker(direct, store, marker_executor(marker), runner_id="w1", reader=waits, handover=True,
                              sweep=False, **settings)  # type: ignore[arg-type]
        async with running(worker):
            await wait_until(lambda: _held(proxy))  # the first wait is in Redis, its reply will be held up
            await wait_until(lambda: direct.exists(store.keys.parked(0)))
            await store.approve(call_id, "U_APP", [], ApprovalPolicy())
            await wait_until(lambda: direct.exists(store.keys.moved(0, "w1", worker._token)))
        await waits.aclose()
    assert executions(marker) == []
    record = await store.get(call_id)
    assert record.state is CallState.approved and record.runner is None, (record.state, record.runner)
    assert (await trail(direct, call_id))[-1] == ("running", "approved", "runner:w1")
    assert await direct.xlen(store.keys.run_stream(0)) == 1
    assert not await direct.exists(store.keys.moved(0, "w1", worker._token))
    assert await direct.llen(store.keys.taken(0, "w1")) == 0
    await direct.aclose()


async def _held(proxy: DelayingProxy) -> bool:
    return bool(proxy.held)


async def test_a_move_made_after_the_hand_overs_heartbeat_lapsed_goes_through_take(redis_url: str,
                                                                                   tmp_path: Path) -> None:
    """The approval set the hand-over's heartbeat for ``stale_after``; a wait that reaches Redis later than that
    (held up on its way, here by a proxy) still moves the call. Started at once, with no beat before the first
    ``heartbeat_interval``, the sweep would find a running call with no heartbeat and mark it `interrupted` while
    its child runs, and the runner would then cut the child off. Such a late move goes through TAKE (which
    refreshes the heartbeat): the call runs once, to its end."""
    direct = Redis.from_url(redis_url)
    store = CallStore(direct)
    (call_id,) = await proposed(store, 1)
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    async with DelayingProxy(host, int(port), b"BLMOVE", delay=1.0, hold="request") as proxy:
        waits = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0")
        worker = RunnerWorker(direct, store, marker_executor(marker, sleep=1.0), runner_id="w1", reader=waits,
                              handover=True, **FAST)  # type: ignore[arg-type]
        async with running(worker):
            await wait_until(lambda: _held(proxy))  # the first wait is held up on its way to Redis
            await wait_until(lambda: direct.exists(store.keys.parked(0)))
            await store.approve(call_id, "U_APP", [], ApprovalPolicy())
            await wait_until(lambda: all_terminal(store, [call_id]))
        await waits.aclose()
    record = await store.get(call_id)
    assert record.state is CallState.finished, (record.state, record.result)
    assert executions(marker) == [call_id]
    await direct.aclose()
