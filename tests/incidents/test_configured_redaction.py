"""An alert's text is scrubbed with the process's configured redactor, as tool output is: the value of a
variable named in ``sensitive_env_vars`` and a match of ``execution.redact_patterns`` reach neither Slack (card,
notes, the brief handed to the agent, the timeline upload) nor the ``fisk-chatops timeline`` export."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from bot.agent import bus
from bot.config import Config, load_config
from bot.incidents.recorder import read_timeline
from bot.incidents.service import OnCall
from bot.incidents.settings import IncidentSecrets, IncidentSettings
from bot.incidents.store import IncidentStore
from bot.sanitize.redact import Redactor, build_redactor
from bot.wiring import text_redactor
from tests.incidents.conftest import WEB, Intake, top_level
from tests.incidents.payloads import AM_TOKEN, am_alert, am_payload, bearer, dumps
from tests.slack.conftest import Harness
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
AM = "/alerts/alertmanager"
SECRET_VAR = "ACME_DB_PASS"
SECRET_VALUE = "plain-looking-value-42"  # nothing the default patterns would catch
TICKET = "ACME-1234-ABCDEF"  # matches the operator's pattern only


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(SECRET_VAR, SECRET_VALUE)
    path = tmp_path / "fisk-chatops.yaml"
    patterns = '["ACME-[0-9]{4}-[A-Z]{6}"]'
    path.write_text(f"sensitive_env_vars: [{SECRET_VAR}]\nexecution:\n  redact_patterns: {patterns}\n")
    return path


@pytest.fixture
def configured(config_file: Path) -> tuple[Config, Redactor]:
    config = load_config(str(config_file))
    return config, text_redactor(config)


@pytest.fixture
async def intake(
    harness: Harness, poster: Callable[[], Awaitable[None]], incident_settings: IncidentSettings,
    configured: tuple[Config, Redactor],
) -> AsyncIterator[Intake]:
    """The on-call front end wired as ``bot.roles.workers`` does: the configured redactor for intake and exports."""
    redactor = configured[1]
    harness.front.deps.redactor = redactor  # what SlackFrontEnd(redactor=...) sets
    await poster()
    stop = asyncio.Event()
    oncall = OnCall(harness.redis, harness.store, incident_settings, IncidentSecrets(alertmanager_token=AM_TOKEN),
                    redactor=redactor)
    port = await oncall.listen()
    task = asyncio.create_task(oncall.run(stop))
    async with aiohttp.ClientSession() as session:
        yield Intake(f"http://127.0.0.1:{port}", session, harness.redis)
    stop.set()
    await asyncio.wait_for(task, 10)


def test_the_default_patterns_alone_would_let_both_through() -> None:
    text = f"db password {SECRET_VALUE}, ticket {TICKET}"
    assert build_redactor().redact(text)[0] == text


async def test_configured_secrets_never_reach_slack_nor_the_export(
    harness: Harness, intake: Intake, config_file: Path,
) -> None:
    alert = am_alert(ticket=TICKET)
    alert["annotations"]["summary"] = f"login fails with password {SECRET_VALUE}"
    alert["annotations"]["description"] = f"see {TICKET}; db password {SECRET_VALUE}"
    status, _ = await intake.post(AM, dumps(am_payload(alerts=[alert])), bearer())
    assert status == 201
    (card,) = await wait_for(lambda: top_level(harness, WEB), timeout=10)
    shown = json.dumps(card["blocks"])
    assert "[REDACTED:secret_value]" in shown and "[REDACTED:custom]" in shown  # redacted, not dropped
    # a repeat and the resolution update the card and post notes
    resolved = am_alert(status="resolved", ticket=TICKET)
    resolved["annotations"]["summary"] = f"{TICKET} {SECRET_VALUE}"
    assert (await intake.post(AM, dumps(am_payload("resolved", [resolved])), bearer()))[0] == 200
    await wait_for(lambda: harness.slack.calls_to("chat.update"), timeout=10)
    # the brief handed to the agent (the outbox event the poster consumed)
    briefs = [str(e.data.get("brief", "")) for e in await intake.outbox() if e.kind == "thread_open"]
    assert briefs and "[REDACTED:custom]" in briefs[0]
    # a human pastes both into the thread: recorded as said, redacted on the way out
    conversation = f"slack:{WEB}:{card['ts']}"
    await bus.submit_user_message(harness.redis, conversation, "UREQ", f"pw is {SECRET_VALUE}, ticket {TICKET}")
    incidents = IncidentStore(harness.redis)
    await wait_for(lambda: _said(harness, incidents, conversation), timeout=10)
    # the timeline upload into the thread
    await harness.command(f"timeline {card['ts']}", user="UREQ", channel=WEB)
    upload = await wait_for(lambda: harness.slack.uploads, timeout=10)
    document = next(iter(upload.values())).decode()
    assert "Incident timeline" in document
    # the CLI export, configured by the same file, in a process with the same environment
    cli = subprocess.run(
        [sys.executable, "-m", "bot.cli", "timeline", "--config", str(config_file), "--thread", f"{WEB}:{card['ts']}",
         "--format", "json"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, "REDIS_URL": _redis_url(harness)},
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert "[REDACTED:" in cli.stdout
    everything = [json.dumps(c.params) for c in harness.slack.calls] + briefs + [document, cli.stdout]
    for text in everything:
        assert SECRET_VALUE not in text and TICKET not in text, text[:500]


async def _said(harness: Harness, incidents: IncidentStore, conversation: str) -> bool:
    return any(SECRET_VALUE in str(e.get("text")) for e in await read_timeline(harness.redis, incidents, conversation))


def _redis_url(harness: Harness) -> str:
    kw = harness.redis.connection_pool.connection_kwargs
    return f"redis://{kw.get('host', '127.0.0.1')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
