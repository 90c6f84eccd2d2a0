"""Startup checks, settings, channel selection and text helpers."""

from __future__ import annotations

import logging

import pytest
from aiohttp import web
from pydantic import ValidationError
from redis.asyncio import Redis
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.listen import start_site
from bot.slack import SlackFrontEnd, SlackSettings, SlackStartupError, catalog_for_channel, parse_conversation
from bot.slack.mrkdwn import markdown_to_mrkdwn, split_mrkdwn
from bot.tools.catalog import Catalog
from tests.support.fake_slack import FakeSlack


def front(redis: Redis, catalog: Catalog, mode: str = "socket", **tokens: str | None) -> SlackFrontEnd:
    return SlackFrontEnd(SlackSettings(mode=mode), redis=redis, store=CallStore(redis),  # type: ignore[arg-type]
                         policy=ApprovalPolicy(approvers={"users": ["UAPPROVER"]}), catalog=catalog,
                         **tokens)  # type: ignore[arg-type]


async def test_missing_or_swapped_tokens_fail_clearly(redis: Redis, catalog: Catalog) -> None:
    with pytest.raises(SlackStartupError, match="SLACK_BOT_TOKEN is not set"):
        front(redis, catalog, bot_token=None, app_token="xapp-1")
    with pytest.raises(SlackStartupError, match="SLACK_APP_TOKEN must be an app-level token"):
        front(redis, catalog, bot_token="xoxb-1", app_token="xoxb-1")
    with pytest.raises(SlackStartupError, match="SLACK_SIGNING_SECRET is not set"):
        front(redis, catalog, mode="http", bot_token="xoxb-1")


async def test_wrong_token_fails_auth_test_clearly(redis: Redis, catalog: Catalog, slack: FakeSlack) -> None:
    bad = front(redis, catalog, bot_token="xoxb-wrong", app_token="xapp-1", api_url=slack.api_url)
    with pytest.raises(SlackStartupError, match="invalid_auth"):
        await bad.start()
    good = front(redis, catalog, bot_token="xoxb-test", app_token="xapp-1", api_url=slack.api_url)
    assert (await good.start())["user_id"] == "UBOT" and good.deps.bot_user_id == "UBOT"
    slack.stop()
    with pytest.raises(SlackStartupError, match="cannot reach"):
        await good.start()


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "https://slack.com", "slack.com/api/", "ftp://h/api/"])
async def test_api_url_without_api_path_is_refused_before_any_request(redis: Redis, catalog: Catalog, url: str) -> None:
    with pytest.raises(SlackStartupError) as caught:
        front(redis, catalog, bot_token="xoxb-1", app_token="xapp-1", api_url=url)
    assert str(caught.value) == (f"SLACK_API_URL must be the Web API base URL ending in /api/ (like "
                                 f"https://slack.com/api/), got {url!r}")


@pytest.mark.parametrize("status", [200, 404])
async def test_api_url_answering_a_web_page_is_named(redis: Redis, catalog: Catalog, status: int) -> None:
    async def page(_request: web.Request) -> web.Response:
        return web.Response(status=status, text="<html>not the API</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    runner, port = await start_site(app, "127.0.0.1", 0, purpose="a web page", fix="-")
    try:
        url = f"http://127.0.0.1:{port}/api/"
        with pytest.raises(SlackStartupError) as caught:
            await front(redis, catalog, bot_token="xoxb-1", app_token="xapp-1", api_url=url).start()
    finally:
        await runner.cleanup()
    assert str(caught.value).startswith(f"{url}auth.test did not answer like the Slack Web API (HTTP {status}); ")


async def test_bolt_token_warning_is_not_logged(redis: Redis, catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")  # what bolt reads on its own, next to our client
    with caplog.at_level(logging.DEBUG):
        front(redis, catalog, bot_token="xoxb-1", app_token="xapp-1").build_app()
    assert "will be unused" not in caplog.text


def test_rate_limit_retry_handler_installed(redis: Redis, catalog: Catalog) -> None:
    client = front(redis, catalog, bot_token="xoxb-1", app_token="xapp-1").client
    assert any(isinstance(h, AsyncRateLimitErrorRetryHandler) for h in client.retry_handlers)


def test_settings_forbid_unknown_keys_and_channel_narrowing(catalog: Catalog) -> None:
    with pytest.raises(ValidationError):
        SlackSettings.model_validate({"allowed_chanels": ["C1"]})
    settings = SlackSettings.model_validate({"channels": {"C1": {"include": {"tools": ["^service_"]},
                                                                "exclude": {"tools": ["restart"]}}}})
    narrowed = catalog_for_channel(catalog, settings, "C1")
    assert narrowed.names and all(n.startswith("service_") and "restart" not in n for n in narrowed.names)
    assert catalog_for_channel(catalog, settings, "C2") is catalog
    assert parse_conversation("slack:C1:1700.1") == ("C1", "1700.1") and parse_conversation("console:x") is None


def test_markdown_conversion_and_splitting_keep_code_fences() -> None:
    assert markdown_to_mrkdwn("## Title\n1. **a** ~~b~~ `<x>`") == "*Title*\n1. *a* ~b~ `&lt;x&gt;`"
    assert markdown_to_mrkdwn("[x](javascript:alert)") == "x (javascript:alert)"
    text = "intro\n```\n" + "\n".join(f"line {i}" for i in range(2000)) + "\n```\nend"
    chunks = split_mrkdwn(text, 3000)
    assert len(chunks) > 3 and all(len(c) <= 3000 for c in chunks)
    assert all(c.count("```") % 2 == 0 for c in chunks)
