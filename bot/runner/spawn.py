"""Start a tool's process: ``os.posix_spawn`` where it can, ``subprocess.Popen`` where it cannot.

Both start the child the same way (no shell, stdin from /dev/null, stdout and stderr into one pipe, a new
session, SIGPIPE and SIGXFSZ back to their defaults, the sealed binary's descriptor kept open for the exec) and
both use the C library's vfork-style spawn. ``Popen`` also does a lot of Python work per start (pipes and an
error pipe, the environment encoded variable by variable, descriptor bookkeeping): about 300,000 instructions
against 70,000 for ``posix_spawn``, measured with callgrind, which is most of what the runner adds to a short
call. ``posix_spawn`` cannot change the working directory or the user, so a tool with ``working_dir`` or a
runner with ``run_as`` is started by ``Popen``, as is a program named without a path (PATH lookup).

``Popen(close_fds=True)`` closes every other descriptor in the child; ``posix_spawn`` cannot. Python opens
every descriptor non-inheritable (PEP 446), so the only ones a child could inherit are those this process was
itself started with; before its first spawn the process marks those non-inheritable (``_make_private``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import IO, Protocol

#: Signals Python ignores in itself and a child must get back at their defaults (what Popen's restore_signals does).
_DEFAULT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name))


class Started(Protocol):
    """What the runner uses of a started child (``subprocess.Popen`` has all of it)."""

    pid: int
    stdout: IO[bytes] | None
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


class Spawned:
    """A child started by ``os.posix_spawn``: its pid, the read end of its output pipe, and reaping."""

    def __init__(self, pid: int, stdout: int) -> None:
        self.pid = pid
        self.stdout: IO[bytes] | None = open(stdout, "rb", buffering=0)  # noqa: SIM115 (closed by the reader)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Reap the child if it exited (no zombie is left); its exit code, or None while it runs."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): the status is lost, as Popen says 0
                self.returncode = 0
            else:
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.returncode = 0
            else:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


_private = False


def _make_private() -> bool:
    """Mark every descriptor above stderr non-inheritable, once per process; False where that cannot be done."""
    global _private
    if not _private:
        try:
            names = os.listdir("/proc/self/fd")
        except OSError:
            return False
        for name in names:
            if int(name) > 2:
                with contextlib.suppress(OSError):  # the listing's own descriptor is already closed
                    os.set_inheritable(int(name), False)
        _private = True
    return True


def _posix_spawn(argv: list[str], env: dict[str, str], executable_fd: int | None) -> Spawned:
    read_end, write_end = os.pipe()
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, write_end, 1),
        (os.POSIX_SPAWN_DUP2, write_end, 2),
    ]
    path = argv[0]
    if executable_fd is not None:
        # dup2 onto itself: the child keeps the sealed copy open through the exec (a #! interpreter reopens it)
        actions.append((os.POSIX_SPAWN_DUP2, executable_fd, executable_fd))
        path = f"/proc/self/fd/{executable_fd}"
    try:
        pid = os.posix_spawn(path, argv, env, file_actions=actions, setsid=True, setsigdef=_DEFAULT_SIGNALS)
    except OSError as exc:
        os.close(read_end)
        raise OSError(exc.errno, exc.strerror, argv[0]) from None  # the configured path, not the descriptor's
    finally:
        os.close(write_end)
    return Spawned(pid, read_end)


def start(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    executable_fd: int | None,
    run_as: tuple[int, int] | None,
) -> Started:
    """Start ``argv`` (stdout and stderr in ``.stdout``); raises OSError/ValueError/SubprocessError when it
    cannot start."""
    if cwd is None and run_as is None and "/" in argv[0] and hasattr(os, "posix_spawn") and _make_private():
        return _posix_spawn(argv, env, executable_fd)
    extra: dict[str, object] = {}
    if executable_fd is not None:
        extra.update(executable=f"/proc/self/fd/{executable_fd}", pass_fds=(executable_fd,))
    if run_as is not None:
        extra.update(user=run_as[0], group=run_as[1], extra_groups=[])
    return subprocess.Popen(  # type: ignore[call-overload]
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=cwd,
        start_new_session=True,
        **extra,
    )
