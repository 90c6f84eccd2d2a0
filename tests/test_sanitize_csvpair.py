"""A headerless CSV row of a secret's name and its value, "," or ";" between them (issue #11, ``key_value_line``):
the value is hidden, alone or after other rows, while a header row of names and a row whose value is a word, a
flag or a number (the value-shape checks an assignment's value passes) come out byte-identical."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

SECRET = "Xk9mPq2vLr7w"


@pytest.mark.parametrize("text", [
    f"DB_PASSWORD,{SECRET}\n",
    f"API_TOKEN;{SECRET}\n",
    f"DB_HOST,db.internal\nDB_PASSWORD,{SECRET}\n",
    f"DB_HOST;db.internal\nAPI_TOKEN;{SECRET}\nDB_PORT;5432\n",
])
def test_a_secrets_name_and_its_value_as_a_headerless_csv_row_hide_the_value(text: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert SECRET not in shown and "[REDACTED:" in shown, shown
    # every other row, and the name's cell, are kept as they were
    for before, after in zip(text.splitlines(), shown.splitlines(), strict=True):
        if SECRET in before:
            assert after.startswith(before.split(SECRET)[0])
        else:
            assert after == before


@pytest.mark.parametrize("text", [
    "DB_PASSWORD,DB_USER,DB_HOST\n",
    "password,username,email\n",
    "DB_PASSWORD,required\n",
    "API_TOKEN,true\n",
    "SESSION_KEY,3600\n",
    "API_TOKEN;false\n",
    "DB_HOST,db.internal\nDB_PASSWORD,required\n",
])
def test_a_header_of_names_and_a_row_whose_value_is_a_word_flag_or_number_stay_byte_identical(text: str) -> None:
    assert sanitize_output(text.encode()).text == text
