# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The leaks ``leaks10`` closed (issue #11): a NATS nkey seed printed alone, tab-separated key and value cells in the
middle of a line, CSV and ``psql -A`` tables with a secret's column, ``║`` double-line boxes, box tables of names and
values (``doppler secrets``), accept4's az acr ``password2`` and 1Password's CONCEALED field. Each family's cases
(``tests/corpora/leaks_tables10.py``, also run through ``fisk-chatops exec`` by ``tests/test_corpora_exec.py``) are
hidden, and its look-alikes (``tests/corpora/benign/leaks10_lookalikes.txt``) come out byte-identical."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bot.sanitize import sanitize_output
from tests.corpora.leak_case import Leak
from tests.corpora.leaks_tables10 import TABLES10_LEAKS
from tests.corpora.nkeys import public_key, seed
from tests.support.sanitized import assert_hidden, assert_whole

LOOKALIKES = (Path(__file__).parent / "corpora" / "benign" / "leaks10_lookalikes.txt").read_text()


def _cases(*names: str) -> list[Leak]:
    found = [leak for leak in TABLES10_LEAKS if leak.family.removeprefix("leaks10: ") in names]
    assert len(found) == len(names)
    return found


def _hidden(leak: Leak) -> None:
    assert_hidden(leak.text, *leak.secrets)


def _whole(text: str) -> None:
    assert_whole(text)


@pytest.mark.parametrize("leak", _cases("nsc generate nkey", "nkey seed file", "nkey seed in an env line and a config",
                                        "nkey seed in a log line"), ids=lambda leak: leak.family)
def test_a_nats_seed_printed_alone_is_hidden(leak: Leak) -> None:
    _hidden(leak)


def test_every_nkey_seed_type_is_hidden_and_public_keys_and_bad_checksums_stay() -> None:
    rng = random.Random(4)
    for kind in ("user", "account", "operator", "server", "cluster"):
        key = seed(kind, rng)
        assert key not in sanitize_output(f"{key}\n".encode()).text
        _whole(f"{public_key(kind, rng)}\n")
    good = seed("user", rng)
    broken = good[:-1] + ("A" if good[-1] != "A" else "B")  # its CRC no longer holds: an uppercase word, no seed
    _whole(f"{broken}\n")
    _whole("SUAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n")
    _whole(f"x{good}\n")  # glued into a longer word: no seed of its own


@pytest.mark.parametrize("leak", _cases("tab cells after a Secret's name", "tab cells in a config dump",
                                        "tab cells of a token"), ids=lambda leak: leak.family)
def test_a_tab_separated_key_and_value_mid_line_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", _cases("psql --csv", "AWS IAM credentials.csv", "sqlite3 -csv -header"),
                         ids=lambda leak: leak.family)
def test_a_csv_table_with_a_secret_column_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", _cases("PrettyTable DOUBLE_BORDER", "tabulate double_outline", "tabulate double_grid"),
                         ids=lambda leak: leak.family)
def test_a_double_line_box_table_with_a_secret_column_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", _cases("psql -A", "psql -A with more columns"), ids=lambda leak: leak.family)
def test_psql_unaligned_output_with_a_secret_column_is_hidden(leak: Leak) -> None:
    _hidden(leak)


@pytest.mark.parametrize("leak", _cases("doppler secrets", "doppler secrets with computed values"),
                         ids=lambda leak: leak.family)
def test_a_box_table_of_names_and_values_hides_the_secrets_values(leak: Leak) -> None:
    _hidden(leak)


def test_an_aligned_table_of_names_and_values_hides_the_secrets_values() -> None:
    _hidden(_cases("az webapp config appsettings list -o table")[0])


def test_the_look_alikes_of_every_family_are_byte_identical() -> None:
    _whole(LOOKALIKES)
    for paragraph in LOOKALIKES.split("\n\n"):  # each alone too: a table's header at the text's start
        _whole(paragraph + "\n")


def test_a_numbered_secrets_name_holds_a_secret_and_other_numbered_names_do_not() -> None:
    text = ('{"passwords": [{"name": "password", "value": "Zq9mW3xR7tY2uI8o"},\n'
            '  {"name": "password2", "value": "Kx8nV2cB5mL1qW4e"}]}\nDB_PASSWORD2=hunter22\n')
    shown = sanitize_output(text.encode()).text
    assert "Zq9mW3xR7tY2" not in shown and "Kx8nV2cB5mL1" not in shown and "hunter22" not in shown, shown
    _whole('pass1: ok\npass2: ok\nkey1=value1 key2=value2\nsha256: 4f3c2b1a0e9d8c7b\n{"name": "pwd2", "value": "/srv"}\n')


def test_a_1password_concealed_field_is_hidden_and_its_other_fields_stay() -> None:
    compact = ('{"id":"x","fields":[{"id":"username","type":"STRING","purpose":"USERNAME","label":"username",'
               '"value":"ops@acme.io"},{"id":"credential","type":"CONCEALED","label":"credential",'
               '"value":"Zq9mW3xR7tY2uI8oP4aS","reference":"op://Infra/Cloudflare/credential"}]}\n')
    sectioned = ('    {\n      "id": "kx3",\n      "section": {\n        "id": "api"\n      },\n      "type": "CONCEALED",\n'
                 '      "label": "api key",\n      "value": "hunter2-Prod",\n      "reference": "op://Infra/API/api/api key"\n    }\n')
    for text, secret in ((compact, "Zq9mW3xR7tY2"), (sectioned, "hunter2-Prod")):
        shown = sanitize_output(text.encode()).text
        assert secret not in shown and "[REDACTED:" in shown, shown
    assert "ops@acme.io" in sanitize_output(compact.encode()).text
    _whole('{"id": "notes", "type": "STRING", "label": "notes", "value": "rotated 2026-11-30"}\n'
           '{"id": "password", "type": "CONCEALED", "label": "password", "value": ""}\n'
           'Field types: STRING, CONCEALED, EMAIL, URL, OTP.\n')
