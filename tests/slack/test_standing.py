"""Standing approvals through Slack as an on-call would use them: "Approve tool here" on a card approves it and
the later calls of that tool in the thread (audited with the grant id), the grant is shown in the thread,
revoked with its button or ``/fisk revoke``, and expires on time; every state read back from the Slack calls."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import urlencode

from bot.agent import bus
from bot.approvals.audit import read_audit
from bot.approvals.records import CallRecord, CallState
from tests.slack.conftest import CHANNEL, Harness, click_payload, wait_for
from tests.support import decision_keys

THREAD = "1700.000001"
CONV = f"slack:{CHANNEL}:{THREAD}"


async def _carded(harness: Harness, argv: list[str], **kw: Any) -> CallRecord:
    record = await harness.propose(CONV, argv, **kw)
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}))

    async def posted() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.meta.get("slack_ts") else None

    return await wait_for(posted)


def _grant_messages(harness: Harness) -> list[dict[str, Any]]:
    return [m for m in harness.slack.thread(CHANNEL, THREAD) if "Standing approval" in json.dumps(m.get("blocks"))]


async def _revoke_click(harness: Harness, message: dict[str, Any], user: str) -> None:
    button = next(e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"])
    payload = {
        "type": "block_actions", "user": {"id": user}, "team": {"id": "T0FAKE"}, "api_app_id": "AFAKE",
        "channel": {"id": CHANNEL},
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": CHANNEL},
        "message": {"ts": message["ts"], "thread_ts": THREAD},
        "actions": [{"action_id": button["action_id"], "block_id": "b", "type": "button", "value": button["value"],
                     "action_ts": str(time.time())}],
        "response_url": harness.slack.response_url("revoke"), "trigger_id": str(time.monotonic_ns()),
    }  # fmt: skip
    await harness.send(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")


def _menu(harness: Harness, record: CallRecord) -> dict[str, Any]:
    blocks = harness.slack.message(CHANNEL, record.meta["slack_ts"])["blocks"]
    return next(e for b in blocks if b["type"] == "actions" for e in b["elements"] if e["type"] == "static_select")


async def _grant_click(harness: Harness, record: CallRecord, action: str, user: str, minutes: str) -> None:
    """A grant button's click as Slack sends it: the card's menu choice rides along in ``state.values``."""
    payload = click_payload(record, action, user, harness.slack.response_url("click"))
    payload["state"] = {"values": {"menu": {"fisk_grant_minutes": {
        "type": "static_select", "selected_option": {"text": {"type": "plain_text", "text": f"for {minutes} min"},
                                                     "value": minutes}}}}}
    await harness.send(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")


def _enable(harness: Harness, **standing: Any) -> None:
    deps = harness.front.deps
    deps.policy = deps.policy.model_copy(update={"standing": deps.policy.standing.model_copy(
        update={"enabled": True, **standing})})


async def test_standing_approval_used_then_revoked_then_expired(harness: Harness, poster) -> None:
    _enable(harness)
    await poster()
    first = await _carded(harness, ["opsctl", "status", "web"])
    card = json.dumps(harness.slack.message(CHANNEL, first.meta["slack_ts"])["blocks"])
    assert "fisk_grant_tool" in card and "Approve tool here" in card and "for 30 min" in card
    await harness.click(first, "fisk_grant_tool", "UAPPROVER")
    (message,) = await wait_for(lambda: _grant_messages(harness))
    assert (await harness.store.get(first.id)).state is CallState.approved
    text = json.dumps(message["blocks"])
    assert "<@UAPPROVER> approved `opsctl_status` in this thread (any command line of it)" in text
    assert "fisk_revoke" in text
    (grant,) = await harness.store.grants.active(CONV)

    used = await _carded(harness, ["opsctl", "status", "db"])  # another command line of the same tool
    assert used.state is CallState.auto_approved and used.decision is not None
    assert used.decision.actor == f"grant:{grant.id}"
    audit = await read_audit(harness.redis, call_id=used.id)
    assert audit[-1].actor == f"grant:{grant.id}" and grant.id in audit[-1].reason
    assert f"standing approval {grant.id}" in json.dumps(harness.slack.message(CHANNEL, used.meta["slack_ts"]))

    await _revoke_click(harness, message, "USTRANGER")  # not the grantor, not an approver
    refusal = await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                      if c.params["user"] == "USTRANGER"])
    assert "may not revoke" in refusal[0].params["text"] and await harness.store.grants.active(CONV)
    await _revoke_click(harness, message, "UAPPROVER")
    await wait_for(lambda: "Revoked by <@UAPPROVER>" in json.dumps(harness.slack.message(CHANNEL, message["ts"])))
    assert "fisk_revoke" not in json.dumps(harness.slack.message(CHANNEL, message["ts"]))
    after = await _carded(harness, ["opsctl", "status", "web"])
    assert after.state is CallState.awaiting_approval

    # a short grant for the exact command line: used for that command only, then it expires on time
    _enable(harness, default_minutes=0.05)
    await harness.click(after, "fisk_grant_command", "UAPPROVER")
    await wait_for(lambda: len(_grant_messages(harness)) == 2)
    exact = await _carded(harness, ["opsctl", "status", "web"])
    other = await _carded(harness, ["opsctl", "status", "db"])
    assert exact.state is CallState.auto_approved and other.state is CallState.awaiting_approval
    (short,) = await harness.store.grants.active(CONV)
    await asyncio.sleep(max(0.0, short.expires_at.timestamp() - time.time()) + 0.2)  # really expire, on time
    expired = await _carded(harness, ["opsctl", "status", "web"])
    assert expired.state is CallState.awaiting_approval and await harness.store.grants.active(CONV) == []


async def test_revoke_command_and_tools_that_never_get_a_grant(harness: Harness, poster) -> None:
    _enable(harness)
    await poster()
    await harness.front.deps.state.open_thread(CHANNEL, THREAD, "UAPPROVER", last_ts=THREAD)
    record = await _carded(harness, ["opsctl", "status", "web"])
    await harness.click(record, "fisk_grant_tool", "UAPPROVER")
    await wait_for(lambda: _grant_messages(harness))
    await harness.command("revoke", user="UAPPROVER")
    posts = await wait_for(lambda: [p for ps in harness.slack.response_url_posts.values() for p in ps])
    assert "Revoked 1 standing approval" in posts[0]["text"]
    assert await harness.store.grants.active(CONV) == []
    await wait_for(lambda: "Revoked by" in json.dumps(_grant_messages(harness)[0]))

    risky = await _carded(harness, ["opsctl", "restart", "web"], tags=["ai:confirm"])
    assert "fisk_grant" not in json.dumps(harness.slack.message(CHANNEL, risky.meta["slack_ts"]))
    await harness.click(risky, "fisk_grant_tool", "UAPPROVER")  # a forged click is refused all the same
    refusal = await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                      if "cannot be approved for the thread" in c.params["text"]])
    assert refusal and (await harness.store.get(risky.id)).state is CallState.awaiting_approval


async def test_the_approver_chooses_how_long_and_a_forged_duration_is_refused(harness: Harness, poster) -> None:
    _enable(harness, max_minutes=60)
    await poster()
    record = await _carded(harness, ["opsctl", "status", "web"])
    menu = _menu(harness, record)
    assert [o["value"] for o in menu["options"]] == ["15", "30", "60"]  # 120 is over max_minutes
    assert menu["initial_option"]["value"] == "30"

    # choosing in the menu is acknowledged and changes nothing (the button's click carries the choice)
    choose = click_payload(record, "fisk_grant_minutes", "UAPPROVER", harness.slack.response_url("choose"))
    choose["actions"][0].update(type="static_select", selected_option=menu["options"][2])
    status, _ = await harness.send(urlencode({"payload": json.dumps(choose)}), "application/x-www-form-urlencoded")
    assert status == 200 and (await harness.store.get(record.id)).state is CallState.awaiting_approval

    for forged in ("100000", "0.5", "-5", "nan", "soon"):  # over max_minutes, under a minute, not a number
        await _grant_click(harness, record, "fisk_grant_tool", "UAPPROVER", forged)
        await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                if "cannot be approved for the thread" in c.params["text"]])
    await wait_for(lambda: len(harness.slack.calls_to("chat.postEphemeral")) == 5 or None)
    refusals = [c.params["text"] for c in harness.slack.calls_to("chat.postEphemeral")]
    assert any("from 1 to 60 minutes, not 100000" in text for text in refusals)
    assert any("'soon' is not a number of minutes" in text for text in refusals)
    assert (await harness.store.get(record.id)).state is CallState.awaiting_approval
    assert await harness.store.grants.active(CONV) == []

    await _grant_click(harness, record, "fisk_grant_tool", "UAPPROVER", "60")
    await wait_for(lambda: _grant_messages(harness))
    (grant,) = await harness.store.grants.active(CONV)
    assert abs((grant.expires_at - grant.created_at).total_seconds() - 3600) < 0.01
    signed = grant.trusted(decision_keys.TEST_KEY.public_key(), CONV)
    assert signed is not None and signed.expires_at == grant.expires_at  # the signed expiry is the chosen one
    assert (await harness.store.get(record.id)).state is CallState.approved

    # a click without a menu choice (older card, client that sent no state) gets default_minutes
    plain = await _carded(harness, ["opsctl", "status", "db", "--all"], tool="opsctl_logs")
    await harness.click(plain, "fisk_grant_command", "UAPPROVER")
    await wait_for(lambda: len(_grant_messages(harness)) == 2 or None)
    default = next(g for g in await harness.store.grants.active(CONV) if g.tool == "opsctl_logs")
    assert abs((default.expires_at - default.created_at).total_seconds() - 30 * 60) < 0.01
