"""The model's replies get the process's configured redactor, as tool output does: a match of the operator's
``execution.redact_patterns`` and the value of a ``sensitive_env_vars`` variable never reach Slack, nor the
process's log lines. Through a real ``serve`` process, the fake Slack and the fake Anthropic API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import Request, urlopen

import pytest

from bot.logs import JsonFormatter
from bot.sanitize import build_redactor
from tests.support import decision_keys
from tests.support.fake_anthropic import FakeAnthropic, text_reply
from tests.support.fake_slack import FakeSlack, sign_slack_request
from tests.support.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "reply-redaction-signing-secret"
CHANNEL = "C0REPLY"
SECRET_VAR = "ACME_DB_PASS"
SECRET_VALUE = "plain-looking-value-42"  # nothing the default detectors would catch
TICKET = "ACME-1234-ABCDEF"  # matches the operator's pattern only
PATTERN = "ACME-[0-9]{4}-[A-Z]{6}"


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_defaults_alone_would_let_both_through() -> None:
    text = f"ticket {TICKET}, password {SECRET_VALUE}"
    assert build_redactor().redact(text)[0] == text


def test_log_lines_use_the_configured_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    monkeypatch.setenv(SECRET_VAR, SECRET_VALUE)
    formatter = JsonFormatter(sensitive_env_vars=[SECRET_VAR], redact_patterns=[PATTERN])
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "model said %s / %s", (TICKET, SECRET_VALUE), None)
    line = formatter.format(record)
    assert TICKET not in line and SECRET_VALUE not in line and "[REDACTED:custom]" in line


def test_a_configured_secret_in_a_model_reply_never_reaches_slack(tmp_path: Path, opsctl: Path, redis_url: str) -> None:
    slack_port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "applications": [{"binary": str(opsctl)}],
        "decisions": decision_keys.write_key_files(tmp_path / "keys"),
        "approval": {"approvers": {"users": ["UAPPROVER"]}},
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": slack_port},
        "sensitive_env_vars": [SECRET_VAR],
        "execution": {"redact_patterns": [PATTERN]},
        "shutdown_grace_seconds": 5,
    }))
    log_path = tmp_path / "serve.log"
    with FakeSlack() as slack, FakeAnthropic() as model, open(log_path, "wb") as log:
        model.script(text_reply(f"Opened {TICKET}; the database password is {SECRET_VALUE}. Done."))
        env = {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-reply-test",
               "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "test-key",
               "ANTHROPIC_BASE_URL": model.base_url, SECRET_VAR: SECRET_VALUE, "FISK_CHATOPS__LOG_LEVEL": "DEBUG"}
        health = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "--config", str(config),
             "--health-host", "127.0.0.1", "--health-port", str(health)],
            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            def ready() -> bool:
                assert process.poll() is None, log_path.read_text()
                try:
                    with urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as resp:
                        return bool(resp.status == 200)
                except OSError:
                    return False

            wait_until(ready, 60, "serve ready")
            form = {"command": "/fisk", "text": "open a ticket", "user_id": "UREQ", "channel_id": CHANNEL,
                    "team_id": "T1", "response_url": slack.response_url("c1"), "trigger_id": "1"}
            body = urlencode(form)
            headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}
            with urlopen(Request(f"http://127.0.0.1:{slack_port}/slack/events", data=body.encode(),
                                 headers=headers), timeout=10) as resp:
                assert resp.status == 200

            def answered() -> list[str]:
                texts = [json.dumps(call.params) for call in slack.calls_to("chat.postMessage")]
                return [t for t in texts if "Opened" in t]

            posted = wait_until(answered, what="the model's reply in Slack")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    assert len(model.message_requests) == 1
    everything = json.dumps([call.params for call in slack.calls]) + log_path.read_text(errors="replace")
    assert TICKET not in everything and SECRET_VALUE not in everything
    assert "[REDACTED:custom]" in posted[0] and "[REDACTED:secret_value]" in posted[0]
