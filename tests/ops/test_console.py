"""The console front end, driven through a pseudo-terminal: request, approval prompt, result, answer."""

from __future__ import annotations

import json
import os
import re
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
            pos = console.expect("[service_status] finished · Finished: exit code 0", after=pos)
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


def console_process(tmp_path: Path, opsctl: Path, fake: FakeAnthropic, **env: str) -> PtyProcess:
    config = tmp_path / "config.yaml"
    config.write_text(f"applications: [{{binary: {opsctl}}}]\nredis: {{state_dir: {tmp_path / 'state'}}}\n")
    environment = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url, **env}
    environment.pop("REDIS_URL", None)  # the embedded Redis, so the test can see that it ends with the console
    return PtyProcess([sys.executable, "-m", "bot.cli", "console", "--config", str(config)], environment, str(ROOT))


def test_console_colour_markdown_spinner_local_time_and_prompts_kept_whole(tmp_path: Path, opsctl: Path) -> None:
    with FakeAnthropic() as fake:
        fake.script(
            tool_use_reply([("toolu_1", "service_status", '{"service":"web"}'),
                            ("toolu_2", "service_restart", '{"service":"web"}')]),
            text_reply("web is **healthy**:\n\n- `status` ok\n- not restarted", delay=1.5),
        )
        console = console_process(tmp_path, opsctl, fake, TZ="XYZ-5:30")  # local zone "XYZ", UTC+5:30
        try:
            pos = console.expect("you> ")
            console.send("is web ok?")
            pos = console.expect("thinking… ", after=pos)  # the spinner while the model works
            pos = console.expect("Approve? [y/N] ", after=pos)
            console.send("y")
            # the first call's result arrives while the second card waits for an answer
            pos = console.expect("[service_status] finished · Finished: exit code 0", after=pos)
            pos = console.expect("Approve? [y/N] ", after=pos)
            console.send("n")
            pos = console.expect("thinking… ", after=pos)
            console.expect("you> ", after=console.expect("not restarted", after=pos))
            lines = console.rendered()
        finally:
            console.close()
    assert "\x1b[" in console.raw  # colour
    text = "\n".join(lines)
    # every prompt line holds the question and the user's answer, nothing printed into it
    prompts = [line for line in lines if "Approve? [y/N]" in line]
    assert [line.rpartition("Approve? [y/N]")[2].strip() for line in prompts] == ["y", "n"]
    # the result was printed above the open card, which was then shown again whole (once on the screen)
    assert text.count("approval needed: service_restart") == 1
    assert console.screen.count("approval needed: service_restart") >= 2  # it was open, then shown again
    assert text.index("[service_status] finished") < text.index("approval needed: service_restart")
    # times in the local zone
    assert len(re.findall(r"expires \d\d:\d\d:\d\d XYZ\. Approve", text)) == 2
    # Markdown rendered, not printed raw
    assert "**" not in text and "`status`" not in text
    assert re.search(r"bot> web is healthy:", text) and re.search(r"• status ok", text)
    assert "thinking" not in lines[-1]  # the spinner is gone once the answer is in


def test_console_ctrl_c_cancels_the_wait_then_quits(tmp_path: Path, opsctl: Path) -> None:
    with FakeAnthropic() as fake:
        fake.script(tool_use_reply([("toolu_1", "service_restart", '{"service":"web"}')]))
        console = console_process(tmp_path, opsctl, fake)
        try:
            pos = console.expect("you> ")
            console.send("restart web")
            pos = console.expect("Approve? [y/N] ", after=pos)
            console.interrupt()  # first Ctrl-C: stop waiting for this approval
            pos = console.expect("stopping: pending calls are cancelled (Ctrl-C again quits)", after=pos)
            # the cancelled call's line and the stop notice come from two streams: either may print first
            denied = console.expect("[service_restart] denied", after=pos)
            stopped = console.expect("Stopped. Pending calls were cancelled.", after=pos)
            console.expect("you> ", after=max(denied, stopped))
            assert console.process.poll() is None  # still running after the first press
            console.interrupt()  # second Ctrl-C: quit
            assert console.process.wait(20) == 0
        finally:
            console.close()
    assert fake.pending == 0 and len(fake.message_requests) == 1  # no model request after the stop
    state = tmp_path / "state" / "redis"
    assert not (state / "redis.sock").exists()  # the embedded Redis stopped with the console
