"""Leaks the second acceptance check of issue #11 left open (``tests/corpora/leaks_accept2.py``), each pinned where
the sanitizer decides it: what is hidden, and what around it stays visible."""

from __future__ import annotations

import pytest

from bot.sanitize import redact


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        # The default address (localhost:3306): user:password@/dbname
        ("dsn: app:Xk9vQ2mL7pR4@/appdb?parseTime=true", "dsn: app:[REDACTED:dsn_password]@/appdb?parseTime=true"),
        ('DSN="root:Xk9vQ2mL7pR4@/"', 'DSN="root:[REDACTED:dsn_password]@/"'),
        ("root:Xk9vQ2mL7pR4@/\n", "root:[REDACTED:dsn_password]@/\n"),
        # The driver splits the user-info at the last "@" before the address: the password holds the others
        ("  --dsn 'backup:ab9x@Qc7z@tcp(db:3306)/'", "  --dsn 'backup:[REDACTED:dsn_password]@tcp(db:3306)/'"),
        ("svc:p@ss@w0rd@unix(/run/mysqld.sock)/x", "svc:[REDACTED:dsn_password]@unix(/run/mysqld.sock)/x"),
        ("app:Xk9v@Q2mL@/appdb", "app:[REDACTED:dsn_password]@/appdb"),
        # Two DSNs on one line: each keeps its own user and host (the value runs to the first "@net(")
        ("primary=a:Xk9vQ2mL@tcp(h1:3306)/d1 replica=b:Pw7zR4qT@tcp(h2:3306)/d2",
         "primary=a:[REDACTED:dsn_password]@tcp(h1:3306)/d1 replica=b:[REDACTED:dsn_password]@tcp(h2:3306)/d2"),
    ],
)
def test_a_go_mysql_dsns_password_is_hidden_to_the_last_at_before_its_address(line: str, shown: str) -> None:
    assert redact(line)[0] == shown


@pytest.mark.parametrize(
    "line",
    [
        "import Foo from '@/components/Foo.vue'",  # a bundler's alias, no user-info
        "git@github.com:acme/infra.git",
        "see https://example.com/@/path and user@/tmp",
        "2026-12-01 10:00:00 name:x @/api",
    ],
)
def test_an_at_slash_without_a_dsns_user_info_stays(line: str) -> None:
    assert redact(line)[0] == line


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('{"url":"https:\\/\\/admin:Xk9vQ2mL7pR4@es.internal:9200\\/_bulk"}',
         '{"url":"https:\\/\\/admin:[REDACTED:url_password]@es.internal:9200\\/_bulk"}'),
        ('{"redis":"redis:\\/\\/:Xk9v\\/Q2mL@10.0.0.7:6379\\/1"}',  # no user; an escaped "/" in the password
         '{"redis":"redis:\\/\\/:[REDACTED:url_password]@10.0.0.7:6379\\/1"}'),
    ],
)
def test_a_urls_password_is_hidden_when_json_escapes_its_slashes(line: str, shown: str) -> None:
    assert redact(line)[0] == shown


@pytest.mark.parametrize(
    "line",
    ['{"url":"https:\\/\\/es.internal:9200\\/_bulk","user":"a@b.example"}',  # no user-info
     '{"home":"https:\\/\\/example.com:443\\/x@y"}'],  # a port, then a path holding "@"
)
def test_an_escaped_url_without_a_password_stays(line: str) -> None:
    assert redact(line)[0] == line


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("\\:\\:1:5432:*:replicator:Xk9vQ2mL7pR4", "\\:\\:1:5432:*:replicator:[REDACTED:password]"),
        ("fd00\\:\\:12:*:app\\:db:svc\\\\ops:Xk9v\\:Q2mL", "fd00\\:\\:12:*:app\\:db:svc\\\\ops:[REDACTED:password]"),
    ],
)
def test_a_pgpass_line_with_escaped_colons_in_its_fields_hides_its_password(line: str, shown: str) -> None:
    assert redact(line)[0] == shown


def test_a_line_that_only_looks_escaped_is_no_pgpass_line() -> None:
    line = "C\\:\\temp:not-a-port:x:y:z"  # the second field is no port
    assert redact(line)[0] == line
