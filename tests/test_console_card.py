"""The console front end shows a command line exactly as a Slack card does (issue #11): secrets as fingerprinted
markers, every invisible or control character escaped, with the warning. The argv that runs is untouched."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.approvals.records import CallRecord, CallState
from bot.config import Secrets, parse_config
from bot.console import Console
from bot.console_view import ConsoleView, card_text, command_line
from bot.roles import Core
from bot.sanitize import display_command_line

DB_PASSWORD = "Sup3rS3cret-pw"
SLACK_TOKEN = "xox" + "b-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
INVISIBLES = ["\u3164", "\u115f", "\u2800", "\ufe0f", "\u061c", "\ufeff", "\u200b", "\u202e", "\U000e0041",
              "\U0001d159", "\U000e0100",
              "\x1b"]


def _record(argv: list[str]) -> CallRecord:
    now = datetime.now(UTC)
    return CallRecord(id="0-1", conversation="c", tool="opsctl_db_query", app="opsctl", arguments="{}", argv=argv,
                      argv_hash="h", requester="U", state=CallState.awaiting_approval, trigger="default policy",
                      created_at=now, expires_at=now, updated_at=now)


def _shown(argv: list[str]) -> str:
    out = io.StringIO()
    ConsoleView(out, terminal=False).emit(card_text(_record(argv)))
    return out.getvalue()


def test_console_card_redacts_secrets_like_the_slack_card() -> None:
    argv = ["opsctl", "db", "query", f"--dsn=postgres://admin:{DB_PASSWORD}@db.internal:5432/app",
            f"--notify-token={SLACK_TOKEN}", "--label", "nightly"]
    shown = _shown(argv)
    assert DB_PASSWORD not in shown and SLACK_TOKEN not in shown
    assert display_command_line(argv)[0] in shown  # the same text as the Slack card's command line
    assert "[REDACTED:url_password#" in shown and "--label nightly" in shown
    assert "invisible or control characters" not in shown


def test_console_card_escapes_invisible_characters_with_the_warning() -> None:
    argv = ["opsctl", "service", "restart", *[f"web{c}1" for c in INVISIBLES]]
    shown = _shown(argv)
    for char in INVISIBLES:
        assert char not in shown, hex(ord(char))
    for escape in ("\\u3164", "\\u115f", "\\u2800", "\\ufe0f", "\\u061c", "\\ufeff", "\\u200b", "\\u202e",
                   "\\U000e0041", "\\x1b", "\\U0001d159", "\\U000e0100"):
        assert escape in shown, escape
    assert "invisible or control characters" in shown


def test_console_note_for_auto_approved_calls_uses_the_same_display() -> None:
    text, revealed = command_line(["curl", "-u", "deploy:Pa55word!", "https://example.com/\u202e"])
    assert "Pa55word!" not in text and "\u202e" not in text and revealed


TICKET = "ACME-1234-ABCDEF"  # matches the operator's pattern only: the built-in detectors let it through
PATTERN = "ACME-[0-9]{4}-[A-Z]{6}"


def test_console_command_line_applies_the_operator_redact_patterns() -> None:
    argv = ["opsctl", "ticket", "close", f"--ref={TICKET}"]
    assert TICKET in command_line(argv)[0]  # the defaults alone would show it
    shown, revealed = command_line(argv, [PATTERN])
    assert TICKET not in shown and "[REDACTED:custom#" in shown and not revealed
    assert shown == display_command_line(argv, [PATTERN])[0]  # what the Slack card shows


async def test_the_console_shows_approval_cards_with_the_configured_patterns(
        tmp_path: Path, opsctl: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    config = parse_config({"applications": [{"binary": str(opsctl)}],
                           "execution": {"redact_patterns": [PATTERN]}})
    core = await Core.open(config, {"slack", "agent", "runner"}, Secrets())
    try:
        out = io.StringIO()
        console = Console(core, view=ConsoleView(out, terminal=False), user="tester")
        console.awaiting.append(_record(["opsctl", "ticket", "close", f"--ref={TICKET}"]))
        console._settle()
    finally:
        await core.close()
    assert "approval needed" in out.getvalue() and "[REDACTED:custom#" in out.getvalue()
    assert TICKET not in out.getvalue()
