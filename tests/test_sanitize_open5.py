"""The leaks earlier rounds of issue #11 left open (``leaks5``; corpus ``tests/corpora/leaks_open5.py``), each pinned
where the sanitizer decides it: what is hidden, what around it stays visible, and the look-alikes that stay whole
(more of them in ``tests/corpora/benign/workstation_session.txt``)."""

from __future__ import annotations

import pytest

from bot.sanitize import redact, sanitize_output

PW = "Xk9mQ2vL7pRt4wZ8"
NEW = "hG5nT8qW2eR6yU1i"


def shown(text: str) -> str:
    return sanitize_output(text.encode()).text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # libpq's Unix socket: the host is empty, the path follows "@" at once
        (f"postgresql://app:{PW}@/orders?host=/var/run/postgresql",
         "postgresql://app:[REDACTED:url_password]@/orders?host=/var/run/postgresql"),
        (f"postgres://:{PW}@/db", "postgres://:[REDACTED:url_password]@/db"),
        (f'{{"url":"postgresql:\\/\\/app:{PW}@\\/orders"}}',
         '{"url":"postgresql:\\/\\/app:[REDACTED:url_password]@\\/orders"}'),
    ],
)
def test_a_urls_password_before_an_empty_host_is_hidden(line: str, expected: str) -> None:
    assert redact(line)[0] == expected


@pytest.mark.parametrize(
    "line",
    [
        "postgresql:///orders?host=/var/run/postgresql",  # no user-info at all
        "postgresql://app@/orders",  # a user without a password
        "https://example.com:8443/@/path",  # a port before a path holding "@/"
        "import Foo from '@/components/Foo.vue'",
    ],
)
def test_a_url_with_an_empty_host_and_no_password_stays(line: str) -> None:
    assert redact(line) == (line, 0)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("DB_PASSWORD?=ab;cdefghijk9", "DB_PASSWORD?=[REDACTED:password]"),
        ("export DB_PASSWORD ?= ab;cdefghijk9", "export DB_PASSWORD ?= [REDACTED:password]"),
        ("override API_TOKEN := x,Kq8sLp2mZx7Rt", "override API_TOKEN := [REDACTED:token]"),
        ("DB_PASSWORD ::= ab&cdefghijk9", "DB_PASSWORD ::= [REDACTED:password]"),
        ("DB_PASSWORD += ab;cdefghijk9", "DB_PASSWORD += [REDACTED:password]"),
        ("DB_PASSWORD+=ab;cdefghijk9", "DB_PASSWORD+=[REDACTED:password]"),
        # an argv's word (``value_spans._argv_assignment``): make's operator right after the name
        ("docker run -e DB_PASSWORD?=ab;cdefghijk9 app", "docker run -e DB_PASSWORD?=[REDACTED:password] app"),
    ],
)
def test_makes_assignments_with_a_short_first_run_hide_the_whole_value(line: str, expected: str) -> None:
    assert shown(line + "\n") == expected + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "PASSWORD_MIN_LENGTH ?= 12",
        "export TOKEN_TTL := 3600",
        "override SECRET_NAME := orders-db-password",
        "DB_PASSWORD ?= $(shell cat /run/secrets/db)",
        "API_TOKEN ?= ${VAULT_TOKEN}",
        "CFLAGS += -O2 -Wall",
    ],
)
def test_makes_ordinary_assignments_stay(line: str) -> None:
    assert shown(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "command",
    ["$ echo $DB_PASSWORD", '+ echo "${VAULT_TOKEN}"', "$ printf '%s\\n' \"$MYSQL_ROOT_PASSWORD\"",
     "$ echo ${DB_PASSWORD:0:4}", "$ sudo echo $PGPASSWORD"],
)
def test_an_echoed_secret_variables_value_on_the_next_line_is_withheld(command: str) -> None:
    text = f"{command}\n{PW}\n\n$ ls\nREADME.md\n"
    assert shown(text) == f"{command}\n[REDACTED:echoed_secret_variable]\n\n$ ls\nREADME.md\n"


@pytest.mark.parametrize(
    "command",
    ["$ echo $HOME", "$ echo ${#DB_PASSWORD}", "$ echo $TOKEN_TTL", '$ echo "token refreshed for $USER"',
     "$ echo $SECRET_NAME", "$ echo password"],
)
def test_an_echoed_ordinary_variable_keeps_its_output(command: str) -> None:
    text = f"{command}\n{PW}\n"
    assert shown(text) == text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f'      ~ password                 = "{PW}" -> "{NEW}"',
         '      ~ password                 = "[REDACTED:password]" -> "[REDACTED:password]"'),
        (f'  ~ db_password = "{PW}" -> "{NEW}"', '  ~ db_password = "[REDACTED:password]" -> "[REDACTED:password]"'),
        (f'      ~ api_token = "{PW}" -> "{NEW}"', '      ~ api_token = "[REDACTED:token]" -> "[REDACTED:token]"'),
        # the old value no secret (a placeholder, null): the new one judged on its own
        (f'  ~ password = "changeme" -> "{NEW}"', '  ~ password = "changeme" -> "[REDACTED:password]"'),
        (f'      ~ password                 = null -> "{NEW}"',
         '      ~ password                 = null -> "[REDACTED:password]"'),
        # the new value unknown until applied: nothing more to hide
        (f'  ~ password = "{PW}" -> (known after apply)',
         '  ~ password = "[REDACTED:password]" -> (known after apply)'),
    ],
)
def test_a_plans_changed_secret_hides_the_new_value_too(line: str, expected: str) -> None:
    assert shown(line + "\n") == expected + "\n"


@pytest.mark.parametrize(
    "line",
    [
        '      ~ secret_name                           = "orders-db" -> "orders-db-v2"',
        '      ~ token_ttl                             = "1h" -> "2h"',
        '      ~ instance_class                        = "db.t3.medium" -> "db.t3.large"',
        "      ~ password_rotation_days                = 30 -> 90",
    ],
)
def test_a_plans_ordinary_change_stays(line: str) -> None:
    assert shown(line + "\n") == line + "\n"


def test_a_remembered_rejection_does_not_hide_a_later_change_from_view() -> None:
    """The same old value rejected and remembered on an earlier line is judged again where a change follows it."""
    text = f'  ~ password = "changeme" # x\n  ~ password = "changeme" -> "{NEW}"\n'
    assert shown(text) == '  ~ password = "changeme" # x\n  ~ password = "changeme" -> "[REDACTED:password]"\n'


@pytest.mark.parametrize(
    "table",
    [
        # psql's aligned format, names as the query wrote them (lower case), border 1
        " name  |     password\n-------+--------------------\n alice | {s}\n bob   | {s}\n(2 rows)\n",
        " usename | passwd\n---------+-------------------------------------\n app     | md5{s}\n(1 row)\n",
        " id |  name  |      api_key       | created\n----+--------+--------------------+---------\n"
        "  1 | alice  | {s} | 2026-12-01\n",
        # border 2, and a wide character before the cell (its "|" no longer at the rule's "+")
        "+-------+------------------+\n| name  |     password     |\n+-------+------------------+\n"
        "| alice | {s} |\n| élan  | {s} |\n+-------+------------------+\n",
        " name  | password\n-------+------------------\n café  | {s}\n",
        # a Markdown table's rule, and "=" for "-" (``airflow connections get``)
        "| user | password |\n|------|----------|\n| ci   | {s} |\n",
        "id | conn_id | password         | port\n===+=========+==================+=====\n7  | dwh     | {s} | 5432\n",
    ],
)
def test_a_psql_tables_lower_case_secret_column_is_hidden(table: str) -> None:
    text = table.format(s=PW)
    out = shown(text)
    assert PW not in out and PW[:6] not in out and "[REDACTED:table_secret]" in out, out
    assert out.count("|") == text.count("|")  # the table's frame stays


@pytest.mark.parametrize(
    "table",
    [
        " usename | passwd\n---------+----------\n app     | ********\n report  |\n(2 rows)\n",
        " id | name  | token_count | secret_name        | password_changed_at\n"
        "----+-------+-------------+--------------------+---------------------\n"
        "  1 | alice |          12 | orders-db-password | 2026-11-30 10:00:00\n",
        "        name         |    setting\n---------------------+---------------\n"
        " password_encryption | scram-sha-256\n",
        # a password column's header and rows without psql's rule: no table
        " name  | password\n alice | see the vault\n",
    ],
)
def test_psql_tables_without_a_secret_stay(table: str) -> None:
    assert shown(table) == table


@pytest.mark.parametrize(
    ("table", "values"),
    [
        # the header right-aligned with its values
        ("NAME                       TOKEN  AGE\nweb     {a}  5d\napi                {b}  5d\n", 2),
        ("ID   USER         PASSWORD  CREATED\n1    alice     {a}  2026-12-01\n22   bob    {b}  2026-12-01\n", 2),
        # the values right-aligned under a left-aligned header, starting after its name
        ("NAME    TOKEN                 AGE\napi            {b}  5d\n", 1),
    ],
)
def test_a_right_aligned_secret_column_is_hidden(table: str, values: int) -> None:
    a, b = "dnHm6yRAgT3APvzuzspeZQOl", "M3PAY56AfcNaZ"
    out = shown(table.format(a=a, b=b))
    assert a not in out and b not in out and out.count("[REDACTED:table_secret]") == values, out


@pytest.mark.parametrize(
    "table",
    [
        "NAME            TOKEN      AGE\napi            <none>      5d\nweb              true      12d\n",
        # the previous column's long value spilling under the secret column's name is that column's
        "NAME                     TOKEN   AGE\nvery-long-service-name-xyz    <none>  5d\n",
        "NAME    PASSWORD   AGE   X\nvery-long-name-spill-x  <none>  5d   1\n",
    ],
)
def test_a_right_aligned_column_without_a_secret_stays(table: str) -> None:
    assert shown(table) == table


def test_two_psql_results_one_after_the_other_keep_the_second_header() -> None:
    """Without a border, a rule under a row makes that row the next table's header, not a row to hide."""
    one = " n | password\n---+----------\n a | x9Kq2mLp7\n"
    out = shown(one + one.replace("7", "8"))
    assert out == (" n | password\n---+----------\n a | [REDACTED:table_secret]\n") * 2


@pytest.mark.parametrize(
    ("blanks", "separator"),
    [("\u00a0" * 6, "="), ("\u00a0" * 6, ":"), (" \u00a0 \u00a0 \u00a0", "="), (" " * 65, "="), (" " * 300, ":"),
     ("\t" * 70, "="),
     # a block's longest key: one to four no-break spaces (plain blanks there are code's)
     ("\u00a0", "="), ("\u00a0\u00a0\u00a0", ":"), ("  \u00a0", "=")],
)
def test_an_aligned_name_after_no_break_spaces_or_a_wide_column_is_hidden(blanks: str, separator: str) -> None:
    line = f"  password{blanks}{separator} {PW}"
    assert shown(line + "\n") == f"  password{blanks}{separator} [REDACTED:password]\n"


@pytest.mark.parametrize(
    "line",
    [
        "  password_min_length\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0= 12",
        "  secret_name" + " " * 80 + '= "orders-db-credentials"',
        "  token_ttl\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0: 1h",
        "password\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0policy is enforced: see the wiki",
    ],
)
def test_aligned_ordinary_lines_stay(line: str) -> None:
    assert shown(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"2026-12-01 loaded: password        = \"{PW}\"",
         '2026-12-01 loaded: password        = "[REDACTED:password]"'),
        (f"settings: user      = admin   password      = {PW}",
         "settings: user      = admin   password      = [REDACTED:password]"),
        (f"| db | password      : {PW}", "| db | password      : [REDACTED:password]"),
        # no separator: a name's cell, then its value's
        (f"config dump: user  admin   password      {PW}",
         "config dump: user  admin   password      [REDACTED:password]"),
        (f"[db] host  db.internal   api_token      {PW}   port  5432",
         "[db] host  db.internal   api_token      [REDACTED:token]   port  5432"),
    ],
)
def test_an_aligned_name_mid_line_is_hidden(line: str, expected: str) -> None:
    assert shown(line + "\n") == expected + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "x  password_min_length      = 12   token_ttl      : 1h  secret_name       = \"db-credentials\"",
        "see  password      : the vault entry for details",
        "x  password      expired   since  2026-11-30",
        "[db] host  db.internal   password      <from vault>   port  5432",
        "prod     db-password     Opaque     2     41d",
        "default  default-token-x2k4p     kubernetes.io/service-account-token   3   212d",
        "prod          service/vault-token-helper            ClusterIP   10.96.12.4      <none>        8200/TCP   5d",
    ],
)
def test_ordinary_aligned_columns_mid_line_stay(line: str) -> None:
    assert shown(line + "\n") == line + "\n"
