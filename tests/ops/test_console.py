"""The console front end, driven through a pseudo-terminal: request, approval prompt, result, answer."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply
from tests.support.pty_process import PtyProcess

ROOT = Path(__file__).resolve().parents[2]


def test_console_conversation_with_approve_and_deny(tmp_path: Path, opsctl: Path, redis_url: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"applications: [{{binary: {opsctl}}}]\nredis: {{state_dir: {tmp_path / 'state'}}}\n")
    with FakeAnthropic() as fake:
        fake.script(
            tool_use_reply([("toolu_1", "service_status", '{"service":"web"}')], text="Checking web."),
            tool_use_reply([("toolu_2", "service_restart", '{"service":"web","force":true}')]),
            text_reply("web is healthy; I did not restart it."),
        )
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
               "REDIS_URL": redis_url}
        console = PtyProcess([sys.executable, "-m", "bot.cli", "console", "--config", str(config)], env, str(ROOT))
        try:
            pos = console.expect("you> ")
            console.send("is web ok?")
            pos = console.expect(f"$ {opsctl} service status -- web", after=pos)
            pos = console.expect("Approve? [y/N] ", after=pos)
            console.send("y")
            pos = console.expect("[service_status] finished, exit code 0", after=pos)
            pos = console.expect("  service\n  status\n  --\n  web", after=pos)
            pos = console.expect(f"$ {opsctl} service restart --force -- web", after=pos)
            console.send("n")
            pos = console.expect("[service_restart] denied", after=pos)
            console.expect("bot> web is healthy; I did not restart it.", after=pos)
        finally:
            console.close()
        requests = fake.message_requests
    assert len(requests) == 3
    first_result = requests[1]["messages"][-1]["content"][0]
    assert first_result["type"] == "tool_result" and first_result["tool_use_id"] == "toolu_1"
    assert "web" in json.dumps(first_result["content"])
    denied = requests[2]["messages"][-1]["content"][0]
    assert denied["tool_use_id"] == "toolu_2" and not denied.get("is_error")
    assert "must not retry" in json.dumps(denied["content"]).lower() or "refused" in json.dumps(denied["content"])


def test_console_with_piped_input_waits_for_the_answer(tmp_path: Path, opsctl: Path, redis_url: str) -> None:
    import subprocess

    config = tmp_path / "config.yaml"
    config.write_text(f"applications: [{{binary: {opsctl}}}]\n")
    with FakeAnthropic() as fake:
        fake.script(text_reply("Nothing needs running: web is fine."))
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
               "REDIS_URL": redis_url}
        result = subprocess.run([sys.executable, "-m", "bot.cli", "console", "--config", str(config)],
                                input="is web ok?\n", capture_output=True, text=True, env=env, cwd=ROOT, timeout=90)
    assert result.returncode == 0, result.stderr
    assert "bot> Nothing needs running: web is fine." in result.stdout
