"""Sanitization of tool output and argv: control sequences, secret redaction, capping (no subprocesses)."""

from __future__ import annotations

import re

import pytest

from bot.runner.output import OutputCapture
from bot.sanitize import (
    Captured,
    build_redactor,
    redact,
    redact_argv,
    sanitize_captured,
    sanitize_output,
    strip_controls,
)
from bot.sanitize.cap import omission_marker

# Fake credentials in each known format, assembled at runtime so secret scanners don't flag this file.
B64_40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SLACK_BOT = "xox" + "b-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_USER = "xox" + "p-1234567890-1234567890-1234567890123-0123456789abcdef0123456789abcdef"
SLACK_APP = "xa" + "pp-1-A0123456789-1234567890123-" + "0a1b2c3d" * 8
SLACK_HOOK = "https://hooks.slack.com/" + "services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
ANTHROPIC = "sk-" + "ant-api03-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrSt-AAAAAA"
OPENAI = "sk-" + "proj-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl"
OPENAI_OLD = "sk-" + "AbCdEfGhIjKlMnOpQrStT3BlbkFJAbCdEfGhIjKlMnOpQrSt"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_STS_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
GHP = "ghp" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
GHS = "ghs" + "_" + "0123456789AbCdEfGhIjKlMnOpQrStUvWxYz"
GH_PAT = "github" + "_pat_" + "11ABCDEFG0123456789abc_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789" * 2
GITLAB = "gl" + "pat-" + "AbCdEfGhIjKlMnOpQrSt"
GOOGLE = "AI" + "za" + "SyA-1234567890abcdefghijklmnopqrstu"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQ"
PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Aa\nq3W+tZbiHq0r5fOmE8Vd1M2\n"
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----"
OPENSSH = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"

# (text containing the secret, the secret that must disappear, expected kind, text that must stay)
CORPUS = [
    (f"bot token {SLACK_BOT} end", SLACK_BOT, "slack_token", "bot token "),
    (f"user token {SLACK_USER}", SLACK_USER, "slack_token", "user token "),
    (f"app token {SLACK_APP}", SLACK_APP, "slack_token", "app token "),
    (f"hook {SLACK_HOOK} done", SLACK_HOOK, "slack_webhook", " done"),
    (f"key {ANTHROPIC}", ANTHROPIC, "anthropic_key", "key "),
    (f"key {OPENAI}", OPENAI, "openai_key", "key "),
    (f"key {OPENAI_OLD}", OPENAI_OLD, "openai_key", "key "),
    (f"id {AWS_ID} ok", AWS_ID, "aws_access_key_id", " ok"),
    (f"id {AWS_STS_ID} ok", AWS_STS_ID, "aws_access_key_id", " ok"),
    (f"aws_secret_access_key = {B64_40}", B64_40, "aws_secret_key", "aws_secret_access_key = "),
    (f"AWS credentials for prod: {B64_40} (rotated)", B64_40, "aws_secret_key", "(rotated)"),
    (f"clone with {GHP}", GHP, "github_token", "clone with "),
    (f"app {GHS}", GHS, "github_token", "app "),
    (f"pat {GH_PAT}", GH_PAT, "github_token", "pat "),
    (f"gitlab {GITLAB}", GITLAB, "gitlab_token", "gitlab "),
    (f"maps {GOOGLE}", GOOGLE, "google_api_key", "maps "),
    (f"session {JWT} x", JWT, "jwt", " x"),
    (f"key:\n{PEM}\nafter", PEM_BODY.split("\n")[0], "private_key", "after"),
    (f"{OPENSSH}\nnext", "b3BlbnNzaC1rZXktdjEAAAAA", "private_key", "next"),
    ("db postgres://admin:S3cr3tPassw0rd@db.internal:5432/app", "S3cr3tPassw0rd", "url_password", "admin:"),
    ("password=hunter2hunter2 next", "hunter2hunter2", "password", "password="),
    ("passwd: correcthorse\n", "correcthorse", "password", "passwd: "),
    ("token: tok_live_abcdef123456", "tok_live_abcdef123456", "token", "token: "),
    ("client secret=s3cr3t-value ok", "s3cr3t-value", "secret", " ok"),
    ("api_key=abcd1234efgh5678", "abcd1234efgh5678", "api_key", "api_key="),
    ('{"password": "p@ss w0rd!", "user": "bob"}', "p@ss w0rd!", "password", '"user": "bob"'),
    ("Authorization: Bearer abcdef0123456789xyz", "abcdef0123456789xyz", "authorization", "Authorization: Bearer "),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "authorization", "Basic "),
    ("header was Bearer abcdefgh.ijklmnop-123", "abcdefgh.ijklmnop-123", "bearer", "header was Bearer "),
    ("runner glrt-abcdefghij0123456789ab ok", "glrt-abcdefghij0123456789ab", "gitlab_token", " ok"),
    ("stripe " + "sk_live_" + "abcdefghijklmnop0123", "sk_live_abcdefghijklmnop0123", "stripe_key", "stripe "),
    ("npm npm_abcdefghijklmnopqrstuvwxyz0123456789 x", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_token", " x"),
    ("mail SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
     "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "sendgrid_key", "mail "),
    ("hub hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "huggingface_token", "hub "),
    ("do dop_v1_" + "ab12" * 16, "dop_v1_" + "ab12" * 16, "digitalocean_token", "do "),
    ("DB_PASS=hunter2hunter2 next", "hunter2hunter2", "password", "DB_PASS="),
    ("MYSQL_PWD='s3cr3t-pw' next", "s3cr3t-pw", "password", "MYSQL_PWD="),
]


@pytest.mark.parametrize(("text", "secret", "kind", "kept"), CORPUS, ids=[c[2] + str(i) for i, c in enumerate(CORPUS)])
def test_every_known_secret_format_is_redacted_with_its_kind(text: str, secret: str, kind: str, kept: str) -> None:
    result = sanitize_output(text.encode())
    assert secret not in result.text
    assert f"[REDACTED:{kind}]" in result.text
    assert kept in result.text
    assert result.redactions >= 1


def test_whole_corpus_in_one_output_counts_every_redaction() -> None:
    text = "\n".join(c[0] for c in CORPUS)
    result = sanitize_output(text.encode())
    for _, secret, _, _ in CORPUS:
        assert secret not in result.text
    assert result.redactions == len(CORPUS)


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens: 1024",
        "commit 0123456789abcdef0123456789abcdef01234567 by aws-bot",
        "PWD=/home/ops",
        "the password prompt appeared",
        "3 pods ready, sk-1 node",
    ],
)
def test_ordinary_text_is_not_redacted(text: str) -> None:
    assert redact(text) == (text, 0)


def test_exact_secret_values_are_redacted_but_short_ones_ignored() -> None:
    text = "conn=plain-credential-value-9 flag=dev"
    out, count = redact(text, secret_values=["plain-credential-value-9", "dev"])
    assert out == "conn=[REDACTED:secret_value] flag=dev"
    assert count == 1


def test_operator_patterns_are_redacted_and_invalid_ones_raise() -> None:
    out, count = redact("ticket ACME-12345678 filed", patterns=[r"ACME-\d{8}"])
    assert out == "ticket [REDACTED:custom] filed"
    assert count == 1
    with pytest.raises(re.error):
        build_redactor(patterns=["("])


def test_secret_split_by_escape_sequence_is_still_redacted() -> None:
    split = GHP[:10] + "\x1b[1m" + GHP[10:]
    result = sanitize_output(f"token is {split}\n".encode())
    assert GHP not in result.text and GHP[10:] not in result.text
    assert "[REDACTED:github_token]" in result.text


def test_terminal_control_sequences_are_removed() -> None:
    raw = (
        "\x1b[31mred\x1b[0m \x1b[1;32mgreen\x1b[m\n"
        "\x1b]8;;https://example.com/a\x1b\\link text\x1b]8;;\x1b\\\n"
        "\x1b]8;;https://example.com/b\x07bel link\x1b]8;;\x07\n"
        "\x1b]0;window title\x07after title\n"
        "\x1b]2;st title\x1b\\after st\n"
        "\x1b[2J\x1b[H\x1b[10;5Hmoved\x1b[K\x1b7\x1b8\x1b(B\n"
        "progress 10%\rprogress 100%\r\n"
        "bell\x07 back\x08space nul\x00 del\x7f tab\there\n"
        "c1 \u009b31mcsi\u0085 bidi\u202eevil\u202c\n"
        "cut at end \x1b[3"
    )
    text = strip_controls(raw)
    assert text == (
        "red green\n"
        "link text\n"
        "bel link\n"
        "after title\n"
        "after st\n"
        "moved\n"
        "progress 10%progress 100%\n"
        "bell backspace nul del tab\there\n"
        "c1 csi bidievil\n"
        "cut at end "
    )
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    result = sanitize_output(bytes(range(256)) + b"\xff\xfe ok \xe2\x82\xac\n")
    assert "\ufffd" in result.text
    assert result.text.endswith(" ok €\n")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", result.text)


def test_cap_keeps_head_and_tail_with_marker_counting_omitted_bytes() -> None:
    data = b"HEAD " + b"a" * 200_000 + b" TAIL\n"
    result = sanitize_output(data, output_limit=1000)
    assert result.truncated
    assert result.text.startswith("HEAD ") and result.text.endswith(" TAIL\n")
    assert len(result.text.encode()) <= 1000
    omitted = int(re.search(r"\n… \[(\d+) bytes omitted\] …\n", result.text).group(1))  # type: ignore[union-attr]
    shown = len(result.text.encode()) - len(omission_marker(omitted).encode())
    assert omitted + shown == len(data)


def test_small_output_is_untouched() -> None:
    result = sanitize_output(b"line one\nline two\n")
    assert (result.text, result.truncated, result.redactions) == ("line one\nline two\n", False, 0)


def test_redaction_happens_before_the_cap_so_no_secret_prefix_survives() -> None:
    data = b"x " * 500 + f"{GHP} ".encode() + b"y " * 500
    result = sanitize_output(data, output_limit=1015)
    assert GHP[:8] not in result.text


def test_capture_keeps_head_and_tail_and_counts_total() -> None:
    capture = OutputCapture(head_limit=10, tail_limit=10)
    for _ in range(1000):
        capture.feed(b"0123456789abc")
    capture.feed(b"THE-END!!!")
    got = capture.captured()
    assert got.head == b"0123456789"
    assert got.tail == b"THE-END!!!"
    assert got.total_bytes == 13 * 1000 + 10
    assert got.omitted == got.total_bytes - 20


def test_capture_without_gap_is_contiguous() -> None:
    capture = OutputCapture(head_limit=8, tail_limit=8)
    for piece in (b"abc", b"defghij", b"klm"):
        capture.feed(piece)
    got = capture.captured()
    assert got.head + got.tail == b"abcdefghijklm" and got.omitted == 0


def test_gap_never_shows_part_of_a_straddling_secret_or_private_key() -> None:
    # The head ends inside a token and inside a PEM block; the tail starts inside another PEM block.
    head = (
        b"start\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY" + GHP[:12].encode()
    )
    tail = b"BBBBsecretbase64body\n-----END EC PRIVATE KEY-----\nfinal line\n"
    result = sanitize_captured(
        Captured(head=head, tail=tail, total_bytes=len(head) + len(tail) + 5000), build_redactor(), 65536
    )
    assert result.truncated
    assert "MHcCAQEE" not in result.text and "secretbase64body" not in result.text and GHP[:12] not in result.text
    assert result.text.startswith("start\n") and result.text.endswith("final line\n")
    assert "bytes omitted" in result.text


def test_gap_drops_the_partial_line_or_token_at_the_edge() -> None:
    """At the gap the partial line is dropped (a quoted value may hold spaces); on a line longer than the
    guard, the partial token."""
    head = b"start\nsome text " + GHP[:12].encode()
    tail = JWT[-10:].encode() + b" end\nlast\n"
    result = sanitize_captured(Captured(head=head, tail=tail, total_bytes=9999), build_redactor(), 65536)
    assert result.text.startswith("start\n\n") and result.text.endswith("\nlast\n")
    assert GHP[:12] not in result.text and JWT[-10:] not in result.text and "some text" not in result.text
    long_line = b"word " * 2000
    head, tail = long_line + b"some text " + GHP[:12].encode(), JWT[-10:].encode() + b" end " + long_line
    result = sanitize_captured(Captured(head=head, tail=tail, total_bytes=99999), build_redactor(), 65536)
    assert "some text \n" in result.text and "\n end word" in result.text
    assert GHP[:12] not in result.text and JWT[-10:] not in result.text


def test_argv_display_redacts_secrets_and_secret_flag_values() -> None:
    argv = [
        "/usr/bin/opsctl",
        "deploy",
        "--password",
        "hunter2hunter2",
        "--token=abcdef123456",
        "--api-key",
        "k-123456789",
        f"--header=Authorization: Bearer {JWT}",
        f"--slack={SLACK_BOT}",
        "--url=https://bob:pw123456@example.com/",
        "--verbose",
        "plain-credential-value-9",
        "web\x1b[2J-1",
    ]
    shown = redact_argv(argv, secret_values=["plain-credential-value-9"])
    joined = " ".join(shown)
    for secret in ("hunter2hunter2", "abcdef123456", "k-123456789", JWT, SLACK_BOT, "pw123456", "plain-cred"):
        assert secret not in joined
    assert shown[:3] == ["/usr/bin/opsctl", "deploy", "--password"]
    assert shown[3] == "[REDACTED:flag_value]"
    assert shown[4] == "--token=[REDACTED:token]"
    assert shown[9] == "--url=https://bob:[REDACTED:url_password]@example.com/"
    assert shown[10] == "--verbose"
    assert shown[12] == "web-1"
    assert len(shown) == len(argv)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=Hunter2Hunter2", "DB_PASSWORD=[REDACTED:password]"),
        ("password:\n  Hunter2Hunter2\nnext: 1", "password:\n  [REDACTED:password]\nnext: 1"),
        ("İstanbul token=abcdef123456", "İstanbul token=[REDACTED:token]"),  # lower() changes length here
        ("a\n" * 3000 + f"x {GHP}\n" + "b\n" * 3000, "a\n" * 3000 + "x [REDACTED:github_token]\n" + "b\n" * 3000),
    ],
)
def test_trigger_prefilter_keeps_every_match(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"aws": {"id": "AKIAIOSFODNN7EXAMPLE", "key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}}',
         '{"aws": {"id": "[REDACTED:aws_access_key_id]", "key": "[REDACTED:aws_secret_key]"}}'),
        ("aws AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws [REDACTED:aws_access_key_id] secret [REDACTED:aws_secret_key]"),
        ("aws region us-east-1 ghp_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
         "aws region us-east-1 [REDACTED:github_token]"),
    ],
)
def test_a_secret_inside_another_detectors_context_is_redacted_too(text: str, expected: str) -> None:
    """One match wins per position: the context a detector keeps visible must be scanned as well."""
    assert redact(text)[0] == expected


def test_a_token_used_as_the_user_of_a_url_is_redacted() -> None:
    text, count = redact("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789ABCD:x-oauth-basic@github.com/o/r")
    assert text == "git clone https://[REDACTED:github_token]:[REDACTED:url_password]@github.com/o/r" and count == 2


def test_the_redactor_is_built_once_per_process_for_the_same_values() -> None:
    """Compiling the automata costs milliseconds: every call of a runner reuses the same redactor."""
    values = ["plain-credential-value-9", "another-credential-1"]
    first = build_redactor(values, [r"ACME-\d{8}"])
    assert build_redactor(reversed(values), [r"ACME-\d{8}"]) is first
    assert build_redactor(values) is not first


def test_an_operator_pattern_that_is_not_linear_is_refused_clearly() -> None:
    with pytest.raises(re.error, match="RE2 syntax, linear time"):
        build_redactor(patterns=[r"(a+)\1"])


def test_a_configured_pattern_re2_refuses_stops_start_up_with_its_reason() -> None:
    from bot.config import ConfigError, parse_config

    assert parse_config({"execution": {"redact_patterns": [r"ACME-\d{8}"]}}).execution.redact_patterns
    with pytest.raises(ConfigError, match=r"redact_patterns.*RE2 syntax, linear time"):
        parse_config({"execution": {"redact_patterns": [r"(?<=key=)\w+"]}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=ab;cd\n", "DB_PASSWORD=[REDACTED:password]\n"),
        ("MY_PASS=correct horse\n", "MY_PASS=[REDACTED:password]\n"),
        ("HOME=/root\nexport MY_PASS=correct horse battery  \r\n",
         "HOME=/root\nexport MY_PASS=[REDACTED:password]  \r\n"),
        ("  declare -x API_TOKEN=a1b2c3;d4e5}f6g7\nnext", "  declare -x API_TOKEN=[REDACTED:token]\nnext"),
        ("MY_PASS='correct horse' # rotated\n", "MY_PASS='[REDACTED:password]' # rotated\n"),
        # A token's value with words after it: hidden as before (its first word looks generated), to the line's end.
        ("API_TOKEN=abc123XYZ789 rotated\n", "API_TOKEN=[REDACTED:token]\n"),
        ("API_TOKEN=not a token\n", "API_TOKEN=not a token\n"),
        # Mid-line and inside formats, the format's own delimiters still end the value.
        ("GET /login?password=abcdefg&next=/home 200\n", "GET /login?password=[REDACTED:password]&next=/home 200\n"),
        ('{"password": "abc def", "retries": 3}\n', '{"password": "[REDACTED:password]", "retries": 3}\n'),
        ("run with DB_PASSWORD=abcd1 then exit\n", "run with DB_PASSWORD=[REDACTED:password] then exit\n"),
    ],
)
def test_an_environment_line_value_runs_to_the_end_of_its_line(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


def test_a_long_environment_line_value_is_redacted_past_the_pattern_bound() -> None:
    value = "ab1;" * 100 + "cd2 tail"
    shown = redact(f"SIGNING_KEY={value}  \nnext\n")[0]
    assert shown == "SIGNING_KEY=[REDACTED:key]  \nnext\n"
