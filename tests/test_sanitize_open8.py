"""The leaks the fifth round's fresh-context review found and left open (``leaks8``; corpus
``tests/corpora/leaks_open8.py``), each pinned where the sanitizer decides it: what is hidden, what around it stays
visible, and the look-alikes that stay whole (more in ``tests/corpora/benign/open8_lookalikes.txt``)."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

PW = "Xk9mQ2vL7pRt4wZ8"


def shown(text: str) -> str:
    return sanitize_output(text.encode()).text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("DB_PASSWORD += s3cr3t", "DB_PASSWORD += [REDACTED:password]"),
        ("DB_PASSWORD != s3cr3t", "DB_PASSWORD != [REDACTED:password]"),
        (f"API_TOKEN != {PW}", "API_TOKEN != [REDACTED:token]"),
        (f"export SECRET_KEY += {PW}", "export SECRET_KEY += [REDACTED:key]"),
        ("DB_PASSWORD != s3cr3t   # from the vault", "DB_PASSWORD != [REDACTED:password]   # from the vault"),
    ],
)
def test_makes_append_and_shell_assignments_hide_their_value(line: str, expected: str) -> None:
    assert shown(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD != vault kv get -field=password secret/db",  # a command: its output is never printed here
        "DB_PASSWORD != cat /run/secrets/db_password",
        "DB_PASSWORD += $(shell cat /run/secrets/db_password)",
        "SECRET_FILES += secrets.yaml",
        "PASSWORD_FILE != mktemp",
        "    total_tokens += usage.output_tokens",
    ],
)
def test_makes_look_alikes_stay(line: str) -> None:
    assert shown(line) == line


def test_a_plans_new_value_after_a_sensitive_one_is_hidden_even_after_the_same_line_without_a_change() -> None:
    text = ('      ~ db_password = (sensitive value)\n      ~ db_password = (sensitive value) -> "s3cr3t"\n'
            '      ~ password                 = (sensitive value)\n'
            f'      ~ password                 = (sensitive value) -> "{PW}"\n')
    assert shown(text) == ('      ~ db_password = (sensitive value)\n'
                           '      ~ db_password = (sensitive value) -> "[REDACTED:password]"\n'
                           '      ~ password                 = (sensitive value)\n'
                           '      ~ password                 = (sensitive value) -> "[REDACTED:password]"\n')


@pytest.mark.parametrize(
    "line",
    ["      ~ password = (sensitive value) -> (sensitive value)", '      ~ name = (sensitive value) -> "orders"'],
)
def test_a_sensitive_values_look_alikes_stay(line: str) -> None:
    assert shown(line) == line


def test_a_one_line_json_secrets_value_holding_escaped_quotes_and_braces_is_hidden_whole() -> None:
    line = ('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"app"},"stringData":{"db-password":"ab\\"' + PW
            + '","config.json":"{\\"db\\":{\\"pw\\":\\"' + PW + '\\"}}"},"type":"Opaque"}')
    assert shown(line) == ('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"app"},"stringData":{"db-password":'
                           '"[REDACTED:k8s_secret]","config.json":"[REDACTED:k8s_secret]"},"type":"Opaque"}')


def test_a_config_maps_escaped_json_stays() -> None:
    line = '{"apiVersion":"v1","kind":"ConfigMap","data":{"config.json":"{\\"db\\":{\\"host\\":\\"db.internal\\"}}"}}'
    assert shown(line) == line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"id                  s.{PW}abcdefgh\npolicies            [root]",
         "id                  [REDACTED:vault_token]\npolicies            [root]"),
        ("id                  hvs.CAESIabcdefghijklmn", "id                  [REDACTED:vault_token]"),
        (f'    "id": "s.{PW}abcdefgh",', '    "id": "[REDACTED:vault_token]",'),
    ],
)
def test_vault_token_lookups_id_is_hidden(text: str, expected: str) -> None:
    assert shown(text) == expected


@pytest.mark.parametrize(
    "line",
    ["id                  n/a", "accessor            2qeWnVKRzFxDXG0Y5y9mZ4tU", "id   s.short", '"id": "sess_01HZY3"'],
)
def test_vault_token_lookups_other_rows_stay(line: str) -> None:
    assert shown(line) == line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"password": "a\\"bcdef"}', '{"password": "[REDACTED:password]"}'),
        ('{"password": "\\"bcdef"}', '{"password": "[REDACTED:password]"}'),
        ('password: "a\\"bcdef"', 'password: "[REDACTED:password]"'),
        # the same line twice: the second is judged again, never taken from a verdict on its part before the escape
        ('{"password": "a\\"bcdef"}\n{"password": "a\\"bcdef"}',
         '{"password": "[REDACTED:password]"}\n{"password": "[REDACTED:password]"}'),
        # read on past the value's bound to the string's real end
        ('{"password": "a\\"' + "b\\\"" * 200 + '"} tail', '{"password": "[REDACTED:password]"} tail'),
    ],
)
def test_a_json_string_with_a_short_part_before_an_escaped_quote_is_judged_whole(text: str, expected: str) -> None:
    assert shown(text) == expected


@pytest.mark.parametrize(
    "line",
    ['{"password": "\\\\"}', '{"name": "a\\"bcdef"}', 'msg="password: \\"x\\"" ', '{"password_hint": "a\\"bc"}'],
)
def test_escaped_quotes_look_alikes_stay(line: str) -> None:
    assert shown(line) == line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"bash-5.1$ echo $DB_PASSWORD\n{PW}\nbash-5.1$ exit\n",
         "bash-5.1$ echo $DB_PASSWORD\n[REDACTED:echoed_secret_variable]\nbash-5.1$ exit\n"),
        (f"sh-4.4# cat /run/secrets/db_password\n{PW}\nsh-4.4# exit\n",
         "sh-4.4# cat /run/secrets/db_password\n[REDACTED:echoed_secret_file]\nsh-4.4# exit\n"),
        (f"$ cat /run/secrets/db_password\n{PW}\n$ ls\n",
         "$ cat /run/secrets/db_password\n[REDACTED:echoed_secret_file]\n$ ls\n"),
        (f"# cat /etc/app/api_token.txt | base64 -d\n{PW}\n",
         "# cat /etc/app/api_token.txt | base64 -d\n[REDACTED:echoed_secret_file]\n"),
    ],
)
def test_a_secret_printed_after_a_default_prompt_or_by_cat_is_hidden(text: str, expected: str) -> None:
    assert shown(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "bash-5.1$ echo $HOME\n/root\n",
        "bash-5.1$ ls /run/secrets\ndb_password\n",
        "$ cat /var/run/secrets/kubernetes.io/serviceaccount/namespace\nprod\n",
        "$ cat tokens.py\nimport os\n",
        "$ cat migrations/0042_password_hash.sql\nALTER TABLE users ADD COLUMN password_hash text;\n",
        "$ head -1 /etc/passwd\nroot:x:0:0:root:/root:/bin/bash\n",
        "$ cat settings.py | grep -n -i -E 'secret|password|key'\n12:DEBUG = False\n",
    ],
)
def test_a_default_prompts_and_cats_look_alikes_stay(text: str) -> None:
    assert shown(text) == text


@pytest.mark.parametrize("blank", ["\u2007", "\u202f", "\u3000"])
def test_names_aligned_with_other_unicode_spaces_are_hidden(blank: str) -> None:
    text = f"db_host{blank * 7}= db.internal\ndb_password{blank * 3}= {PW}\n    password{blank * 2}: {PW}\n"
    assert shown(text) == (f"db_host{blank * 7}= db.internal\ndb_password{blank * 3}= [REDACTED:password]\n"
                           f"    password{blank * 2}: [REDACTED:password]\n")


@pytest.mark.parametrize("blank", ["\u2007", "\u202f", "\u3000"])
def test_other_unicode_spaces_look_alikes_stay(blank: str) -> None:
    text = (f"token_ttl{blank * 5}= 1h\npassword_policy{blank * 2}: strict\n"
            f"secret_name{blank * 3}= orders-db-credentials\n")
    assert shown(text) == text


def test_a_sqlite_box_tables_secret_columns_are_hidden() -> None:
    text = ("┌────┬───────┬──────────────────┐\n│ id │ user  │     password     │\n├────┼───────┼──────────────────┤\n"
            f"│ 1  │ alice │ {PW} │\n│ 2  │ bob   │ s3cr3t           │\n│ 3  │ carol │                  │\n"
            "└────┴───────┴──────────────────┘\nafter\n")
    assert shown(text) == (
        "┌────┬───────┬──────────────────┐\n│ id │ user  │     password     │\n├────┼───────┼──────────────────┤\n"
        "│ 1  │ alice │ [REDACTED:table_secret] │\n│ 2  │ bob   │ [REDACTED:table_secret]           │\n"
        "│ 3  │ carol │                  │\n└────┴───────┴──────────────────┘\nafter\n")


@pytest.mark.parametrize(
    "text",
    [
        "┌────┬───────┐\n│ id │ role  │\n├────┼───────┤\n│ 1  │ admin │\n└────┴───────┘\n",
        "│ password │ x │\nno rule under it\n",
        "┌────┬──────────┐\n│ id │ password │\n├────┼──────────┤\n│ 1  │ ******** │\n└────┴──────────┘\n",
    ],
)
def test_box_tables_without_a_secret_stay(text: str) -> None:
    assert shown(text) == text


def test_mysql_batch_modes_secret_columns_are_hidden() -> None:
    text = (f"id\tuser\tpassword\tapi_token\n1\talice\t{PW}\t{PW}\n2\tbob\ts3cr3t\tdisabled\n"
            "3\tcarol\tNULL\tNULL\n\nafter\n")
    assert shown(text) == ("id\tuser\tpassword\tapi_token\n1\talice\t[REDACTED:table_secret]\t[REDACTED:table_secret]\n"
                           "2\tbob\t[REDACTED:table_secret]\tdisabled\n3\tcarol\tNULL\tNULL\n\nafter\n")


@pytest.mark.parametrize(
    "text",
    [
        "id\tname\tstatus\n1\tweb\tok\n",
        "id\tuser\tpassword_changed\n1\talice\t2026-11-30\n",
        "id\tuser\tpassword\n1\talice\t********\n2\tbob\tNULL\n",
        "go test\tpassword\tok\n",
    ],
)
def test_tab_separated_look_alikes_stay(text: str) -> None:
    assert shown(text) == text
