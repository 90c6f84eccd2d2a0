"""Stopping loops that Python 3.11 may not stop with one cancellation (bot/cancelling.py): a consumer loop that
sends Redis commands back to back loses about one cancellation in three there (asyncio.wait_for around redis-py's
send, CPython gh-86296). Real Redis, the real client with its default socket timeout."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from bot.cancelling import cancel_and_wait
from bot.streams import stop_consumer

LOOPS = 40


async def _commands_back_to_back(redis: Redis, counter: list[int]) -> None:
    while True:
        await redis.ping()
        counter[0] += 1


async def test_loops_sending_redis_commands_all_end(redis: Redis) -> None:
    counters = [[0] for _ in range(LOOPS)]
    loops = [asyncio.create_task(_commands_back_to_back(redis, c)) for c in counters]
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await asyncio.wait_for(cancel_and_wait(loops, again_after=0.1), 30)  # one cancel() leaves some reading for ever
    assert all(task.done() for task in loops)
    sent = [c[0] for c in counters]
    await asyncio.sleep(0.1)
    assert [c[0] for c in counters] == sent  # none goes on after it was said to have ended
    assert time.monotonic() - started < 30


async def _flushes_on_the_way_out(redis: Redis, key: str, takes: float, flushed: list[str]) -> None:
    """Like the poster's acknowledger: waits until stopped, then makes a last write that takes ``takes`` seconds."""
    try:
        await asyncio.Event().wait()
    finally:
        await asyncio.sleep(takes)
        await redis.set(key, "1")
        flushed.append("done")


async def test_a_task_gets_its_time_to_clean_up_before_it_is_cancelled_again(redis: Redis) -> None:
    flushed: list[str] = []
    task = asyncio.create_task(_flushes_on_the_way_out(redis, "flushed", 0.2, flushed))
    await asyncio.sleep(0.01)
    await cancel_and_wait([task], again_after=2.0)
    assert flushed == ["done"] and await redis.get("flushed") == b"1"


async def test_a_loop_that_swallows_its_first_cancellation_ends() -> None:
    swallowed: list[bool] = []

    async def swallows_once() -> None:  # what a lost cancellation looks like from outside
        while True:
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed.append(True)

    task = asyncio.create_task(swallows_once())
    await asyncio.sleep(0.02)
    await asyncio.wait_for(cancel_and_wait([task], again_after=0.05), 5)
    assert swallowed == [True] and task.cancelled()


async def test_stop_consumer_ends_loops_and_handlers_that_lost_a_cancellation(redis: Redis) -> None:
    counters = [[0] for _ in range(LOOPS + 3)]
    loops = [asyncio.create_task(_commands_back_to_back(redis, c)) for c in counters[:LOOPS]]
    handlers = [asyncio.create_task(_commands_back_to_back(redis, c)) for c in counters[LOOPS:]]
    await asyncio.sleep(0.05)
    await asyncio.wait_for(stop_consumer(loops, handlers, grace=0.05), 30)
    assert all(task.done() for task in loops + handlers)


async def test_tasks_already_ended_and_failed_ones_are_fine() -> None:
    async def fails() -> None:
        raise RuntimeError("boom")

    failed = asyncio.create_task(fails())
    finished = asyncio.create_task(asyncio.sleep(0))
    await asyncio.sleep(0.01)
    await cancel_and_wait([failed, finished])  # exceptions retrieved: no "never retrieved" warning
    await cancel_and_wait([])
    assert failed.done() and finished.done()


async def test_an_owner_cancelled_while_stopping_its_tasks_still_stops_them_then_is_cancelled(redis: Redis) -> None:
    """A shutdown that is itself cancelled (twice, while its helpers take their time and lose cancellations)
    must not leave them running: no Redis write after the owner has ended."""
    counter = [0]
    swallowed: list[bool] = []
    quit_anyway: list[bool] = []  # lets the test end its helper whatever the code under test did

    async def slow_and_stubborn() -> None:
        while not quit_anyway:
            try:
                await redis.incr("stubborn")
                counter[0] += 1
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                if len(swallowed) >= 2:
                    raise
                swallowed.append(True)  # a lost cancellation

    helper = asyncio.create_task(slow_and_stubborn())
    await asyncio.sleep(0.05)
    owner = asyncio.create_task(cancel_and_wait([helper], again_after=0.3))
    await asyncio.sleep(0.05)
    owner.cancel()  # while its first wait runs: it goes on stopping the helper
    await asyncio.sleep(0.4)
    owner.cancel()  # again, while it re-cancels
    try:
        done, _ = await asyncio.wait({owner}, timeout=10)
        assert done and owner.cancelled()  # the owner's own cancellation is raised once the helper ended
        assert helper.done()
        writes = int(await redis.get("stubborn") or 0)
        await asyncio.sleep(0.1)
        assert int(await redis.get("stubborn") or 0) == writes
    finally:
        quit_anyway.append(True)
        await asyncio.wait({helper}, timeout=5)


async def test_a_consumer_cancelled_during_its_handlers_grace_still_stops_them(redis: Redis) -> None:
    """A shutdown cut short (serve cancels a role still draining) cancels ``stop_consumer`` while its handlers
    have their grace: they must be stopped all the same, not left writing to Redis after their owner has ended
    (before: the cancellation left the grace wait and the handlers were never cancelled)."""
    counter = [0]
    loop = asyncio.create_task(_commands_back_to_back(redis, [0]))
    handler = asyncio.create_task(_commands_back_to_back(redis, counter))
    await asyncio.sleep(0.05)
    owner = asyncio.create_task(stop_consumer([loop], [handler], grace=30))
    await asyncio.sleep(0.2)
    assert not owner.done() and not handler.done()  # in its grace
    owner.cancel()
    try:
        done, _ = await asyncio.wait({owner}, timeout=10)
        assert done and owner.cancelled()
        assert loop.done() and handler.done()
        sent = counter[0]
        await asyncio.sleep(0.1)
        assert counter[0] == sent
    finally:
        await cancel_and_wait([loop, handler])


async def test_an_owner_cancelled_meanwhile_still_gives_its_tasks_their_time_to_clean_up(redis: Redis) -> None:
    """The owner's own cancellation must not cut short a stopping task's last flush (before: it went straight to
    re-cancelling, which cancelled the flush)."""
    flushed: list[str] = []
    task = asyncio.create_task(_flushes_on_the_way_out(redis, "flushed-late", 0.3, flushed))
    await asyncio.sleep(0.01)
    owner = asyncio.create_task(cancel_and_wait([task], again_after=2.0))
    await asyncio.sleep(0.05)
    owner.cancel()
    done, _ = await asyncio.wait({owner}, timeout=5)
    assert done and owner.cancelled() and task.done()
    assert flushed == ["done"] and await redis.get("flushed-late") == b"1"
