"""Trying to break the loop's own epoll for children (bot/runner/watch.py) with real processes: cancellation and
timeouts mid-call, a child that closes its output early, descriptors reused after a call, children listing what
they inherited, several loops in several threads, loops on other selectors, a flood of binary output, and a
callback that raises. After each: every descriptor closed, nothing left registered, no zombie."""

from __future__ import annotations

import asyncio
import os
import selectors
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.fisk.environment import scrub_environment
from bot.runner import CallResult, run_argv
from bot.runner.watch import ChildWatch, child_watch
from tests.support.fisk_app import make_script

SLEEPER = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
STUBBORN = ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('started', flush=True)\n"
            "time.sleep(60)\n")


def _open_fds() -> dict[int, str]:
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the listing's own descriptor, closed meanwhile
            continue
    return found


def _zombies() -> list[int]:
    """This process's children that exited and were not reaped."""
    mine, dead = str(os.getpid()), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == mine and fields[0] == "Z":
                dead.append(int(name))
    return dead


async def _settled(watch: ChildWatch, before: dict[int, str]) -> None:
    """Wait (a few seconds at most) until every child is reaped, then check nothing is left behind."""
    deadline = time.monotonic() + 5
    while (watch._callbacks or _open_fds() != before) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert watch._callbacks == {}
    assert _open_fds() == before
    assert _zombies() == []


async def _run(argv: list[str], **kw: Any) -> CallResult:
    kw.setdefault("cwd", None)
    kw.setdefault("timeout", 30)
    return await run_argv(argv, env=scrub_environment().env, **kw)


async def _watch_ready(tmp_path: Path) -> ChildWatch:
    await _run(["/bin/true"])  # the loop's watch exists from the first call on
    watch = child_watch(asyncio.get_running_loop())
    assert isinstance(watch, ChildWatch)
    return watch


async def test_calls_cancelled_mid_run_are_killed_reaped_and_unregistered(tmp_path: Path) -> None:
    watch = await _watch_ready(tmp_path)
    before = _open_fds()
    sleeper, stubborn = make_script(tmp_path, "sleeper", SLEEPER), make_script(tmp_path, "stubborn", STUBBORN)
    calls = [asyncio.create_task(_run([str(script)])) for script in (sleeper, stubborn, sleeper)]
    await asyncio.sleep(0.5)
    assert len(watch._callbacks) == 6  # a pipe and a pidfd each
    for call in calls:
        call.cancel()
    for call in calls:
        with pytest.raises(asyncio.CancelledError):
            await call
    await _settled(watch, before)


async def test_a_cancelled_call_has_reaped_its_child_by_the_time_the_cancellation_arrives(tmp_path: Path) -> None:
    """Nothing waits after the cancellation here: a loop closed right after (shutdown, or the end of an
    ``asyncio.run``) never hands out the child's exit, so the child must be reaped before the cancellation goes
    on, or it stays a zombie, its pidfd open, for the life of the process."""
    watch = await _watch_ready(tmp_path)
    before = _open_fds()
    call = asyncio.create_task(_run([str(make_script(tmp_path, "stubborn", STUBBORN))]))
    await asyncio.sleep(0.3)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert watch._callbacks == {}
    assert _open_fds() == before
    assert _zombies() == []


async def test_a_timed_out_call_that_ignores_sigterm_is_killed_and_reaped(tmp_path: Path) -> None:
    watch = await _watch_ready(tmp_path)
    before = _open_fds()
    result = await _run([str(make_script(tmp_path, "stubborn", STUBBORN))], timeout=0.5, kill_grace=0.2)
    assert (result.status, result.output) == ("timed_out", "started\n")
    await _settled(watch, before)


async def test_a_child_that_closes_its_output_early_is_still_waited_for(tmp_path: Path) -> None:
    watch = await _watch_ready(tmp_path)
    before = _open_fds()
    script = make_script(tmp_path, "quiet", "import os, sys, time\nprint('bye', flush=True)\nos.close(1)\nos.close(2)\n"
                                            "time.sleep(0.4)\nos._exit(3)\n")
    started = time.monotonic()
    result = await _run([str(script)])
    assert (result.status, result.exit_code, result.output) == ("finished", 3, "bye\n")
    assert time.monotonic() - started >= 0.4  # EOF came first; the exit was still waited for, not assumed
    await _settled(watch, before)


@pytest.mark.parametrize("spawned_by", ["posix_spawn", "Popen"])
async def test_a_child_inherits_neither_the_epoll_nor_another_calls_pipe_or_pidfd(tmp_path: Path,
                                                                                    spawned_by: str) -> None:
    await _watch_ready(tmp_path)
    other = asyncio.create_task(_run([str(make_script(tmp_path, "sleeper", SLEEPER))]))
    await asyncio.sleep(0.3)  # its pipe and pidfd are open and watched in this process
    cwd = str(tmp_path) if spawned_by == "Popen" else None  # a working directory needs Popen (spawn.py)
    listing = await _run(["/usr/bin/find", "/proc/self/fd/", "-mindepth", "1", "-printf", "%l\n"], cwd=cwd)
    other.cancel()
    with pytest.raises(asyncio.CancelledError):
        await other
    targets = listing.output.splitlines()
    assert listing.status == "finished" and targets[:3] == ["/dev/null", targets[1], targets[1]]
    assert targets[1].startswith("pipe:")  # its own output pipe, as stdout and stderr
    assert not [t for t in targets[3:] if "eventpoll" in t or "pidfd" in t or t.startswith("pipe:")], targets


async def test_descriptor_numbers_reused_after_a_call_are_not_watched(tmp_path: Path) -> None:
    watch = await _watch_ready(tmp_path)
    pipe_fds = set()
    for _ in range(3):
        await _run(["/bin/echo", "x"])
    first = _open_fds()
    task = asyncio.create_task(_run([str(make_script(tmp_path, "sleeper", SLEEPER))]))
    await asyncio.sleep(0.3)
    pipe_fds = set(_open_fds()) - set(first)  # the running call's pipe and pidfd
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _settled(watch, first)
    reused: list[int] = []
    while not pipe_fds <= set(reused):  # take the same numbers again, with data waiting to be read
        r, w = os.pipe()
        os.write(w, b"not a child's output")
        reused += [r, w]
    try:
        for _ in range(5):
            await asyncio.sleep(0)
        for fd in pipe_fds:
            watch._epoll.register(fd)  # would raise FileExistsError if the old registration had survived
            watch._epoll.unregister(fd)
        assert watch._callbacks == {}
    finally:
        for fd in reused:
            os.close(fd)


async def test_a_callback_that_raises_does_not_stop_the_watch_for_other_calls(tmp_path: Path) -> None:
    watch = await _watch_ready(tmp_path)
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    r, w = os.pipe()
    os.write(w, b"x")

    def broken() -> None:
        raise RuntimeError("a callback failed")

    watch.watch(r, broken)
    try:
        # before the fix the broken descriptor came first in every epoll batch: no other child's exit was ever
        # handed out, and each call hung for good (after its timeout, on its exit after SIGKILL)
        results = await asyncio.wait_for(asyncio.gather(*(_run(["/bin/echo", str(i)]) for i in range(5))), 10)
    finally:
        watch.unwatch(r)
        os.close(r)
        os.close(w)
        loop.set_exception_handler(previous)
    assert [(res.status, res.output) for res in results] == [("finished", f"{i}\n") for i in range(5)]
    assert reported and isinstance(reported[0]["exception"], RuntimeError)


async def test_a_flood_of_binary_output_is_counted_whole(tmp_path: Path) -> None:
    watch = await _watch_ready(tmp_path)
    before = _open_fds()
    result = await _run(["/usr/bin/head", "-c", str(3 * 1024 * 1024), "/dev/urandom"], output_limit=4096)
    assert (result.status, result.exit_code, result.total_bytes, result.truncated) == ("finished", 0, 3 << 20, True)
    await _settled(watch, before)


def _in_loop(make_loop: Callable[[], asyncio.AbstractEventLoop], calls: int, out: list[Any]) -> None:
    loop = make_loop()
    try:
        async def main() -> None:
            results = await asyncio.gather(*(_run(["/bin/echo", str(i)]) for i in range(calls)))
            out.append(([(r.status, r.output) for r in results], child_watch(asyncio.get_running_loop())))
        loop.run_until_complete(main())
    finally:
        loop.close()


def test_loops_in_several_threads_each_watch_their_own_children() -> None:
    out: list[Any] = []
    threads = [threading.Thread(target=_in_loop, args=(asyncio.new_event_loop, 10, out)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(out) == 3
    assert all(results == [("finished", f"{i}\n") for i in range(10)] for results, _ in out)
    assert len({id(watch) for _, watch in out}) == 3


@pytest.mark.parametrize("selector", [selectors.SelectSelector, selectors.PollSelector])
def test_a_loop_on_another_selector_watches_children_too(selector: type[selectors.BaseSelector]) -> None:
    out: list[Any] = []
    _in_loop(lambda: asyncio.SelectorEventLoop(selector()), 5, out)
    [(results, watch)] = out
    assert results == [("finished", f"{i}\n") for i in range(5)] and isinstance(watch, ChildWatch)


async def test_calls_cancelled_at_every_point_of_their_way_leave_nothing_behind(tmp_path: Path) -> None:
    """200 calls, 20 at a time, each cancelled after a different number of loop passes (before its start, while
    it runs, while its output is read, after its exit): each ends cancelled or finished, and afterwards nothing is
    open, registered or unreaped."""
    watch = await _watch_ready(tmp_path)
    before = _open_fds()
    talker = make_script(tmp_path, "talker", "import sys, time\nfor i in range(20):\n    print(i, flush=True)\n"
                                             "    time.sleep(0.001)\n")
    outcomes: list[str] = []

    async def one(passes: int) -> None:
        call = asyncio.create_task(_run([str(talker)] if passes % 2 else ["/bin/echo", "x"]))
        for _ in range(passes):
            await asyncio.sleep(0)
        call.cancel()
        try:
            result = await call
        except asyncio.CancelledError:
            outcomes.append("cancelled")
        else:
            assert result.status == "finished" and result.exit_code == 0, result
            outcomes.append("finished")

    for batch in range(10):
        await asyncio.gather(*(one(batch * 20 + i) for i in range(20)))
    assert len(outcomes) == 200 and "cancelled" in outcomes
    await _settled(watch, before)
