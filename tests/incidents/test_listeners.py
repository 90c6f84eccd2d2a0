"""Where the intake listens: its own port (any Slack mode) or the Slack HTTP server (``listen: slack``), and
the configuration that cannot work is refused at load."""

from __future__ import annotations

import aiohttp
import pytest
from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.config import ConfigError, parse_config
from bot.incidents.service import OnCall
from bot.incidents.settings import IncidentSecrets, IncidentSettings
from bot.listen import ListenError
from bot.slack import SlackFrontEnd, SlackSettings
from bot.tools.catalog import Catalog
from tests.incidents.payloads import AM_TOKEN, am_payload, bearer, dumps
from tests.support.fake_slack import FakeSlack

APPROVERS = ApprovalPolicy.model_validate({"approvers": {"users": ["UAPPROVER"]}})
SETTINGS = IncidentSettings.model_validate(
    {"enabled": True, "listen": "slack", "routes": [{"name": "web", "channel": "C0WEB"}]})


async def test_intake_mounted_on_the_slack_http_server(redis: Redis, catalog: Catalog) -> None:
    with FakeSlack() as slack:
        front = SlackFrontEnd(SlackSettings(mode="http"), redis=redis, store=CallStore(redis), policy=APPROVERS,
                              catalog=catalog, bot_token="xoxb-t", signing_secret="s", api_url=slack.api_url)
        oncall = OnCall(redis, CallStore(redis), SETTINGS, IncidentSecrets(alertmanager_token=AM_TOKEN))
        oncall.mount(front.http_app())
        port = await front.listen_http(host="127.0.0.1", port=0)
        try:
            async with aiohttp.ClientSession() as session:
                url = f"http://127.0.0.1:{port}/alerts/alertmanager"
                async with session.post(url, data=dumps(am_payload())) as resp:
                    assert resp.status == 401
                async with session.post(url, data=dumps(am_payload()), headers=bearer()) as resp:
                    assert resp.status == 201
                async with session.post(f"http://127.0.0.1:{port}/slack/events", data=b"{}") as resp:
                    assert resp.status == 401  # Slack's own endpoint is still there, still verifying signatures
        finally:
            await front._http_runner.cleanup()  # type: ignore[union-attr]


async def test_own_port_in_use_is_one_clear_error(redis: Redis) -> None:
    first = OnCall(redis, CallStore(redis), SETTINGS, IncidentSecrets())
    port = await first.listen(host="127.0.0.1", port=0)
    try:
        with pytest.raises(ListenError, match=f"127.0.0.1:{port} for alert webhooks.*incidents.http_port"):
            await OnCall(redis, CallStore(redis), SETTINGS, IncidentSecrets()).listen(host="127.0.0.1", port=port)
    finally:
        await first._runner.cleanup()  # type: ignore[union-attr]


def test_listen_slack_needs_http_mode() -> None:
    with pytest.raises(ConfigError, match="incidents.listen: slack needs slack.mode: http"):
        parse_config({"incidents": {"enabled": True, "listen": "slack"}, "slack": {"mode": "socket"}})
    parse_config({"incidents": {"enabled": True, "listen": "slack"}, "slack": {"mode": "http"}})
    with pytest.raises(ConfigError, match="incidents.routes.0.channel"):
        parse_config({"incidents": {"routes": [{"name": "x", "channel": "#general"}]}})
