"""Signed HTTP requests to the real bolt app on its aiohttp server: commands, events, signature checks, dedupe."""

from __future__ import annotations

import json
import time

from redis.asyncio import Redis

from bot.agent import bus
from bot.slack.settings import ChannelTools
from tests.slack.conftest import CHANNEL, Harness, wait_for


async def inbox(redis: Redis) -> list[bus.BusEvent]:
    return [bus.BusEvent.from_fields(i, f) for i, f in await redis.xrange(bus.INBOX)]


async def test_command_posts_request_opens_thread_and_submits(harness: Harness) -> None:
    status, _ = await harness.command("why is db-3 <!channel> slow?")
    assert status == 200
    events = await wait_for(lambda: inbox(harness.redis))
    posted = harness.slack.calls_to("chat.postMessage")
    assert len(posted) == 1
    params = posted[0].params
    assert params["channel"] == CHANNEL
    assert params["text"] == "<@UREQ> asked: why is db-3 &lt;!channel&gt; slow?"
    assert params["parse"] == "none" and params["link_names"] in (False, "0", 0)
    ts = posted[0].response["ts"]
    (event,) = events
    assert event.kind == "user_message"
    assert event.conversation == f"slack:{CHANNEL}:{ts}"
    assert event.data["text"] == "why is db-3 <!channel> slow?" and event.data["user"] == "UREQ"
    assert await harness.front.deps.state.owned(CHANNEL, ts) == event.conversation


async def test_forged_stale_and_replayed_requests_are_refused(harness: Harness) -> None:
    status, _ = await harness.command("hello", secret="not-the-secret")
    assert status == 401
    status, _ = await harness.command("hello", timestamp=int(time.time()) - 6 * 60)
    assert status == 401
    body = "command=%2Ffisk&text=hi&user_id=UREQ&channel_id=C0TEST&response_url=x"
    ts = int(time.time())
    assert (await harness.send(body, "application/x-www-form-urlencoded", timestamp=ts))[0] == 200
    assert (await harness.send(body, "application/x-www-form-urlencoded", timestamp=ts))[0] == 401
    await wait_for(lambda: inbox(harness.redis))
    assert len(await inbox(harness.redis)) == 1
    assert len(harness.slack.calls_to("chat.postMessage")) == 1


async def test_help_and_refusals_are_ephemeral_acks(harness: Harness) -> None:
    status, text = await harness.command("help")
    assert status == 200 and "/fisk tools" in json.loads(text)["text"]
    harness.front.settings.allowed_users = ["USOMEONE"]
    status, text = await harness.command("restart everything", user="UOTHER")
    assert status == 200
    reply = json.loads(text)
    assert reply["response_type"] == "ephemeral" and "not allowed" in reply["text"]
    harness.front.settings.allowed_users = []
    harness.front.settings.allowed_channels = ["C0ELSE"]
    status, text = await harness.command("restart everything")
    assert "not enabled in this channel" in json.loads(text)["text"]
    assert await inbox(harness.redis) == []
    assert harness.slack.calls_to("chat.postMessage") == []


async def test_tools_lists_channel_selection_with_approval_need(harness: Harness) -> None:
    harness.front.settings.channels = {CHANNEL: ChannelTools.model_validate({"include": {"tools": ["^service_"]}})}
    await harness.command("tools")
    posts = await wait_for(lambda: harness.slack.response_url_posts)
    (payload,) = next(iter(posts.values()))
    text = json.dumps(payload["blocks"])
    assert payload["response_type"] == "ephemeral"
    assert "service_status" in text and "needs approval" in text
    assert "remote_lookup" not in text


async def test_mention_starts_and_thread_reply_continues_once(harness: Harness) -> None:
    mention = {"type": "app_mention", "user": "UREQ", "channel": CHANNEL, "ts": "1700.000001",
               "text": "<@UBOT> check db-3"}
    message = dict(mention, type="message", channel_type="channel")
    await harness.event(mention, event_id="Ev1")
    await harness.event(message, event_id="Ev2")  # Slack sends both for one mention
    await harness.event(mention, event_id="Ev1", headers={"X-Slack-Retry-Num": "1"})  # a retry
    await wait_for(lambda: inbox(harness.redis))
    reply = {"type": "message", "user": "UREQ", "channel": CHANNEL, "ts": "1700.000005",
             "thread_ts": "1700.000001", "text": "and db-4?", "channel_type": "channel"}
    await harness.event(reply, event_id="Ev3")
    await harness.event(reply, event_id="Ev3")
    await wait_for(lambda: _at_least(harness.redis, 2))  # listeners run after the ack, concurrently
    await harness.event(dict(reply, ts="1700.000006", text="edited", subtype="message_changed"), event_id="Ev4")
    await harness.event(dict(reply, ts="1700.000007", bot_id="BBOT", user="UBOT"), event_id="Ev5")
    await harness.event(dict(reply, ts="1700.000008", thread_ts="1600.1"), event_id="Ev6")  # not our thread
    await harness.event(dict(reply, ts="1700.000009", text="stop"), event_id="Ev7")
    events = await wait_for(lambda: _at_least(harness.redis, 3))
    assert [e.kind for e in events] == ["user_message", "user_message", "stop"]
    assert {e.conversation for e in events} == {f"slack:{CHANNEL}:1700.000001"}
    assert events[0].data["text"] == "check db-3" and events[1].data["text"] == "and db-4?"


async def _at_least(redis: Redis, n: int) -> list[bus.BusEvent] | None:
    events = await inbox(redis)
    return events if len(events) >= n else None


async def test_direct_message_starts_a_conversation(harness: Harness) -> None:
    dm = {"type": "message", "user": "UREQ", "channel": "D0DM", "ts": "1800.1", "text": "hi", "channel_type": "im"}
    await harness.event(dm, event_id="EvD")
    (event,) = await wait_for(lambda: inbox(harness.redis))
    assert event.conversation == "slack:D0DM:1800.1"


async def test_refused_mention_gets_ephemeral_and_submits_nothing(harness: Harness) -> None:
    harness.front.settings.allowed_channels = ["C0ELSE"]
    mention = {"type": "app_mention", "user": "UREQ", "channel": CHANNEL, "ts": "1.2", "text": "<@UBOT> hi"}
    await harness.event(mention, event_id="EvR")
    (call,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert call.params["user"] == "UREQ" and "not enabled" in call.params["text"]
    assert await inbox(harness.redis) == []


async def test_every_button_of_the_bot_is_acknowledged_and_a_foreign_action_is_not(harness: Harness) -> None:
    """One listener answers all the bot's action ids (``CLICK_ACTIONS``): each click is acknowledged and recorded
    for the intake worker; an action id that is not the bot's is not acknowledged (bolt's 404), and a click
    with a wrong signature is refused before anything (401)."""
    from urllib.parse import urlencode

    from bot.slack import cards
    from tests.slack.conftest import click_payload

    record = await harness.propose(f"slack:{CHANNEL}:1700000000.000100", ["opsctl", "status"])
    actions = [cards.APPROVE_ACTION, cards.CONFIRM_APPROVAL_ACTION, cards.DENY_ACTION, cards.CANCEL_ACTION,
               cards.GRANT_TOOL_ACTION, cards.GRANT_COMMAND_ACTION, cards.GRANT_MINUTES_ACTION, cards.REVOKE_ACTION]
    for action in actions:
        body = urlencode({"payload": json.dumps(click_payload(record, action, "UNOBODY", "http://127.0.0.1:9/r"))})
        assert (await harness.send(body, "application/x-www-form-urlencoded"))[0] == 200, action
    for action in ("fisk_approve_all", "xfisk_approve", "other"):
        body = urlencode({"payload": json.dumps(click_payload(record, action, "UNOBODY", "http://127.0.0.1:9/r"))})
        assert (await harness.send(body, "application/x-www-form-urlencoded"))[0] == 404, action
    body = urlencode({"payload": json.dumps(click_payload(record, cards.APPROVE_ACTION, "UAPPROVER", "x"))})
    assert (await harness.send(body, "application/x-www-form-urlencoded", secret="forged"))[0] == 401
    assert (await harness.store.get(record.id)).state == "awaiting_approval"
