# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The leaks ``leaks16`` closed (issue #11): double-quoted values longer than a detector's 256-character window under
a secret's name; on approval cards, an empty passphrase shown as a secret (``ssh-keygen -N ""``) and a name split by an
invisible character (``--from-literal=pass\u200bword=PW``) that hid its value from the detectors. Each family's cases (``tests/corpora/leaks_leaks16.py``, also run through ``fisk-chatops exec`` by
``tests/test_corpora_exec.py``) are hidden whole, and its look-alikes (``tests/corpora/benign/leaks16_lookalikes.txt``)
come out byte-identical."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from bot.sanitize import display_command_line, redact_argv, sanitize_output
from tests.corpora.leak_case import Leak
from tests.corpora.leaks_leaks16 import LEAKS16_LEAKS

LOOKALIKES = (Path(__file__).parent / "corpora" / "benign" / "leaks16_lookalikes.txt").read_text()


def _cases(*names: str) -> list[Leak]:
    found = [leak for leak in LEAKS16_LEAKS if leak.family.removeprefix("leaks16: ") in names]
    assert len(found) == len(names)
    return found


def _hidden(leak: Leak) -> None:
    shown = sanitize_output(leak.text.encode()).text
    assert "[REDACTED:" in shown, shown
    for secret in leak.secrets:  # the whole value: no run of 12 of its characters is left, at either end or inside
        assert secret not in shown, (secret, shown)
        assert [secret[i : i + 12] for i in range(len(secret) - 11) if secret[i : i + 12] in shown] == [], shown
    for before, after in zip(leak.text.splitlines(), shown.splitlines(), strict=True):
        if not any(secret in before for secret in leak.secrets):
            assert after == before  # only the secrets' lines change


def _whole(text: str) -> None:
    assert sanitize_output(text.encode()).text == text


LONG_VALUES = ("Django SECRET_KEY of 300 characters", "JSON private_key without PEM armour",
               "a token of 257 characters in an env file", "a token of exactly 256 characters", "YAML client_secret",
               "aligned terraform state show", "single-quoted python setting", "container env pair in JSON",
               ".NET appSettings", "a flag's quoted value in ps output",
               "a JSON string with an escaped quote past the window", "mysql -p with a long quoted password")


@pytest.mark.parametrize("leak", _cases(*LONG_VALUES), ids=lambda leak: leak.family)
def test_a_quoted_value_longer_than_the_window_is_hidden_whole(leak: Leak) -> None:
    _hidden(leak)


TERRAFORM = ("terraform output -json sensitive object", "terraform output -json sensitive map",
             "terraform output -json sensitive list of objects", "terraform show -json, one line",
             "terraform state pull, sensitive after the value",
             "terraform plan -json output change marked after_sensitive")


@pytest.mark.parametrize("leak", _cases(*TERRAFORM), ids=lambda leak: leak.family)
def test_every_leaf_of_a_sensitive_terraform_output_is_hidden_and_other_outputs_stay(leak: Leak) -> None:
    _hidden(leak)


def test_a_sensitive_output_nested_in_an_ordinary_one_hides_only_its_own_leaves() -> None:
    text = ('{"outer": {"sensitive": false, "value": {"region": "eu-west-1",\n'
            '  "inner": {"sensitive": true, "value": {"token": "Zq9mW3xR7tY2uI8o", "ids": [7, "a-b"]}}},\n'
            '  "type": "object"}}\n')
    shown = sanitize_output(text.encode()).text
    assert "Zq9mW3xR7tY2uI8o" not in shown and '"a-b"' not in shown and "7," not in shown, shown
    assert '"region": "eu-west-1"' in shown and '"type": "object"' in shown, shown


def test_what_only_looks_like_a_sensitive_output_is_left_alone() -> None:
    for text in ('{"sensitive": true, "value": ""}\n', '{"sensitive": true, "value": null, "note": "x"}\n',
                 '{"sensitive": "true", "value": "shown: not the boolean"}\n',
                 '{"a": {"sensitive": true}, "value": "a sibling\'s value, not the flagged object\'s"}\n',
                 'the "sensitive": true flag hides {"value": "nothing here"} in prose\n'):
        _whole(text)


@pytest.mark.parametrize("length", [255, 256, 257, 511, 4096, 100_000])
def test_every_length_of_a_quoted_secret_is_hidden_to_its_closing_quote(length: int) -> None:
    value = ("Xk9pQ2vL7mN4rT8w" * (length // 16 + 1))[:length]
    for text in (f'SECRET_KEY="{value}"\nNEXT=1\n', f'{{"private_key": "{value}", "next": 1}}\n',
                 f"api_token: '{value}'\n"):
        shown = sanitize_output(text.encode(), output_limit=1 << 20).text
        assert value[:12] not in shown and value[-12:] not in shown and "Xk9pQ2vL7mN4" not in shown, shown[:200]
        assert shown.endswith(('"\nNEXT=1\n', '", "next": 1}\n', "'\n")), shown[-80:]  # what follows stays


def test_long_quoted_strings_under_ordinary_names_and_their_look_alikes_are_byte_identical() -> None:
    _whole(LOOKALIKES)
    for line in LOOKALIKES.splitlines(keepends=True):  # each alone too: a line at the text's start
        _whole(line)


ONEPASSWORD = ("1Password field JSON, value before its type", "1Password fields reshaped by jq, pretty",
               "op v1 section field", "1Password fields as a table, value after its type",
               "1Password fields as TSV, value before its type", "a concealed value alone beside its type")


@pytest.mark.parametrize("leak", _cases(*ONEPASSWORD), ids=lambda leak: leak.family)
def test_a_concealed_field_is_hidden_whichever_side_of_its_type_its_value_stands(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("row", ["password  CONCEALED  Zq9mW3xR7tY2uI8o\n", "Zq9mW3xR7tY2uI8o  CONCEALED\n",
                                 "  credential   CONCEALED   Zq9mW3xR7tY2uI8o  op://Infra/x/credential\n",
                                 "password\tCONCEALED\tZq9mW3xR7tY2uI8o\r\n", "CONCEALED  Zq9mW3xR7tY2uI8o\n",
                                 "db  Zq9mW3xR7tY2uI8o  CONCEALED\n"])
def test_every_row_shape_of_a_concealed_field_hides_its_value(row: str) -> None:
    shown = sanitize_output(row.encode()).text
    assert "Zq9mW3xR7tY2uI8o" not in shown and "CONCEALED" in shown and "[REDACTED:" in shown, shown



@pytest.mark.parametrize("leak", _cases("psql --csv, a password cell over two lines",
                                        "CSV export, a multi-line note before the token column"),
                         ids=lambda leak: leak.family)
def test_a_csv_record_whose_quoted_cell_holds_a_newline_is_read_across_its_lines(leak: Leak) -> None:
    shown = sanitize_output(leak.text.encode()).text
    assert [s for s in leak.secrets if s in shown] == [] and "[REDACTED:" in shown, shown


def test_a_quoted_cell_that_never_closes_ends_the_table_as_before() -> None:
    _whole('user,comment\nops,"an open quote\nand more text\n')
    shown = sanitize_output(b'user,password\nops,"Xk9pQ2vL\n' + b"x\n" * 10_000, output_limit=1 << 20).text
    assert shown.endswith("\n" + "x\n" * 10_000)  # read on 64 lines at most, then the table ends: the rows stay

# Cards: an empty value is no secret; a name is judged as it reads, without the characters that draw nothing
EMPTY_VALUES = [
    ["ssh-keygen", "-t", "ed25519", "-N", "", "-f", "/tmp/deploy_key"],
    ["ssh-keygen", "-t", "ed25519", "-N", '""', "-C", "ci"],
    ["ssh-keygen", "-p", "-P", "", "-N", "", "-f", "key"],
    ["sshpass", "-p", "", "ssh", "ops@db-3"],
    ["opsctl", "user", "create", "--password", "", "--name", "ci"],
    ["opsctl", "user", "create", "--password", "''"],
    ["curl", "-u", "ops:", "https://api.internal/health"],
]


@pytest.mark.parametrize("argv", EMPTY_VALUES, ids=" ".join)
def test_an_empty_value_after_a_password_flag_is_shown_as_it_is(argv: list[str]) -> None:
    shown, revealed = display_command_line(argv)
    assert "[REDACTED:" not in shown and not revealed, shown
    assert redact_argv(argv) == argv


@pytest.mark.parametrize("argv", [["ssh-keygen", "-N", "ab", "-f", "k"], ["ssh-keygen", "-N", " ", "-f", "k"],
                                  ["sshpass", "-p", '"x"', "ssh", "h"], ["opsctl", "--password", "0"]],
                         ids=" ".join)
def test_a_short_value_after_a_password_flag_is_still_hidden(argv: list[str]) -> None:
    shown = shlex.split(display_command_line(argv)[0])
    assert re.fullmatch(r"\[REDACTED:flag_value#[0-9a-f]{6}\]", shown[2]) and shown[:2] + shown[3:] == argv[:2] + argv[3:]


# Characters that draw nothing: zero-width space, non-joiner and joiner, word joiner, soft hyphen, byte-order mark,
# a variation selector, a combining mark, a Hangul filler, a tag character
DRAWLESS = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\ufe0f", "\u0301", "\u3164", "\U000e0041"]
PW = "Xk9pQ2vL7mN4rT8w"


def _split_names(c: str) -> list[list[str]]:
    return [
        ["kubectl", "create", "secret", "generic", "db", f"--from-literal=pass{c}word={PW}"],
        ["opsctl", "deploy", f"--pass{c}word", PW],
        ["opsctl", "deploy", f"--api{c}-key={PW}"],
        ["opsctl", "deploy", f"--to{c}ken", PW, "--env", "prod"],
        ["env", f"DB_PASS{c}WORD={PW}", "opsctl", "migrate"],
        ["opsctl", "config", "set", f"client_sec{c}ret={PW}"],
    ]


@pytest.mark.parametrize("char", DRAWLESS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_name_split_by_an_invisible_character_still_hides_its_value(char: str) -> None:
    for argv in _split_names(char):
        shown, revealed = display_command_line(argv)
        assert PW not in shown and "[REDACTED:" in shown and revealed, shown
        assert char not in shown  # escaped, not raw
        assert PW not in " ".join(redact_argv(argv))


def test_the_invisible_character_of_a_hidden_name_stays_escaped_where_it_stands() -> None:
    shown, revealed = display_command_line(["kubectl", "create", "secret", "generic", "db",
                                            f"--from-literal=pass\u200bword={PW}"])
    assert revealed and "'--from-literal=pass\\u200bword=[REDACTED:password#" in shown, shown
    shown, _ = display_command_line(["opsctl", "--to\u2060ken", PW, "--env", "prod"])
    assert "'--to\\u2060ken' '[REDACTED:flag_value#" in shown and shown.endswith("--env prod"), shown


@pytest.mark.parametrize("argv", [["opsctl", "restart", "web\u200b1"], ["opsctl", "--na\u200bme", "billing-api"],
                                  ["opsctl", "note", "caf\u0065\u0301 opened"], ["opsctl", "--label", "pass\u200bthrough"]],
                         ids=lambda argv: argv[1])
def test_ordinary_items_with_invisible_characters_stay_readable_with_the_warning(argv: list[str]) -> None:
    shown, revealed = display_command_line(argv)
    assert "[REDACTED:" not in shown and revealed, shown
    assert redact_argv(argv) == argv
