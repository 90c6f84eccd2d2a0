"""``fisk-chatops serve`` as a real process with the intake enabled: a signed Alertmanager delivery over HTTP
opens the thread, the read-only diagnostic runs under the auto-approve policy, the answer lands in the thread;
a forged delivery is refused; SIGTERM ends it cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import Request, urlopen

from tests.incidents.payloads import AM_TOKEN, am_payload, bearer, dumps
from tests.ops.test_serve_roles import wait_until
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply
from tests.support.fake_slack import FakeSlack
from tests.support.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
CHANNEL = "C0ALERTS"


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    try:
        with urlopen(Request(url, data=body, headers=headers), timeout=10) as resp:
            return int(resp.status)
    except HTTPError as exc:
        return int(exc.code)


def test_serve_with_alert_intake(tmp_path: Path, opsctl: Path, redis_url: str) -> None:
    intake_port, health_port = free_port(), free_port()
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "applications": [{"binary": str(opsctl)}],
        "approval": {"approvers": {"users": ["UAPPROVER"]}, "auto_approve": {"tags": ["impact:ro"]}},
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": free_port()},
        "incidents": {"enabled": True, "http_host": "127.0.0.1", "http_port": intake_port,
                      "routes": [{"name": "web", "channel": CHANNEL, "match": {"service": "web"}}]},
        "shutdown_grace_seconds": 2,
    }))  # fmt: skip
    log = tmp_path / "serve.log"
    with FakeSlack() as slack, FakeAnthropic() as model, open(log, "wb") as out:
        model.script(tool_use_reply([("toolu_1", "service_status", '{"service": "web"}')], text="Checking."),
                     text_reply("web answers again."))
        env = {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-serve", "SLACK_SIGNING_SECRET": "s",
               "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": model.base_url,
               "FISK_CHATOPS_ALERTMANAGER_TOKEN": AM_TOKEN}  # fmt: skip
        process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "--config", str(config), "--health-host", "127.0.0.1",
             "--health-port", str(health_port)], env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{intake_port}/alerts/alertmanager"
        try:
            def listening() -> bool:
                assert process.poll() is None, log.read_text()
                try:
                    return post(url, b"{}", {}) == 401
                except OSError:
                    return False

            wait_until(listening, 60, "intake listening")
            assert post(url, dumps(am_payload()), bearer("forged")) == 401
            assert post(url, dumps(am_payload()), bearer()) == 201

            def thread() -> list[str]:
                tops = [ts for (ch, ts), m in slack.all_messages().items() if ch == CHANNEL and "thread_ts" not in m]
                return [json.dumps(m) for m in slack.thread(CHANNEL, tops[0])] if tops else []

            wait_until(lambda: any("web answers again." in m for m in thread()), 60, "the answer in the thread")
            messages = thread()
            assert "[OPEN] HighErrorRate" in messages[0]
            assert any("`service_status` finished" in m and "exit code 0" in m for m in messages)
            with urlopen(f"http://127.0.0.1:{health_port}/metrics", timeout=5) as resp:
                metrics = resp.read().decode()
            assert 'fisk_chatops_alert_deliveries_total{outcome="new",source="alertmanager"} 1.0' in metrics
            assert 'fisk_chatops_alert_deliveries_total{outcome="refused_401",source="alertmanager"} 2.0' in metrics
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(30)
    assert code == 0, log.read_text()[-3000:]
