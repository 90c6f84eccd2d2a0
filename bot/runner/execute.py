"""Run one approved tool call: argv exec without a shell, bounded time, bounded memory, sanitized output.

Process handling, and why:

- ``start_new_session=True`` puts the tool in its own process group, so a timeout can signal the tool *and*
  everything it started (``killpg``), not only the direct child.
- stdout and stderr share one pipe so the output reads in the order it was written; stdin is /dev/null so a
  tool that prompts fails instead of hanging.
- A child-exit callback (``process_exited``) is used instead of ``Process.wait()``: on Python 3.11 ``wait()``
  only returns once every pipe is closed, so a grandchild that inherited stdout would hang the runner.
- Grandchild policy: once the tool exits, the runner waits at most ``DRAIN_GRACE`` seconds for the pipe to
  reach EOF. If something still holds it, the tool's process group gets SIGKILL (leftovers of a finished call
  are part of that call) and, if the pipe is still open after a further short wait (a process that escaped
  with its own session), the runner closes its end and returns. The result is still ``finished`` with the
  tool's exit code; output seen so far is kept.
- On timeout: SIGTERM to the group, SIGKILL to the group after ``kill_grace`` seconds, status ``timed_out``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable

from bot.runner.output import OutputCapture
from bot.runner.result import CallResult, CallStatus
from bot.sanitize import DEFAULT_OUTPUT_LIMIT, build_redactor, redact_argv, sanitize_captured

# Seconds to wait for EOF on the output pipe after the tool exited, before treating the pipe as held.
DRAIN_GRACE = 1.0
# Seconds to wait for EOF after killing the process group, before closing our end regardless.
CLOSE_GRACE = 0.5


class _CallProtocol(asyncio.SubprocessProtocol):
    """Feeds pipe data into the bounded capture and signals exit and EOF separately."""

    def __init__(self, capture: OutputCapture, loop: asyncio.AbstractEventLoop) -> None:
        self.capture = capture
        self.exited = loop.create_future()
        self.eof = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self.capture.feed(bytes(data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.eof.done():
            self.eof.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        for future in (self.eof, self.exited):
            if not future.done():
                future.set_result(None)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal the tool's process group; a group that is already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait(future: asyncio.Future[None], timeout: float) -> bool:
    """Wait for ``future`` up to ``timeout`` seconds without cancelling it; True when it completed."""
    if not future.done():
        await asyncio.wait({future}, timeout=max(0.0, timeout))
    return future.done()


def _start_error(argv: list[str], cwd: str | None, exc: BaseException) -> str:
    """A human-readable reason a binary could not start (missing, not executable, bad format, bad cwd)."""
    if isinstance(exc, OSError):
        target = exc.filename if exc.filename is not None else argv[0]
        where = " (working directory)" if cwd is not None and target == cwd else ""
        return f"{exc.strerror or exc.__class__.__name__}: {target}{where}"
    return f"{exc.__class__.__name__}: {exc}"


async def _supervise(
    transport: asyncio.SubprocessTransport,
    protocol: _CallProtocol,
    timeout: float,
    kill_grace: float,
) -> bool:
    """Wait for the tool under the deadline and the grandchild policy; True when it timed out."""
    pgid = transport.get_pid()
    timed_out = not await _wait(protocol.exited, timeout)
    if timed_out:
        _signal_group(pgid, signal.SIGTERM)
        if not await _wait(protocol.exited, kill_grace):
            _signal_group(pgid, signal.SIGKILL)
            await protocol.exited
    if not await _wait(protocol.eof, 0.0 if timed_out else DRAIN_GRACE):
        _signal_group(pgid, signal.SIGKILL)
        await _wait(protocol.eof, CLOSE_GRACE)
    return timed_out


async def run_argv(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    timeout: float,
    kill_grace: float = 5.0,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    secret_values: Iterable[str] = (),
    redact_patterns: Iterable[str] = (),
) -> CallResult:
    """Execute ``argv`` (no shell) and return its sanitized result; never raises for a tool's failure.

    ``env`` should come from ``bot.fisk.environment.scrub_environment`` and ``secret_values`` from its
    ``removed_values.values()`` so a credential the tool got some other way is still redacted. If the caller
    is cancelled, the tool's process group is killed before the cancellation propagates.
    """
    secrets = tuple(secret_values)
    patterns = tuple(redact_patterns)
    redactor = build_redactor(secrets, patterns)
    display = redact_argv(argv, secrets, patterns)
    started = time.monotonic()
    if not argv:
        return CallResult(status="failed_to_start", argv_display=display, error="empty argv")
    loop = asyncio.get_running_loop()
    capture = OutputCapture.for_output_limit(output_limit)
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _CallProtocol(capture, loop),
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return CallResult(
            status="failed_to_start",
            argv_display=display,
            duration_seconds=time.monotonic() - started,
            error=redactor.redact(_start_error(argv, cwd, exc))[0],
        )
    try:
        timed_out = await _supervise(transport, protocol, timeout, kill_grace)
    except BaseException:
        _signal_group(transport.get_pid(), signal.SIGKILL)
        raise
    finally:
        exit_code = transport.get_returncode()
        transport.close()
    status: CallStatus = "timed_out" if timed_out else "finished"
    sanitized = sanitize_captured(capture.captured(), redactor, output_limit)
    return CallResult(
        status=status,
        exit_code=exit_code,
        output=sanitized.text,
        truncated=sanitized.truncated,
        total_bytes=capture.total_bytes,
        duration_seconds=time.monotonic() - started,
        redactions=sanitized.redactions,
        argv_display=display,
    )
