"""SIGTERM drains a ``serve`` process: a call cut off is ``interrupted`` and never re-run, and a Socket Mode
connection that cannot be opened does not keep the process alive."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis.asyncio

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState, Proposal
from bot.approvals.store import CallStore
from bot.fisk.digest import file_digest
from tests.ops.test_serve_roles import Role
from tests.support import decision_keys
from tests.support.fake_slack import FakeSlack
from tests.support.fisk_app import make_script
from tests.support.redis_server import free_port
from tests.support.waiting import wait_for


def slow_app(tmp_path: Path, fixtures_dir: Path, runs: Path) -> Path:
    """A fisk app whose every command records that it ran, then works for 60 s."""
    fixture = str(fixtures_dir / "opsctl.introspect.json")
    body = (
        "import sys, time\n"
        f"if sys.argv[1:] == ['--fisk-introspect']:\n    sys.stdout.write(open({fixture!r}).read())\n"
        f"    sys.exit(0)\nopen({str(runs)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "print('working', flush=True)\ntime.sleep(60)\n"
    )
    return make_script(tmp_path, "opsctl", body)


async def test_sigterm_mid_call_interrupts_it_and_it_never_runs_again(
    tmp_path: Path, fixtures_dir: Path, redis_url: str
) -> None:
    runs = tmp_path / "runs.log"
    app = slow_app(tmp_path, fixtures_dir, runs)
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"applications": [{"binary": str(app)}], "shutdown_grace_seconds": 1,
                                  "decisions": decision_keys.write_key_files(tmp_path / "keys")}))
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "REDIS_URL": redis_url}
    client = redis.asyncio.Redis.from_url(redis_url)
    store = CallStore(client, signer=decision_keys.signer())
    policy = ApprovalPolicy()
    runner = await asyncio.to_thread(Role("runner", config, env, logs).start)
    try:
        argv = [str(app), "service", "status"]
        [call] = await store.propose("console:drain", [Proposal(tool="service_status", app="opsctl",
                                                                arguments="{}", argv=argv,
                                                                binary_digest=file_digest(app))], policy, "U1")
        await store.approve(call.id, "U2", [], policy, argv_hash=call.argv_hash)
        await wait_for(lambda: runs.exists(), timeout=30)
        assert (await store.get(call.id)).state == CallState.running
        started = time.monotonic()
        code = await asyncio.to_thread(runner.stop, signal.SIGTERM)
        assert code == 0 and time.monotonic() - started < 20
        record = await store.get(call.id)
        assert record.state == CallState.interrupted
        # a new runner takes over the stream and the recovery pass: the call stays interrupted, never re-run
        runner = await asyncio.to_thread(Role("runner", config, env, logs).start)
        await asyncio.sleep(3)
        assert (await store.get(call.id)).state == CallState.interrupted
        assert runs.read_text().splitlines() == ["service status"]
    finally:
        if runner.process and runner.process.poll() is None:
            await asyncio.to_thread(runner.stop, signal.SIGKILL)
        await client.aclose()


def test_sigterm_ends_serve_while_socket_mode_cannot_connect(tmp_path: Path, opsctl: Path, redis_url: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"applications": [{"binary": str(opsctl)}], "shutdown_grace_seconds": 1,
                                  "approval": {"approvers": {"users": ["UAPPROVER"]}},
                                  "decisions": decision_keys.write_key_files(tmp_path / "keys")}))
    health = free_port()
    with FakeSlack() as slack:
        slack.on("apps.connections.open", {"ok": True, "url": f"ws://127.0.0.1:{free_port()}/link"})  # refused
        env = {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-drain", "SLACK_APP_TOKEN": "xapp-drain",
               "SLACK_API_URL": slack.api_url}
        process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "--config", str(config), "--role", "slack",
             "--health-host", "127.0.0.1", "--health-port", str(health)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not slack.calls_to("apps.connections.open"):
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
            time.sleep(1)  # now inside slack_sdk's connect retry loop
            process.send_signal(signal.SIGTERM)
            assert process.wait(20) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
