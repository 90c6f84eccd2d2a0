"""The call's layout in Redis (records.py): a small hash Redis keeps as a listpack, plus one body string.

Records written by the previous layout (every field in the hash, the proposal seal carrying its claims) must
still be read, approved and run exactly as they were written; a rewritten body must not run.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.decisions import DecisionRefused
from bot.approvals.errors import TamperedRecord
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, Proposal, compact_body, expand_body, hash_argv, shown_command
from bot.approvals.seals import proposal_claims
from bot.approvals.store import CallStore
from tests.support import decision_keys

CONV = "slack:C0LAYOUT01:1700000000.000100"
#: long enough that argv, arguments and the shown command are each over the 64-byte listpack value limit
ARGV = ["/usr/local/bin/opsctl", "service", "logs", "--since=15m", "--lines=200", "--grep=502", "--grep=upstream",
        "--", "web-7"]
ARGUMENTS = json.dumps({"service": "web-7", "since": "15m", "lines": "200", "grep": ["502", "upstream"]})


def logs_proposal(tool_use_id: str) -> Proposal:
    return Proposal(tool="service_logs", app="opsctl", arguments=ARGUMENTS, argv=ARGV, tags=["ai:readonly"],
                    tool_use_id=tool_use_id, binary_digest="a" * 64, model_hash="b" * 64)


def read_digests(body: dict[str, object]) -> tuple[str, str]:
    expanded = expand_body(body)
    return str(expanded["binary_digest"]), str(expanded["model_hash"])


def text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def test_a_pending_call_is_a_listpack_hash_without_derivable_or_empty_fields(
    redis: Redis, store: CallStore
) -> None:
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutListpackAbCdEfGh")], ApprovalPolicy(), "UREQ")
    await store.set_meta(record.id, slack_channel="C0LAYOUT01", slack_ts="1700000001.000200")
    key = store.keys.call(record.id)
    assert text(await redis.object("encoding", key)) in {"listpack", "ziplist"}  # ziplist: Redis before 7
    fields = {text(k): text(v) for k, v in (await redis.hgetall(key)).items()}
    assert not {"id", "tool_use_id", "argv", "arguments", "command"} & set(fields)
    assert all(v != "" for v in fields.values()) and all(len(v) <= 64 for v in fields.values())
    body = json.loads(text(await redis.get(store.keys.body(record.id))))
    assert body["v"] == ARGV and body["a"] == ARGUMENTS and body["t"] == ["ai:readonly"] and body["u"] == 1
    assert body["b"] == base64.urlsafe_b64encode(b"\xaa" * 32).rstrip(b"=").decode()  # 43 characters, not 64 hex
    assert len(body["m"]) == 43 and read_digests(body) == ("a" * 64, "b" * 64)
    assert "c" not in body and shown_command(ARGV) == " ".join(ARGV)  # nothing to quote: the audit joins argv
    [entry] = [f for _, f in await redis.xrange(store.keys.audit_stream(0)) if text(f[b"call_id"]) == record.id]
    assert text(entry[b"command"]) == ""  # argv joined: the reader takes it from the body, kept as long
    [audited] = await read_audit(redis, call_id=record.id, shards=store.keys.shards)
    assert audited.command == " ".join(ARGV)
    assert len(body["s"]) < 100  # the signature alone: the claims are the record's own fields
    read = await store.get(record.id)
    assert replace(read, meta={}) == replace(record, meta={})
    assert read.tool_use_id == "toolu_01LayoutListpackAbCdEfGh"
    assert read.argv == ARGV and read.tool_tags == ["ai:readonly"]
    assert read.meta == {"slack_channel": "C0LAYOUT01", "slack_ts": "1700000001.000200"}
    assert await redis.ttl(store.keys.body(record.id)) == await redis.ttl(key) > 0


async def to_previous_layout(redis: Redis, store: CallStore, call_id: str) -> None:
    """Rewrite a call as the previous version wrote it: every field in the hash (JSON text for argv and tags,
    ``id``, ``tool_use_id``, empty values), a proposal seal that carries its claims, and no body."""
    record = await store.get(call_id)
    signer = decision_keys.signer()
    seal = signer.sign_statement("proposal", proposal_claims(
        call_id=record.id, conversation=record.conversation, tool=record.tool, app=record.app,
        argv_hash=record.argv_hash, binary_digest=record.binary_digest, model_hash=record.model_hash,
        requester=record.requester, tags=record.tool_tags, approvals_needed=record.approvals_needed))
    await redis.delete(store.keys.body(call_id))
    await redis.hset(store.keys.call(call_id), mapping={
        "id": record.id, "arguments": record.arguments, "argv": json.dumps(record.argv),
        "command": shown_command(record.argv), "tool_tags": json.dumps(record.tool_tags), "trigger": record.trigger,
        "approvals": "[]", "decision": "", "runner": "", "result": "", "tool_use_id": record.tool_use_id or "",
        "binary_digest": record.binary_digest, "model_hash": record.model_hash, "signed_decision": "",
        "proposal_seal": seal,
    })


async def test_a_record_of_the_previous_layout_is_approved_and_claimed_as_written(
    redis: Redis, store: CallStore
) -> None:
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutPreviousAbCdEf")], ApprovalPolicy(), "UREQ")
    await to_previous_layout(redis, store, record.id)
    old = await store.get(record.id)
    assert old.argv == ARGV and old.tool_use_id == "toolu_01LayoutPreviousAbCdEf" and old.proposal_seal.count(".") == 1
    approved = await store.approve(record.id, "UAPP", [], ApprovalPolicy(), argv_hash=hash_argv(ARGV))
    claimed = await store.claim(record.id, "r1")
    assert claimed is not None and claimed.argv == ARGV and claimed.arguments == ARGUMENTS
    claims = decision_keys.verifier().check(claimed)  # what a runner does before it executes anything
    assert claims.argv_hash == hash_argv(ARGV) and claims.approvers == ("UAPP",) and approved.signed_decision
    entries = await redis.xrange(store.keys.audit_stream(0))
    mine = [{text(k): text(v) for k, v in f.items()} for _, f in entries if text(f[b"call_id"]) == record.id]
    assert [e["to"] for e in mine][-2:] == ["approved", "running"]
    assert all(e["command"] == shown_command(ARGV) for e in mine[-2:])  # read from the old hash field


async def test_a_previous_layout_record_with_a_rewritten_argv_cannot_be_approved(
    redis: Redis, store: CallStore
) -> None:
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutOldTamperAbCd")], ApprovalPolicy(), "UREQ")
    await to_previous_layout(redis, store, record.id)
    evil = [*ARGV[:-1], "payroll"]
    await redis.hset(store.keys.call(record.id), mapping={"argv": json.dumps(evil), "argv_hash": hash_argv(evil)})
    with pytest.raises(TamperedRecord):
        await store.approve(record.id, "UAPP", [], ApprovalPolicy(), argv_hash=hash_argv(evil))
    assert (await store.get(record.id)).state.value == "awaiting_approval"


async def test_a_rewritten_body_does_not_run(redis: Redis, store: CallStore) -> None:
    """Redis write access to the body changes nothing that runs: the signed decision binds the argv hash."""
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutBodyTamperAbCd")], ApprovalPolicy(), "UREQ")
    await store.approve(record.id, "UAPP", [], ApprovalPolicy(), argv_hash=record.argv_hash)
    body = json.loads(text(await redis.get(store.keys.body(record.id))))
    body["v"] = [*ARGV[:-1], "payroll"]
    await redis.set(store.keys.body(record.id), json.dumps(body), keepttl=True)
    claimed = await store.claim(record.id, "r1")
    assert claimed is not None and claimed.argv[-1] == "payroll"
    with pytest.raises(DecisionRefused, match="command line differs"):
        decision_keys.verifier().check(claimed)


async def test_a_rewritten_seal_or_sealed_field_in_the_new_layout_is_refused(redis: Redis, store: CallStore) -> None:
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutSealTamperAbC")], ApprovalPolicy(), "UREQ")
    body = json.loads(text(await redis.get(store.keys.body(record.id))))
    body["t"] = []  # e.g. dropping a tag that needs a second approver or a narrower approver group
    await redis.set(store.keys.body(record.id), json.dumps(body), keepttl=True)
    with pytest.raises(TamperedRecord, match="differ from what the bot proposed"):
        await store.approve(record.id, "UAPP", [], ApprovalPolicy(), argv_hash=record.argv_hash)
    body["t"], body["s"] = ["ai:readonly"], ""
    await redis.set(store.keys.body(record.id), json.dumps(body), keepttl=True)
    with pytest.raises(TamperedRecord, match="no valid proposal seal"):
        await store.approve(record.id, "UAPP", [], ApprovalPolicy(), argv_hash=record.argv_hash)


async def test_a_threads_open_calls_are_one_small_hash_and_earlier_sets_still_count(
    redis: Redis, store: CallStore
) -> None:
    conv = CONV + "7"
    policy = ApprovalPolicy()
    first, second = await store.propose(conv, [logs_proposal("toolu_01LayoutSetsFirstAbCd"),
                                               logs_proposal("toolu_01LayoutSetsSecondAbC")], policy, "UREQ")
    calls = store.keys.conv_calls(0, conv)
    assert text(await redis.object("encoding", calls)) in {"listpack", "ziplist"}
    assert {text(k): text(v) for k, v in (await redis.hgetall(calls)).items()} == {first.id: "p", second.id: "p"}

    # as an earlier version kept them: two sets, no hash
    await redis.delete(calls)
    await redis.sadd(store.keys.conv_open(0, conv), first.id, second.id)
    await redis.sadd(store.keys.conv_pending(0, conv), first.id, second.id)
    assert [r.id for r in await store.pending(conv)] == [r.id for r in await store.open_calls(conv)] == \
        sorted([first.id, second.id], key=lambda i: ((first if i == first.id else second).created_at, i))
    await store.approve(first.id, "UAPP", [], policy, argv_hash=first.argv_hash)
    assert [r.id for r in await store.pending(conv)] == [second.id]
    assert {r.id for r in await store.open_calls(conv)} == {first.id, second.id}
    assert not await redis.sismember(store.keys.conv_open(0, conv), first.id)  # moved to the hash
    await store.deny(second.id, "UAPP", [], policy)
    [(_, done)] = [(i, f) for i, f in await redis.xrange(store.keys.completions_stream(0))
                   if text(f[b"call_id"]) == second.id]
    assert done[b"open"] == b"1"  # the first call is still open: counted once
    assert await store.pending(conv) == [] and [r.id for r in await store.open_calls(conv)] == [first.id]


def test_a_digest_that_is_not_sha256_hex_keeps_its_name_and_text() -> None:
    body = {"binary_digest": "not-a-digest", "model_hash": "AB" * 32, "argv": ["x"]}
    stored = compact_body(body)
    assert stored == {"binary_digest": "not-a-digest", "model_hash": "AB" * 32, "v": ["x"]}  # upper case: as is
    assert expand_body(stored) == body


async def test_a_body_of_the_previous_layout_long_names_and_hex_digests_reads_and_audits(
    redis: Redis, store: CallStore
) -> None:
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutLongNamesAbCd")], ApprovalPolicy(), "UREQ")
    key = store.keys.body(record.id)
    stored = json.loads(text(await redis.get(key)))
    await redis.set(key, json.dumps(expand_body(stored)), keepttl=True)  # as the previous version wrote it
    assert "argv" in json.loads(text(await redis.get(key)))
    read = await store.get(record.id)
    assert read == record
    approved = await store.approve(record.id, "UAPP", [], ApprovalPolicy(), argv_hash=record.argv_hash)
    assert approved.state.value == "approved"
    entries = [f for _, f in await redis.xrange(store.keys.audit_stream(0)) if text(f[b"call_id"]) == record.id]
    assert text(entries[-1][b"command"]) == ""  # no command of its own in the long names either: argv joined
    audited = await read_audit(redis, call_id=record.id, shards=store.keys.shards)
    assert [e.command for e in audited] == [" ".join(ARGV)] * 2  # read from the long names
    await redis.set(key, json.dumps({**expand_body(stored), "command": "shown as written"}), keepttl=True)
    await store.claim(record.id, "r1")
    last = [f for _, f in await redis.xrange(store.keys.audit_stream(0)) if text(f[b"call_id"]) == record.id][-1]
    assert text(last[b"command"]) == "shown as written"  # a previous body's own command is copied as before


async def test_an_audit_entry_of_the_previous_version_reads_as_written_and_one_without_a_record_has_no_command(
    redis: Redis, store: CallStore
) -> None:
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutOldAuditAbCdEf")], ApprovalPolicy(), "UREQ")
    stream = store.keys.audit_stream(store.keys.shard_of_call(record.id))
    await redis.xadd(stream, {"call_id": record.id, "from": "awaiting_approval", "to": "approved", "actor": "UAPP",
                              "at": "1700000000.5", "reason": "", "conversation": CONV, "tool": "service_logs",
                              "command": "opsctl as the previous version copied it", "requester": "UREQ"})
    entries = await read_audit(redis, call_id=record.id, shards=store.keys.shards)
    assert {e.to_state: e.command for e in entries} == {"awaiting_approval": " ".join(ARGV),
                                                        "approved": "opsctl as the previous version copied it"}
    await redis.delete(store.keys.call(record.id), store.keys.body(record.id))  # expired (or never there)
    entries = await read_audit(redis, call_id=record.id, shards=store.keys.shards)
    assert {e.to_state: e.command for e in entries} == {"awaiting_approval": "",
                                                        "approved": "opsctl as the previous version copied it"}
    assert [e.tool for e in entries] == ["service_logs"] * 2  # the entry still names the tool and the thread
    await redis.xadd(stream, {"call_id": "not-a-call", "from": "proposed", "to": "awaiting_approval", "actor": "U1",
                              "at": "1700000000.5", "reason": "", "conversation": CONV, "tool": "t", "command": "",
                              "requester": "U1"})
    stranger = [e for e in await read_audit(redis, conversation=CONV, shards=store.keys.shards)
                if e.call_id == "not-a-call"]
    assert [e.command for e in stranger] == [""]  # an id no script of ours wrote: nothing read, no error


async def test_approvals_needed_is_stored_only_when_not_one_and_a_deleted_one_fails_the_seal(
    redis: Redis, store: CallStore
) -> None:
    [one] = await store.propose(CONV, [logs_proposal("toolu_01LayoutOneApproverAbC")], ApprovalPolicy(), "UREQ")
    assert await redis.hget(store.keys.call(one.id), "approvals_needed") is None
    assert (await store.get(one.id)).approvals_needed == 1
    two_person = ApprovalPolicy(two_person_tags=["ai:readonly"])
    [two] = await store.propose(CONV, [logs_proposal("toolu_01LayoutTwoApproverAbC")], two_person, "UREQ")
    assert await redis.hget(store.keys.call(two.id), "approvals_needed") == b"2"
    await redis.hdel(store.keys.call(two.id), "approvals_needed")  # would read as 1
    with pytest.raises(TamperedRecord, match="differ from what the bot proposed"):
        await store.approve(two.id, "UAPP", [], ApprovalPolicy(), argv_hash=two.argv_hash)
    assert (await store.get(two.id)).state.value == "awaiting_approval"


async def test_another_calls_hash_and_body_copied_under_a_calls_key_are_refused(redis: Redis, store: CallStore) -> None:
    """A Redis writer copies call B (hash with an ``id`` field naming B, as the previous layout had, and body) over
    call A's keys: the record read from A's key is call A, whose id B's seal does not cover, so no click signs B's
    command for A's queue entry (B then ran twice: once from A's entry, once from its own)."""
    [a] = await store.propose(CONV, [logs_proposal("toolu_01LayoutSwapAAbCdEfGh")], ApprovalPolicy(), "UREQ")
    other = replace(logs_proposal("toolu_01LayoutSwapBAbCdEfGh"), argv=[*ARGV[:-1], "payroll"])
    [b] = await store.propose(CONV, [other], ApprovalPolicy(), "UREQ")
    b_hash = await redis.hgetall(store.keys.call(b.id))
    await redis.hset(store.keys.call(a.id), mapping={**b_hash, b"id": b.id.encode()})
    await redis.set(store.keys.body(a.id), await redis.get(store.keys.body(b.id)) or b"", keepttl=True)
    copied = await store.get(a.id)
    assert copied.id == a.id and copied.argv[-1] == "payroll"
    with pytest.raises(TamperedRecord):
        await store.approve(a.id, "UAPP", [], ApprovalPolicy(), argv_hash=b.argv_hash)
    assert (await store.get(a.id)).signed_decision == ""


async def test_a_body_or_hash_of_the_wrong_types_is_an_error_not_a_record(redis: Redis, store: CallStore) -> None:
    """The record checks what it reads as its pydantic model did: an argv of numbers, tags that are not strings, a
    state no lifecycle has, or a timestamp that is not one, raise ValueError (the store's readers' error)."""
    [record] = await store.propose(CONV, [logs_proposal("toolu_01LayoutTypesAbCdEfGh")], ApprovalPolicy(), "UREQ")
    raw = await redis.hgetall(store.keys.call(record.id))
    body = json.loads(text(await redis.get(store.keys.body(record.id))))
    assert (await store.get(record.id)).argv == ARGV
    for changed_body, changed_hash, problem in (
        ({**body, "v": [1, 2]}, {}, "argv: expected a list of strings"),
        ({**body, "t": "ai:readonly"}, {}, "tool_tags: expected a list of strings"),
        ({**body, "a": {"service": "web-7"}}, {}, "arguments: expected a string"),
        (body, {b"state": b"exploded"}, "'exploded' is not a valid CallState"),
        (body, {b"result": b"[1]"}, "result: expected a mapping"),
    ):
        with pytest.raises(ValueError, match=problem):
            CallRecord.from_redis({**raw, **changed_hash}, json.dumps(changed_body), record.id)
    with pytest.raises(ValueError, match="created_at: expected a moment"):  # a copy is checked as well
        replace(record, created_at="yesterday")
    assert replace(record, created_at=1_700_000_000.0).created_at.year == 2023
