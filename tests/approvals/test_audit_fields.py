"""The audit trail carries what a timeline needs (thread, tool, shown command line, requester) on every entry,
so an incident's timeline can be rebuilt from it alone, with secrets in the command line already redacted."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import Proposal
from bot.approvals.store import CallStore

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _proposal(tool: str, argv: list[str]) -> Proposal:
    return Proposal(tool=tool, app="opsctl", arguments="{}", argv=argv)


async def test_every_entry_names_thread_tool_command_and_requester(redis: Redis) -> None:
    store = CallStore(redis, shards=3)
    policy = ApprovalPolicy(auto_approve={"tools": ["^status$"]})  # type: ignore[arg-type]
    argv = ["/bin/opsctl", "deploy", f"--token={TOKEN}", "--password", "hunter2", "--", "web 1"]
    deploy, status = await store.propose(
        "slack:C1:1.1", [_proposal("deploy", argv), _proposal("status", ["/bin/opsctl", "status"])], policy, "U_REQ"
    )
    await store.approve(deploy.id, "U_OK", [], policy)
    assert await store.claim(deploy.id, "r1")
    await store.finish(deploy.id, "r1", {"status": "finished", "exit_code": 3, "output": "x"})
    [other] = await store.propose("slack:C2:2.2", [_proposal("deploy", ["/bin/opsctl", "deploy"])], policy, "U_X")

    since = datetime.now(UTC) - timedelta(minutes=1)
    entries = await read_audit(redis, since, 1000, conversation="slack:C1:1.1", shards=3)
    assert {e.call_id for e in entries} == {deploy.id, status.id}
    assert [e.to_state for e in entries if e.call_id == deploy.id] == [
        "awaiting_approval", "approved", "running", "finished"]
    for entry in entries:
        assert entry.conversation == "slack:C1:1.1" and entry.requester == "U_REQ"
    shown = {e.tool: e.command for e in entries}
    assert shown["status"] == "/bin/opsctl status"
    assert TOKEN not in shown["deploy"] and "hunter2" not in shown["deploy"]
    assert shown["deploy"].startswith("/bin/opsctl deploy ") and shown["deploy"].endswith("-- 'web 1'")
    assert "[REDACTED:" in shown["deploy"]
    # the filter is exact: another thread's calls are not mixed in
    elsewhere = await read_audit(redis, since, 1000, conversation="slack:C2:2.2", shards=3)
    assert [e.call_id for e in elsewhere] == [other.id]


async def test_the_shown_command_honours_the_operators_redact_patterns(redis: Redis) -> None:
    """``execution.redact_patterns`` reach the audit's command line (and the record's), as they reach the result."""
    ticket = "ACME-1234-ABCDEF"  # only the operator's pattern knows this is a secret
    argv = ["/bin/opsctl", "deploy", "--ticket", ticket, f"note={ticket}"]
    since = datetime.now(UTC) - timedelta(minutes=1)
    await CallStore(redis).propose("slack:C1:1.1", [_proposal("deploy", argv)], ApprovalPolicy(), "U_REQ")
    [unconfigured] = await read_audit(redis, since, 1000, conversation="slack:C1:1.1")
    assert ticket in unconfigured.command  # the default detectors alone would show it
    store = CallStore(redis, redact_patterns=["ACME-[0-9]{4}-[A-Z]{6}"])
    [record] = await store.propose("slack:C3:3.3", [_proposal("deploy", argv)], ApprovalPolicy(), "U_REQ")
    rejected = await store.reject("slack:C3:3.3", tool="deploy", arguments="{}", reason="bad arguments",
                                  requester="U_REQ", app="opsctl", argv=argv)
    entries = await read_audit(redis, since, 1000, conversation="slack:C3:3.3")
    assert {e.call_id for e in entries} == {record.id, rejected.id}
    on_record = json.loads(await redis.get(store.keys.body(record.id)))["c"]  # in the call's fixed fields
    for shown in [on_record] + [e.command for e in entries]:
        assert ticket not in shown and shown.startswith("/bin/opsctl deploy --ticket ") and "[REDACTED:" in shown
