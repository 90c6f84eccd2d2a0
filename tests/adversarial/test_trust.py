"""Redis is storage, not authority; the approved binary is the binary that runs (issue 12, items 1, 2 and 7).

An attacker with full read/write access to Redis (no decision key) forges states, copies a genuine decision
onto another call, replays an old one, rewrites the argv of an approved call, queues run entries by hand and
signs with a key of their own. The real runner (production executor, sealed binary copies) executes none of
it: checked on the filesystem (the counting tool logs every execution), in the call states, the audit trail
and the refusal metric. Then a binary swapped between the card and the click is refused, and the upgraded
binary works for a new proposal without a restart.
"""

from __future__ import annotations

import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from redis.asyncio import Redis

from bot.approvals.decisions import DecisionSigner
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, Proposal, hash_argv
from bot.approvals.store import CallStore
from bot.config import config_for_binary
from bot.fisk.digest import file_digest
from bot.metrics import DECISIONS_REFUSED
from bot.tools.catalog import Catalog
from bot.wiring import CatalogSource
from tests.adversarial.conftest import COUNTING_OPSCTL, CountingApp, audit_of, ran, wait_until
from tests.slack.conftest import CHANNEL, Harness
from tests.support import decision_keys
from tests.support.fisk_app import make_script

CONV = f"slack:{CHANNEL}:1700.000002"
POLICY = ApprovalPolicy()


def status_proposal(catalog: Catalog, service: str) -> Proposal:
    tool = catalog.get("service_status")
    assert tool is not None
    arguments = json.dumps({"service": service})
    return Proposal(tool=tool.name, app=tool.app, arguments=arguments, argv=tool.render_argv(arguments),
                    tags=list(tool.tags), binary_digest=tool.settings.binary_digest,
                    model_hash=tool.settings.model_hash)


def refusals(cause: str) -> float:
    return DECISIONS_REFUSED.labels(cause).value


async def force(redis: Redis, store: CallStore, call_id: str, **fields: str) -> None:
    """The attacker: write any fields of the record, then queue it on the run stream by hand."""
    key = store.keys.call(call_id)
    if fields:
        await redis.hset(key, mapping=fields)
    await redis.xadd(store.keys.run_stream(0), {"call_id": call_id, "app": "opsctl"})


async def settled(store: CallStore, call_id: str) -> CallRecord:
    async def done() -> CallRecord | None:
        record = await store.get(call_id)
        return record if record.terminal else None

    return await wait_until(done, 15)


async def test_full_redis_access_runs_nothing_nobody_approved(
    redis: Redis, counted: CountingApp, counted_catalog: Catalog, run_calls
) -> None:
    store = CallStore(redis, signer=decision_keys.signer())
    genuine, victim, rewritten, queued, self_signed = [
        (await store.propose(CONV, [status_proposal(counted_catalog, name)], POLICY, "UREQ"))[0]
        for name in ("web", "api", "db", "extra", "own")
    ]
    genuine = await store.approve(genuine.id, "UAPP", [], POLICY, argv_hash=genuine.argv_hash)
    rewritten = await store.approve(rewritten.id, "UAPP", [], POLICY, argv_hash=rewritten.argv_hash)
    before = refusals("decision")

    # forged state: approved with no decision at all
    await force(redis, store, victim.id, state="approved")
    # an awaiting call queued by hand (state untouched): the claim refuses it
    await force(redis, store, queued.id)
    # rewritten argv (and its hash, and the arguments) of an approved call
    evil = [*rewritten.argv[:-1], "--", "payroll"]
    await redis.hset(store.keys.call(rewritten.id), mapping={
        "argv": json.dumps(evil), "argv_hash": hash_argv(evil), "arguments": '{"service": "payroll"}'})
    # a decision signed with the attacker's own key, shaped exactly like a genuine one
    forged = DecisionSigner(Ed25519PrivateKey.generate()).sign(
        call_id=self_signed.id, tool=self_signed.tool, app=self_signed.app, argv_hash=self_signed.argv_hash,
        binary_digest=self_signed.binary_digest, model_hash=self_signed.model_hash, approvers=["UAPP"],
        verdict="approved", now=genuine.created_at.timestamp())
    await force(redis, store, self_signed.id, state="approved", signed_decision=forged)
    await run_calls(counted_catalog)

    assert (await settled(store, genuine.id)).state == CallState.finished
    outcomes = {r.id: r for r in [await settled(store, c.id) for c in (victim, rewritten, self_signed)]}
    assert outcomes[victim.id].state == CallState.refused
    assert "no signed decision" in (outcomes[victim.id].result or {})["error"]
    assert "command line differs" in (outcomes[rewritten.id].result or {})["error"]
    assert "unknown key" in (outcomes[self_signed.id].result or {})["error"]
    assert (await store.get(queued.id)).state == CallState.awaiting_approval and not await ran(redis, queued.id)

    # a genuine decision copied onto another call, and the finished genuine call replayed
    [copy_target] = await store.propose(CONV, [status_proposal(counted_catalog, "cache")], POLICY, "UREQ")
    await force(redis, store, copy_target.id, state="approved", signed_decision=genuine.signed_decision)
    await force(redis, store, genuine.id, state="approved")
    assert "another call" in ((await settled(store, copy_target.id)).result or {})["error"]

    async def replay_refused() -> bool:
        entries = await audit_of(redis, genuine.id)
        return any(e.to_state == "refused" and "replay" in e.reason for e in entries)

    await wait_until(replay_refused, 15)
    assert counted.executions() == [["service", "status", "--", "web"]]  # the one genuine call, once
    assert refusals("decision") - before == 5
    for call in (victim, rewritten, self_signed, copy_target):
        assert [e.to_state for e in await audit_of(redis, call.id)][-1] == "refused"


async def test_a_binary_swapped_between_card_and_click_is_refused(
    harness: Harness, poster, counted: CountingApp, counted_catalog: Catalog, run_calls, tmp_path: Path,
    fixtures_dir: Path,
) -> None:
    await run_calls(counted_catalog)
    (record,) = await harness.store.propose(CONV, [status_proposal(counted_catalog, "web")], POLICY, "UREQ")
    record = await harness.show_card(record, poster)
    card = harness.slack.calls_to("chat.postMessage")[-1].params
    assert f"binary sha256 `{record.binary_digest[:12]}`" in json.dumps(card)  # the short form on the card
    swapped = counted.binary.read_text().replace("executions.log", "swapped.log")
    counted.binary.write_text(swapped)  # same path, same permissions, other bytes
    before = refusals("binary")
    await harness.click(record, "fisk_approve", "UAPPROVER")
    final = await settled(harness.store, record.id)
    assert final.state == CallState.refused and "binary changed since approval" in (final.result or {})["error"]
    assert refusals("binary") - before == 1
    assert counted.executions() == [] and not (counted.binary.parent / "swapped.log").exists()

    async def result_posted() -> bool:
        return bool((await harness.store.get(record.id)).meta.get("slack_result_ts"))

    await wait_until(result_posted, 15)


async def test_an_upgraded_binary_is_re_introspected_and_runs_for_new_proposals(
    redis: Redis, tmp_path: Path, fixtures_dir: Path, run_calls
) -> None:
    body = COUNTING_OPSCTL.format(fixture=str(fixtures_dir / "opsctl.introspect.json"), here=str(tmp_path))
    binary = make_script(tmp_path, "opsctl", body)
    source = CatalogSource(config_for_binary(str(binary)))
    old_digest = next(iter(source.catalog)).settings.binary_digest
    assert old_digest == file_digest(binary) and not await source.refresh()
    binary.write_text(binary.read_text() + "\n# upgraded\n")
    assert await source.refresh()
    tool = source.catalog.get("service_status")
    assert tool is not None and tool.settings.binary_digest == file_digest(binary) != old_digest
    await run_calls(source.catalog)
    store = CallStore(redis, signer=decision_keys.signer())
    [call] = await store.propose(CONV, [status_proposal(source.catalog, "web")], POLICY, "UREQ")
    await store.approve(call.id, "UAPP", [], POLICY)
    assert (await settled(store, call.id)).state == CallState.finished
    assert CountingApp(binary).executions() == [["service", "status", "--", "web"]]


async def test_a_digest_rewritten_after_the_card_cannot_be_approved(
    harness: Harness, poster, counted_catalog: Catalog
) -> None:
    """The click signs the digest the card showed: a record rewritten in between is a stale card."""
    (record,) = await harness.store.propose(CONV, [status_proposal(counted_catalog, "web")], POLICY, "UREQ")
    record = await harness.show_card(record, poster)
    card = harness.slack.calls_to("chat.postMessage")[-1].params
    value = next(e["value"] for b in card["blocks"] if b["type"] == "actions" for e in b["elements"]
                 if e["action_id"] == "fisk_approve")
    await harness.redis.hset(harness.store.keys.call(record.id), "binary_digest", "ee" * 32)
    await harness.click(record, "fisk_approve", "UAPPROVER", value=value)

    def told_stale() -> bool:  # the click is handled after Slack's ack
        return any("stale" in c.params["text"] for c in harness.slack.calls_to("chat.postEphemeral"))

    await wait_until(told_stale, 15)
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval
