"""The loop's own epoll for children's descriptors (bot/runner/watch.py), with real pipes, pidfds and processes."""

from __future__ import annotations

import asyncio
import gc
import os
from pathlib import Path

from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
from bot.runner.watch import ChildWatch, child_watch
from tests.support.fisk_app import make_script


def _open_fds() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


async def test_one_watch_per_loop_and_calls_leave_no_descriptor_behind(tmp_path: Path) -> None:
    script = make_script(tmp_path, "talker", "print('hello')\n")
    await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=10)  # the watch exists from here
    loop = asyncio.get_running_loop()
    watch = child_watch(loop)
    assert isinstance(watch, ChildWatch) and child_watch(loop) is watch
    before = _open_fds()
    results = [await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=10) for _ in range(20)]
    assert {(r.status, r.exit_code, r.output) for r in results} == {("finished", 0, "hello\n")}
    assert _open_fds() == before  # every pipe and pidfd closed (and unwatched first)
    assert watch._callbacks == {}


async def test_callbacks_run_on_the_loop_and_an_unwatched_descriptor_is_not_called() -> None:
    loop = asyncio.get_running_loop()
    watch = child_watch(loop)
    first_r, first_w = os.pipe()
    second_r, second_w = os.pipe()
    calls: list[str] = []
    done = loop.create_future()

    def first() -> None:
        calls.append("first")
        os.read(first_r, 10)
        watch.unwatch(first_r)
        watch.unwatch(second_r)  # a callback may drop another descriptor of the same batch
        loop.call_later(0.05, done.set_result, None)

    watch.watch(first_r, first)
    watch.watch(second_r, lambda: calls.append("second"))
    os.write(first_w, b"x")
    os.write(second_w, b"y")  # both ready in one epoll batch; whichever comes first drops the other
    await asyncio.wait_for(done, 5)
    assert calls in (["first"], ["second", "first"])
    watch.unwatch(first_r)  # twice, and after the callback's own: not an error
    for fd in (first_r, first_w, second_r, second_w):
        os.close(fd)


def test_a_collected_loop_closes_its_watch() -> None:
    loop = asyncio.new_event_loop()
    try:
        watch = child_watch(loop)
        assert isinstance(watch, ChildWatch)
        fd = watch._epoll.fileno()
        assert fd in _open_fds()
    finally:
        loop.close()
    del loop, watch
    gc.collect()
    assert fd not in _open_fds()
