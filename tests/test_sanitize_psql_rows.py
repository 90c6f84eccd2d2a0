"""psql's ``name | value`` rows (the second acceptance check's ``table-psql-users`` and ``psql-expanded``): a row
whose first cell is a secret's name hides its second cell when the value looks like a secret, as the two-column
``key_value_line`` does for ``vault kv get``'s rows; the names and values of ordinary rows stay."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

SECRETS = ("Zq8!mL3vR9x#Tp2w", "hK4-pQ9_xW2.vN7s", "c2VjcmV0LXZhbHVlLTk4NzY1")

ROWS = (
    # \x (expanded display): "name | value", the names padded to one width
    "-[ RECORD 1 ]--+-----------------\nid             | 42\npassword_plain | {s}\ncreated_at     | 2026-11-30",
    # \x with a border (\pset border 2) and the aligned format's one-row table
    "| password_plain | {s} |",
    " password_plain | {s}",
    # a settings table read back (key | value), a token and an API key column
    " api_token      | {s}",
    "db_password|{s}",
)


@pytest.mark.parametrize("template", ROWS)
@pytest.mark.parametrize("secret", SECRETS)
def test_a_rows_secret_beside_its_name_is_hidden(template: str, secret: str) -> None:
    shown = sanitize_output(template.format(s=secret).encode()).text
    assert secret not in shown and secret[:6] not in shown and secret[-6:] not in shown, shown
    assert "password_plain" in shown or "api_token" in shown or "db_password" in shown


ORDINARY = (
    "-[ RECORD 1 ]-------+--------------\nname                | password_encryption\n"
    "setting             | scram-sha-256\n",
    " password_encryption | scram-sha-256",
    " password_min_length | 12",
    " token_expiry        | 2026-12-01 10:00:00+00",
    " password_plain      | ",
    " password_plain      | <null>",
    " api_token           | t",
    " usename | passwd\n---------+--------\n app     | ********\n(1 row)",
)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_rows_pass_byte_identical(text: str) -> None:
    assert sanitize_output(text.encode()).text == text
