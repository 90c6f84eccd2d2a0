"""``fisk-chatops audit`` reads the trail the lifecycle wrote, and says clearly when Redis is unreachable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import redis.asyncio

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import Proposal
from bot.approvals.store import CallStore
from tests.support.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env}, cwd=ROOT)


async def test_audit_lists_every_transition(redis_url: str) -> None:
    client = redis.asyncio.Redis.from_url(redis_url)
    store = CallStore(client)
    policy = ApprovalPolicy()
    proposal = Proposal(tool="service_status", app="opsctl", arguments="{}", argv=["/bin/opsctl", "service", "status"])
    [record] = await store.propose("slack:C1:1.1", [proposal], policy, requester="U1")
    await store.deny(record.id, "U2", [], policy, reason="not now")
    await client.aclose()

    result = run_cli("audit", "--json", env={"REDIS_URL": redis_url})
    assert result.returncode == 0, result.stderr
    entries = [e for e in json.loads(result.stdout) if e["call_id"] == record.id]
    assert [(e["from_state"], e["to_state"], e["actor"]) for e in entries] == [
        ("proposed", "awaiting_approval", "U1"), ("awaiting_approval", "denied", "U2")]
    table = run_cli("audit", "--since", "1h", env={"REDIS_URL": redis_url})
    assert table.returncode == 0 and "awaiting_approval -> denied" in table.stdout and "U2" in table.stdout


def test_audit_with_dead_redis_is_a_clear_error() -> None:
    result = run_cli("audit", env={"REDIS_URL": f"redis://:hunter2pass@127.0.0.1:{free_port()}/0"})
    assert result.returncode == 2
    assert "cannot reach Redis at 127.0.0.1" in result.stderr and "hunter2pass" not in result.stderr
