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
    ("====== Data ======\nKey         Value\n---         -----\npassword    Va-ult-Pw9\nusername    orders\n",
     "Va-ult-Pw9"),
    ("machine api.heroku.com\n  login ops@example.com\n  password 01234567-89ab-cdef-0123-456789abcdef\n",
     "01234567-89ab-cdef-0123-456789abcdef"),
    ("machine github.com login ci password N3trc-Pw\n", "N3trc-Pw"),
    ('    "SecretString": "{\\"username\\":\\"orders\\",\\"password\\":\\"Sm-Pw-2026!\\"}",\n', "Sm-Pw-2026!"),
    ("define( 'DB_PASSWORD', 'Wp-c0nfig-Pw' );\n", "Wp-c0nfig-Pw"),
    ("    'password' => 'Ph9-array-pw',\n", "Ph9-array-pw"),
    ('    password = os.getenv("DB_PASSWORD", "Def4ult-pw")\n', "Def4ult-pw"),
    ("docker login -u ci -p D0cker-Hub-Pw registry.example.com\n", "D0cker-Hub-Pw"),
    ('{"db_password": {"sensitive": true, "type": "string", "value": "Tf0ut-Pw-77"}}', "Tf0ut-Pw-77"),
    ("mysql -uroot -p'My Quoted Pw' orders", "My Quoted Pw"),
    (":0nlyPw9@tcp(db:3306)/orders", "0nlyPw9"),
    ('{"auth": {"client_token": "s.Xk9mQ2vL8pR4tN7bW1cF5hJ3", "lease_duration": 2764800}}',
     "s.Xk9mQ2vL8pR4tN7bW1cF5hJ3"),
    ("AWS_SESSION_TOKEN=FwoGZXIvYXdzEJr//////////wEaDPq7Vt2Lm9XzK4pR8", "FwoGZXIvYXdzEJr"),
    ('{"url": "https://a.blob.core.windows.net/c/f?sv=2022-11-02\\u0026sp=r\\u0026sig=Xk9mQ2vL8pR4tN7bW1cF5hJ3%3D"}',
     "Xk9mQ2vL8pR4tN7bW1cF5hJ3"),
    ("db:\n  password: |\n    Bl0ck-Scalar-Pw\n  user: app\n", "Bl0ck-Scalar-Pw"),
    ("curl -u :T0kenOnly https://ci.example.com/api", "T0kenOnly"),
    ("< set-cookie: sessionid=q8Xy1pZ3vB7nM2kL9wE4rT6y; Path=/; HttpOnly", "q8Xy1pZ3vB7nM2kL9wE4rT6y"),
    ("> Cookie: lang=en; PHPSESSID=8f2c1d9e7b3a4f6e0d2c8b1a9f", "8f2c1d9e7b3a4f6e0d2c8b1a9f"),
    ("set -gx DB_PASSWORD F1sh-Pw-9\n", "F1sh-Pw-9"),
    ("FROM alpine:3.20\nENV DB_PASSWORD D0ckerSpace-Pw\n", "D0ckerSpace-Pw"),
    ("DB_PASSWORD ?= M4ke-Pw-1\nAPI_KEY := 9f8e7d6c5b4a39281706\n", "M4ke-Pw-1"),
    ('"env": [{"name": "DB_PASSWORD", "value": "Js0n-Env-Pw"}]', "Js0n-Env-Pw"),
    ("+ sshpass -p 'Ssh pass 9' ssh deploy@10.0.0.5 uptime", "Ssh pass 9"),
    ("+ sshpass -pSshGlued9 scp dump.sql backup@10.0.0.6:", "SshGlued9"),
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
        "password    expired",
        "ssh login@bastion.example.com -p 2222 uptime",
        "psql -h db.prod -U login -p 5432 orders",
        "ENV PASSWORD_FILE /run/secrets/db_password",
        "    if password != confirm_password:",
        '    password := os.Getenv("DB_PASSWORD")',
        '{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}',
        "Token       refreshed",
        "db-password          Opaque                                2      3d",
        "    'secret' => env('APP_SECRET'),",
        '    "token": "refreshed-ok",',
        '{"password_min_length": {"sensitive": false, "type": "number", "value": 12}}',
    ],
)
def test_flags_and_entries_that_hold_no_secret_stay(line: str) -> None:
    assert redact(line) == (line, 0)


def test_a_rejection_is_remembered_only_on_a_span_that_holds_what_it_read() -> None:
    """A two-column line's short finder hits at "password =", which is parsed as the assignment: its rejection of
    an expression must not be remembered on the short span, or the same span in front of a literal hides it."""
    assert redact("password = var.db_password") == ("password = var.db_password", 0)
    out, count = redact('password = "hunter2-Prod!"')
    assert count == 1 and "hunter2-Prod!" not in out
