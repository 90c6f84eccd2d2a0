"""The on-call front end with real parts: the Slack harness (real bolt app over signed HTTP, poster, fake
Slack), the intake listening on a loopback port, the timeline recorder, a real Redis."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.incidents.service import OnCall
from bot.incidents.settings import IncidentSecrets, IncidentSettings
from tests.incidents.payloads import AM_TOKEN, PD_OLD_SECRET, PD_SECRET
from tests.slack.conftest import Harness, catalog, harness, poster, settings, slack, store  # noqa: F401

WEB = "C0WEB"
CHECKOUT = "C0CHECKOUT"


@pytest.fixture
def policy() -> ApprovalPolicy:
    return ApprovalPolicy.model_validate(
        {"approvers": {"users": ["UAPPROVER"]}, "auto_approve": {"tags": ["impact:ro"]}})


@pytest.fixture
def incident_settings() -> IncidentSettings:
    return IncidentSettings.model_validate({
        "enabled": True, "http_host": "127.0.0.1", "http_port": 0,
        "routes": [
            {"name": "checkout", "channel": CHECKOUT, "source": "pagerduty", "match": {"service": "checkout-api"},
             "brief": "Checkout is paging: look at the checkout service first."},
            {"name": "web", "channel": WEB, "source": "alertmanager", "match": {"service": "web"},
             "rate_limit_per_minute": 8},
        ],
    })  # fmt: skip


@dataclass
class Intake:
    url: str
    session: aiohttp.ClientSession
    redis: Redis

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        async with self.session.post(self.url + path, data=body, headers=headers) as resp:
            return resp.status, json.loads(await resp.text())

    async def outbox(self) -> list[bus.BusEvent]:
        raw: Any = await self.redis.xrange(bus.OUTBOX, "-", "+")
        return [bus.BusEvent.from_fields(i, f) for i, f in raw]


@pytest.fixture
async def intake(
    harness: Harness, poster: Callable[[], Awaitable[None]], incident_settings: IncidentSettings,  # noqa: F811
) -> AsyncIterator[Intake]:
    """The intake and the recorder (as the slack role runs them), with the poster started."""
    await poster()
    stop = asyncio.Event()
    secrets = IncidentSecrets(alertmanager_token=AM_TOKEN, pagerduty_secrets=(PD_OLD_SECRET, PD_SECRET))
    oncall = OnCall(harness.redis, harness.store, incident_settings, secrets)
    port = await oncall.listen()
    task = asyncio.create_task(oncall.run(stop))
    async with aiohttp.ClientSession() as session:
        yield Intake(f"http://127.0.0.1:{port}", session, harness.redis)
    stop.set()
    await asyncio.wait_for(task, 10)


def top_level(h: Harness, channel: str) -> list[dict[str, Any]]:
    return [m for (ch, _ts), m in sorted(h.slack.all_messages().items()) if ch == channel and "thread_ts" not in m]


def replies(h: Harness, channel: str, thread_ts: str) -> list[str]:
    return [json.dumps(m.get("blocks") or m.get("text")) for m in h.slack.thread(channel, thread_ts)
            if m.get("thread_ts") == thread_ts]
