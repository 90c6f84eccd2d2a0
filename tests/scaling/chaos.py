"""Parts of the failover chaos tests (``test_failover_chaos.py``): a tool that logs its own executions, a runner
executor that verifies each decision before running it, a poster that can be stopped and started again, and
waiting that rides out a failover.

The tool writes ``<label> <pid>`` to a log file the moment it starts, so an execution is counted by the child
itself, not by anything the bot says about it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from redis.exceptions import RedisClusterException, RedisError

from bot.approvals.decisions import DecisionRefused, DecisionVerifier
from bot.approvals.records import CallRecord
from bot.runner import run_argv
from bot.slack import SlackFrontEnd
from tests.support.fisk_app import make_script

# argv: <log> <label> <seconds> [<gate>]. The line is on disk before the wait: a child killed mid-wait still
# counts. With a gate file the child waits until that file exists (at most <seconds>): it runs exactly as long as
# the test needs, however slow the machine.
TOOL = """
import os, sys, time
log, label, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
gate = sys.argv[4] if len(sys.argv) > 4 else None
with open(log, "a") as f:
    f.write(f"{label} {os.getpid()}\\n")
    f.flush()
    os.fsync(f.fileno())
deadline = time.monotonic() + seconds
while time.monotonic() < deadline and not (gate and os.path.exists(gate)):
    time.sleep(0.05 if gate else seconds)
print(f"{label} done")
"""

# What an outage looks like to a client: a refused or reset connection, a timeout, a cluster without the slot.
OUTAGE = (RedisError, RedisClusterException, OSError, TimeoutError)


def make_tool(directory: Path) -> tuple[Path, str]:
    """The executable and its sha256 (the binary digest every decision is signed over)."""
    path = make_script(directory, "chaos-tool", TOOL)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def executions(log: Path) -> Counter[str]:
    """How many times each label's child started."""
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(line.split()[0] for line in lines if line.strip())


def verifying_executor(verifier: DecisionVerifier) -> Callable[[CallRecord], Awaitable[dict[str, Any]]]:
    """Run a call only if its signed decision verifies (``check``, not ``consume``: the per-process replay memory
    would hide a second run by the same runner, and the point is that the Redis lifecycle alone runs a call once)."""

    async def execute(record: CallRecord) -> dict[str, Any]:
        try:
            verifier.check(record)
        except DecisionRefused as exc:
            return {"status": "refused", "error": f"refused: {exc.reason}; not run"}
        result = await run_argv(list(record.argv), env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                                cwd=None, timeout=60)
        return result.as_json()

    return execute


class StoppablePoster:
    """The front end's poster, stopped to hold a finished call's result back, started again after the failover."""

    def __init__(self, front: SlackFrontEnd) -> None:
        self.front = front
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self.front.run_poster(self._stop))

    async def stop(self) -> None:
        if self._task is not None:
            self._stop.set()
            await asyncio.wait_for(self._task, 20)
            self._task = None


async def eventually(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``predicate`` (sync or async) until it returns something truthy, and return that; Redis failures (a
    failover) count as "not yet"."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = predicate()
            if asyncio.iscoroutine(value):
                value = await value
            if value:
                return value
        except OUTAGE as exc:
            last_error = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what} (last Redis error: {last_error!r})")
        await asyncio.sleep(0.05)


async def first_write_after(write: Callable[[], Awaitable[Any]], timeout: float = 60.0) -> float:
    """Retry ``write`` until it succeeds; the monotonic time it did."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            await write()
            return time.monotonic()
        except OUTAGE:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.02)
