"""The lean Web API transport (``bot/slack/webclient.py``) against the loopback fake Slack: the same requests on the
wire as slack_sdk's own transport, the same answers and errors, slack_sdk's retry handlers still consulted; and
permalinks built from auth.test's workspace URL exactly as chat.getPermalink answers them."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.metrics import SLACK_API_ERRORS
from bot.slack import client as api
from bot.slack.client import close_client, make_client
from tests.support.fake_slack import FakeSlack, SlackCall

TOKEN = "xoxb-test"
BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*exit 0* `ls -l`"}}]


def wire(call: SlackCall) -> tuple[Any, ...]:
    """What Slack sees of a request, less what varies between two identical calls (connection, length)."""
    return (call.http_method, call.path, call.params, call.json, call.headers.get("content-type"),
            call.headers.get("authorization"), call.headers.get("user-agent"))


async def test_requests_on_the_wire_are_slack_sdks() -> None:
    with FakeSlack(expected_token=TOKEN) as slack:
        plain = AsyncWebClient(token=TOKEN, base_url=slack.api_url)
        lean = make_client(TOKEN, slack.api_url)

        async def calls(client: AsyncWebClient) -> None:
            await client.chat_postMessage(channel="C1", text="hi", blocks=BLOCKS, thread_ts="1.1", parse="none",
                                          link_names=False, unfurl_links=False, unfurl_media=False,
                                          metadata={"event_type": "x", "event_payload": {"key": "result:c1"}})
            await client.chat_update(channel="C1", ts="1.2", text="done", blocks=BLOCKS)
            await client.chat_getPermalink(channel="C1", message_ts="1.2")  # GET, URL parameters
            await client.reactions_add(channel="C1", timestamp="1.2", name="eyes")  # POST, URL parameters
            await client.conversations_replies(channel="C1", ts="1.1", include_all_metadata=True, limit=200)

        await calls(plain)
        sent_by_sdk = [wire(c) for c in slack.calls]
        slack.calls.clear()
        await calls(lean)
        await close_client(lean)
        assert [wire(c) for c in slack.calls] == sent_by_sdk
        replies = slack.calls_to("conversations.replies")[0]
        assert replies.params["include_all_metadata"] == "1"  # booleans in the URL as slack_sdk sends them


async def test_answers_and_refusals_are_slack_sdks() -> None:
    with FakeSlack(expected_token=TOKEN) as slack:
        client = make_client(TOKEN, slack.api_url)
        posted = await client.chat_postMessage(channel="C1", text="hi")
        assert posted["ok"] and posted.status_code == 200 and posted.data["message"]["text"] == "hi"
        slack.fail_next("chat.update", error="message_not_found")  # 200 with ok: false
        before = SLACK_API_ERRORS.labels("chat.update").value
        with pytest.raises(SlackApiError) as refused:
            await client.chat_update(channel="C1", ts="9.9", text="x")
        assert api.error_code(refused.value) == "message_not_found" and not api.is_transient(refused.value)
        assert SLACK_API_ERRORS.labels("chat.update").value == before + 1
        slack.fail_next("chat.postMessage", status=500)  # no handler retries a 5xx by default: transient
        with pytest.raises(SlackApiError) as failed:
            await client.chat_postMessage(channel="C1", text="x")
        assert failed.value.response.status_code == 500 and api.is_transient(failed.value)
        slack.fail_next("chat.postMessage", status=429, times=4)  # three retries after Retry-After, then given up
        with pytest.raises(SlackApiError) as limited:
            await client.chat_postMessage(channel="C1", text="x")
        assert limited.value.response.status_code == 429 and api.is_transient(limited.value)
        assert [c.status for c in slack.calls_to("chat.postMessage")][-4:] == [429] * 4
        slack.fail_next("auth.test", status=404, body="<html>not the API</html>")
        with pytest.raises(SlackApiError) as page:
            await client.auth_test()
        assert api.error_code(page.value) is None  # what verify_auth reads as "not the Web API"
        await close_client(client)


async def test_failed_attempts_go_to_the_retry_handlers() -> None:
    with FakeSlack(expected_token=TOKEN) as slack:

        class Reconnect(AsyncConnectionErrorRetryHandler):
            async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
                slack.down = None  # the connection came back for the retry
                await super().prepare_for_next_attempt_async(**kwargs)

        client = make_client(TOKEN, slack.api_url)
        client.retry_handlers = [Reconnect(), AsyncServerErrorRetryHandler(max_retry_count=1)]
        slack.fail_next("chat.update", status=503)
        assert (await client.chat_update(channel="C1", ts="1.1", text="x"))["ok"]
        assert [c.status for c in slack.calls_to("chat.update")] == [503, 200]
        slack.down = "reset"  # the server drops the connection without answering
        assert (await client.chat_postMessage(channel="C1", text="after a reset"))["ok"]
        assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["after a reset"]
        await close_client(client)


async def test_permalinks_are_built_like_slacks_once_the_workspace_url_is_known() -> None:
    with FakeSlack(expected_token=TOKEN) as slack:
        client = make_client(TOKEN, slack.api_url)
        top = await api.post(client, "C1", "parent")
        reply = await api.post(client, "C1", "reply", thread_ts=str(top["ts"]))
        asked = [await api.permalink(client, "C1", str(top["ts"])),
                 await api.permalink(client, "C1", str(reply["ts"]), str(top["ts"]))]
        assert len(slack.calls_to("chat.getPermalink")) == 2  # before auth.test: Slack is asked
        assert getattr(client, "team_url", None) == ""
        await api.verify_auth(client)
        built = [await api.permalink(client, "C1", str(top["ts"]), str(top["ts"])),
                 await api.permalink(client, "C1", str(reply["ts"]), str(top["ts"]))]
        assert built == asked and "?thread_ts=" in built[1]
        assert len(slack.calls_to("chat.getPermalink")) == 2  # no Web API call per link any more
        await close_client(client)
