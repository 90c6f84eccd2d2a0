"""Hostile Slack requests against the real bolt app (signed HTTP on its aiohttp server) and the real store.

Already covered in tests/slack and not repeated here: forged/stale/replayed slash commands, a click with another
argv hash, a click from a non-approver, a button from another message, double clicks, refused channels and
users for commands and mentions. Added here: forged, stale and replayed CLICKS, and clicks that try to approve
a call from outside its own card (another thread, another channel, no card at all, a card not posted yet).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from bot.approvals.records import CallRecord, CallState
from tests.slack.conftest import CHANNEL, SECRET, Harness, wait_for

CONV_A = f"slack:{CHANNEL}:1700.000001"
CONV_B = f"slack:{CHANNEL}:1700.000002"
ARGV = ["opsctl", "service", "restart", "--", "web"]


async def with_card(harness: Harness, start: Callable[[], Awaitable[None]], conversation: str) -> CallRecord:
    record = await harness.propose(conversation, ARGV)
    return await harness.show_card(record, start)


def click_body(record: CallRecord, *, user: str = "UAPPROVER", channel: str | None = CHANNEL,
               message: dict[str, Any] | None = None, container: dict[str, Any] | None = None,
               action: str = "fisk_approve") -> str:
    payload: dict[str, Any] = {
        "type": "block_actions", "user": {"id": user}, "team": {"id": "T0FAKE"}, "api_app_id": "AFAKE",
        "actions": [{"action_id": action, "block_id": "b", "type": "button", "action_ts": str(time.time()),
                     "value": json.dumps({"call": record.id, "argv": record.argv_hash})}],
        "trigger_id": str(time.monotonic_ns()),
    }  # fmt: skip
    if channel is not None:
        payload["channel"] = {"id": channel}
    if message is not None:
        payload["message"] = message
    if container is not None:
        payload["container"] = container
    return urlencode({"payload": json.dumps(payload)})


async def send_click(harness: Harness, body: str, **kw: Any) -> int:
    status, _ = await harness.send(body, "application/x-www-form-urlencoded", **kw)
    return status


async def refused_and_unchanged(harness: Harness, record: CallRecord) -> None:
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "nothing was changed" in note.params["text"].lower()
    latest = await harness.store.get(record.id)
    assert latest.state == CallState.awaiting_approval and latest.approvals == []
    assert await harness.redis.xlen(harness.store.keys.run_stream(0)) == 0


async def test_forged_stale_and_replayed_clicks_are_refused(harness: Harness, poster) -> None:
    record = await with_card(harness, poster, CONV_A)
    ts = record.meta["slack_ts"]
    body = click_body(record, message={"ts": ts, "thread_ts": "1700.000001"},
                      container={"type": "message", "message_ts": ts, "channel_id": CHANNEL})
    assert await send_click(harness, body, secret="not-the-secret") == 401
    assert await send_click(harness, body, timestamp=int(time.time()) - 6 * 60) == 401
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval
    now = int(time.time())
    assert await send_click(harness, body, timestamp=now) == 200
    await wait_for(lambda: harness.slack.calls_to("chat.update"))
    assert (await harness.store.get(record.id)).state == CallState.approved
    # the same signed request again (within Slack's 5-minute window) is a replay, refused before any listener
    assert await send_click(harness, body, timestamp=now) == 401
    assert await harness.redis.xlen(harness.store.keys.run_stream(0)) == 1
    assert harness.slack.calls_to("chat.postEphemeral") == []  # not even an "already approved" note
    assert SECRET not in json.dumps([c.params for c in harness.slack.calls])


async def test_card_in_another_thread_cannot_approve_this_call(harness: Harness, poster) -> None:
    mine = await with_card(harness, poster, CONV_A)
    other = await with_card(harness, poster, CONV_B)
    ts = other.meta["slack_ts"]  # a genuine card of thread B, with thread A's call id in the value
    body = click_body(mine, message={"ts": ts, "thread_ts": "1700.000002"},
                      container={"type": "message", "message_ts": ts, "channel_id": CHANNEL})
    assert await send_click(harness, body) == 200
    await refused_and_unchanged(harness, mine)


async def test_same_card_ts_in_another_channel_cannot_approve(harness: Harness, poster) -> None:
    record = await with_card(harness, poster, CONV_A)
    ts = record.meta["slack_ts"]  # message ts are unique per channel only
    body = click_body(record, channel="C0OTHER", message={"ts": ts, "thread_ts": "1700.000001"},
                      container={"type": "message", "message_ts": ts, "channel_id": "C0OTHER"})
    assert await send_click(harness, body) == 200
    await refused_and_unchanged(harness, record)


async def test_right_card_ts_but_another_thread_cannot_approve(harness: Harness, poster) -> None:
    record = await with_card(harness, poster, CONV_A)
    ts = record.meta["slack_ts"]
    body = click_body(record, message={"ts": ts, "thread_ts": "1600.000009"},
                      container={"type": "message", "message_ts": ts, "channel_id": CHANNEL})
    assert await send_click(harness, body) == 200
    await refused_and_unchanged(harness, record)


async def test_click_without_any_message_cannot_approve(harness: Harness, poster) -> None:
    record = await with_card(harness, poster, CONV_A)
    body = click_body(record, channel=None, container={"type": "view", "view_id": "V1"})
    assert await send_click(harness, body) == 200
    await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral") or harness.slack.calls_to("chat.update"),
                   timeout=3)
    latest = await harness.store.get(record.id)
    assert latest.state == CallState.awaiting_approval and latest.approvals == []


async def test_call_whose_card_is_not_posted_cannot_be_approved_from_another_card(harness: Harness) -> None:
    record = await harness.propose(CONV_A, ARGV)  # no poster: the call has no card (yet)
    body = click_body(record, message={"ts": "1700.000777", "thread_ts": "1700.000002"},
                      container={"type": "message", "message_ts": "1700.000777", "channel_id": CHANNEL})
    assert await send_click(harness, body) == 200
    await refused_and_unchanged(harness, record)


async def test_genuine_click_still_approves(harness: Harness, poster) -> None:
    record = await with_card(harness, poster, CONV_A)
    ts = record.meta["slack_ts"]
    body = click_body(record, message={"ts": ts, "thread_ts": "1700.000001"},
                      container={"type": "message", "message_ts": ts, "channel_id": CHANNEL})
    assert await send_click(harness, body) == 200
    await wait_for(lambda: harness.slack.calls_to("chat.update"))
    assert (await harness.store.get(record.id)).state == CallState.approved
