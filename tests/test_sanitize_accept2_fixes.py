"""Leaks the second acceptance check of issue #11 left open (``tests/corpora/leaks_accept2.py``), each pinned where
the sanitizer decides it: what is hidden, and what around it stays visible."""

from __future__ import annotations

import pytest

from bot.sanitize import display_command_line, redact, redact_argv


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


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('$ curl -u "ops:abc def" https://jenkins.corp/api/json',
         '$ curl -u "ops:[REDACTED:basic_auth]" https://jenkins.corp/api/json'),
        ("curl --user='ops:correct horse battery' -X POST https://x",
         "curl --user='ops:[REDACTED:basic_auth]' -X POST https://x"),
        ('curl --proxy-user ":tok en9" https://x', 'curl --proxy-user ":[REDACTED:basic_auth]" https://x'),
    ],
)
def test_a_quoted_curl_user_hides_the_whole_quoted_password(line: str, shown: str) -> None:
    assert redact(line)[0] == shown


@pytest.mark.parametrize("line", ['curl -u "ops" https://x', "curl -u 'ops:' https://x"])
def test_a_quoted_curl_user_without_a_password_stays(line: str) -> None:
    assert redact(line)[0] == line


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["curl", "-u", "ops:abc def", "https://x"], ["curl", "-u", "ops:[REDACTED:basic_auth]", "https://x"]),
        (["curl", "--user=ops:abc def", "https://x"], ["curl", "--user=ops:[REDACTED:basic_auth]", "https://x"]),
        (["curl", "--proxy-user=p:a b", "https://x"], ["curl", "--proxy-user=p:[REDACTED:basic_auth]", "https://x"]),
        (["curl", "-uops:abc def", "https://x"], ["curl", "-uops:[REDACTED:basic_auth]", "https://x"]),
        (["mysql", "-uroot:x", "db"], ["mysql", "-uroot:x", "db"]),  # glued -u is curl's only
        (["curl", "--user=ops", "https://x"], ["curl", "--user=ops", "https://x"]),  # no password: curl asks
    ],
)
def test_an_argvs_user_flag_hides_its_whole_password_on_cards_and_results(argv: list[str], shown: list[str]) -> None:
    assert redact_argv(argv) == shown
    card, _ = display_command_line(argv)  # the approval card: the same, with fingerprints
    for item, after in zip(argv, shown, strict=True):
        if item != after:
            assert item.partition(":")[2] not in card and "[REDACTED:basic_auth#" in card, card


def test_a_quoted_curl_user_holding_a_scripts_variables_stays() -> None:
    line = 'curl -u "$NEXUS_USER:$NEXUS_PASS" https://nexus.corp/service/rest/v1/status'
    assert redact(line)[0] == line
