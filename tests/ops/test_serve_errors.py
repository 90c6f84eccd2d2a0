"""``serve`` refuses to start, clearly and with exit 2, when something it needs is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import decision_keys
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
CREDENTIALS = ("REDIS_URL", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL",
               "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "FISK_CHATOPS_CONFIG")


def serve(config: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    return subprocess.run([sys.executable, "-m", "bot.cli", "serve", "--config", str(config), "--health-port", "0",
                           *args], capture_output=True, text=True, timeout=60, env={**base, **env}, cwd=ROOT)


def write_config(tmp_path: Path, opsctl: Path, keys: bool = False) -> Path:
    config = tmp_path / "c.yaml"
    data: dict[str, Any] = {"applications": [{"binary": str(opsctl)}], "redis": {"state_dir": str(tmp_path / "state")},
                            "approval": {"approvers": {"users": ["UAPPROVER"]}}}
    if keys:
        data["decisions"] = decision_keys.write_key_files(tmp_path / "keys")
    config.write_text(json.dumps(data))
    return config


def test_unreachable_redis(tmp_path: Path, opsctl: Path) -> None:
    url = f"redis://:topsecretpw@127.0.0.1:{free_port()}/0"
    result = serve(write_config(tmp_path, opsctl), env={"REDIS_URL": url, "SLACK_BOT_TOKEN": "xoxb-1",
                                                        "SLACK_APP_TOKEN": "xapp-1", "ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 2
    assert "cannot reach Redis at 127.0.0.1" in result.stderr and "topsecretpw" not in result.stderr


def test_split_roles_need_a_shared_redis(tmp_path: Path, opsctl: Path) -> None:
    result = serve(write_config(tmp_path, opsctl), "--role", "runner", env={})
    assert result.returncode == 2 and "serve --role needs a shared Redis: set REDIS_URL" in result.stderr


def test_missing_anthropic_key(tmp_path: Path, opsctl: Path) -> None:
    result = serve(write_config(tmp_path, opsctl), env={"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"})
    assert result.returncode == 2 and "ANTHROPIC_API_KEY is not set: the agent role needs" in result.stderr
    runner_only = serve(write_config(tmp_path, opsctl), "--role", "runner", env={"REDIS_URL": "redis://127.0.0.1:1"})
    assert "ANTHROPIC_API_KEY" not in runner_only.stderr  # only the agent role talks to the model


def test_missing_slack_tokens(tmp_path: Path, opsctl: Path) -> None:
    result = serve(write_config(tmp_path, opsctl), env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 2
    assert "SLACK_BOT_TOKEN is not set" in result.stderr and "SLACK_APP_TOKEN is not set" in result.stderr


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr minus the structured (JSON) log lines: what a person reads."""
    return [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("{")]


def test_every_missing_credential_in_one_line(tmp_path: Path, opsctl: Path) -> None:
    result = serve(write_config(tmp_path, opsctl), env={})
    assert result.returncode == 2
    (line,) = error_lines(result)
    for name in ("ANTHROPIC_API_KEY is not set", "SLACK_BOT_TOKEN is not set", "SLACK_APP_TOKEN is not set"):
        assert name in line
    bare = tmp_path / "bare.yaml"
    bare.write_text(json.dumps({"applications": [{"binary": str(opsctl)}]}))  # no approvers either
    (line,) = error_lines(serve(bare, env={}))
    assert "approval.approvers is empty" in line and "SLACK_BOT_TOKEN is not set" in line  # one round
    assert not (tmp_path / "state").exists()  # refused before starting the embedded Redis


def test_wrong_anthropic_key_stops_start_naming_url_and_status(tmp_path: Path, opsctl: Path, redis_url: str) -> None:
    with FakeAnthropic(api_key="the-right-key") as model:
        result = serve(write_config(tmp_path, opsctl, keys=True), "--role", "agent", env={
            "REDIS_URL": redis_url, "ANTHROPIC_API_KEY": "a-revoked-key",
            "ANTHROPIC_BASE_URL": model.base_url})
    assert result.returncode == 2
    (line,) = error_lines(result)
    assert line == (f"fisk-chatops: error: the Anthropic API refused the start-up check: GET {model.base_url}/v1/models"
                    " answered HTTP 401 (invalid x-api-key); check ANTHROPIC_API_KEY")
    assert "a-revoked-key" not in result.stderr


def test_slack_api_url_without_api_path(tmp_path: Path, opsctl: Path) -> None:
    result = serve(write_config(tmp_path, opsctl, keys=True), "--role", "slack", env={
        "REDIS_URL": "redis://127.0.0.1:1", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1",
        "SLACK_API_URL": "http://127.0.0.1:1/"})
    assert result.returncode == 2
    (line,) = error_lines(result)
    assert "SLACK_API_URL must be the Web API base URL ending in /api/" in line and "Traceback" not in line


def test_malformed_redis_url(tmp_path: Path, opsctl: Path) -> None:
    result = serve(write_config(tmp_path, opsctl, keys=True), "--role", "runner",
                   env={"REDIS_URL": "localhost:6379"})
    assert result.returncode == 2
    (line,) = error_lines(result)
    assert "the Redis URL (REDIS_URL or redis.url) 'localhost:6379' is malformed" in line
    assert "cannot reach" not in line


def test_split_roles_need_their_decision_keys(tmp_path: Path, opsctl: Path) -> None:
    env = {"REDIS_URL": "redis://127.0.0.1:1", "ANTHROPIC_API_KEY": "k"}
    runner = serve(write_config(tmp_path, opsctl), "--role", "runner", env=env)
    assert runner.returncode == 2 and "decisions.public_key_files is not set" in runner.stderr
    agent = serve(write_config(tmp_path, opsctl), "--role", "agent", env=env)
    assert agent.returncode == 2 and "decisions.signing_key_file is not set" in agent.stderr
