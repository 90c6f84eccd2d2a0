"""``serve`` and ``console`` with the embedded Redis: however they end (SIGKILL, SIGTERM, Ctrl-C), the
redis-server they started ends with them."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.request import urlopen

import pytest
import redis

from bot.redis_embedded import EmbeddedRedis
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_slack import FakeSlack
from tests.support.redis_server import free_port
from tests.test_redis_connection import process_alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

ROOT = Path(__file__).resolve().parents[2]
SCRUBBED = ("REDIS_URL", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL",
            "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "FISK_CHATOPS_CONFIG")


@pytest.fixture
def fakes() -> Iterator[tuple[FakeSlack, FakeAnthropic]]:
    with FakeSlack(expected_token="xoxb-left") as slack, FakeAnthropic(api_key="k") as model:
        yield slack, model


def environment(slack: FakeSlack, model: FakeAnthropic) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(SLACK_BOT_TOKEN="xoxb-left", SLACK_SIGNING_SECRET="s", SLACK_API_URL=slack.api_url,
               ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=model.base_url)
    return env


def write_config(tmp_path: Path, opsctl: Path) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(f"applications: [{{binary: {opsctl}}}]\nredis: {{state_dir: {tmp_path / 'state'}}}\n"
        "approval: {approvers: {users: [UAPPROVER]}}\n"
                      "slack: {mode: http, http_host: 127.0.0.1, http_port: 0}\nshutdown_grace_seconds: 1\n")
    return config


def server_pid(tmp_path: Path, process: subprocess.Popen[bytes], timeout: float = 60) -> int:
    """The pid of the embedded redis-server, once it answers on its socket."""
    embedded = EmbeddedRedis(tmp_path / "state")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = tmp_path / "serve.log"
        assert process.poll() is None, "exited early: " + (log.read_text()[-3000:] if log.exists() else "")
        if os.path.exists(embedded.socket_path):
            try:
                with redis.Redis.from_url(embedded.url) as client:  # the URL carries the password
                    return int(client.info("server")["process_id"])
            except redis.ConnectionError:
                pass
        time.sleep(0.05)
    raise AssertionError("the embedded Redis never answered")


def wait_gone(pid: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(pid), f"redis-server {pid} outlived its parent"


def ready(port: int) -> bool:
    try:
        with urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_serve_takes_its_redis_along(tmp_path: Path, opsctl: Path, fakes: tuple[FakeSlack, FakeAnthropic],
                                     sig: signal.Signals) -> None:
    health = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve", "--config", str(write_config(tmp_path, opsctl)),
         "--health-host", "127.0.0.1", "--health-port", str(health)],
        env=environment(*fakes), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=(tmp_path / "serve.log").open("wb"),
    )  # fmt: skip
    try:
        pid = server_pid(tmp_path, process)
        deadline = time.monotonic() + 60
        while not ready(health):
            assert time.monotonic() < deadline and process.poll() is None, "serve never became ready"
            time.sleep(0.1)
        process.send_signal(sig)
        started = time.monotonic()
        process.wait(60)
        print(f"{sig.name}: serve exited after {time.monotonic() - started:.1f}s")
        wait_gone(pid)
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_console_takes_its_redis_along(tmp_path: Path, opsctl: Path, fakes: tuple[FakeSlack, FakeAnthropic],
                                       sig: signal.Signals) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console", "--config", str(write_config(tmp_path, opsctl))],
        env=environment(*fakes), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        pid = server_pid(tmp_path, process)
        assert process.stdout is not None
        seen, deadline = b"", time.monotonic() + 60
        while b"you> " not in seen:  # the prompt: the console is up and waiting for its user
            assert time.monotonic() < deadline, f"no prompt; output so far: {seen!r}"
            if select.select([process.stdout], [], [], 0.2)[0]:
                seen += process.stdout.read1(4096)
        process.send_signal(sig)
        process.wait(30)
        wait_gone(pid)
    finally:
        process.kill()
        process.wait(10)
