"""``serve --role`` as real separate processes on one Redis: a conversation survives killing each role."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import Request, urlopen

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from bot.approvals import verify_key
from bot.slack.outcomes import OUTCOME_HOLD_SECONDS
from tests.support import decision_keys
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply
from tests.support.fake_slack import FakeSlack, sign_slack_request
from tests.support.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "serve-test-signing-secret"
CHANNEL = "C0SERVE"


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Role:
    def __init__(self, role: str, config: Path, env: dict[str, str], logs: Path) -> None:
        self.role, self.config, self.env, self.logs = role, config, env, logs
        self.health_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Role:
        log = open(self.logs / f"{self.role}-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "--config", str(self.config), "--role", self.role,
             "--health-host", "127.0.0.1", "--health-port", str(self.health_port)],
            env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            wait_until(self.ready, 60, f"{self.role} ready")
        except BaseException:  # not in the caller's roles yet: nobody else would stop it, and it would outlive Redis
            self.process.kill()
            self.process.wait(30)
            raise
        return self

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urlopen(f"http://127.0.0.1:{self.health_port}{path}", timeout=2) as resp:
                return resp.status, resp.read().decode()
        except OSError as exc:
            status = getattr(exc, "code", 0)
            return int(status or 0), ""

    def ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"{self.role} exited with {self.process.returncode}")
        return self.get("/readyz")[0] == 200

    def stop(self, sig: int) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        return self.process.wait(30)


@pytest.fixture
def logs(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """Each process's output; printed when the test fails, since the processes are where the story is."""
    path = tmp_path / "logs"
    path.mkdir()
    yield path
    report = getattr(request.node, "rep_call", None)
    if report is None or report.failed:
        for log in sorted(path.iterdir()):
            print(f"==== {log.name}\n{log.read_text(errors='replace')[-4000:]}")


def post_signed(url: str, body: str, content_type: str) -> int:
    headers = {"Content-Type": content_type, **sign_slack_request(SECRET, body)}
    with urlopen(Request(url, data=body.encode(), headers=headers), timeout=10) as resp:
        return int(resp.status)


def where_it_stalled(client: redis.Redis, conversation: str, call_id: str, model: FakeAnthropic) -> str:
    """What Redis and the fake model say when the answer is late (printed with the logs): how many model requests
    were made, the conversation's state and lock, the hold on posting the call's result, the conversation's outbox
    events, each stream's groups with their pending entries: so a failure tells an agent that never resumed from a
    poster that never posted."""
    key, hold = f"fc:{{conv:{conversation}}}:", f"fc:slack:outcome:{call_id}"
    lines = [f"at {time.time():.3f}: {len(model.message_requests)} model request(s)",
             f"state: {client.get(key + 'state')}",
             f"lock: {client.get(key + 'lock')} pttl {client.pttl(key + 'lock')}",
             f"outcome hold: {client.get(hold)} pttl {client.pttl(hold)}"]
    for entry_id, fields in client.xrange("fc:{outbox}:events"):
        if fields.get("conversation") == conversation:
            lines.append(f"outbox {entry_id}: {fields.get('kind')} {fields.get('data', '')[:120]}")
    for stream in sorted({*client.scan_iter("fc:*completions"), "fc:{agent}:inbox", "fc:{outbox}:events"}):
        for group in client.xinfo_groups(stream) if client.exists(stream) else []:
            pending = client.xpending_range(stream, group["name"], "-", "+", 10)
            lines.append(f"{stream} group {group['name']}: last delivered {group['last-delivered-id']}, "
                         f"pending {[(p['message_id'], p['consumer'], p['time_since_delivered']) for p in pending]}")
    return "\n".join(lines) + "\n"


def test_roles_in_separate_processes_survive_kills(tmp_path: Path, opsctl: Path, redis_url: str, logs: Path) -> None:
    slack_port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "applications": [{"binary": str(opsctl)}],
        "decisions": decision_keys.write_key_files(tmp_path / "keys"),
        "approval": {"approvers": {"users": ["UAPPROVER"]}},
        "agent": {"reclaim_after_seconds": 1, "lock_ttl_seconds": 3},
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": slack_port, "reclaim_idle_seconds": 1,
                  "usergroup_cache_seconds": 0},
        "shutdown_grace_seconds": 5,
    }))
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    with FakeSlack() as slack, FakeAnthropic() as model:
        model.script(
            tool_use_reply([("toolu_1", "service_status", '{"service":"web"}')], text="Checking web."),
            text_reply("web is up."),
        )
        env = {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-serve-test",
               "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "test-key",
               "ANTHROPIC_BASE_URL": model.base_url}
        # The runner writes every module it imports to its log (-X importtime), so the test can show that a runner
        # process that executed a call never loaded the other roles' dependencies.
        runner_env = {**{k: v for k, v in env.items() if not k.upper().startswith("FISK_CHATOPS__")},
                      "PYTHONPROFILEIMPORTTIME": "1"}
        envs = {"slack": env, "agent": env, "runner": runner_env}
        roles: dict[str, Role] = {}
        events_url = f"http://127.0.0.1:{slack_port}/slack/events"
        try:
            for name in ("slack", "agent", "runner"):  # in the try: one that never gets ready stops those started
                roles[name] = Role(name, config, envs[name], logs).start()
            form = {"command": "/fisk", "text": "is web ok?", "user_id": "UREQ", "channel_id": CHANNEL,
                    "team_id": "T1", "response_url": slack.response_url("c1"), "trigger_id": "1"}
            assert post_signed(events_url, urlencode(form), "application/x-www-form-urlencoded") == 200

            def card() -> dict[str, str] | None:
                for key in client.scan_iter("fc:{s0}:call:*"):
                    record = client.hgetall(key)
                    if record.get("state") == "awaiting_approval" and "meta:slack_ts" in record:
                        return {**record, "id": key.rpartition(":call:")[2]}  # the id is in the key
                return None

            record = wait_until(card, what="approval card")
            call_id = record["id"]
            argv = json.loads(client.get(f"fc:{{s0}}:body:{call_id}"))["v"]  # the fixed fields (records.compact_body)
            assert argv == [str(opsctl), "service", "status", "--", "web"]

            # While the call waits, every role is killed (SIGKILL) and stopped (SIGTERM) in turn and replaced;
            # a SIGTERM always ends in a clean exit.
            for name in ("agent", "runner", "slack"):
                for sig in (signal.SIGKILL, signal.SIGTERM):
                    code = roles[name].stop(sig)
                    assert sig == signal.SIGKILL or code == 0, f"{name} exited {code} on SIGTERM"
                    roles[name] = Role(name, config, envs[name], logs).start()

            meta = {"slack_ts": record["meta:slack_ts"]}
            value = json.dumps({"call": call_id, "argv": record["argv_hash"]})
            payload = {"type": "block_actions", "user": {"id": "UAPPROVER"}, "team": {"id": "T1"},
                       "api_app_id": "A1", "channel": {"id": CHANNEL},
                       "container": {"type": "message", "message_ts": meta["slack_ts"], "channel_id": CHANNEL},
                       "message": {"ts": meta["slack_ts"], "thread_ts": record["conversation"].split(":")[-1]},
                       "actions": [{"action_id": "fisk_approve", "block_id": "b", "type": "button", "value": value,
                                    "action_ts": str(time.time())}],
                       "response_url": slack.response_url("click"), "trigger_id": "2"}
            assert post_signed(events_url, urlencode({"payload": json.dumps(payload)}),
                               "application/x-www-form-urlencoded") == 200
            wait_until(lambda: client.hget(f"fc:{{s0}}:call:{call_id}", "state") == "finished", what="call finished")

            # The Slack role is killed after the result exists; the new one still posts the result and the answer.
            roles["slack"].stop(signal.SIGKILL)
            roles["slack"] = Role("slack", config, env, logs).start()
            thread_ts = record["conversation"].split(":")[-1]

            def posted(text: str) -> list[Any]:  # the thread's messages but the call's card, which is updated
                return [m for m in slack.thread(CHANNEL, thread_ts)
                        if text in json.dumps(m) and m["ts"] != meta["slack_ts"]]

            # The killed Slack role may have died holding the post of the call's result (it reads the completion as
            # the call finishes): the new one waits until that hold lapses (OUTCOME_HOLD_SECONDS, since it cannot
            # tell a dead poster from a slow one), posts the result, then the answer, which goes after it.
            late = OUTCOME_HOLD_SECONDS + 60  # the rest: the new role starting and catching up on a loaded machine
            try:
                wait_until(lambda: posted("web is up."), late, what="final answer in the thread")
            except AssertionError:  # which side stalled: the agent (no reply in the outbox) or the Slack role
                stalled = where_it_stalled(client, record["conversation"], call_id, model)
                (logs / "zz-where-it-stalled.txt").write_text(stalled)
                raise
            wait_until(lambda: posted("exit code 0"), late, what="result in the thread")
            status, metrics = roles["runner"].get("/metrics")
        finally:
            for role in roles.values():
                if role.process and role.process.poll() is None:
                    role.stop(signal.SIGTERM)
        audit = [entry for _id, entry in client.xrange("fc:{s0}:audit") if entry["call_id"] == call_id]
        assert [(e["from"], e["to"]) for e in audit] == [
            ("proposed", "awaiting_approval"), ("awaiting_approval", "approved"), ("approved", "running"),
            ("running", "finished")]
        assert len(posted("exit code 0")) == 1 and len(posted("web is up.")) == 1
        assert len(model.message_requests) == 2
        tool_result = model.message_requests[1]["messages"][-1]["content"][0]
        assert tool_result["tool_use_id"] == "toolu_1" and "web" in json.dumps(tool_result["content"])
    assert status == 200
    runner_lines = [json.loads(line) for log in logs.glob("runner-*.log") for line in log.read_text().splitlines()
                    if line.startswith("{")]
    assert any(e.get("call_id") == call_id and e.get("conversation") == record["conversation"] for e in runner_lines)
    # libsodium where the system has it (the image installs it), else the interpreter's libcrypto (verify_key.py)
    preferred = verify_key.backend()
    assert preferred in ("libsodium", "libcrypto")
    assert any(e.get("message") == f"runner: decision signatures verified with {preferred}" for e in runner_lines)
    families = {f.name: f for f in text_string_to_metric_families(metrics)}
    assert "fisk_chatops_run_duration_seconds" in families and "fisk_chatops_queue_depth" in families
    stages = {s.labels["stage"] for s in families["fisk_chatops_queue_depth"].samples}
    assert stages == {"awaiting_approval", "queued", "running"}  # every stage the HELP names is set
    modules = {line.split("|")[-1].strip() for log in logs.glob("runner-*.log")
               for line in log.read_text().splitlines() if line.startswith("import time:")}
    imported = {name.split(".")[0] for name in modules}
    assert {"redis", "bot", "re2"} <= imported  # the import log is there
    assert not imported & {"anthropic", "slack_bolt", "slack_sdk", "aiohttp", "httpx2", "pydantic_settings",
                               "prometheus_client", "pydantic", "pydantic_core", "yaml"}  # config: bot/config_view.py
    # it verified the decision with libsodium or the interpreter's libcrypto, not cryptography's own OpenSSL
    assert "bot.approvals.verify_key" in modules and not any(m.startswith("cryptography.hazmat") for m in modules)
