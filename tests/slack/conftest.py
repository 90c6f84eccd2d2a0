"""Fixtures of the Slack tests: the real bolt app served by aiohttp on a loopback port, its Web API client
pointed at the loopback FakeSlack, a real Redis, and helpers to send correctly signed Slack requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, Proposal
from bot.approvals.store import CallStore
from bot.fisk.introspect import parse_application
from bot.slack import SlackFrontEnd, SlackSettings
from bot.slack.settings import card_channel
from bot.tools.catalog import AppSpec, Catalog, build_catalog
from bot.tools.tool import AppSettings
from tests.support import decision_keys
from tests.support.fake_slack import FakeSlack, sign_slack_request
from tests.support.waiting import wait_for

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test"
CHANNEL = "C0TEST"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(expected_token=BOT_TOKEN) as fake:
        yield fake


@pytest.fixture
def policy() -> ApprovalPolicy:
    return ApprovalPolicy(approvers={"users": ["UAPPROVER"], "groups": ["SOPS"]})


@pytest.fixture
def store(redis: Redis) -> CallStore:
    return CallStore(redis, signer=decision_keys.signer())


@pytest.fixture
def catalog(fixtures_dir: Path) -> Catalog:
    app = parse_application((fixtures_dir / "opsctl.introspect.json").read_bytes())
    return build_catalog([AppSpec(AppSettings(binary="opsctl"))], lambda _s: app)


@pytest.fixture
def settings() -> SlackSettings:
    return SlackSettings(mode="http", usergroup_cache_seconds=0)


def event_callback(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    """The Events API body (HTTP) or envelope payload (Socket Mode) Slack sends for ``event``."""
    return {"type": "event_callback", "team_id": "T0FAKE", "api_app_id": "AFAKE", "event": event,
            "event_id": event_id, "event_time": int(time.time()), "authorizations": [
                {"team_id": "T0FAKE", "user_id": "UBOT", "is_bot": True}]}  # fmt: skip


def click_payload(record: CallRecord, action: str, user: str, response_url: str, *, value: str | None = None,
                  card_ts: str | None = None) -> dict[str, Any]:
    """The block_actions payload of a click on ``record``'s card (by default its own card, with its own value)."""
    card_ts = card_ts or record.meta.get("slack_ts") or "1.1"
    channel = card_channel(record.conversation, record.meta) or CHANNEL
    value = value if value is not None else json.dumps({"call": record.id, "argv": record.argv_hash})
    return {
        "type": "block_actions", "user": {"id": user}, "team": {"id": "T0FAKE"}, "api_app_id": "AFAKE",
        "channel": {"id": channel}, "container": {"type": "message", "message_ts": card_ts, "channel_id": channel},
        "message": {"ts": card_ts, "thread_ts": record.conversation.split(":")[-1]},
        "actions": [{"action_id": action, "block_id": "b", "type": "button", "value": value,
                     "action_ts": str(time.time())}],
        "response_url": response_url, "trigger_id": str(time.monotonic_ns()),
    }  # fmt: skip


@dataclass
class Harness:
    front: SlackFrontEnd
    slack: FakeSlack
    url: str
    session: aiohttp.ClientSession
    store: CallStore
    redis: Redis

    async def send(self, body: str, content_type: str, *, secret: str = SECRET, timestamp: int | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, str]:
        signed = sign_slack_request(secret, body, timestamp)
        all_headers = {"Content-Type": content_type, **signed, **(headers or {})}
        async with self.session.post(self.url, data=body.encode(), headers=all_headers) as resp:
            return resp.status, await resp.text()

    async def command(self, text: str, *, user: str = "UREQ", channel: str = CHANNEL, **kw: Any) -> tuple[int, str]:
        form = {
            "command": "/fisk", "text": text, "user_id": user, "channel_id": channel, "team_id": "T0FAKE",
            "response_url": self.slack.response_url(f"cmd-{time.monotonic_ns()}"), "trigger_id": "1.2.3",
        }  # fmt: skip
        return await self.send(urlencode(form), "application/x-www-form-urlencoded", **kw)

    async def event(self, event: dict[str, Any], *, event_id: str, **kw: Any) -> tuple[int, str]:
        return await self.send(json.dumps(event_callback(event, event_id)), "application/json", **kw)

    async def show_card(self, record: CallRecord, start_poster: Callable[[], Awaitable[None]]) -> CallRecord:
        """Announce ``record`` on the outbox as the agent does, run the poster, and return the record once its
        approval card is in Slack (its ``slack_ts`` recorded)."""
        await bus.publish(self.redis, bus.OUTBOX, bus.BusEvent("proposed", record.conversation,
                                                               {"call_ids": [record.id]}))
        await start_poster()

        async def carded() -> CallRecord | None:
            latest = await self.store.get(record.id)
            return latest if latest.meta.get("slack_ts") else None

        return await wait_for(carded)

    async def click(self, record: CallRecord, action: str, user: str, *, value: str | None = None,
                    card_ts: str | None = None) -> tuple[int, str]:
        payload = click_payload(record, action, user, self.slack.response_url("click"), value=value, card_ts=card_ts)
        return await self.send(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    async def submit_view(self, view: dict[str, Any], user: str, values: dict[str, dict[str, str | None]]
                          ) -> tuple[int, str]:
        """The view_submission payload Slack sends when ``user`` submits the modal ``view`` (as views.open
        answered it), with ``values`` = {block_id: {action_id: typed text}} for its plain-text inputs."""
        state = {block: {action: {"type": "plain_text_input", "value": text} for action, text in actions.items()}
                 for block, actions in values.items()}
        payload = {
            "type": "view_submission", "team": {"id": "T0FAKE", "domain": "fake-team"},
            "user": {"id": user, "username": f"user-{user.lower()}", "team_id": "T0FAKE"}, "api_app_id": "AFAKE",
            "token": "legacy", "trigger_id": str(time.monotonic_ns()), "view": {**view, "state": {"values": state}},
            "response_urls": [], "is_enterprise_install": False, "enterprise": None,
        }  # fmt: skip
        return await self.send(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    async def propose(self, conversation: str, argv: list[str], *, tool: str = "opsctl_status",
                      tags: list[str] | None = None, requester: str = "UREQ",
                      policy: ApprovalPolicy | None = None) -> CallRecord:
        proposal = Proposal(tool=tool, app="opsctl", arguments="{}", argv=argv, tags=tags or [])
        (record,) = await self.store.propose(conversation, [proposal], policy or self.front.deps.policy, requester)
        return record


def make_front(slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
               settings: SlackSettings, reader: Redis | None = None) -> SlackFrontEnd:
    front = SlackFrontEnd(
        settings, redis=redis, store=store, policy=policy, catalog=catalog,
        bot_token=BOT_TOKEN, signing_secret=SECRET, api_url=slack.api_url, reader=reader,
    )  # fmt: skip
    front.poster.block_ms = 100
    front.poster.backoff = (0.05, 0.2)
    front.intake_worker.block_ms = 100
    front.intake_worker.backoff = (0.05, 0.2)
    return front


@contextlib.asynccontextmanager
async def serving(front: SlackFrontEnd, slack: FakeSlack, store: CallStore, redis: Redis) -> AsyncIterator[Harness]:
    """Serve ``front`` over HTTP on a loopback port (with its intake worker) until the block ends."""
    stop = asyncio.Event()
    port = free_port()
    server = asyncio.create_task(front.run_http(stop, host="127.0.0.1", port=port))
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{port}/slack/events"

        async def up() -> bool:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url) as resp:
                    return resp.status == 405  # the route is there, POST only
            return False

        await wait_for(up)
        try:
            yield Harness(front, slack, url, session, store, redis)
        finally:
            stop.set()
            await asyncio.wait_for(server, 15)


@pytest.fixture
async def harness(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> AsyncIterator[Harness]:
    async with serving(make_front(slack, redis, store, policy, catalog, settings), slack, store, redis) as harness:
        yield harness


@pytest.fixture
async def poster(harness: Harness) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """Start the poster (call the returned function); stopped after the test."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def start() -> None:
        tasks.append(asyncio.create_task(harness.front.run_poster(stop)))

    yield start
    stop.set()
    await asyncio.gather(*tasks)
