# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The leaks ``leaks15`` closed (issue #11): a bare secret printed after an echoed command or a REPL expression whose
last words name it (``bot/sanitize/echoed_names.py``), and a strong password under a name ending in a rule's word
(``secret_names.names_a_rule``, ``bot/sanitize/rule_values.py``) or written in angle brackets (``shapes.trivial``), CSV separated by semicolons or of names and values
(``delimited_tables.py``) and a headerless row of a name, a value and a flag (``key_value_line``). Each family's cases (``tests/corpora/leaks_leaks15.py``, also
run through ``fisk-chatops exec`` by ``tests/test_corpora_exec.py``) are hidden, and its look-alikes
(``tests/corpora/benign/leaks15_lookalikes.txt``) come out byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.cut_context import tail_context, withhold_leading_lines
from tests.corpora.leak_case import Leak
from tests.corpora.leaks_leaks15 import LEAKS15_LEAKS
from tests.support.sanitized import assert_hidden, assert_whole

LOOKALIKES = (Path(__file__).parent / "corpora" / "benign" / "leaks15_lookalikes.txt").read_text()


def _family(prefix: str) -> list[Leak]:
    found = [leak for leak in LEAKS15_LEAKS if leak.family.removeprefix("leaks15: ").startswith(prefix)]
    assert found
    return found


def _hidden(leak: Leak) -> None:
    assert_hidden(leak.text, *leak.secrets)


def _whole(text: str) -> None:
    assert_whole(text)


@pytest.mark.parametrize("leak", _family("echoed"), ids=lambda leak: leak.family)
def test_a_bare_secret_after_an_echoed_command_whose_last_words_name_it_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", [*_family("python"), *_family("IPython"), *_family("irb"), *_family("node")],
                         ids=lambda leak: leak.family)
def test_a_secret_a_repl_or_an_interpreter_prints_for_an_expression_naming_it_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", _family("rule word"), ids=lambda leak: leak.family)
def test_a_strong_password_under_a_name_ending_in_a_rules_word_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("name", ["PASSWORD_STRENGTH", "password_validation", "DB_PASSWORD_POLICY", "tokenValidator",
                                  "secret-policies", "AUTH_TOKEN_MODE", "api_key_complexity"])
def test_a_rules_name_shows_its_setting_and_hides_a_password(name: str) -> None:
    for setting in ("strong", "3", "MEDIUM", "strict-v2", "DefaultPolicy2", "^[A-Za-z0-9]{12,}$", "high"):
        _whole(f"{name}={setting}\n{name}: {setting}\n")
    for secret in ("Sup3rS3cr3t!", "Xk9#mP2$vLq7", "Qm7vX2kL9pR4wT8zN3bH"):
        assert secret not in sanitize_output(f"{name}={secret}\n{name}: {secret}\n".encode()).text


@pytest.mark.parametrize("leak", _family("angle brackets"), ids=lambda leak: leak.family)
def test_a_real_value_written_in_angle_brackets_is_hidden(leak: Leak) -> None:
    _hidden(leak)


def test_placeholders_in_angle_brackets_stay() -> None:
    for placeholder in ("<your-password>", "<redacted>", "<none>", "<YOUR_API_TOKEN>", "<DbPassword1>", "<nil>",
                        "<password>", "<db_password_2>", "<Your-Password-Here>"):
        _whole(f"password={placeholder}\nDB_PASSWORD: {placeholder}\n")
    _whole("JWT_SECRET=<generate with: openssl rand -hex 32>\n")


@pytest.mark.parametrize("leak", _family("csv"), ids=lambda leak: leak.family)
def test_csv_with_semicolons_and_csv_of_names_and_values_hide_the_secret_cells(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", _family("aligned"), ids=lambda leak: leak.family)
def test_a_headerless_row_of_a_name_its_value_and_a_flag_hides_the_value(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("separator", [",", ";", "\t", "|"])
def test_names_and_values_rows_are_judged_by_their_name_under_any_delimiter(separator: str) -> None:
    secret = "Qm7vX2kL9pR4wT8z"
    rows = [["Name", "Value", "Sticky"], ["LOG_LEVEL", "debug", "false"], ["TOKEN_TTL", "3600", "true"],
            ["DB_PASSWORD_FILE", "/run/secrets/db", "false"], ["SMTP_PASSWORD", secret, "false"]]
    text = "".join(separator.join(row) + "\n" for row in rows)
    shown = sanitize_output(text.encode()).text
    assert secret not in shown and shown.splitlines()[:4] == text.splitlines()[:4], shown


@pytest.mark.parametrize("leak", _family("twilio"), ids=lambda leak: leak.family)
def test_a_twilio_auth_token_beside_its_account_sid_is_hidden(leak: Leak) -> None:
    _hidden(leak)


def test_the_lookalikes_pass_byte_identical() -> None:
    _whole(LOOKALIKES)


@pytest.mark.parametrize("command", ["$ cat /srv/app/api.pass", "$ sudo wg show wg1 private-key",
                                     "$ cloudflared tunnel token staging", "$ gh auth token", ">>> settings.SECRET_KEY",
                                     ">>> print(os.environ['DB_PASSWORD'])", "root@db:/# cat /root/.mysql.password"])
def test_only_a_line_shaped_like_a_bare_secret_is_withheld_after_such_a_command(command: str) -> None:
    """The evidence is a word, weaker than a tool's shape: a sentence, a number, a boolean, a path, a file's name
    or a structure printed after the command stays; a generated-looking word does not."""
    ordinary = ("True\n50\nNone\n[]\n/etc/app/api.pass\nkey-2024-01.pem\nsecret/db-pass2\nno such file or directory\n"
                '"default",\n{"a": "b"}\nDESCRIPTION:\n')
    _whole(f"{command}\n{ordinary}")
    secret = "Qm7vX2kL9pR4wT8zN3bH"
    shown = sanitize_output(f"{command}\n{ordinary}{secret}\n'{secret}'\n".encode()).text
    assert secret not in shown and shown.startswith(f"{command}\n{ordinary}"), shown


def test_a_capped_outputs_tail_withholds_only_the_bare_secret_lines_such_a_command_printed() -> None:
    """The cap's head ends with the command, the tail starts with what it printed (``cut_context``): the same
    shape check applies there."""
    context = tail_context(b"ordinary line\n" * 10 + b"$ cat /srv/app/api.pass\n")
    assert context.withheld is not None
    tail, count = withhold_leading_lines("Qm7vX2kL9pR4wT8zN3bH\nall good here\nTrue\n$ ls\nQm7vX2kL9pR4wT8zN3bH\n",
                                         context.withheld)
    assert (tail, count) == ("[REDACTED:echoed_named_file]\nall good here\nTrue\n$ ls\nQm7vX2kL9pR4wT8zN3bH\n", 1)


def test_the_next_prompt_ends_what_a_command_withholds() -> None:
    secret = "Qm7vX2kL9pR4wT8zN3bH"
    _whole(f">>> settings.SECRET_KEY\n'[redacted]'\n>>> settings.ALLOWED_HOSTS\n'{secret}'\n")
    _whole(f"$ wg show wg0 private-key\n(none)\n$ wg show wg0 listen-port\n{secret}\n")
