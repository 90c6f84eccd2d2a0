"""Slack side doors (issue 12, items 4-6), tried through the real bolt app over signed HTTP with the loopback fake
Slack and a real Redis: a user refused the bot clicking Approve on someone else's card, direct messages around
``allowed_channels`` and around per-channel narrowing, a flood of requests, self-approval, a start-up with
nobody named as approver, and a replay inside the timestamp window.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.agent.worker import AgentWorker
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState
from bot.slack import catalog_for_channel, channel_of_conversation
from bot.slack.access import Admission, RateLimiter
from bot.slack.app import REPLAY_WINDOW_SECONDS, SIGNATURE_MAX_SKEW_SECONDS, slack_policy
from bot.slack.settings import ChannelTools, RateLimit, SlackSettings
from tests.adversarial.test_slack_side import CONV_A, refused_and_unchanged, with_card
from tests.agent import harness as agent_harness
from tests.slack.conftest import CHANNEL, Harness, wait_for
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply

Start = Callable[[], Awaitable[None]]
ROOT = Path(__file__).resolve().parents[2]
DM = "D0DIRECT"


async def inbox(redis: Redis) -> list[bus.BusEvent]:
    raw = await redis.xrange(bus.INBOX, "-", "+")
    return [bus.BusEvent.from_fields(i, f) for i, f in raw]


def dm_event(text: str, ts: str, user: str = "UREQ") -> dict[str, str]:
    return {"type": "message", "user": user, "channel": DM, "ts": ts, "text": text, "channel_type": "im"}


# ---------------------------------------------------------------- allowed_users holds for clicks


async def test_a_user_refused_the_bot_cannot_approve_or_deny_someone_elses_card(harness: Harness,
                                                                                 poster: Start) -> None:
    """Under a policy where anyone may approve, a user outside allowed_users is still no one to the bot."""
    harness.front.deps.policy = slack_policy(ApprovalPolicy(anyone_may_approve=True))
    harness.front.settings.allowed_users = ["UREQ", "UAPPROVER"]
    record = await with_card(harness, poster, CONV_A)
    await harness.click(record, "fisk_approve", "UOUTSIDER")
    await refused_and_unchanged(harness, record)
    (note,) = harness.slack.calls_to("chat.postEphemeral")
    assert note.params["user"] == "UOUTSIDER" and "slack.allowed_users" in note.params["text"]
    await harness.click(record, "fisk_deny", "UOUTSIDER")
    await wait_for(lambda: len(harness.slack.calls_to("chat.postEphemeral")) == 2)
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval
    await harness.click(record, "fisk_approve", "UAPPROVER")  # an allowed user still can
    approved = await wait_for(lambda: _state(harness, record.id, CallState.approved))
    assert [a.user for a in approved.approvals] == ["UAPPROVER"]


async def _state(harness: Harness, call_id: str, state: CallState) -> CallRecord | None:
    record = await harness.store.get(call_id)
    return record if record.state == state else None


async def test_a_click_in_a_direct_message_follows_direct_message_access(harness: Harness, poster: Start) -> None:
    harness.front.settings.allowed_channels = [CHANNEL]  # DMs now off by default
    record = await with_card(harness, poster, f"slack:{DM}:1700.000001")
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await refused_and_unchanged(harness, record)
    assert "slack.direct_messages" in harness.slack.calls_to("chat.postEphemeral")[0].params["text"]


# ---------------------------------------------------------------- self-approval


async def test_self_approval_is_forbidden_by_default_in_slack(harness: Harness, poster: Start) -> None:
    harness.front.deps.policy = slack_policy(ApprovalPolicy(approvers={"users": ["UREQ", "UAPPROVER"]}))
    record = await with_card(harness, poster, CONV_A)  # proposed by UREQ
    assert "not the requester" in json.dumps(harness.slack.message(CHANNEL, record.meta["slack_ts"]))
    await harness.click(record, "fisk_approve", "UREQ")
    await refused_and_unchanged(harness, record)
    assert "self-approval is forbidden" in harness.slack.calls_to("chat.postEphemeral")[0].params["text"]
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _state(harness, record.id, CallState.approved))


def test_self_approval_stays_open_where_the_operator_wrote_so_and_at_the_console() -> None:
    written = ApprovalPolicy(approvers={"users": ["U1"]}, forbid_self_approval=False)
    assert slack_policy(written).forbid_self_approval is False
    assert slack_policy(ApprovalPolicy(approvers={"users": ["U1"]})).forbid_self_approval is True
    assert ApprovalPolicy().forbid_self_approval is None  # the console applies the policy as written: allowed


# ---------------------------------------------------------------- direct messages


async def test_direct_messages_are_off_by_default_once_channels_are_restricted(harness: Harness) -> None:
    harness.front.settings.allowed_channels = [CHANNEL]
    await harness.event(dm_event("restart web", "1800.000001"), event_id="EvDM1")
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert note.params["channel"] == DM and "slack.direct_messages is off" in note.params["text"]
    status, text = await harness.command("restart web", channel=DM)
    assert status == 200 and "slack.direct_messages is off" in json.loads(text)["text"]
    assert await inbox(harness.redis) == [] and harness.slack.calls_to("chat.postMessage") == []


async def test_direct_messages_allowed_users_means_listed_users_only(harness: Harness) -> None:
    harness.front.settings.direct_messages = "allowed_users"  # allowed_users empty: nobody is listed
    await harness.event(dm_event("hi", "1800.000001"), event_id="EvDM1")
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "only to the users listed in slack.allowed_users" in note.params["text"]
    harness.front.settings.allowed_users = ["UREQ"]
    await harness.event(dm_event("hi again", "1800.000002"), event_id="EvDM2")
    (event,) = await wait_for(lambda: inbox(harness.redis))
    assert event.conversation == f"slack:{DM}:1800.000002"


async def test_direct_messages_everyone_still_respects_allowed_users(harness: Harness) -> None:
    harness.front.settings.allowed_channels = [CHANNEL]
    harness.front.settings.direct_messages = "everyone"
    harness.front.settings.allowed_users = ["UREQ"]
    await harness.event(dm_event("hi", "1800.000001", user="UOTHER"), event_id="EvDM1")
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "not allowed to use this bot" in note.params["text"]
    await harness.event(dm_event("hi", "1800.000002"), event_id="EvDM2")
    (event,) = await wait_for(lambda: inbox(harness.redis))
    assert event.conversation == f"slack:{DM}:1800.000002"


async def test_a_direct_message_asking_for_a_narrowed_tool_never_gets_it(harness: Harness, opsctl: Path) -> None:
    """The DM narrowing removes service_restart: the model is not offered it, and when it asks anyway the call is
    answered locally as an unknown tool: nothing is proposed, no card, nothing runs."""
    front = harness.front
    front.settings.direct_message_tools = ChannelTools.model_validate({"exclude": {"tools": ["restart"]}})
    catalog = agent_harness.catalog_for(opsctl)
    assert "service_restart" in catalog.names
    await harness.command("tools", channel=DM)
    (payload,) = next(iter((await wait_for(lambda: harness.slack.response_url_posts)).values()))
    assert "service_status" in json.dumps(payload["blocks"]) and "service_restart" not in json.dumps(payload)
    with FakeAnthropic() as model:
        model.script(tool_use_reply([("toolu_1", "service_restart", '{"service": "web"}')]),
                     text_reply("I cannot restart it from here."))
        agent = agent_harness.build_agent(harness.redis, model.base_url, catalog, agent_harness.settings(),
                                          front.deps.policy)
        agent._catalog_for = lambda conv, _meta: catalog_for_channel(  # the agent role's per-channel selection
            catalog, front.settings, channel_of_conversation(conv) or "")
        stop = asyncio.Event()
        worker = asyncio.create_task(AgentWorker(harness.redis, agent, block_seconds=0.05).run(stop))
        conversation = f"slack:{DM}:1800.000001"

        async def answered() -> list[str]:
            return agent_harness.replies(await agent_harness.outbox(harness.redis, conversation))

        try:
            await harness.event(dm_event("please restart web", "1800.000001"), event_id="EvDM1")
            assert await wait_for(answered, timeout=15) == ["I cannot restart it from here."]
        finally:
            stop.set()
            _done, late = await asyncio.wait({worker}, timeout=12)  # the worker lets its handler finish
            for task in late:
                task.cancel()
        offered = {tool.get("name") for tool in model.message_requests[0]["tools"]}
        assert "service_status" in offered and "service_restart" not in offered
        (result,) = agent_harness.tool_results(model.message_requests[1])
        assert "Unknown tool 'service_restart'" in json.dumps(result)
    assert await harness.store.pending(conversation) == []
    assert await harness.redis.xlen(harness.store.keys.run_stream(0)) == 0


# ---------------------------------------------------------------- rate limit


async def test_rate_limit_trips_before_anything_is_posted_with_one_note(harness: Harness) -> None:
    front = harness.front
    front.settings.rate_limit = RateLimit(per_user=3, per_channel=100, window_seconds=60)
    now = [1_000_000.0]
    front.deps.limiter.clock = lambda: now[0]  # a fixed moment, so the window cannot roll over mid-test
    answers = [json.loads(text) if text else {} for _, text in [await harness.command(f"req {i}") for i in range(6)]]
    await wait_for(lambda: len(harness.slack.calls_to("chat.postMessage")) == 3)
    notes = [a["text"] for a in answers if a.get("text")]
    assert len(notes) == 1 and "more than 3 requests" in notes[0] and "try again" in notes[0]
    assert answers[3]["response_type"] == "ephemeral"
    for i, mention in enumerate(["<@UBOT> one more", "<@UBOT> and another"]):  # events count too: no 2nd note
        await harness.event({"type": "app_mention", "user": "UREQ", "channel": CHANNEL, "ts": f"1900.00000{i}",
                             "text": mention}, event_id=f"EvM{i}")
    await harness.command("stop")  # stopping is never limited

    async def stopped() -> bool:
        return any(e.kind == "stop" for e in await inbox(harness.redis))

    await wait_for(stopped)
    await asyncio.sleep(0.3)  # the mentions' listeners ran before or beside the stop: give them time to misbehave
    assert harness.slack.calls_to("chat.postEphemeral") == []
    assert len(harness.slack.calls_to("chat.postMessage")) == 3
    assert [e.kind for e in await inbox(harness.redis)].count("user_message") == 3
    replica = RateLimiter(harness.redis, front.settings, clock=lambda: now[0])  # another replica shares the count
    assert not (await replica.admit(CHANNEL, "UREQ")).allowed
    now[0] += 60  # the next window admits again
    status, text = await harness.command("req again")
    assert status == 200 and not text
    await wait_for(lambda: len(harness.slack.calls_to("chat.postMessage")) == 4)


async def test_channel_rate_limit_counts_every_user(harness: Harness) -> None:
    front = harness.front
    front.settings.rate_limit = RateLimit(per_user=100, per_channel=2, window_seconds=60)
    front.deps.limiter.clock = lambda: 2_000_000.0
    for user in ("U1", "U2"):
        assert (await harness.command("hello", user=user))[1] == ""
    status, text = await harness.command("hello", user="U3")
    assert "this channel has sent more than 2 requests" in json.loads(text)["text"]
    assert (await harness.command("hello", user="U3"))[1] == ""  # told once
    await wait_for(lambda: len(harness.slack.calls_to("chat.postMessage")) == 2)
    await asyncio.sleep(0.2)
    assert len(harness.slack.calls_to("chat.postMessage")) == 2


async def test_a_retried_handling_of_one_request_counts_once(redis: Redis) -> None:
    """The intake worker may handle one recorded request twice (a transient failure): one count, one decision."""
    settings = SlackSettings(rate_limit=RateLimit(per_user=1, per_channel=0))
    limiter = RateLimiter(redis, settings, clock=lambda: 5_000_000.0)
    assert (await limiter.admit(CHANNEL, "U1", "entry-1")).allowed
    assert (await limiter.admit(CHANNEL, "U1", "entry-1")).allowed  # not counted again
    refused = await limiter.admit(CHANNEL, "U1", "entry-2")
    assert not refused.allowed and refused.note
    assert await limiter.admit(CHANNEL, "U1", "entry-2") == Admission(False)  # same decision, no second note


# ---------------------------------------------------------------- replay memory covers the whole window


async def test_a_signature_is_remembered_as_long_as_its_timestamp_is_accepted(harness: Harness) -> None:
    """slack_sdk accepts a timestamp up to 5 minutes ahead as well as behind: a request signed for 290 s in the
    future stays acceptable for ~590 s from now, so its signature must be remembered at least that long."""
    assert REPLAY_WINDOW_SECONDS > 2 * SIGNATURE_MAX_SKEW_SECONDS
    body = "command=%2Ffisk&text=help&user_id=UREQ&channel_id=C0TEST&response_url=x"
    future = int(time.time()) + SIGNATURE_MAX_SKEW_SECONDS - 10
    assert (await harness.send(body, "application/x-www-form-urlencoded", timestamp=future))[0] == 200
    (key,) = [k async for k in harness.redis.scan_iter(match="fc:slack:sig:*")]
    accepted_for = future + SIGNATURE_MAX_SKEW_SECONDS - time.time()
    assert await harness.redis.ttl(key) >= accepted_for
    assert (await harness.send(body, "application/x-www-form-urlencoded", timestamp=future))[0] == 401


# ---------------------------------------------------------------- start-up with nobody named as approver


def serve(tmp_path: Path, approval: str, opsctl: Path) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "c.yaml"
    config.write_text(f"applications: [{{binary: {opsctl}}}]\nredis: {{state_dir: {tmp_path / 'state'}}}\n"
                      f"{approval}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "REDIS", "ANTHROPIC"))}
    return subprocess.run([sys.executable, "-m", "bot.cli", "serve", "--config", str(config), "--health-port", "0"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)


def test_slack_mode_refuses_to_start_with_nobody_named_as_approver(tmp_path: Path, opsctl: Path) -> None:
    result = serve(tmp_path, "approval: {approvers: {users: [], groups: []}}", opsctl)
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    assert "approval.anyone_may_approve: true" in line and "approval.approvers is empty" in line
    assert not (tmp_path / "state").exists(), "refused before the embedded Redis was started"


@pytest.mark.parametrize("approval", ["approval: {anyone_may_approve: true}", "approval: {approvers: {users: [U1]}}"])
def test_a_written_approver_setting_gets_past_the_check(tmp_path: Path, opsctl: Path, approval: str) -> None:
    result = serve(tmp_path, approval, opsctl)  # then stops on the next thing missing: the Slack token
    assert result.returncode == 2 and "anyone_may_approve" not in result.stderr
    assert "SLACK_BOT_TOKEN" in result.stderr or "ANTHROPIC_API_KEY" in result.stderr


def test_anyone_may_approve_beside_listed_approvers_is_a_contradiction() -> None:
    from bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match="anyone_may_approve: true contradicts"):
        parse_config({"approval": {"anyone_may_approve": True, "approvers": {"users": ["U1"]}}})


def test_the_example_config_says_what_to_set() -> None:
    """The example leaves approvers for the operator to name: Slack refuses it with the setting to write."""
    from bot.config import load_config
    from bot.slack.client import SlackStartupError

    example = ROOT / "config" / "fisk-chatops.yaml"
    config = load_config(example)
    with pytest.raises(SlackStartupError, match="approval.anyone_may_approve: true"):
        slack_policy(config.approval)
    assert "SET THIS BEFORE RUNNING WITH SLACK" in example.read_text()
    assert config.slack.rate_limit.per_user > 0 and config.slack.direct_message_access == "everyone"
