"""The loopback fakes speak the real wire formats: the real SDKs talk to them and parse what they answer."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import anthropic
import pytest
from anthropic.types import (
    ServerToolUseBlock,
    TextBlock,
    ToolSearchToolResultBlock,
    ToolSearchToolSearchResultBlock,
    ToolUseBlock,
)
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.support.fake_anthropic import (
    FakeAnthropic,
    Reply,
    error_reply,
    pause_turn_reply,
    server_tool_search_reply,
    text_reply,
    tool_use_reply,
)
from tests.support.fake_slack import FakeSlack, sign_slack_request


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def client(fake: FakeAnthropic, max_retries: int = 0) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.base_url, max_retries=max_retries)


async def create(c: anthropic.AsyncAnthropic, **kw: Any) -> anthropic.types.Message:
    params: dict[str, Any] = {
        "model": "claude-fake-model",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "why 502 on db-3?"}],
    }
    params.update(kw)
    return await c.messages.create(**params)


# -- Anthropic -----------------------------------------------------------------------------------------------


async def test_text_reply_parses_and_request_is_recorded(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(text_reply("hello"))
    async with client(fake_anthropic) as c:
        msg = await create(c, system="be brief")
    assert isinstance(msg.content[0], TextBlock)
    assert msg.content[0].text == "hello"
    assert msg.stop_reason == "end_turn"
    assert msg.model == "claude-fake-model"  # echoed from the request
    assert msg.usage.input_tokens == 10 and msg.usage.cache_read_input_tokens == 0
    (req,) = fake_anthropic.requests
    assert req.path == "/v1/messages" and req.method == "POST"
    # anthropic 2.x sends the API key as a bearer token, not x-api-key
    assert req.headers["authorization"] == "Bearer test-key"
    assert "anthropic-version" in req.headers
    assert req.json["system"] == "be brief"
    assert fake_anthropic.message_requests == [req.json]


async def test_tool_use_with_raw_json_input_keeps_number_verbatim(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(
        tool_use_reply(
            [
                ("toolu_1", "opsctl_status", '{"host": "db-3", "limit": 12.50}'),
                ("toolu_2", "opsctl_ping", {}),
            ],
            text="Let me check.",
        )
    )
    async with client(fake_anthropic) as c:
        raw = await c.messages.with_raw_response.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
        body = await raw.read()
        msg = await raw.parse()
    assert b'"input": {"host": "db-3", "limit": 12.50}' in body
    assert msg.stop_reason == "tool_use"
    text, first, second = msg.content
    assert isinstance(text, TextBlock) and text.text == "Let me check."
    assert isinstance(first, ToolUseBlock) and first.id == "toolu_1" and first.name == "opsctl_status"
    assert first.input == {"host": "db-3", "limit": 12.5}
    assert isinstance(second, ToolUseBlock) and second.input == {}


async def test_server_tool_search_blocks_parse(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(
        server_tool_search_reply(
            "database status",
            ["opsctl_db_status", "opsctl_db_logs"],
            then_calls=[("toolu_9", "opsctl_db_status", {"host": "db-3"})],
        )
    )
    async with client(fake_anthropic) as c:
        msg = await create(c)
    srv, result, call = msg.content
    assert isinstance(srv, ServerToolUseBlock)
    assert srv.name == "tool_search_tool_bm25" and srv.input == {"query": "database status"}
    assert isinstance(result, ToolSearchToolResultBlock) and result.tool_use_id == srv.id
    assert isinstance(result.content, ToolSearchToolSearchResultBlock)
    assert [r.tool_name for r in result.content.tool_references] == ["opsctl_db_status", "opsctl_db_logs"]
    assert isinstance(call, ToolUseBlock) and call.name == "opsctl_db_status"
    assert msg.stop_reason == "tool_use"
    # the blocks round-trip as request params unchanged (what the agent must send back)
    param = msg.to_param()
    assert param["role"] == "assistant"


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "model_context_window_exceeded"])
async def test_other_stop_reasons(fake_anthropic: FakeAnthropic, stop: str) -> None:
    fake_anthropic.script(text_reply("partial", stop_reason=stop))
    async with client(fake_anthropic) as c:
        msg = await create(c)
    assert msg.stop_reason == stop


async def test_pause_turn(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(pause_turn_reply(query="disk"))
    async with client(fake_anthropic) as c:
        msg = await create(c)
    assert msg.stop_reason == "pause_turn"
    assert isinstance(msg.content[0], ServerToolUseBlock)


async def test_529_is_retried_by_sdk(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(error_reply(529, message="Overloaded"), text_reply("after retry"))
    async with client(fake_anthropic, max_retries=2) as c:
        msg = await create(c)
    assert msg.content[0].type == "text" and msg.content[0].text == "after retry"
    assert len(fake_anthropic.requests) == 2
    assert fake_anthropic.requests[1].headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize(
    ("status", "exc", "etype"),
    [
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ],
)
async def test_errors_raise_typed_exceptions(
    fake_anthropic: FakeAnthropic, status: int, exc: type[anthropic.APIStatusError], etype: str
) -> None:
    fake_anthropic.script(error_reply(status, message="nope"))
    async with client(fake_anthropic) as c:
        with pytest.raises(exc) as info:
            await create(c)
    assert info.value.status_code == status
    assert isinstance(info.value.body, dict)
    assert info.value.body["error"] == {"type": etype, "message": "nope"}


async def test_unscripted_request_fails_loudly_without_retries(fake_anthropic: FakeAnthropic) -> None:
    async with client(fake_anthropic, max_retries=3) as c:
        with pytest.raises(anthropic.InternalServerError, match="unscripted request #1"):
            await create(c)
    assert len(fake_anthropic.requests) == 1
    assert len(fake_anthropic.unscripted) == 1


async def test_callable_responder_sees_request(fake_anthropic: FakeAnthropic) -> None:
    def responder(req: dict[str, Any]) -> Reply:
        return text_reply(f"{len(req['messages'])} messages")

    fake_anthropic.script(responder, responder)
    async with client(fake_anthropic) as c:
        first = await create(c)
        second = await create(
            c,
            messages=[
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"},
            ],
        )
    assert first.content[0].type == "text" and first.content[0].text == "1 messages"
    assert second.content[0].type == "text" and second.content[0].text == "3 messages"


async def test_streaming_answer(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(
        server_tool_search_reply(
            "db", ["opsctl_db"], then_calls=[("toolu_s", "opsctl_db", '{"n": 12.50}')], text="Checking"
        )
    )
    async with (
        client(fake_anthropic) as c,
        c.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as stream,
    ):
        msg = await stream.get_final_message()
    assert [b.type for b in msg.content] == ["server_tool_use", "tool_search_tool_result", "text", "tool_use"]
    assert msg.stop_reason == "tool_use"
    call = msg.content[3]
    assert isinstance(call, ToolUseBlock) and call.input == {"n": 12.5}
    assert json.loads(fake_anthropic.requests[0].body)["stream"] is True


# -- Slack ---------------------------------------------------------------------------------------------------


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def slack_client(fake: FakeSlack, **kw: Any) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=fake.api_url, **kw)


async def test_slack_auth_and_post_and_update(fake_slack: FakeSlack) -> None:
    client = slack_client(fake_slack)
    auth = await client.auth_test()
    assert auth["user_id"] == "UBOT" and auth["bot_id"] == "BBOT"
    first = await client.chat_postMessage(channel="C1", text="card", blocks=[{"type": "divider"}])
    second = await client.chat_postMessage(channel="C1", text="reply", thread_ts=first["ts"])
    assert first["ts"] == "1700000000.000100" and second["ts"] == "1700000000.000101"
    assert first["channel"] == "C1" and first["message"]["text"] == "card"
    updated = await client.chat_update(channel="C1", ts=first["ts"], text="approved", blocks=[])
    assert updated["ts"] == first["ts"] and updated["text"] == "approved"
    assert fake_slack.message("C1", first["ts"])["text"] == "approved"
    assert [m["text"] for m in fake_slack.thread("C1", first["ts"])] == ["approved", "reply"]
    (post, _) = fake_slack.calls_to("chat.postMessage")
    assert post.params["blocks"] == [{"type": "divider"}]
    assert post.token == "xoxb-test" and post.headers["authorization"] == "Bearer xoxb-test"
    assert post.json is not None  # chat.* is sent as JSON


async def test_slack_other_default_methods(fake_slack: FakeSlack) -> None:
    client = slack_client(fake_slack)
    assert (await client.chat_postEphemeral(channel="C1", user="U1", text="only you"))["message_ts"]
    await client.reactions_add(channel="C1", timestamp="1.2", name="eyes")
    await client.reactions_remove(channel="C1", timestamp="1.2", name="eyes")
    fake_slack.users["U7"] = {"id": "U7", "name": "alice", "tz": "Europe/Oslo"}
    assert (await client.users_info(user="U7"))["user"]["name"] == "alice"
    assert (await client.users_info(user="U8"))["user"]["id"] == "U8"
    assert (await client.conversations_info(channel="C9"))["channel"]["id"] == "C9"
    await client.assistant_threads_setStatus(channel_id="D1", thread_ts="1.2", status="is thinking...")
    assert fake_slack.calls_to("reactions.add")[0].params == {"channel": "C1", "timestamp": "1.2", "name": "eyes"}
    assert fake_slack.calls_to("users.info")[0].http_method == "GET"
    assert fake_slack.calls_to("assistant.threads.setStatus")[0].params["status"] == "is thinking..."
    with pytest.raises(SlackApiError) as info:
        await client.api_call("no.such.method")
    assert info.value.response["error"] == "unknown_method"


async def test_slack_files_upload_v2_round_trip(fake_slack: FakeSlack) -> None:
    client = slack_client(fake_slack)
    result = await client.files_upload_v2(
        channel="C1", thread_ts="1.2", content="x" * 70_000, filename="out.txt", title="output"
    )
    assert result["file"]["title"] == "output"
    (file_id,) = fake_slack.uploads
    assert fake_slack.uploads[file_id] == b"x" * 70_000
    complete = fake_slack.calls_to("files.completeUploadExternal")[0]
    assert complete.params["channel_id"] == "C1" and complete.params["thread_ts"] == "1.2"
    assert json.loads(complete.params["files"])[0]["id"] == file_id


async def test_slack_scripted_error_and_token_check() -> None:
    with FakeSlack(expected_token="xoxb-right") as fake:
        fake.fail_next("chat.postMessage", error="channel_not_found")
        good = AsyncWebClient(token="xoxb-right", base_url=fake.api_url)
        with pytest.raises(SlackApiError) as info:
            await good.chat_postMessage(channel="C1", text="x")
        assert info.value.response["error"] == "channel_not_found"
        assert (await good.chat_postMessage(channel="C1", text="x"))["ok"]
        bad = AsyncWebClient(token="xoxb-wrong", base_url=fake.api_url)
        with pytest.raises(SlackApiError, match="invalid_auth"):
            await bad.auth_test()
        fake.on("auth.test", {"ok": True, "user_id": "UOTHER"})
        assert (await good.auth_test())["user_id"] == "UOTHER"


async def test_slack_rate_limit_retried_after_retry_after(fake_slack: FakeSlack) -> None:
    fake_slack.fail_next("chat.postMessage", status=429, headers={"Retry-After": "0"})
    client = slack_client(fake_slack, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    result = await client.chat_postMessage(channel="C1", text="after 429")
    assert result["ok"]
    first, second = fake_slack.calls_to("chat.postMessage")
    assert first.status == 429 and first.response == {"ok": False, "error": "ratelimited"}
    assert second.status == 200


async def test_slack_429_without_retry_handler_raises(fake_slack: FakeSlack) -> None:
    fake_slack.fail_next("chat.postMessage", status=429, headers={"Retry-After": "7"})
    client = slack_client(fake_slack, retry_handlers=[])
    with pytest.raises(SlackApiError) as info:
        await client.chat_postMessage(channel="C1", text="x")
    assert info.value.response.status_code == 429
    assert info.value.response.headers["Retry-After"] == "7"


async def test_slack_outage_modes(fake_slack: FakeSlack) -> None:
    client = slack_client(fake_slack, retry_handlers=[])
    fake_slack.down = "error"
    with pytest.raises(SlackApiError) as info:
        await client.chat_postMessage(channel="C1", text="x")
    assert info.value.response.status_code == 503
    fake_slack.down = "reset"
    with pytest.raises(aiohttp.ClientError):
        await client.chat_postMessage(channel="C1", text="x")
    fake_slack.down = None
    fake_slack.stop()  # connection refused while stopped, same port afterwards
    with pytest.raises(aiohttp.ClientConnectionError):
        await client.chat_postMessage(channel="C1", text="x")
    fake_slack.start()
    assert (await client.chat_postMessage(channel="C1", text="x"))["ok"]


async def test_response_url(fake_slack: FakeSlack) -> None:
    webhook = AsyncWebhookClient(fake_slack.response_url("abc"))
    response = await webhook.send(text="done", replace_original=True)
    assert response.status_code == 200 and response.body == "ok"
    assert fake_slack.response_url_posts["abc"] == [{"text": "done", "replace_original": True}]


def test_signature_matches_slack_sdk_verifier() -> None:
    body = b"token=x&command=%2Ffisk&text=why+502"
    headers = sign_slack_request("s3cret", body)
    verifier = SignatureVerifier("s3cret")
    assert verifier.is_valid_request(body, headers)
    assert verifier.is_valid(body, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"])
    assert not SignatureVerifier("other").is_valid_request(body, headers)
    assert not verifier.is_valid_request(body + b"x", headers)
    stale = sign_slack_request("s3cret", body, timestamp=int(time.time()) - 3600)
    assert not verifier.is_valid_request(body, stale)


async def test_bolt_accepts_signed_slash_command_and_talks_to_fake(fake_slack: FakeSlack) -> None:
    """Signed request in, Web API call and response_url post out: the real bolt AsyncApp end to end."""
    from urllib.parse import urlencode

    from slack_bolt.async_app import AsyncApp
    from slack_bolt.request.async_request import AsyncBoltRequest

    app = AsyncApp(
        client=AsyncWebClient(token="xoxb-test", base_url=fake_slack.api_url),
        signing_secret="s3cret",
    )

    @app.command("/fisk")
    async def fisk(ack: Any, respond: Any, client: AsyncWebClient, command: dict[str, Any]) -> None:
        await ack()
        await client.chat_postMessage(channel=command["channel_id"], text=f"on it: {command['text']}")
        await respond("started")

    body = urlencode(
        {
            "command": "/fisk",
            "text": "why 502",
            "channel_id": "C1",
            "user_id": "U1",
            "team_id": "T0FAKE",
            "trigger_id": "1.2.3",
            "response_url": fake_slack.response_url("r1"),
        }
    )
    headers = {"content-type": "application/x-www-form-urlencoded", **sign_slack_request("s3cret", body)}
    response = await app.async_dispatch(AsyncBoltRequest(body=body, headers=headers))
    assert response.status == 200
    for _ in range(100):  # bolt runs the listener after acking
        if fake_slack.response_url_posts.get("r1"):
            break
        await asyncio.sleep(0.02)
    assert fake_slack.calls_to("chat.postMessage")[0].params["text"] == "on it: why 502"
    assert fake_slack.response_url_posts["r1"][0]["text"] == "started"

    bad = {**headers, "X-Slack-Signature": "v0=" + "0" * 64}
    assert (await app.async_dispatch(AsyncBoltRequest(body=body, headers=bad))).status == 401
