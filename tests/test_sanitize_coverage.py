"""Secret forms the detectors missed (issue #11, second pass): environment entries in YAML lists and quoted
strings, command-line flags with their value as the next word, redis-cli and redis.conf passwords; and the help
text and prose around the same flags, which must stay."""

from __future__ import annotations

import pytest

from bot.sanitize import redact, sanitize_output

CASES = [
    ("    environment:\n      - DB_PASSWORD=ab;cd\n      - LOG_LEVEL=info\n", "ab;cd"),
    ('      - "POSTGRES_PASSWORD=pg pass;word"\n', "pg pass;word"),
    ('        "Env": [\n            "PATH=/usr/bin",\n            "DB_PASSWORD=ab;cd,ef"\n        ],\n', "ab;cd,ef"),
    ("docker run -e 'MYSQL_ROOT_PASSWORD=correct horse' img", "correct horse"),
    ('Environment="DB_PASSWORD=envPa55 x" "OTHER=1"', "envPa55 x"),
    ("app  1234  0.0  0.1 /usr/bin/app --token abcDEF123456ghi --port 80", "abcDEF123456ghi"),
    ("app  1234  0.0  0.1 /usr/bin/app --db-password hunter22 --port 80", "hunter22"),
    ("/usr/local/bin/exporter -password 'quoted pw' -listen :9104", "quoted pw"),
    ("redis  88  0.1  redis-cli -h cache.prod -a R3disCliPw ping", "R3disCliPw"),
    ("requirepass foobared-prod\nmasterauth foobared-prod\n", "foobared-prod"),
]


@pytest.mark.parametrize(("text", "secret"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_secret_forms_are_redacted(text: str, secret: str) -> None:
    out = sanitize_output(text.encode()).text
    assert secret not in out and "[REDACTED:" in out, out


def test_a_long_quoted_environment_value_is_redacted_to_its_closing_quote() -> None:
    secret = "p" + "a1-" * 150
    out = redact(f'"Env": ["DB_PASSWORD={secret}", "LOG_LEVEL=info"]')[0]
    assert out == '"Env": ["DB_PASSWORD=[REDACTED:password]", "LOG_LEVEL=info"]'


@pytest.mark.parametrize(
    "line",
    [
        "      --password string         Password for the registry",
        "      --token TOKEN",
        "  -p, --password=PASSWORD    password to use",
        "docker login --password-stdin registry.example.com",
        "the --password flag is deprecated, use --password-file",
        "      --client-secret CLIENT_SECRET",
        '      --token-ttl 24h   how long a token lives',
        "app --db-password=$DB_PASSWORD --api-token=\"$(cat /run/token)\"",
        "redis-cli -h cache.prod -p 6379 info",
        '  - "LOG_LEVEL=info"',
    ],
)
def test_flags_and_entries_that_hold_no_secret_stay(line: str) -> None:
    assert redact(line) == (line, 0)
