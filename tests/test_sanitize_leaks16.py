# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The leaks ``leaks16`` closed (issue #11): double-quoted values longer than a detector's 256-character window under
a secret's name. Each family's cases (``tests/corpora/leaks_leaks16.py``, also run through ``fisk-chatops exec`` by
``tests/test_corpora_exec.py``) are hidden whole, and its look-alikes (``tests/corpora/benign/leaks16_lookalikes.txt``)
come out byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.sanitize import sanitize_output
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
