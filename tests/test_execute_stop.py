"""A stop request (Cancel in Slack) against real long-running subprocesses: SIGTERM to the process group, then
SIGKILL after the grace period; a tool that ended on its own first keeps its own result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.fisk.environment import scrub_environment
from bot.runner import CallResult, run_argv
from bot.runner.execute import STOP_REQUEST, StopRequest
from tests.support.fisk_app import make_script

SLEEPER = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
STUBBORN = (
    "import signal, time\nsignal.signal(signal.SIGTERM, lambda *_: print('ignoring TERM', flush=True))\n"
    "print('started', flush=True)\ntime.sleep(60)\n"
)


async def _run_until(argv: list[str], stop: asyncio.Event, after: float, **kw: object) -> CallResult:
    async def press_stop() -> None:
        await asyncio.sleep(after)
        stop.set()

    presser = asyncio.create_task(press_stop())
    try:
        return await run_argv(argv, env=scrub_environment().env, cwd=None, timeout=30, stop=stop, **kw)  # type: ignore[arg-type]
    finally:
        presser.cancel()


#: the runner's own stop request (woken with the child's exit, no task of its own) and any other asyncio.Event
STOPS = pytest.mark.parametrize("make_stop", [StopRequest, asyncio.Event], ids=["StopRequest", "Event"])


@STOPS
async def test_stop_sends_sigterm_and_keeps_output(tmp_path: Path, make_stop: type[asyncio.Event]) -> None:
    script = make_script(tmp_path, "sleeper", SLEEPER)
    result = await _run_until([str(script)], make_stop(), 0.5, kill_grace=5)
    assert result.status == "cancelled" and result.stopped_by == "SIGTERM"
    assert result.exit_code == -15 and result.output == "started\n"
    assert result.duration_seconds < 5


@STOPS
async def test_stop_escalates_to_sigkill_when_term_is_ignored(tmp_path: Path, make_stop: type[asyncio.Event]) -> None:
    script = make_script(tmp_path, "stubborn", STUBBORN)
    result = await _run_until([str(script)], make_stop(), 0.5, kill_grace=0.5)
    assert result.status == "cancelled" and result.stopped_by == "SIGKILL" and result.exit_code == -9
    assert "ignoring TERM" in result.output


@STOPS
async def test_tool_that_ended_first_keeps_its_own_result(tmp_path: Path, make_stop: type[asyncio.Event]) -> None:
    stop = make_stop()
    script = make_script(tmp_path, "quick", "print('done')\n")
    result = await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=30, stop=stop)
    stop.set()
    assert result.status == "finished" and result.exit_code == 0 and result.stopped_by is None


async def test_stop_request_is_taken_from_the_calling_task(tmp_path: Path) -> None:
    """The runner worker sets STOP_REQUEST around its executor, so executors need no extra parameter."""
    script = make_script(tmp_path, "sleeper", SLEEPER)
    stop = asyncio.Event()

    async def executor() -> CallResult:
        STOP_REQUEST.set(stop)
        return await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=30)

    task = asyncio.create_task(executor())
    await asyncio.sleep(0.5)
    stop.set()
    result = await asyncio.wait_for(task, 10)
    assert result.status == "cancelled" and result.stopped_by == "SIGTERM"


async def test_a_stop_request_is_waited_for_without_a_task_of_its_own(tmp_path: Path) -> None:
    """The runner's StopRequest wakes the child's wait directly: while a tool runs, the call is one task (no Task on
    stop.wait() per call), and a stop still ends it at once."""
    script = make_script(tmp_path, "sleeper", SLEEPER)
    stop = StopRequest()
    before = len(asyncio.all_tasks())
    task = asyncio.create_task(run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=30, stop=stop))
    await asyncio.sleep(0.5)
    assert len(asyncio.all_tasks()) == before + 1
    stop.set()
    result = await asyncio.wait_for(task, 10)
    assert result.status == "cancelled" and result.stopped_by == "SIGTERM" and result.duration_seconds < 5


async def test_a_stop_requested_before_the_start_stops_the_tool_at_once(tmp_path: Path) -> None:
    script = make_script(tmp_path, "sleeper", SLEEPER)
    stop = StopRequest()
    stop.set()
    result = await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=30, stop=stop)
    assert result.status == "cancelled" and result.stopped_by == "SIGTERM" and result.duration_seconds < 5


async def test_a_timeout_with_a_stop_request_pending_is_a_timeout(tmp_path: Path) -> None:
    script = make_script(tmp_path, "sleeper", SLEEPER)
    stop = StopRequest()
    result = await run_argv([str(script)], env=scrub_environment().env, cwd=None, timeout=0.5, stop=stop)
    assert result.status == "timed_out" and result.stopped_by is None
    stop.set()  # after the call: wakes nothing, raises nothing
