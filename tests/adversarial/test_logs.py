"""The bot's own logs during a whole flow (slash command, model, card, click, runner, result, answer) with the
credentials in the environment, secrets in the tool's output, and library DEBUG logging on: no credential and
no secret from the output may appear in what the JSON formatter writes.

Raw log records are captured too, to tell "never logged" from "logged, then redacted by the formatter": the
formatter is the last line of defence, so the test reports which records depended on it.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from bot.agent.worker import AgentWorker
from bot.approvals.records import CallState
from bot.logs import JsonFormatter
from tests.adversarial.conftest import CountingApp, wait_until
from tests.agent import harness as agent_harness
from tests.slack.conftest import BOT_TOKEN, CHANNEL, SECRET, Harness, wait_for
from tests.support.fake_anthropic import FakeAnthropic, error_reply, text_reply, tool_use_reply
from tests.test_sanitize import AWS_ID, GHP, JWT, SLACK_USER

API_KEY = "test-key"  # what tests.agent.harness.build_agent gives the SDK
REDIS_PASSWORD = "redis-pa55word-in-env"
OUTPUT_SECRETS = [GHP, AWS_ID, JWT, SLACK_USER, "hunter2hunter2"]


class Raw(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += logging.Formatter().formatException(record.exc_info)
        self.messages.append(f"{record.name}: {text}")


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[io.StringIO, Raw]]:
    for name, value in {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SECRET, "ANTHROPIC_API_KEY": API_KEY,
                        "REDIS_PASSWORD": REDIS_PASSWORD}.items():
        monkeypatch.setenv(name, value)
    stream = io.StringIO()
    formatted = logging.StreamHandler(stream)
    formatted.setFormatter(JsonFormatter())  # reads the credentials from the environment, as in production
    raw = Raw()
    root = logging.getLogger()
    saved = root.level, root.handlers[:]
    root.handlers[:] = [formatted, raw]
    root.setLevel(logging.DEBUG)
    yield stream, raw
    root.handlers[:] = saved[1]
    root.setLevel(saved[0])


async def test_full_flow_logs_no_credential_and_no_output_secret(
    captured: tuple[io.StringIO, Raw], harness: Harness, poster: Callable[[], Awaitable[None]],
    counted: CountingApp, counted_catalog, run_calls,
) -> None:
    stream, raw = captured
    counted.prints("\n".join(f"leak {s}" for s in OUTPUT_SECRETS[:-1]) + "\npassword=hunter2hunter2\n")
    harness.slack.fail_next("reactions.add", error="invalid_auth")  # a refused post is logged
    with FakeAnthropic() as model:
        model.script(
            error_reply(529),  # retried by the SDK (logged at debug)
            tool_use_reply([("toolu_1", "service_status", '{"service": "web"}')], text="Checking."),
            text_reply("web is fine"),
        )
        agent = agent_harness.build_agent(harness.redis, model.base_url, counted_catalog,
                                          agent_harness.settings(max_retries=2), harness.front.deps.policy)
        await run_calls(counted_catalog)
        stop = asyncio.Event()
        worker = asyncio.create_task(AgentWorker(harness.redis, agent, block_seconds=0.05).run(stop))
        await poster()
        try:
            await harness.command("is web ok?")
            (asked,) = await wait_for(lambda: harness.slack.calls_to("chat.postMessage"))
            conversation = f"slack:{CHANNEL}:{asked.response['ts']}"

            async def card() -> object:
                calls = await harness.store.pending(conversation)
                return calls and calls[0].meta.get("slack_ts") and calls[0]

            record = await wait_for(card, timeout=10)
            await harness.click(record, "fisk_approve", "UAPPROVER")
            await wait_until(lambda: [c for c in harness.slack.calls_to("chat.postMessage")
                                      if "web is fine" in json.dumps(c.params)], timeout=15)
            assert (await harness.store.get(record.id)).state == CallState.finished
        finally:
            stop.set()
            _done, late = await asyncio.wait([worker], timeout=12)  # the agent worker lets handlers finish
            for task in late:
                task.cancel()
    logs = stream.getvalue()
    assert logs.count("\n") >= 5  # there was logging to check
    for entry in logs.splitlines():
        json.loads(entry)
    credentials = [BOT_TOKEN, SECRET, API_KEY, REDIS_PASSWORD]
    for secret in credentials + OUTPUT_SECRETS:
        assert secret not in logs, secret
    # what reached a log record unredacted, i.e. what only the formatter kept out of the log
    relied = sorted({m.split(":")[0] for m in raw.messages for s in credentials + OUTPUT_SECRETS if s in m})
    assert relied == [], f"records carrying secrets before formatting: {relied}"


def test_formatter_redacts_operator_named_sensitive_variables(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    """An operator's ``sensitive_env_vars`` (e.g. DB_PASSWORD) are scrubbed from tools; logs hide them too."""
    monkeypatch.setenv("DB_PASSWORD", "plain-db-secret-123")
    from bot.logs import configure_logging

    root = logging.getLogger()
    saved = root.level, root.handlers[:]
    try:
        configure_logging("INFO", sensitive_env_vars=["DB_PASSWORD"])
        handler = root.handlers[0]
        stream = io.StringIO()
        handler.setStream(stream)  # type: ignore[attr-defined]
        logging.getLogger("adv").warning("connecting with plain-db-secret-123")
        assert "plain-db-secret-123" not in stream.getvalue()
    finally:
        root.handlers[:] = saved[1]
        root.setLevel(saved[0])


def test_http_client_request_lines_are_not_logged_at_info() -> None:
    from bot.logs import configure_logging

    root = logging.getLogger()
    saved = root.level, root.handlers[:]
    try:
        configure_logging("INFO")
        stream = io.StringIO()
        root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
        logging.getLogger("httpx2").info('HTTP Request: GET http://x/v1/models "HTTP/1.1 200 OK"')
        logging.getLogger("httpx2").warning("a real problem")
        logging.getLogger("bot.roles").info("serving")
        assert "HTTP Request" not in stream.getvalue()
        assert "a real problem" in stream.getvalue() and "serving" in stream.getvalue()
    finally:
        root.handlers[:] = saved[1]
        root.setLevel(saved[0])
        for name in ("httpx", "httpx2", "httpcore", "httpcore2"):
            logging.getLogger(name).setLevel(logging.NOTSET)
