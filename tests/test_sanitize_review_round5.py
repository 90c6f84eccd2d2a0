"""What a fresh-context review of issue #11's fifth round found (``revsan``): a Secret's data opened by a line holding
more than its key (a comment, an anchor, the whole mapping in flow style), a data key quoted in single quotes, and a
psql header whose names hold a character of several bytes. Each case leaked before its fix; the look-alikes stay."""

from __future__ import annotations

import base64
import random

import pytest

from bot.sanitize import sanitize_output

TOKEN = "c3VwZXItc2VjcmV0LXZhbHVl"  # base64, no shape any other detector knows
PW = "Xk9mQ2vL7pRt4wZ8"


def shown(text: str) -> str:
    return sanitize_output(text.encode()).text


@pytest.mark.parametrize(
    "opening",
    ["data: # base64-encoded", "data:   #", "data: &values", "data: !!map", "data: &values # c", "stringData: # plain"],
)
def test_a_secrets_data_opened_with_a_comment_an_anchor_or_a_tag_is_hidden(opening: str) -> None:
    text = f"apiVersion: v1\n{opening}\n  tls.key: {TOKEN}\n  ca.crt: YWJj\nkind: Secret\nmetadata:\n  name: web\n"
    out = shown(text)
    assert TOKEN not in out and "ca.crt: [REDACTED:k8s_secret]" in out
    assert out.startswith(f"apiVersion: v1\n{opening}\n") and "name: web" in out


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"data: {{tls.key: {TOKEN}, ca.crt: YWJj}}", "data: [REDACTED:k8s_secret]"),
        (f"stringData: {{url: {TOKEN}}}  # hand-written", "stringData: [REDACTED:k8s_secret]"),
    ],
)
def test_a_secrets_data_in_flow_style_on_its_line_is_hidden(line: str, expected: str) -> None:
    out = shown(f"apiVersion: v1\nkind: Secret\n{line}\nmetadata:\n  name: web\n")
    assert TOKEN not in out and expected in out.splitlines()


def test_indented_jsons_data_object_on_one_line_is_hidden() -> None:
    text = f'{{\n  "apiVersion": "v1",\n  "data": {{"tls.key": "{TOKEN}"}},\n  "kind": "Secret"\n}}\n'
    out = shown(text)
    assert TOKEN not in out and '  "data": [REDACTED:k8s_secret],' in out.splitlines()


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: v1\nkind: ConfigMap\ndata: {mode: fast, level: debug}\n",  # not a Secret
        "apiVersion: v1\nkind: Secret\ndata: {}\nmetadata:\n  name: empty\n",  # nothing in it
        "apiVersion: v1\nkind: ConfigMap\ndata: # settings\n  mode: fast\n",
    ],
)
def test_data_that_is_no_secrets_stays(text: str) -> None:
    assert shown(text) == text


def test_a_secrets_key_in_single_quotes_is_hidden() -> None:
    text = f"apiVersion: v1\nkind: Secret\nstringData:\n  'db.password': {TOKEN}\n  \"b\": {TOKEN}x\n"
    out = shown(text)
    assert TOKEN not in out and "  'db.password': [REDACTED:k8s_secret]" in out


@pytest.mark.parametrize(
    "table",
    [
        # psql pads by display width: "név" is 3 columns but 4 bytes, so the header's "|" stand a byte right of
        # the rule's "+"
        f" id | név | password         \n----+-----+------------------\n  1 | a   | {PW}\n",
        f"+----+-------+------------------+\n| id | größe | password         |\n+----+-------+------------------+\n"
        f"|  1 | 3     | {PW} |\n+----+-------+------------------+\n",
    ],
)
def test_a_psql_header_holding_a_wide_character_still_names_its_secret_column(table: str) -> None:
    out = shown(table)
    assert PW not in out and "[REDACTED:" in out


def test_a_psql_header_with_a_wide_character_and_no_secret_column_stays() -> None:
    table = " id | név | token_count \n----+-----+-------------\n  1 | a   |          12\n"
    assert shown(table) == table


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("alice@web-1:~$ echo $DB_PASSWORD", "echoed_secret_variable"),
        ("root@db-0:/# printenv PGPASSWORD", "echoed_secret_command"),
        ("[ec2-user@ip-10-0-0-1 ~]$ terraform output -raw admin_password", "echoed_secret_field"),
        ("(venv) dev@laptop:~/app$ echo $API_TOKEN", "echoed_secret_variable"),
        ('dev@laptop ~ $ echo "${VAULT_TOKEN}"', "echoed_secret_variable"),
    ],
)
def test_an_echoed_command_after_a_shells_own_prompt_withholds_its_value(command: str, kind: str) -> None:
    # A pasted terminal session shows the whole prompt, not a bare "$ "; the next prompt ends what is withheld.
    text = f"{command}\n{PW}\n\nalice@web-1:~$ ls\nREADME.md\n"
    assert shown(text) == f"{command}\n[REDACTED:{kind}]\n\nalice@web-1:~$ ls\nREADME.md\n"


@pytest.mark.parametrize(
    "text",
    [
        f"alice@web-1:~$ echo $HOME\n{PW}\n",
        f"alice@web-1:~$ ls -la\n{PW}\n",
        f"alice@example.com: signed in\n{PW}\n",
        "$2y$10$abcdefghijklmnopqrstuv\n",  # (not a prompt: a bcrypt hash stays a token's to judge)
    ],
)
def test_a_prompt_without_a_secret_command_keeps_what_follows(text: str) -> None:
    out = shown(text)
    assert out == text or "$2y$" in text and "echoed" not in out


def test_mysqls_password_hash_column_is_hidden() -> None:
    # select user, authentication_string from mysql.user: the hash an attacker cracks offline, as psql's rolpassword
    hashed = "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9"
    rule = "+------+-------------------------------------------+\n"
    table = (f"{rule}| user | authentication_string                     |\n{rule}| root | {hashed} |\n{rule}"
             "1 row in set (0.00 sec)\n")
    out = shown(table)
    assert hashed not in out and "| user | authentication_string" in out


def _base64_passwords_opening_with_a_slash(count: int) -> list[str]:
    """``openssl rand -base64`` passwords that start with "/" (one in 64), with two capitals, two lower-case letters
    and two digits in a part (what the path rule reads as base64: most of them)."""
    rng, found = random.Random(11), []
    while len(found) < count:
        value = "/" + base64.b64encode(rng.randbytes(rng.choice([12, 16, 24]))).decode()[1:]
        if any(sum(map(str.isupper, p)) > 1 and sum(map(str.islower, p)) > 1 and sum(map(str.isdigit, p)) > 1
               or "+" in p or "=" in p for p in value.split("/")):
            found.append(value)
    return found


@pytest.mark.parametrize("form", ["password: {}", "DB_PASSWORD={}", 'client_secret: "{}"', "PWD={}"])
def test_a_base64_password_that_starts_with_a_slash_is_no_path(form: str) -> None:
    values = _base64_passwords_opening_with_a_slash(100)
    shown_values = [value for value in values if value in shown(form.format(value))]
    assert not shown_values


@pytest.mark.parametrize(
    "line",
    ["PWD=/home/deploy", "PWD=/home/Deploy/App", "PWD=/Users/JohnSmith2/Projects",
     "PWD=/var/lib/docker/overlay2/3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c/merged", "PWD=/srv/releases/20240101T1200Z",
     "password_file: /run/secrets/db_password", "sudo: alice : TTY=pts/0 ; PWD=/home/alice/k8s ; USER=root"],
)
def test_paths_under_a_passwords_name_stay(line: str) -> None:
    assert shown(line) == line
