"""Approval cards never show a secret the model put in an argument, and show every invisible character.

Issue #11: the card showed ``postgres://admin:Sup3rS3cret@...`` and an ``xoxb-`` token raw, and let Hangul
fillers, the braille blank, combining marks and variation selectors through unescaped. The card shows a
marker with the kind and a short fingerprint instead of each secret; what runs, and the argv hash a click is
bound to, are unchanged.
"""

from __future__ import annotations

import json
import re

from bot.sanitize import display_command_line
from tests.slack.conftest import CHANNEL, Harness
from tests.slack.test_approvals import buttons, card_for, card_text

DB_PASSWORD = "Sup3rS3cret"
SLACK_TOKEN = "xox" + "b-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
OTHER_TOKEN = "xox" + "b-9999999999-9999999999999-ZyXwVuTsRqPoNmLkJiHgFeDc"
INVISIBLES = ["\u3164", "\u115f", "\u2800", "\ufe0f", "\u0301", "\u200b", "\u202e", "\u00a0", "\U000e0041"]


async def test_card_redacts_secrets_with_fingerprints_and_keeps_the_argv_hash(harness: Harness, poster) -> None:
    argv = ["opsctl", "db", "query", f"--dsn=postgres://admin:{DB_PASSWORD}@db.internal:5432/app",
            f"--notify-token={SLACK_TOKEN}", "--password", "hunter2hunter2", "--label", "nightly"]
    record = await card_for(harness, poster, argv)
    assert record.argv == argv  # what runs is untouched
    text = card_text(harness, record)
    for secret in (DB_PASSWORD, SLACK_TOKEN, "hunter2hunter2"):
        assert secret not in text
    assert re.search(r"postgres://admin:\[REDACTED:url_password#[0-9a-f]{6}\]@db\.internal:5432/app", text)
    assert re.search(r"--notify-token=\[REDACTED:slack_token#[0-9a-f]{6}\]", text)
    assert re.search(r"--password '?\[REDACTED:flag_value#[0-9a-f]{6}\]", text)
    assert "--label nightly" in text
    values = [json.loads(str(b["value"])) for b in buttons(harness, record)]
    assert values == [{"call": record.id, "argv": record.argv_hash, "bin": record.binary_digest}] * 2


async def test_card_escapes_every_invisible_character_with_the_warning(harness: Harness, poster) -> None:
    argv = ["opsctl", "service", "restart", *[f"web{c}1" for c in INVISIBLES]]
    record = await card_for(harness, poster, argv)
    blocks = harness.slack.message(CHANNEL, record.meta["slack_ts"])["blocks"]
    shown = " ".join(b["text"]["text"] for b in blocks if "text" in b) + json.dumps(blocks, ensure_ascii=False)
    for char in INVISIBLES:
        assert char not in shown, hex(ord(char))
    for escape in ("\\u3164", "\\u115f", "\\u2800", "\\ufe0f", "\\u0301", "\\u200b", "\\u202e", "\\xa0",
                   "\\U000e0041"):
        assert escape in shown, escape
    assert "invisible or control characters" in shown
    assert record.argv == argv


def test_two_different_secrets_get_different_fingerprints_and_the_same_secret_the_same() -> None:
    shown, revealed = display_command_line(["notify", f"--token={SLACK_TOKEN}", f"--backup-token={OTHER_TOKEN}",
                                            f"--again={SLACK_TOKEN}"])
    prints = re.findall(r"\[REDACTED:slack_token#([0-9a-f]{6})\]", shown)
    assert len(prints) == 3 and prints[0] != prints[1] and prints[0] == prints[2]
    assert not revealed


def test_command_line_display_covers_curl_user_and_mysql_password() -> None:
    shown, _ = display_command_line(["curl", "-u", "deploy:Pa55word!", "https://example.com/"])
    assert "Pa55word!" not in shown and "deploy:[REDACTED:basic_auth#" in shown
    shown, _ = display_command_line(["mysql", "-u", "root", "-pS3cretPw", "app"])
    assert "S3cretPw" not in shown and "-p[REDACTED:password#" in shown


SECRET_ARGUMENTS = [
    (["opsctl", "--db-pass", "DbPassArg1"], "DbPassArg1"),
    (["opsctl", "--secret-key", "SecKeyArg12"], "SecKeyArg12"),
    (["opsctl", "--private-key", "PrivKeyArg12"], "PrivKeyArg12"),
    (["opsctl", "--auth", "user:AuthArgPw1"], "AuthArgPw1"),
    (["opsctl", "--passphrase=Pass Phrase With Spaces"], "Phrase With Spaces"),
    (["sshpass", "-p", "SshPassPw", "ssh", "host"], "SshPassPw"),
    (["redis-cli", "-a", "RedisCliPw1", "ping"], "RedisCliPw1"),
    (["vault", "login", "hvs." + "CAESIJ4Kx7w9Zq3mN5pR8tV2yB6dF0gH"], "CAESIJ4Kx7w9Zq3mN5pR8tV2yB6dF0gH"),
    (["aws", "configure", "set", "aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9xmpLe0aB"], "wJalrXUtnF"),
    (["helm", "upgrade", "x", "--set", "auth.password=HelmSetPw1"], "HelmSetPw1"),
    (["kubectl", "create", "secret", "generic", "x", "--from-literal=password=S3cr3tLit"], "S3cr3tLit"),
    (["docker", "run", "-e", "MYSQL_ROOT_PASSWORD=DockRootPw", "mysql"], "DockRootPw"),
    (["curl", "-H", "Authorization: Bearer abcDEF123456ghi", "https://x"], "abcDEF123456ghi"),
    (["opsctl", "--client-secret", "csecret123"], "csecret123"),
]


def test_card_redacts_secrets_in_the_argument_forms_models_propose() -> None:
    for argv, secret in SECRET_ARGUMENTS:
        shown, _ = display_command_line(argv)
        assert secret not in shown and "[REDACTED:" in shown, shown


def test_card_keeps_arguments_that_only_name_secrets() -> None:
    for argv in (["kubectl", "get", "secret", "db-credentials", "-n", "prod"],
                 ["docker", "login", "--password-stdin", "registry.example.com"],
                 ["git", "config", "credential.helper", "store"],
                 ["opsctl", "--token-ttl", "3600", "--auth-method", "oidc"],
                 ["aws", "configure", "set", "region", "eu-west-1"]):
        shown, _ = display_command_line(argv)
        assert "REDACTED" not in shown, shown


async def test_card_applies_the_operators_redact_patterns(harness: Harness, poster) -> None:
    # execution.redact_patterns: a secret format only the operator knows must not reach the card raw either
    # (it was applied to results and the audit trail, while the card showed the argv with the built-in
    # detectors only).
    harness.store.redact_patterns = ("corp-[0-9a-f]{24}",)
    secret = "corp-0123456789abcdef01234567"
    argv = ["opsctl", "deploy", "--ticket", secret, "--label", "nightly"]
    record = await card_for(harness, poster, argv, tags=["impact:rw"])
    assert record.argv == argv
    text = card_text(harness, record)
    assert secret not in text
    assert re.search(r"\[REDACTED:custom#[0-9a-f]{6}\]", text)
    assert "--label nightly" in text


def test_the_display_is_remembered_per_command_line_and_patterns() -> None:
    """The display is kept per (argv, patterns): an operator pattern still applies to a command line shown
    before without it, and a list passed again (mutated in between) is not confused with the one shown before."""
    argv = ["opsctl", "deploy", "--ticket", "INC-4711-internal"]
    plain, _ = display_command_line(argv)
    assert "INC-4711-internal" in plain
    patterns = [r"INC-\d+-internal"]
    hidden, _ = display_command_line(argv, patterns)
    assert "INC-4711-internal" not in hidden and "[REDACTED" in hidden
    assert display_command_line(argv, patterns) == (hidden, False) and display_command_line(argv)[0] == plain
    argv[3] = f"--token={SLACK_TOKEN}"
    assert SLACK_TOKEN not in display_command_line(argv)[0]
