"""Tab-separated results with a secret's column: ``mysql -B`` (batch mode, what ``mysql -e`` prints through a pipe) and
``psql -A -F $'\\t'`` print a header of the columns' own names, lower-case as the schema spells them, one tab between
them, then one row per line. ``tables.py`` reads headers aligned by blanks and written as headers are (``TOKEN``);
this reads the tab-separated one: a header of names joined by single tabs, one of them a secret's (psql's list), and
the rows below with as many cells, up to a blank line or a line that does not fit. Found by a branch of the token
pass's scan (``TAB_HEADER_HINT``, in ``tables.HEADER_HINT``); each line is read once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.psql_tables import PSQL_NAME_ALTERNATION, PSQL_SECRET_COLUMNS, table_rows

# A header's line: names joined by one tab, a secret's among them (the first, or after a tab), then a tab or the end.
TAB_HEADER_HINT = (
    r"(?m:^)(?:[A-Za-z_][A-Za-z0-9_]*\t)*" + PSQL_NAME_ALTERNATION + r"(?:\t[A-Za-z_]|\r?(?m:$))"
)
_SECRET_NAMES = frozenset(name.encode() for name in PSQL_SECRET_COLUMNS)
_PASSWORD_NAMES = frozenset({b"password", b"passwd", b"passphrase", b"password_plain", b"plain_password"})
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_TAB = b"\t"


def tab_hint_end(span: bytes) -> int:
    """Where the hint's secret column name ends when ``span`` is a ``TAB_HEADER_HINT`` match (a tab in it), else 0."""
    names = span.rstrip(b"\r").split(_TAB)
    if len(names) < 2:
        return 0
    if names[-1] and names[-1].lower() not in _SECRET_NAMES:  # "\tx": the next column's first letter
        names.pop()
    return len(_TAB.join(names)) if names[-1].lower() in _SECRET_NAMES else 0


def tab_table(
    data: bytes, line_start: int, header_end: int, over_budget: Callable[[int], int]
) -> tuple[list[tuple[int, int, bool]], int] | None:
    """The secret columns' cells (start, end, password-like) under the tab-separated header
    ``data[line_start:header_end]`` and where reading stopped, None when the line is no such header."""
    names = data[line_start:header_end].rstrip(b"\r").split(_TAB)
    if len(names) < 2 or not all(_NAME.fullmatch(name) for name in names):
        return None
    secret = [(i, name.lower() in _PASSWORD_NAMES) for i, name in enumerate(names) if name.lower() in _SECRET_NAMES]
    if not secret:
        return None
    found: list[tuple[int, int, bool]] = []
    ended = header_end + 1
    for row_start, row_end in table_rows(data, header_end + 1, over_budget):
        row = data[row_start:row_end].rstrip(b"\r")
        cells = row.split(_TAB)
        if not row.strip() or len(cells) != len(names):
            ended = row_start
            break
        offsets, offset = [], row_start
        for cell in cells:
            offsets.append((offset, offset + len(cell)))
            offset += len(cell) + 1
        found += [(*offsets[index], password_like) for index, password_like in secret]
        ended = row_end + 1
    return found, ended
