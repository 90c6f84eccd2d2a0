"""Approval cards posted from the outbox, and signed block_actions clicks against the real lifecycle store."""

from __future__ import annotations

import json
import shlex
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from bot.agent import bus
from bot.approvals.records import CallRecord, CallState
from bot.slack.settings import card_channel
from tests.slack.conftest import CHANNEL, Harness, wait_for

CONV = f"slack:{CHANNEL}:1700.000001"
ARGV = ["opsctl", "service", "restart", "--host", "db-3", "--reason", "it's <!channel> & stuck"]


async def card_for(harness: Harness, start: Callable[[], Awaitable[None]], argv: list[str] = ARGV,
                   **kw: object) -> CallRecord:
    record = await harness.propose(CONV, argv, **kw)  # type: ignore[arg-type]
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}))
    await start()
    return await wait_for(lambda: _with_card(harness, record.id))


async def _with_card(harness: Harness, call_id: str) -> CallRecord | None:
    record = await harness.store.get(call_id)
    return record if record.meta.get("slack_ts") else None


def card_text(harness: Harness, record: CallRecord) -> str:
    return json.dumps(harness.slack.message(CHANNEL, record.meta["slack_ts"])["blocks"])


def buttons(harness: Harness, record: CallRecord) -> list[dict[str, object]]:
    blocks = harness.slack.message(CHANNEL, record.meta["slack_ts"])["blocks"]
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]


async def test_card_shows_exact_argv_trigger_approvers_expiry_and_buttons(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    (post,) = harness.slack.calls_to("chat.postMessage")
    assert post.params["thread_ts"] == "1700.000001" and post.params["parse"] == "none"
    text = card_text(harness, record)
    escaped = shlex.join(ARGV).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert json.dumps(escaped)[1:-1] in text
    assert "<!channel>" not in text
    assert "default policy" in text and "<@UAPPROVER>" in text and "<!subteam^SOPS>" in text
    assert f"<!date^{int(record.expires_at.timestamp())}^" in text and "<@UREQ>" in text
    values = [json.loads(str(b["value"])) for b in buttons(harness, record)]
    assert [b["action_id"] for b in buttons(harness, record)] == ["fisk_approve", "fisk_deny"]
    assert values == [{"call": record.id, "argv": record.argv_hash, "bin": record.binary_digest}] * 2


async def test_long_command_line_is_split_not_hidden(harness: Harness, poster) -> None:
    argv = ["opsctl", "run", *[f"--arg{i}=value-{i:04d}" for i in range(400)]]
    record = await card_for(harness, poster, argv)
    blocks = harness.slack.message(CHANNEL, record.meta["slack_ts"])["blocks"]
    texts = [b["text"]["text"] for b in blocks if "text" in b]
    command = "".join(t.strip("`\n") for t in texts if t.startswith("```"))
    assert command == shlex.join(argv)
    assert all(len(b["text"]["text"]) <= 3000 for b in blocks if "text" in b)


async def test_authorized_click_approves_and_updates_card(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    # the card's channel is the thread's: only its ts is stored (an earlier version's channel is still used, below)
    assert await harness.redis.hget(harness.store.keys.call(record.id), "meta:slack_channel") is None
    assert card_channel(record.conversation, record.meta) == CHANNEL
    status, _ = await harness.click(record, "fisk_approve", "UAPPROVER")
    assert status == 200
    await wait_for(lambda: harness.slack.calls_to("chat.update"))
    assert (await harness.store.get(record.id)).state == CallState.approved
    assert [b["action_id"] for b in buttons(harness, record)] == ["fisk_cancel"]  # approved, not started
    assert "Approved by <@UAPPROVER>" in card_text(harness, record)


async def test_an_approve_click_shows_on_the_card_without_the_poster(harness: Harness) -> None:
    """The click's handler updates the card itself: the clicker is told the decision even while the poster (which
    also shows every transition from the lifecycle's events) is behind or down (not started here)."""
    record = await harness.propose(CONV, ARGV)
    card = harness.slack._api_chat_postMessage({"channel": CHANNEL, "thread_ts": "1700.000001", "text": "card"})
    await harness.store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=card["ts"])
    record = await harness.store.get(record.id)
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: "Approved by" in json.dumps(harness.slack.message(CHANNEL, card["ts"]).get("blocks")))


async def test_a_first_of_two_approvals_shows_on_the_card(harness: Harness, poster) -> None:
    """A two-person call stays awaiting after the first click (no lifecycle event): the handler updates the card
    itself, so the first approver sees their click counted and the second knows one more is needed."""
    two = harness.front.deps.policy.model_copy(update={"two_person_tags": ["impact:rw"]})
    record = await card_for(harness, poster, tags=["impact:rw"], policy=two)
    harness.front.deps.policy = two
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: "Approved so far by <@UAPPROVER>" in card_text(harness, record))
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval
    assert [b["action_id"] for b in buttons(harness, record)] == ["fisk_approve", "fisk_deny"]


async def test_group_member_may_approve(harness: Harness, poster) -> None:
    harness.slack.on("usergroups.users.list", {"ok": True, "users": ["UGROUPIE"]})
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_approve", "UGROUPIE")
    await wait_for(lambda: harness.slack.calls_to("chat.update"))
    assert (await harness.store.get(record.id)).state == CallState.approved
    assert harness.slack.calls_to("usergroups.users.list")[0].params["usergroup"] == "SOPS"


async def test_non_approver_is_refused_and_nothing_changes(harness: Harness, poster) -> None:
    harness.slack.on("usergroups.users.list", {"ok": True, "users": ["USOMEONE"]})
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_approve", "UINTRUDER")
    (refusal,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert refusal.params["user"] == "UINTRUDER" and "may not approve" in refusal.params["text"]
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval
    assert harness.slack.calls_to("chat.update") == [] and len(buttons(harness, record)) == 2


async def test_double_click_approves_once(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await harness.click(record, "fisk_approve", "UAPPROVER")
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "already approved" in note.params["text"]
    assert (await harness.store.get(record.id)).state == CallState.approved
    run = await harness.redis.xrange(harness.store.keys.run_stream(0))
    assert len(run) == 1


async def test_click_with_other_argv_hash_is_refused(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    forged = json.dumps({"call": record.id, "argv": "0" * 64})
    await harness.click(record, "fisk_approve", "UAPPROVER", value=forged)
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "stale" in note.params["text"]
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval


async def test_click_without_an_argv_hash_is_refused(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    for value in (json.dumps({"call": record.id, "argv": ""}), json.dumps({"call": record.id})):
        await harness.click(record, "fisk_approve", "UAPPROVER", value=value)
    notes = await wait_for(lambda: len(harness.slack.calls_to("chat.postEphemeral")) >= 2 and
                           harness.slack.calls_to("chat.postEphemeral"))
    assert all("does not belong to a call" in n.params["text"] for n in notes)
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval


async def test_button_from_another_message_is_refused(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_approve", "UAPPROVER", card_ts="1699.999")
    await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval


async def test_deny_updates_card_and_posts_note(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_deny", "UAPPROVER")  # opens the reason dialog; submitted without one
    (opened,) = await wait_for(lambda: harness.slack.calls_to("views.open"))
    await harness.submit_view(opened.response["view"], "UAPPROVER", {})
    posts = lambda: harness.slack.calls_to("chat.postMessage")  # noqa: E731
    note = await wait_for(lambda: [c for c in posts() if "did not run" in c.params["text"]])
    assert note[0].params["thread_ts"] == "1700.000001"
    assert (await harness.store.get(record.id)).state == CallState.denied
    assert "Denied by <@UAPPROVER>" in card_text(harness, record) and buttons(harness, record) == []


async def test_expired_card_is_updated_and_late_click_noted(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    expired = await harness.store.expire_due(datetime.now(UTC) + timedelta(hours=1))
    assert [r.id for r in expired] == [record.id]
    await wait_for(lambda: "Expired" in card_text(harness, record))
    assert buttons(harness, record) == []
    await harness.click(record, "fisk_approve", "UAPPROVER")
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "expired" in note.params["text"]
    assert (await harness.store.get(record.id)).state == CallState.expired


def test_a_cards_channel_is_its_threads_unless_the_call_stored_one() -> None:
    assert card_channel(CONV, {}) == ""  # no card yet
    assert card_channel(CONV, {"slack_ts": "1700.000002"}) == CHANNEL
    assert card_channel(CONV, {"slack_channel": "C0EARLIER", "slack_ts": "1700.000002"}) == "C0EARLIER"
    assert card_channel("cli:local", {"slack_ts": "1700.000002"}) == ""  # not a Slack thread: no channel
