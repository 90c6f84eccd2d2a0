"""A busy health port or a busy Slack HTTP port stops ``serve`` with one line and exit 2, and leaves nothing
running: the embedded redis-server the process started is stopped too."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.redis_embedded import EmbeddedRedis
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_slack import FakeSlack

ROOT = Path(__file__).resolve().parents[2]
SCRUBBED = ("REDIS_URL", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL",
            "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "FISK_CHATOPS_CONFIG")


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(expected_token="xoxb-ports") as fake:
        yield fake


@pytest.fixture
def model() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key="k") as fake:
        yield fake


def write_config(tmp_path: Path, opsctl: Path, slack_port: int) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(
        f"applications: [{{binary: {opsctl}}}]\nredis: {{state_dir: {tmp_path / 'state'}}}\n"
        "approval: {approvers: {users: [UAPPROVER]}}\n"
        f"slack: {{mode: http, http_host: 127.0.0.1, http_port: {slack_port}}}\n"
    )
    return config


def serve_all(
    config: Path, health_port: int, slack: FakeSlack, model: FakeAnthropic
) -> subprocess.CompletedProcess[str]:
    """Every role in one process, with the embedded Redis (no REDIS_URL)."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(SLACK_BOT_TOKEN="xoxb-ports", SLACK_SIGNING_SECRET="s", SLACK_API_URL=slack.api_url,
               ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=model.base_url)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "serve", "--config", str(config),
         "--health-host", "127.0.0.1", "--health-port", str(health_port)],
        capture_output=True, text=True, timeout=60, env=env, cwd=ROOT,
    )  # fmt: skip


def assert_one_line_and_no_redis(result: subprocess.CompletedProcess[str], tmp_path: Path, expected: str) -> None:
    assert result.returncode == 2, result.stderr
    # structured log lines (JSON) may precede it; everything else is the one error line
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("{")]
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]
    assert "Traceback" not in result.stderr
    # nothing logged as an error beside that line (an unclosed Slack session used to add two "Unclosed ..." lines)
    errors = [line for line in result.stderr.splitlines() if line.startswith("{") and '"level": "error"' in line]
    assert errors == [], errors
    embedded = EmbeddedRedis(tmp_path / "state")
    assert not os.path.exists(embedded.socket_path), "the embedded redis-server was left running"


def test_busy_health_port(tmp_path: Path, opsctl: Path, busy_port: int, slack: FakeSlack,
                         model: FakeAnthropic) -> None:
    config = write_config(tmp_path, opsctl, 0)
    result = serve_all(config, busy_port, slack, model)
    assert_one_line_and_no_redis(
        result, tmp_path,
        f"cannot listen on 127.0.0.1:{busy_port} for /healthz, /readyz and /metrics: the address is already in use",
    )  # fmt: skip
    assert "--health-port" in result.stderr


def test_busy_slack_http_port(tmp_path: Path, opsctl: Path, busy_port: int, slack: FakeSlack,
                         model: FakeAnthropic) -> None:
    config = write_config(tmp_path, opsctl, busy_port)
    result = serve_all(config, 0, slack, model)
    assert_one_line_and_no_redis(
        result, tmp_path, f"cannot listen on 127.0.0.1:{busy_port} for Slack HTTP requests: the address is already"
    )
    assert "slack.http_port" in result.stderr


def test_readyz_answers_only_once_the_slack_endpoint_listens(tmp_path: Path, opsctl: Path, slack: FakeSlack,
                                                             model: FakeAnthropic) -> None:
    """A Service sends requests to a pod as soon as its readiness probe passes: the health port must not answer
    before the Slack HTTP port is bound (it used to be bound first; under load requests were refused)."""
    from tests.support.redis_server import free_port

    slack_port, health_port = free_port(), free_port()
    config = write_config(tmp_path, opsctl, slack_port)
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(SLACK_BOT_TOKEN="xoxb-ports", SLACK_SIGNING_SECRET="s", SLACK_API_URL=slack.api_url,
               ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=model.base_url)
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve", "--config", str(config),
         "--health-host", "127.0.0.1", "--health-port", str(health_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _accepts(health_port):  # as often as we can: the moment the health port answers
            assert process.poll() is None and time.monotonic() < deadline
        assert _accepts(slack_port), "the health port answered before the Slack endpoint was listening"
    finally:
        process.terminate()
        process.wait(30)


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
