"""Fixtures of the adversarial tests: the agent and Slack harnesses (imported, not copied), plus a counting
opsctl whose every execution is appended to a log file, so "nothing ran" is checked on the real filesystem.

The counting opsctl prints its argv one item per line, then the bytes of ``<bin>/output`` if that file
exists (the test writes what the "tool" should print: injections, secrets, escape sequences...), then a flood
of filler lines if ``<bin>/flood`` says so.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.approvals.audit import AuditEntry, read_audit
from bot.approvals.decisions import DecisionVerifier
from bot.approvals.execution import execute_decided_call
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.runner.binary import BinarySnapshots
from bot.runner.call import ExecutionLimits
from bot.tools.catalog import Catalog
from tests.agent import harness as agent_harness
from tests.agent.conftest import fake  # noqa: F401  (fixtures)
from tests.slack.conftest import catalog, harness, policy, poster, settings, slack, store  # noqa: F401
from tests.support import decision_keys
from tests.support.fisk_app import make_script
from tests.support.waiting import wait_for

COUNTING_OPSCTL = """
import json, os, sys
HERE = {here!r}  # not __file__: the runner executes a sealed copy, whose name is /proc/self/fd/N
args = sys.argv[1:]
if args == ["--fisk-introspect"]:
    with open({fixture!r}, "rb") as f:
        sys.stdout.buffer.write(f.read())
    sys.exit(0)
with open(os.path.join(HERE, "executions.log"), "a") as f:
    f.write(json.dumps(args) + "\\n")
for a in args:
    print(a)
sys.stdout.flush()
extra = os.path.join(HERE, "output")
if os.path.exists(extra):
    with open(extra, "rb") as f:
        sys.stdout.buffer.write(f.read())
flood = os.path.join(HERE, "flood")
if os.path.exists(flood):
    with open(flood, "rb") as f:
        megabytes, head, tail = f.read().split(b"\\0")
    out = sys.stdout.buffer
    out.write(head)
    chunk = (b"y" * 1023 + b"\\n") * 1024
    for _ in range(int(megabytes)):
        out.write(chunk)
    out.write(tail)
    out.flush()
"""


@dataclass
class CountingApp:
    binary: Path

    @property
    def log(self) -> Path:
        return self.binary.parent / "executions.log"

    def executions(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def floods(self, megabytes: int, head: bytes, tail: bytes) -> None:
        """On its next runs the tool also writes ``head``, ``megabytes`` MiB of filler lines, then ``tail``."""
        (self.binary.parent / "flood").write_bytes(b"\0".join([str(megabytes).encode(), head, tail]))

    def prints(self, data: bytes | str) -> None:
        """What the tool prints after its argv on its next runs."""
        raw = data.encode() if isinstance(data, str) else data
        (self.binary.parent / "output").write_bytes(raw)


@pytest.fixture
def counted(tmp_path: Path, fixtures_dir: Path) -> CountingApp:
    fixture = str(fixtures_dir / "opsctl.introspect.json")
    body = COUNTING_OPSCTL.format(fixture=fixture, here=str(tmp_path / "bin"))
    return CountingApp(make_script(tmp_path / "bin", "opsctl", body))


@pytest.fixture
def counted_catalog(counted: CountingApp) -> Catalog:
    """service_*, auth_user_list of the counting opsctl (db_drop stays known as denied)."""
    return agent_harness.catalog_for(counted.binary, small=True)


def approved_call_executor(
    tools: Catalog, limits: ExecutionLimits | None = None, verifier: DecisionVerifier | None = None
) -> Callable[[CallRecord], Awaitable[dict[str, Any]]]:
    """The production executor path (``roles.make_executor`` without metrics): verify the signed decision,
    re-check, then run from a sealed copy of the binary."""
    checks = verifier or decision_keys.verifier()
    binaries = BinarySnapshots()

    async def execute(record: CallRecord) -> dict[str, Any]:
        result = await execute_decided_call(record, tools, limits or ExecutionLimits(), checks, binaries)
        return result.as_json()

    return execute


@pytest.fixture
async def run_calls(redis: Redis) -> AsyncIterator[Callable[[Catalog], Awaitable[RunnerWorker]]]:  # noqa: F811
    """Start a real RunnerWorker over ``catalog`` with the production executor; stopped after the test."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def start(tools: Catalog) -> RunnerWorker:
        worker = RunnerWorker(redis, CallStore(redis, heartbeat_ttl=2.0), approved_call_executor(tools),
                              runner_id="adv-runner", block_seconds=0.05, stale_after=2.0, sweep=False,
                              grace_period=1)
        tasks.append(asyncio.create_task(worker.run(stop)))
        return worker

    yield start
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)


async def audit_of(client: Redis, call_id: str) -> list[AuditEntry]:
    return await read_audit(client, limit=1000, call_id=call_id)


async def ran(client: Redis, call_id: str) -> bool:
    """True when the audit trail shows the call ever entered ``running``."""
    return any(e.to_state == "running" for e in await audit_of(client, call_id))


wait_until = wait_for
