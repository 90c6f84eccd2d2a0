"""Run one approved tool call: argv exec without a shell, bounded time, bounded memory, sanitized output.

Process handling, and why:

- ``start_new_session=True`` puts the tool in its own process group, so a timeout can signal the tool *and*
  everything it started (``killpg``), not only the direct child.
- stdout and stderr share one pipe so the output reads in the order it was written; stdin is /dev/null so a
  tool that prompts fails instead of hanging.
- The child's exit is watched through a pidfd (``os.pidfd_open``) and the pipe is read by the event loop
  directly, both through the loop's own epoll for children (``watch.py``): asyncio's default child watcher on
  Python 3.11 starts a thread per child (``ThreadedChildWatcher``), which cost ~0.3 ms and a thread switch per
  call. Exit and EOF are separate signals on purpose: a grandchild that inherited stdout keeps the pipe open
  after the tool exited.
  Where pidfds are missing (Linux < 5.3, other systems) a thread waits for the exit instead.
- Grandchild policy: once the tool exits, the runner waits at most ``DRAIN_GRACE`` seconds for the pipe to
  reach EOF. If something still holds it, the tool's process group gets SIGKILL (leftovers of a finished call
  are part of that call) and, if the pipe is still open after a further short wait (a process that escaped
  with its own session), the runner closes its end and returns. The result is still ``finished`` with the
  tool's exit code; output seen so far is kept.
- On timeout: SIGTERM to the group, SIGKILL to the group after ``kill_grace`` seconds, status ``timed_out``.
- On a stop request (a human pressed Cancel; the worker sets the ``stop`` event, by default the one in
  ``STOP_REQUEST`` of the calling task): the same SIGTERM then SIGKILL, status ``cancelled`` -- unless the tool
  had exited on its own first, in which case its own result stands (the truth, not the wish).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any

from bot.runner import spawn
from bot.runner.output import OutputCapture
from bot.runner.result import CallResult, CallStatus
from bot.runner.watch import child_watch
from bot.sanitize import DEFAULT_OUTPUT_LIMIT, build_redactor, redact_argv, sanitize_captured
from bot.sanitize.cap import SanitizedOutput
from bot.sanitize.offload import INLINE_LIMIT
from bot.sanitize.secret_argv import NO_SHAPES, SecretArgvShapes, judge_argv
from bot.sanitize.withheld import TextRedactor, WithheldOutput

# Seconds to wait for EOF on the output pipe after the tool exited, before treating the pipe as held.
DRAIN_GRACE = 1.0
# Seconds to wait for EOF after killing the process group, before closing our end regardless.
CLOSE_GRACE = 0.5
# Bytes read from the output pipe per wake-up (a pipe holds 64 KiB by default).
READ_CHUNK = 65536


class StopRequest(asyncio.Event):
    """A call's stop request (the runner worker's, one per call): an ``asyncio.Event`` that also completes the
    futures handed to ``wake``, so a child's wait for its exit wakes on a stop request too. The runner waits for
    "exited or stopped" on one future, instead of a Task on ``stop.wait()`` and an ``asyncio.wait`` per call on
    the way to the child's start (any other ``asyncio.Event`` still works, the slower way)."""

    def __init__(self) -> None:
        super().__init__()
        self._wakers: list[asyncio.Future[None]] = []

    def set(self) -> None:
        super().set()
        wakers, self._wakers = self._wakers, []
        for waker in wakers:
            _complete(waker)

    def wake(self, waker: asyncio.Future[None]) -> None:
        """Complete ``waker`` when the stop is requested (now, if it already was)."""
        if self.is_set():
            _complete(waker)
        else:
            self._wakers.append(waker)

    def forget(self, waker: asyncio.Future[None]) -> None:
        with contextlib.suppress(ValueError):
            self._wakers.remove(waker)


#: The stop request of the call the current task executes (set by the runner worker around its executor), so
#: an executor needs no extra parameter to honour Cancel.
STOP_REQUEST: ContextVar[asyncio.Event | None] = ContextVar("fisk_stop_request", default=None)


#: What an empty output sanitizes to (most calls of a quiet tool; nothing to decode, strip or redact).
_NO_OUTPUT = SanitizedOutput(text="", truncated=False, redactions=0)


class _Child:
    """One started tool: its output pipe read by the event loop into the capture, its exit watched by pidfd.

    ``exited`` and ``eof`` are futures that only ever get a result (never an exception), so waiting on them
    with a timeout never raises. Whoever holds the child calls ``close()`` when done; a child that has not
    exited yet is still reaped when it does (the exit watch stays registered), so no zombie is left behind.
    """

    def __init__(self, process: spawn.Started, capture: OutputCapture,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.process = process
        self.capture = capture
        self.loop = loop
        self.exited: asyncio.Future[None] = loop.create_future()
        self.eof: asyncio.Future[None] = loop.create_future()
        # What ``wait`` sleeps on: completed directly by the exit and EOF handlers, so the waiting task resumes
        # on the next loop pass (a done-callback on ``exited`` would cost one more pass and its own handle).
        self._waiter: asyncio.Future[None] | None = None
        self._waiting_for: asyncio.Future[None] | None = None
        assert process.stdout is not None
        self._watch = child_watch(loop)  # the loop's own epoll for children's descriptors (watch.py)
        self._pipe: int | None = process.stdout.fileno()
        os.set_blocking(self._pipe, False)
        self._watch.watch(self._pipe, self._read)
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):  # no pidfd on this system: a thread waits instead
            loop.run_in_executor(None, process.wait).add_done_callback(lambda _: self._mark_exited())
        else:
            self._watch.watch(self._pidfd, self._reap)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def _read(self) -> None:
        assert self._pipe is not None
        try:
            data = os.read(self._pipe, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            self.capture.feed(data)
        else:
            self._close_pipe()

    def _reap(self) -> None:
        """The pidfd became readable: the child exited. Collect its status (no zombie) and say so."""
        if self._pidfd is not None:
            self._watch.unwatch(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self.process.poll()
        self._mark_exited()

    def _mark_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        self._wake(self.exited)

    def _wake(self, completed: asyncio.Future[None]) -> None:
        waiter = self._waiter
        if waiter is not None and self._waiting_for is completed and not waiter.done():
            waiter.set_result(None)

    async def wait(self, future: asyncio.Future[None], timeout: float, stop: StopRequest | None = None) -> bool:
        """Wait for ``exited`` or ``eof`` up to ``timeout`` seconds, or until ``stop`` is requested, without
        cancelling it; True when it completed.

        Cheaper than ``asyncio.wait`` on the path every call takes (no set, no done-callback, one timer)."""
        if future.done():
            return True
        deadline = self.loop.time() + max(0.0, timeout)
        while not future.done() and not (stop is not None and stop.is_set()):
            remaining = deadline - self.loop.time()
            if remaining <= 0:
                break
            waiter = self._waiter = self.loop.create_future()
            self._waiting_for = future
            timer = self.loop.call_at(deadline, _complete, waiter)
            if stop is not None:
                stop.wake(waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = self._waiting_for = None
                if stop is not None:
                    stop.forget(waiter)
        return future.done()

    def _close_pipe(self) -> None:
        if self._pipe is not None:
            self._watch.unwatch(self._pipe)
            self._pipe = None
            assert self.process.stdout is not None
            self.process.stdout.close()
        if not self.eof.done():
            self.eof.set_result(None)
        self._wake(self.eof)

    def close(self) -> None:
        """Stop reading the pipe; the exit watch stays until the child is reaped."""
        self._close_pipe()


def _complete(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal the tool's process group; a group that is already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


#: Why a program could not start, in words an operator acts on (the OS's errno text reads like a Python error).
_START_ERRORS = {
    errno.ENOENT: "the program {target} was not found",
    errno.EACCES: "permission denied: {target} is not executable by the runner",
    errno.ENOEXEC: "{target} is not a program this machine can run (no #! line, or built for another system)",
    errno.ENOTDIR: "a part of the path {target} is not a directory",
    errno.E2BIG: "the command line is too long for the operating system",
    errno.ENOMEM: "there was not enough memory to start {target}",
    errno.EAGAIN: "the system refused to start another process (too many processes)",
}


def _start_error(argv: list[str], cwd: str | None, exc: BaseException) -> str:
    """A human sentence saying why a binary could not start (missing, not executable, bad format, bad cwd)."""
    if isinstance(exc, OSError):
        target = str(exc.filename if exc.filename is not None else argv[0])
        if cwd is not None and target == cwd:
            return f"the working directory {cwd} does not exist or cannot be entered"
        known = _START_ERRORS.get(exc.errno or -1)
        if known:
            return known.format(target=target)
        return f"{target} could not be started ({(exc.strerror or exc.__class__.__name__).lower()})"
    return f"the command could not be started ({exc})"


async def _exited_or_stopped(child: _Child, stop: asyncio.Event | None, timeout: float) -> str:
    """``"exited"``, ``"stop"`` (a stop request came first) or ``"timeout"``."""
    if stop is None or child.exited.done():
        return "exited" if await child.wait(child.exited, timeout) else "timeout"
    if isinstance(stop, StopRequest):  # the runner's: one future wakes on either
        if await child.wait(child.exited, timeout, stop):
            return "exited"
        return "stop" if stop.is_set() else "timeout"
    stopping: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    exited: asyncio.Future[Any] = child.exited
    try:
        await asyncio.wait({exited, stopping}, timeout=max(0.0, timeout), return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if child.exited.done():
        return "exited"
    return "stop" if stop.is_set() else "timeout"


async def _supervise(
    child: _Child, timeout: float, kill_grace: float, stop: asyncio.Event | None = None
) -> tuple[str, str | None]:
    """Wait for the tool under the deadline, a stop request and the grandchild policy: (how it ended, the signal
    that ended it). How: ``"exited"``, ``"timeout"`` or ``"stop"``."""
    pgid = child.pid
    how = await _exited_or_stopped(child, stop, timeout)
    signalled: str | None = None
    if how != "exited":
        _signal_group(pgid, signal.SIGTERM)
        signalled = "SIGTERM"
        if not await child.wait(child.exited, kill_grace):
            _signal_group(pgid, signal.SIGKILL)
            signalled = "SIGKILL"
            await child.exited
    if not await child.wait(child.eof, 0.0 if how != "exited" else DRAIN_GRACE):
        _signal_group(pgid, signal.SIGKILL)
        await child.wait(child.eof, CLOSE_GRACE)
    return how, signalled


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
    executable_fd: int | None = None,
    run_as: tuple[int, int] | None = None,
    stop: asyncio.Event | None = None,
    secret_output: SecretArgvShapes = NO_SHAPES,
) -> CallResult:
    """Execute ``argv`` (no shell) and return its sanitized result; never raises for a tool's failure.

    With ``executable_fd`` the process image comes from that descriptor (a sealed copy whose digest was
    checked, see ``binary.py``) while ``argv[0]`` stays the configured path. ``run_as`` (uid, gid) starts the
    tool under another user with no supplementary groups; the runner must be allowed to switch (root or
    CAP_SETUID/CAP_SETGID), otherwise the call fails to start.

    ``env`` should come from ``bot.fisk.environment.scrub_environment`` and ``secret_values`` from its
    ``removed_values.values()`` so a credential the tool got some other way is still redacted. If the caller
    is cancelled, the tool's process group is killed before the cancellation propagates. ``stop`` (default:
    ``STOP_REQUEST`` of this task) stops the tool with SIGTERM, then SIGKILL after ``kill_grace``.

    When the argv asks for a secret's value (``bot.sanitize.secret_argv``: the built-in shapes plus the
    operator's ``secret_output``), every line of the output is redacted and ``output_withheld`` says why.
    """
    stop = stop if stop is not None else STOP_REQUEST.get()
    secrets = tuple(secret_values)
    patterns = tuple(redact_patterns)
    started = time.monotonic()
    if not argv:
        return CallResult(status="failed_to_start", argv_display=[], error="empty argv")
    capture = OutputCapture.for_output_limit(output_limit)
    try:
        process = spawn.start(argv, env=env, cwd=cwd, executable_fd=executable_fd, run_as=run_as)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return CallResult(
            status="failed_to_start",
            argv_display=redact_argv(argv, secrets, patterns),
            duration_seconds=time.monotonic() - started,
            error=build_redactor(secrets, patterns).redact(_start_error(argv, cwd, exc))[0],
        )
    try:
        child = _Child(process, capture, asyncio.get_running_loop())
    except BaseException:  # not watched: do not leave it running unsupervised
        _signal_group(process.pid, signal.SIGKILL)
        process.wait()
        raise
    # Work the result needs but the start does not is done while the tool runs, not before it starts.
    redactor = build_redactor(secrets, patterns)
    display = redact_argv(argv, secrets, patterns)
    # judged once per call on the argv (remembered per command line), never per output byte
    verdict = judge_argv(argv, secret_output)
    output_redactor: TextRedactor = redactor if verdict is None else WithheldOutput(verdict.kind)
    try:
        how, signalled = await _supervise(child, timeout, kill_grace, stop)
    except asyncio.CancelledError:
        _signal_group(child.pid, signal.SIGKILL)
        # reaped before the cancellation goes on (a killed process is gone within milliseconds; bounded all the
        # same): a loop closed right after, as at shutdown, would never hand out its exit, leaving a zombie and
        # an open pidfd for as long as this process lives
        with contextlib.suppress(asyncio.CancelledError):
            await child.wait(child.exited, CLOSE_GRACE)
        raise
    except BaseException:
        _signal_group(child.pid, signal.SIGKILL)
        raise
    finally:
        child.close()
    exit_code = child.returncode
    status: CallStatus = {"timeout": "timed_out", "stop": "cancelled"}.get(how, "finished")  # type: ignore[assignment]
    # Large output is cleaned off the event loop: two capped halves must not stall heartbeats, Slack acks or
    # other calls (issue #11). Redaction is linear, but a megabyte cap still costs tens of milliseconds.
    # Small output (most calls) is cleaned inline: a thread hop would cost more than the cleaning.
    captured = capture.captured()
    if captured.total_bytes == 0:
        sanitized = _NO_OUTPUT
    elif len(captured.head) + len(captured.tail) <= INLINE_LIMIT:
        sanitized = sanitize_captured(captured, output_redactor, output_limit)
    else:
        sanitized = await asyncio.to_thread(sanitize_captured, captured, output_redactor, output_limit)
    return CallResult(
        status=status,
        exit_code=exit_code,
        output=sanitized.text,
        truncated=sanitized.truncated,
        total_bytes=capture.total_bytes,
        duration_seconds=time.monotonic() - started,
        redactions=sanitized.redactions,
        argv_display=display,
        stopped_by=signalled if how == "stop" else None,
        output_withheld=None if verdict is None else redactor.redact(verdict.sentence())[0],
    )
