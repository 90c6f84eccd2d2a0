"""Two ``serve --role slack`` replicas behind one URL, driven the way Slack drives them (issue #14, item 7).

Real processes on one real Redis: slack replica 0 and 1 (HTTP mode) behind a loopback proxy that alternates
between them, one agent, one runner, the fake Slack Web API and the fake Messages API. Slack's habits are played
against the pair: an event retried (same ``event_id``, ``X-Slack-Retry-Num``/``X-Slack-Retry-Reason``) to the
other replica at the same moment and again later, the app_mention + message pair of one message, a slash
command, and clicks in a shuffled order, duplicated across replicas: a double click on both, Approve on one and
Deny on the other at the same moment, a deny reason submitted twice, a click re-sent byte for byte, a late click
after the run. Afterwards, from what really happened (audit stream, the tool's own execution log, the fake
Slack's recorded Web API calls, the model's recorded requests): each event became one agent turn and one
answer, each call was decided once, ran at most once, has one card and one result (or note).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import stat
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.slack.cards import status_text
from tests.support import decision_keys
from tests.support.fake_anthropic import FakeAnthropic, text_reply, tool_use_reply
from tests.support.fake_slack import BOT_USER_ID, FakeSlack, SlackCall, sign_slack_request
from tests.support.redis_server import free_port
from tests.support.serve_process import ServeProcess, wait_until
from tests.support.spreading_proxy import SpreadingProxy
from tests.support.waiting import wait_for

SECRET = "replicas-signing-secret"
CHANNEL = "C0REPLICA"
APPROVERS = ("UAPPROVER", "UAPPROVER2")
#: per conversation tag: the calls the model proposes in its first turn (each call's unique argument)
PLAN = {"convA": ["a1", "a2", "a3", "a4"], "convB": ["b1", "b2", "b3"]}
AUTO_APPROVED = {"b3"}  # proposed as service_logs, which the policy approves: no click, the card shows it run

WRAPPER = """#!/bin/sh
if [ "$1" = "--fisk-introspect" ]; then exec /bin/cat '{fixture}'; fi
printf '%s\\n' "$*" >> '{log}'
for a in "$@"; do printf '%s\\n' "$a"; done
"""


def make_logging_tool(directory: Path, fixture: Path, log: Path) -> Path:
    """The opsctl fixture as a tool that appends every execution's argv to ``log``: runs are counted there."""
    directory.mkdir(parents=True, exist_ok=True)
    tool = directory / "opsctl"
    tool.write_text(WRAPPER.format(fixture=fixture, log=log))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool


def responder(request: dict[str, Any]) -> Any:
    """The scripted model: a conversation's first turn proposes its calls, the turn after the results answers."""
    messages = request.get("messages") or []
    tag = next((t for t in PLAN if t in json.dumps(messages[:1])), None)
    if tag is None:
        return text_reply("I do not know this conversation.")
    content = messages[-1].get("content")
    if isinstance(content, list) and any(block.get("type") == "tool_result" for block in content):
        return text_reply(f"answer {tag}: all checks are back.")
    calls = [(f"toolu_{arg}", "service_logs" if arg in AUTO_APPROVED else "service_status", {"service": f"tok-{arg}"})
             for arg in PLAN[tag]]
    return tool_use_reply(calls, text=f"Checking {tag}.")


def post_key(call: SlackCall) -> str:
    """The key the bot puts in a post's metadata (card:<call>, result:<call>, note:<call>, reply:<entry>)."""
    metadata = call.params.get("metadata") or {}
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    return str((metadata.get("event_payload") or {}).get("key") or "")


def slow_results(slack: FakeSlack, seconds: float) -> None:
    """Slack takes ``seconds`` to accept a result post (its own request thread waits; nothing else does), so a
    reply handled by the other replica meanwhile would overtake it."""

    def post(call: SlackCall) -> dict[str, Any]:
        if post_key(call).startswith("result:"):
            time.sleep(seconds)
        return slack._api_chat_postMessage(call.params)

    slack.on("chat.postMessage", post)


def keyed_posts(slack: FakeSlack, prefix: str) -> dict[str, list[SlackCall]]:
    """The bot's chat.postMessage calls whose metadata key starts with ``prefix`` (card:, result:, note:, reply:),
    by the rest of the key."""
    found: dict[str, list[SlackCall]] = {}
    for call in slack.calls_to("chat.postMessage"):
        key = post_key(call)
        if key.startswith(prefix):
            found.setdefault(key[len(prefix):], []).append(call)
    return found


class Slack:
    """Sends what Slack sends, correctly signed, to the proxy (or pinned to one replica)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, fake: FakeSlack) -> None:
        self.session, self.url, self.fake = session, url, fake
        self.answers: list[tuple[str, int, str]] = []  # (what, status, body)

    async def send(self, what: str, body: str, content_type: str, *, replica: int | None = None,
                   timestamp: int | None = None, headers: dict[str, str] | None = None) -> int:
        signed = sign_slack_request(SECRET, body, timestamp)
        return await self.send_signed(what, body.encode(), {"Content-Type": content_type, **signed,
                                                             **(headers or {})}, replica=replica)

    async def send_signed(self, what: str, body: bytes, headers: dict[str, str], *, replica: int | None = None
                          ) -> int:
        if replica is not None:
            headers = {**headers, SpreadingProxy.PIN: str(replica)}
        async with self.session.post(self.url, data=body, headers=headers) as resp:
            text = await resp.text()
            self.answers.append((what, resp.status, text))
            return resp.status

    async def event(self, what: str, event: dict[str, Any], event_id: str, *, retry: int = 0,
                    replica: int | None = None, timestamp: int | None = None) -> int:
        body = {"type": "event_callback", "team_id": "T0FAKE", "api_app_id": "AFAKE", "event": event,
                "event_id": event_id, "event_time": 1_700_000_000, "authorizations": [
                    {"team_id": "T0FAKE", "user_id": BOT_USER_ID, "is_bot": True}]}  # fmt: skip
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
        return await self.send(what, json.dumps(body), "application/json", replica=replica, timestamp=timestamp,
                               headers=headers)

    async def command(self, what: str, text: str, user: str) -> int:
        form = {"command": "/fisk", "text": text, "user_id": user, "channel_id": CHANNEL, "team_id": "T0FAKE",
                "response_url": self.fake.response_url(what), "trigger_id": f"trig-{what}"}
        return await self.send(what, urlencode(form), "application/x-www-form-urlencoded")

    def click_body(self, card: dict[str, str], action: str, user: str) -> str:
        payload = {
            "type": "block_actions", "user": {"id": user}, "team": {"id": "T0FAKE"}, "api_app_id": "AFAKE",
            "channel": {"id": CHANNEL},
            "container": {"type": "message", "message_ts": card["ts"], "channel_id": CHANNEL},
            "message": {"ts": card["ts"], "thread_ts": card["thread_ts"]},
            "actions": [{"action_id": action, "block_id": "b", "type": "button", "value": card["value"],
                         "action_ts": str(time.time())}],
            "response_url": self.fake.response_url(f"click-{card['call']}"),
            "trigger_id": f"trig-{time.monotonic_ns()}",
        }  # fmt: skip
        return urlencode({"payload": json.dumps(payload)})

    async def click(self, what: str, card: dict[str, str], action: str, user: str, *, replica: int | None = None
                    ) -> int:
        return await self.send(what, self.click_body(card, action, user), "application/x-www-form-urlencoded",
                               replica=replica)

    async def submit_deny(self, what: str, view: dict[str, Any], user: str, reason: str, *,
                          replica: int | None = None) -> int:
        state = {"reason": {"reason": {"type": "plain_text_input", "value": reason}}}
        payload = {"type": "view_submission", "team": {"id": "T0FAKE", "domain": "fake-team"},
                   "user": {"id": user, "username": user.lower(), "team_id": "T0FAKE"}, "api_app_id": "AFAKE",
                   "token": "legacy", "trigger_id": f"trig-{time.monotonic_ns()}",
                   "view": {**view, "state": {"values": state}}, "response_urls": [],
                   "is_enterprise_install": False, "enterprise": None}  # fmt: skip
        return await self.send(what, urlencode({"payload": json.dumps(payload)}),
                               "application/x-www-form-urlencoded", replica=replica)


def cards(slack: FakeSlack) -> dict[str, dict[str, str]]:
    """Each call's approval card as Slack shows it: call id -> ts, thread, the Approve button's value."""
    found: dict[str, dict[str, str]] = {}
    for call_id, posts in keyed_posts(slack, "card:").items():
        blocks = posts[0].params.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        button = next((e for b in blocks if b.get("type") == "actions" for e in b["elements"]
                       if e.get("action_id") == "fisk_approve"), {})  # none on an auto-approved call's card
        found[call_id] = {"call": call_id, "ts": str(posts[0].response["ts"]), "value": button.get("value", ""),
                          "thread_ts": str(posts[0].params.get("thread_ts"))}
    return found


def deny_view(slack: FakeSlack, call_id: str) -> dict[str, Any] | None:
    """The deny-reason modal opened (views.open) for ``call_id``, if any."""
    for view in list(slack.views.values()):
        if json.loads(view.get("private_metadata") or "{}").get("call") == call_id:
            return view
    return None


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    return tmp_path / "logs"


@pytest.fixture
def roles(tmp_path: Path, redis_url: str, fixtures_dir: Path, logs: Path) -> Iterator[dict[str, Any]]:
    """The fakes, slack replicas 0 and 1 behind one proxy, an agent and a runner; printed logs on failure."""
    run_log = tmp_path / "runs.log"
    tool = make_logging_tool(tmp_path / "bin", fixtures_dir / "opsctl.introspect.json", run_log)
    ports = [free_port(), free_port()]
    base = {
        "applications": [{"binary": str(tool)}],
        "decisions": decision_keys.write_key_files(tmp_path / "keys"),
        "approval": {"approvers": {"users": list(APPROVERS)}, "auto_approve": {"tools": ["^service_logs$"]}},
        "shutdown_grace_seconds": 2,
    }
    configs = []
    for index, port in enumerate(ports):
        config = tmp_path / f"config-{index}.yaml"
        config.write_text(json.dumps({**base, "slack": {
            "mode": "http", "http_host": "127.0.0.1", "http_port": port, "usergroup_cache_seconds": 0,
            "working_reaction": ""}}))
        configs.append(config)
    with FakeSlack() as slack, FakeAnthropic() as model, \
            SpreadingProxy([f"http://127.0.0.1:{port}" for port in ports]) as proxy:
        model.script(*[responder] * 20)
        slow_results(slack, 0.3)
        env = {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-replicas", "SLACK_SIGNING_SECRET": SECRET,
               "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": model.base_url}
        processes = [ServeProcess("slack", "slack-0", configs[0], env, logs),
                     ServeProcess("slack", "slack-1", configs[1], env, logs),
                     ServeProcess("agent", "agent", configs[0], env, logs),
                     ServeProcess("runner", "runner", configs[0], env, logs)]
        failed = True
        try:
            for process in processes:
                wait_until(process.ready, 60, f"{process.name} ready", 0.1)
            yield {"slack": slack, "model": model, "proxy": proxy, "runs": run_log,
                   "url": proxy.base_url + "/slack/events"}
            failed = False
        finally:
            for process in processes:
                process.stop()
            if failed:
                for process in processes:
                    print(f"==== {process.name}\n{process.log_tail()}")


async def test_two_slack_replicas_behind_one_url_handle_everything_once(roles: dict[str, Any], redis: Redis) -> None:
    slack: FakeSlack = roles["slack"]
    model: FakeAnthropic = roles["model"]
    proxy: SpreadingProxy = roles["proxy"]
    store = CallStore(redis)
    rng = random.Random(14)
    async with aiohttp.ClientSession() as session:
        send = Slack(session, roles["url"], slack)

        # -- conversation A: a slash command (Slack never retries those)
        assert await send.command("command", "convA: check the web services", "UREQ") == 200
        # -- conversation B: a mention, delivered twice by Slack (app_mention and message events for one
        # message), the app_mention retried to the OTHER replica at the same moment (its first delivery "timed
        # out"), and both events sent once more later, as Slack's next retries
        mention_ts = "1700000500.000100"
        text = f"<@{BOT_USER_ID}> convB: is the db fine?"
        mention = {"type": "app_mention", "user": "UREQ2", "text": text, "ts": mention_ts, "channel": CHANNEL,
                   "event_ts": mention_ts}
        message = {**mention, "type": "message", "channel_type": "channel"}
        now = int(time.time())
        statuses = await asyncio.gather(
            send.event("mention", mention, "Ev0MENTION", replica=0, timestamp=now - 1),
            send.event("mention retry 1", mention, "Ev0MENTION", retry=1, replica=1, timestamp=now),
            send.event("message", message, "Ev0MESSAGE", timestamp=now),
        )
        assert statuses == [200, 200, 200], send.answers

        # every call's card is posted, the retries come again meanwhile (Slack's second retry)
        expected = sum(len(calls) for calls in PLAN.values())
        await wait_for(lambda: len(cards(slack)) == expected, timeout=30)
        # (Slack signs every retry anew, with the time of that retry: here a second later than the first ones)
        assert await send.event("mention retry 2", mention, "Ev0MENTION", retry=2, replica=0, timestamp=now + 1) == 200
        assert await send.event("message retry 1", message, "Ev0MESSAGE", retry=1, replica=1, timestamp=now + 1) == 200
        shown = cards(slack)
        by_arg = {}
        for call_id in shown:
            record = await store.get(call_id)
            assert record.tool_use_id is not None
            by_arg[record.tool_use_id.removeprefix("toolu_")] = shown[call_id]

        # A Deny click opens the reason modal; open one for a2 (its submission races an Approve below) and b2
        assert await send.click("deny a2", by_arg["a2"], "fisk_deny", APPROVERS[1]) == 200
        assert await send.click("deny b2", by_arg["b2"], "fisk_deny", APPROVERS[1]) == 200
        views = await wait_for(lambda: (v2 := deny_view(slack, by_arg["a2"]["call"])) and
                               (vb := deny_view(slack, by_arg["b2"]["call"])) and (v2, vb), timeout=15)

        # -- the clicks, all at once in a shuffled order, duplicated across the replicas
        resent = send.click_body(by_arg["a4"], "fisk_approve", APPROVERS[0])
        resent_headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, resent)}
        clicks = [
            # a1: a double click, one copy on each replica
            send.click("a1 approve r0", by_arg["a1"], "fisk_approve", APPROVERS[0], replica=0),
            send.click("a1 approve r1", by_arg["a1"], "fisk_approve", APPROVERS[0], replica=1),
            # a2: Approve on one replica, the Deny (reason submitted) on the other, at the same moment
            send.click("a2 approve r0", by_arg["a2"], "fisk_approve", APPROVERS[0], replica=0),
            send.submit_deny("a2 deny r1", views[0], APPROVERS[1], "not now", replica=1),
            # a3: two approvers press Approve and Deny at the same moment, each on another replica
            send.click("a3 approve r1", by_arg["a3"], "fisk_approve", APPROVERS[0], replica=1),
            send.click("a3 deny r0", by_arg["a3"], "fisk_deny", APPROVERS[1], replica=0),
            # a4: one click whose request reaches both replicas byte for byte (a replay: refused by one)
            send.send_signed("a4 approve r0", resent.encode(), resent_headers, replica=0),
            send.send_signed("a4 approve r1", resent.encode(), resent_headers, replica=1),
            # b1: approved through the proxy; b2: its deny reason submitted on both replicas
            send.click("b1 approve", by_arg["b1"], "fisk_approve", APPROVERS[1]),
            send.submit_deny("b2 deny r0", views[1], APPROVERS[1], "use the replica", replica=0),
            send.submit_deny("b2 deny r1", views[1], APPROVERS[1], "use the replica", replica=1),
        ]
        rng.shuffle(clicks)
        statuses = await asyncio.gather(*clicks)
        replayed = [what for what, status, _ in send.answers if status == 401]
        assert sorted(replayed) in (["a4 approve r0"], ["a4 approve r1"]), send.answers
        assert statuses.count(200) == len(clicks) - 1, send.answers

        calls = {arg: card["call"] for arg, card in by_arg.items()}

        # everything settles: every call terminal with its result or note posted, both answers posted
        async def settled() -> bool:
            records = [await store.get(call_id) for call_id in calls.values()]
            if not all(r.terminal and r.meta.get("slack_result_ts") for r in records):
                return False
            return len(keyed_posts(slack, "reply:")) >= 2 or _answers(slack) >= 2

        await wait_for(settled, timeout=30)
        # a3's Deny click may have opened the reason modal before Approve won: submitting it now changes nothing
        late_view = deny_view(slack, calls["a3"])
        if late_view is not None:
            assert await send.submit_deny("a3 deny late", late_view, APPROVERS[1], "late") == 200
        # a late Approve of b1 (already finished), on the replica that did not take the first one
        assert await send.click("b1 late approve", by_arg["b1"], "fisk_approve", APPROVERS[0]) == 200
        await asyncio.sleep(1.0)  # room for anything a duplicate would do: a second run, post or turn

    # ---------------------------------------------------------------- what happened, counted
    records = {arg: await store.get(call_id) for arg, call_id in calls.items()}
    runs = Counter(line.split()[-1] for line in roles["runs"].read_text().splitlines()) if roles["runs"].exists() \
        else Counter()
    for arg, record in records.items():
        audit = await read_audit(redis, call_id=record.id)
        decided = [e for e in audit if e.from_state in ("awaiting_approval", "proposed") and
                   e.to_state not in ("awaiting_approval",)]
        assert len(decided) == 1, (arg, [(e.from_state, e.to_state, e.actor) for e in audit])
        started = [e for e in audit if e.to_state == "running"]
        if decided[0].to_state in ("approved", "auto_approved"):
            assert record.state == CallState.finished, (arg, record.state)
            assert len(started) == 1 and runs[f"tok-{arg}"] == 1, (arg, runs)
        else:
            assert decided[0].to_state == "denied" and record.state == CallState.denied
            assert not started and runs[f"tok-{arg}"] == 0, (arg, runs)
        # one card, one result or note, and the card shows the final state
        assert len(keyed_posts(slack, "card:").get(record.id, [])) == 1, arg
        outcome = keyed_posts(slack, "result:").get(record.id, []) + keyed_posts(slack, "note:").get(record.id, [])
        assert len(outcome) == 1, (arg, len(outcome))
        card = slack.message(CHANNEL, by_arg[arg]["ts"])
        shown_texts = [b["text"]["text"] for b in card["blocks"] if b.get("type") == "section" and b.get("text")]
        assert status_text(record) in shown_texts, (arg, shown_texts)
        updates = [c for c in slack.calls_to("chat.update") if c.params.get("ts") == str(outcome[0].response["ts"])]
        assert not updates, f"{arg}: the result message was edited"
    assert [e.to_state for e in await read_audit(redis, call_id=records["b3"].id)][0] == "auto_approved"
    for arg in ("a1", "a4", "b1", "b3"):  # approved whatever the interleaving: nothing raced them
        assert records[arg].state == CallState.finished
    assert records["b2"].state == CallState.denied and records["b2"].result is None
    assert records["b2"].decision is not None and "use the replica" in records["b2"].decision.reason
    assert sum(runs.values()) == sum(r.state == CallState.finished for r in records.values())

    # every click that lost its race was told so, once: a1's second click, a2's loser, a3's Deny, b2's second
    # submission, b1's late Approve (a4's copy was refused as a replay before anything was recorded)
    told = [c.params.get("text") for c in slack.calls_to("chat.postEphemeral")]
    assert sum("changed nothing" in str(text) for text in told) == 5, told

    # each conversation: one "asked" post (the command), one turn per event, one answer
    asked = [c for c in slack.calls_to("chat.postMessage") if "asked:" in str(c.params.get("text"))]
    assert len(asked) == 1
    turns = Counter(next(t for t in PLAN if t in json.dumps(r["messages"][:1])) for r in model.message_requests)
    assert turns == {"convA": 2, "convB": 2}, turns
    assert not model.unscripted
    assert _answers(slack) == 2
    # in each thread the answer comes after the results it was written from, whichever replica posted what
    # (it used to overtake a result another replica was still posting)
    for tag, args in PLAN.items():
        (answer,) = [c for c in slack.calls_to("chat.postMessage") if f"answer {tag}" in str(c.params.get("text"))]
        outcomes = [post for arg in args for prefix in ("result:", "note:")
                    for post in keyed_posts(slack, prefix).get(records[arg].id, [])]
        assert float(answer.response["ts"]) > max(float(post.response["ts"]) for post in outcomes), tag
    # both replicas took requests through the one URL
    assert set(proxy.served) == {0, 1}


def _answers(slack: FakeSlack) -> int:
    return sum("all checks are back" in str(c.params.get("text")) for c in slack.calls_to("chat.postMessage"))
