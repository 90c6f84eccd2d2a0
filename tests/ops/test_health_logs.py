"""The health endpoint (alive, ready, Prometheus metrics) and JSON logs without secrets."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.health import HealthServer
from bot.logs import JsonFormatter
from bot.metrics import CALLS_FINAL, QUEUE_DEPTH


async def test_health_ready_and_metrics() -> None:
    state = {"redis": True}

    async def redis_check() -> tuple[bool, str]:
        return state["redis"], "PONG" if state["redis"] else "connection refused"

    async def broken_check() -> tuple[bool, str]:
        raise ConnectionError("slack unreachable")

    async def collect() -> None:
        QUEUE_DEPTH.labels("awaiting_approval").set(3)

    server = HealthServer(host="127.0.0.1", port=0, checks={"redis": redis_check}, collectors=[collect])
    port = await server.start()
    CALLS_FINAL.labels("finished").inc()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                assert r.status == 200 and (await r.json()) == {"status": "alive"}
            async with http.get(f"http://127.0.0.1:{port}/readyz") as r:
                assert r.status == 200 and (await r.json())["checks"]["redis"] == {"ok": True, "detail": "PONG"}
            state["redis"] = False
            server.checks["slack"] = broken_check
            async with http.get(f"http://127.0.0.1:{port}/readyz") as r:
                body = await r.json()
                assert r.status == 503 and body["ready"] is False
                assert body["checks"]["slack"]["detail"] == "ConnectionError: slack unreachable"
            async with http.get(f"http://127.0.0.1:{port}/metrics") as r:
                text = await r.text()
    finally:
        await server.stop()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("fisk_chatops_queue_depth", (("stage", "awaiting_approval"),))] == 3
    assert samples[("fisk_chatops_calls_total", (("state", "finished"),))] >= 1
    assert any(name == "fisk_chatops_approval_wait_seconds_bucket" for name, _ in samples)
    # the process and platform collectors: memory, CPU, fds, start time, interpreter
    names = {name for name, _ in samples}
    assert {"process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
            "process_start_time_seconds", "python_info", "python_gc_collections_total"} <= names
    assert samples[("process_resident_memory_bytes", ())] > 1_000_000


async def _raw(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    try:
        await writer.drain()
        answer = await reader.read()
    except ConnectionResetError:  # closed by the server with our bytes unread: no answer either
        answer = b""
    writer.close()
    return answer


async def test_health_answers_only_gets_of_its_three_paths() -> None:
    server = HealthServer(host="127.0.0.1", port=0, request_timeout=0.5)
    port = await server.start()
    try:
        ok = await _raw(port, b"GET /healthz?probe=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200 OK\r\n") and b"Connection: close" in ok
        assert ok.endswith(b'{"status": "alive"}')
        assert (await _raw(port, b"GET /other HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 404 ")
        assert (await _raw(port, b"POST /metrics HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 405 ")
        assert (await _raw(port, b"garbage\r\n\r\n")).startswith(b"HTTP/1.1 400 ")
        assert await _raw(port, b"GET /healthz HTTP/1.1\r\n" + b"X: y\r\n" * 2000 + b"\r\n") == b""  # head too big
        assert await _raw(port, b"GET /healthz HTTP/1.1\r\n") == b""  # head never finished: dropped after 0.5 s
    finally:
        await server.stop()


def test_json_logs_carry_ids_and_never_secrets() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(secret_values=["s3cr3t-signing-value"]))
    logger = logging.getLogger("test.jsonlogs")
    logger.addHandler(handler)
    logger.propagate = False
    logger.warning("token xoxb-1234567890-abcdefghij and s3cr3t-signing-value",
                   extra={"conversation": "slack:C1:1.2", "call_id": "0-abc"})
    entry = json.loads(stream.getvalue())
    assert entry["conversation"] == "slack:C1:1.2" and entry["call_id"] == "0-abc"
    assert "xoxb-1234567890" not in entry["message"] and "s3cr3t-signing-value" not in entry["message"]
    assert entry["level"] == "warning"


def _value(name: str, **labels: str) -> float:
    from bot.metrics import REGISTRY

    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_model_requests_tokens_and_slack_errors_are_counted() -> None:
    import pytest
    from slack_sdk.errors import SlackApiError

    from bot.agent.model import ModelClient, ModelUnavailable, make_client
    from bot.agent.settings import AgentSettings
    from bot.slack.client import make_client as make_slack_client
    from tests.support.fake_anthropic import FakeAnthropic, error_reply, text_reply
    from tests.support.fake_slack import FakeSlack

    settings = AgentSettings(max_retries=0)
    before_ok, before_err = _value("fisk_chatops_model_requests_total", outcome="ok"), _value(
        "fisk_chatops_model_requests_total", outcome="error")
    before_out = _value("fisk_chatops_model_tokens_total", kind="output")
    with FakeAnthropic() as fake:
        fake.script(text_reply("hi"), error_reply(529))
        model = ModelClient(make_client(settings, api_key="k", base_url=fake.base_url), settings)
        response = await model.create([], [], [{"role": "user", "content": "hello"}])
        with pytest.raises(ModelUnavailable):
            await model.create([], [], [{"role": "user", "content": "hello"}])
    output_tokens = int(response.message["usage"]["output_tokens"])
    assert _value("fisk_chatops_model_requests_total", outcome="ok") == before_ok + 1
    assert _value("fisk_chatops_model_requests_total", outcome="error") == before_err + 1
    assert _value("fisk_chatops_model_tokens_total", kind="output") == before_out + output_tokens

    before = _value("fisk_chatops_slack_api_errors_total", method="chat.postMessage")
    with FakeSlack() as slack:
        slack.fail_next("chat.postMessage", error="channel_not_found")
        client = make_slack_client("xoxb-t", slack.api_url)
        with pytest.raises(SlackApiError):
            await client.chat_postMessage(channel="C1", text="x")
        await client.chat_postMessage(channel="C1", text="y")
    assert _value("fisk_chatops_slack_api_errors_total", method="chat.postMessage") == before + 1


def test_log_context_ids_reach_every_line_inside_the_block() -> None:
    from bot.logcontext import log_context

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(secret_values=[]))
    logger = logging.getLogger("test.logcontext")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    logger.propagate = False
    with log_context(conversation="slack:C1:9.9", call_id="0-def"):
        logger.info("inside")
    logger.info("outside")
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["conversation"] == "slack:C1:9.9" and inside["call_id"] == "0-def"
    assert "conversation" not in outside and "call_id" not in outside
