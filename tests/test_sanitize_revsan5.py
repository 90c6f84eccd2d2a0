"""What ``revsan5``'s review of issue #11's round found (``tests/corpora/leaks_revsan5.py``, also run through
``fisk-chatops exec`` by ``tests/test_corpora_exec.py``): each case's secrets hidden, every other line unchanged; and
ordinary tab-separated lines that name a secret's setting with a value that is no secret stay whole."""

from __future__ import annotations

import random

import pytest

from bot.sanitize import delimited_tables, display_command_line, sanitize_output
from tests.corpora.leak_case import Leak
from tests.corpora.leaks_revsan5 import REVSAN5_LEAKS


@pytest.mark.parametrize("leak", REVSAN5_LEAKS, ids=lambda leak: leak.family)
def test_revsan5_leaks_hidden(leak: Leak) -> None:
    shown = sanitize_output(leak.text.encode()).text
    assert [s for s in leak.secrets if s in shown] == [] and "[REDACTED:" in shown, shown
    for before, after in zip(leak.text.splitlines(), shown.splitlines(), strict=True):
        if not any(secret in before for secret in leak.secrets):
            assert after == before


@pytest.mark.parametrize("line", [
    "password_policy\tstrong\ttrue\n",
    "token_ttl\t3600\tseconds\n",
    "secret_rotation\tenabled\t2026-12-01\n",
    "DB_PASSWORD\t<set in vault>\tfalse\n",
    "api_key_header\tX-Api-Key\tdefault\n",
    "KEY\tVALUE\tSOURCE\nPASSWORD_MIN_LENGTH\t12\tdefault\n",
])
def test_ordinary_tab_cells_at_a_line_start_stay(line: str) -> None:
    assert sanitize_output(line.encode()).text == line


# An x-filled example (``shapes._FILLED_EXAMPLE``) is a vendor's short prefix then runs of x or "*": a real key with
# a run of x glued after it, or between two runs, is a key still (before: any 40 characters before the run passed).
_REAL = "Hq7vL2pxR9mK4zTbQw93"


@pytest.mark.parametrize("line, secret", [
    (f"api_key: XXXXXXXX-{_REAL}-XXXXXXXX\n", _REAL),
    (f"api_key: {_REAL}-xxxxxxxx\n", _REAL),
    (f"OPENAI_API_KEY=sk-proj-{_REAL}Ab12Cd-xxxxxxxx\n", _REAL),
    (f"see sk-{_REAL}Ab12Cd_xxxxxxxxxxxx there\n", _REAL),
    (f"SLACK_BOT_TOKEN=xoxb-{_REAL}-xxxxxxxxxxxx\n", _REAL),
    (f"token: ghp_{_REAL}Ab12Cd34Ef56/******\n", _REAL),
])
def test_a_real_key_beside_x_runs_is_redacted(line: str, secret: str) -> None:
    shown = sanitize_output(line.encode()).text
    assert secret not in shown and "[REDACTED:" in shown, shown


@pytest.mark.parametrize("line", [
    "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx\n",
    "SLACK_BOT_TOKEN=xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx\n",
    "OPENAI_API_KEY=sk-proj-xxxxxxxxxxxxxxxxxxxxxxxx\n",
    "api_key: ********************\n",
])
def test_x_filled_examples_stay(line: str) -> None:
    assert sanitize_output(line.encode()).text == line


# Cards: a password flag glued to its value where the program's option parser takes it so (getopt: ssh-keygen
# -NPW, sshpass -pPW, zip/unzip -PPW), openssl enc's -k PW, and vault login's token as its argument.
_PW = "Hq7vL2pxR9mK4zTb"


@pytest.mark.parametrize("argv", [
    ["ssh-keygen", "-t", "ed25519", "-N" + _PW, "-f", "key"],
    ["ssh-keygen", "-p", "-P" + _PW, "-N" + _PW + "2", "-f", "key"],
    ["sshpass", "-p" + _PW, "ssh", "host"],
    ["unzip", "-P" + _PW, "a.zip"],
    ["zip", "-P" + _PW, "a.zip", "f"],
    ["openssl", "enc", "-aes-256-cbc", "-k", _PW, "-in", "f"],
    ["vault", "login", _PW],
])
def test_card_hides_glued_and_positional_passwords(argv: list[str]) -> None:
    shown, _warned = display_command_line(argv)
    assert _PW not in shown and "[REDACTED:" in shown, shown


@pytest.mark.parametrize("argv", [
    ["ssh-keygen", "-lf", "key.pub"],
    ["zip", "-r", "a.zip", "dir"],
    ["unzip", "-l", "a.zip"],
    ["vault", "login", "-method=oidc"],
    ["openssl", "x509", "-in", "c.pem", "-noout", "-text"],
])
def test_card_keeps_ordinary_flags(argv: list[str]) -> None:
    shown, _warned = display_command_line(argv)
    assert "[REDACTED:" not in shown, shown


def _names_cell_by_cell(line: bytes, separator: bytes) -> list[bytes] | None:
    """``delimited_tables._names`` as it read every header, one cell at a time (what its whole-line reading of a
    header without quotes must answer)."""
    cells = delimited_tables._cells(line, separator)
    if cells is None or len(cells) < 2:
        return None
    shape = delimited_tables._CSV_NAME if separator == b"," else delimited_tables._NAME
    names = [line[start:end] for start, end in cells]
    if not all(shape.fullmatch(name) and not delimited_tables._HASH.fullmatch(name) for name in names):
        return None
    return [b" ".join(name.lower().split()) for name in names]


def test_a_plain_header_read_whole_names_what_its_cells_name() -> None:
    rng = random.Random(5)
    atoms = [b"password", b"a1b2c3d", b"Name", b"x", b"_y", b"1x", b" ", b"a b", b"abcdef0", b"deadbeef12",
             b"Pass  Word", b"", b"\t", b"|", b",", b"\r", "\u00e9".encode(), b"abc1234567", b"ABC1234",
             b"a" * 41 + b"1"]
    for _ in range(20_000):
        separator = rng.choice((b",", b"\t", b"|"))
        line = separator.join(rng.choice(atoms) for _ in range(rng.randint(1, 6)))
        if rng.random() < 0.2:
            line = rng.choice(atoms) + line
        assert delimited_tables._names(line, separator) == _names_cell_by_cell(line, separator), line
