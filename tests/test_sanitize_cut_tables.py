"""A table longer than the cap's head and tail: the tail's rows are read under the header the head holds.

Through ``fisk-chatops exec`` (real subprocess, default cap): ``psql``, ``sqlite3 -box``, ``mysql -B`` and an
aligned listing with a password column, a few thousand rows, printed whole. Before ``cut_tables``, every secret
cell in the tail was shown (the tail was cleaned with no header above it).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bot.runner.output import OutputCapture
from bot.sanitize import build_redactor, sanitize_captured
from tests.support.exec_printing import exec_printing

ROOT = Path(__file__).resolve().parents[1]
ROWS = 6000


def _passwords(seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["Q" + "".join(rng.choice("ABCDEFGHJKabcdefghk23456789!#") for _ in range(15)) for _ in range(ROWS)]


def _psql(passwords: list[str]) -> bytes:
    rows = "\n".join(f" user{i:<5} | {pw} | 2024-01-01" for i, pw in enumerate(passwords))
    return (f" name       | password         | created\n------------+------------------+------------\n{rows}\n"
            f"({ROWS} rows)\n").encode()


def _box(passwords: list[str]) -> bytes:
    rows = "\n".join(f"│ user{i:<5} │ {pw} │ 2024-01-01 │" for i, pw in enumerate(passwords))
    return ("┌───────────┬──────────────────┬────────────┐\n│   name    │     password     │  created   │\n"
            f"├───────────┼──────────────────┼────────────┤\n{rows}\n"
            "└───────────┴──────────────────┴────────────┘\n").encode()


def _aligned(passwords: list[str]) -> bytes:
    rows = "\n".join(f"user{i:<5}  {pw}  2024-01-01" for i, pw in enumerate(passwords))
    return f"NAME       PASSWORD          CREATED\n{rows}\n".encode()


def _tab_separated(passwords: list[str]) -> bytes:
    rows = "\n".join(f"user{i}\t{pw}\t2024-01-01" for i, pw in enumerate(passwords))
    return f"name\tpassword\tcreated\n{rows}\n".encode()


def _exec(tmp_path: Path, fixtures_dir: Path, data: bytes) -> dict[str, object]:
    return exec_printing(tmp_path, fixtures_dir, data, truncated=True)


@pytest.mark.parametrize("table", [_psql, _box, _aligned, _tab_separated])
def test_no_password_of_a_long_table_shows_in_the_tail(tmp_path: Path, fixtures_dir: Path, table) -> None:  # type: ignore[no-untyped-def]
    passwords = _passwords(7)
    shown = str(_exec(tmp_path, fixtures_dir, table(passwords))["output"])
    head, tail = shown.split("bytes omitted]")
    assert "[REDACTED:table_secret]" in head and "[REDACTED:table_secret]" in tail
    assert [pw for pw in passwords if pw in shown] == []
    assert tail.count("[REDACTED:table_secret]") > 300  # the rows stay, only their secret cells go


def _capped(data: bytes) -> str:
    capture = OutputCapture.for_output_limit(65536)
    capture.feed(data)
    return sanitize_captured(capture.captured(), build_redactor(), 65536).text


def test_a_table_without_a_secret_column_and_text_after_a_closed_table_stay_whole() -> None:
    rows = "\n".join(f"web-{i:<5}  Running   Q{i:015d}x  3d" for i in range(ROWS))
    listing = f"NAME        STATUS    IMAGE_DIGEST       AGE\n{rows}\n".encode()
    assert _capped(listing).split("bytes omitted]")[1].split("\n", 2)[2] in listing.decode()
    # a secret table that ends in the head: the tail's aligned lines are no rows of it
    closed = _aligned(_passwords(3)[:10]) + b"\n" + listing
    tail = _capped(closed).split("bytes omitted]")[1]
    assert "[REDACTED" not in tail and tail.split("\n", 2)[2] in closed.decode()


def test_a_head_that_ends_inside_the_table_carries_its_header_only_then() -> None:
    from bot.sanitize.cut_tables import carried_header

    table = _psql(_passwords(5)[:50])
    header = b" name       | password         | created\n------------+------------------+------------"
    assert carried_header(table[: table.index(b" user40 ")]) == header
    assert carried_header(table + b"\ndone\n") == b""  # the table ended before the head did
    assert carried_header(b"NAME   STATUS\nweb-1  Running\n") == b""  # no secret column
