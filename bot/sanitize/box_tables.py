"""SQLite's box-drawn tables (``.mode box``, ``.mode table`` in Unicode): a column whose header names a secret.

``sqlite3 app.db -box 'select * from users'`` draws ``│ id │ user  │ password │`` over a rule ``├────┼───────┼──┤`` and
one row per line between ``│``; psql's and a Markdown table's ``|`` are ``psql_tables.py``'s. The header is found by a
branch of the token pass's scan (``BOX_HEADER_HINT``, in ``tables.HEADER_HINT``: a secret's column name between two
``│``, a character no ordinary output holds, so it costs other text nothing); then the header line is split at its
``│``, the rule must follow it, and each row's cells are read by position, up to the bottom border, a blank line or a
line that does not fit (as many cells as the header). Each line is read once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.psql_tables import PSQL_NAME_ALTERNATION, PSQL_SECRET_COLUMNS, table_rows

VERTICAL = "\u2502"  # │
VERTICAL_BYTES = VERTICAL.encode()
BOX_HEADER_HINT = VERTICAL + r"[ \t]{0,64}" + PSQL_NAME_ALTERNATION + r"[ \t]{0,64}" + VERTICAL
_SECRET_NAMES = frozenset(name.encode() for name in PSQL_SECRET_COLUMNS)
_PASSWORD_NAMES = frozenset({b"password", b"passwd", b"passphrase", b"password_plain", b"plain_password"})
# The rule under the header (light or double, box or table mode): ├──┼──┤, ╞══╪══╡, and ASCII-less ─ runs.
_RULE = re.compile("[ \t]*[\u251c\u255e\u255f][\u2500\u2550\u253c\u256a\u256b]*[\u2524\u2561\u2562][ \t]*\r?")
# The rule's first character (``_RULE``'s first class: ├, ╞, ╟) as UTF-8, asked before the pattern is matched.
_RULE_FIRST = frozenset(character.encode() for character in "\u251c\u255e\u255f")
_BOTTOM_FIRST = ("\u2514", "\u255a")  # └, ╚
_BLANKS = b" \t\r"


def box_hint_end(span: bytes) -> int:
    """Where the hint's secret column name ends (before its closing ``│``, which may open the next column's hint),
    when ``span`` is a ``BOX_HEADER_HINT`` match, else 0."""
    if not span.startswith(VERTICAL_BYTES) or not span.endswith(VERTICAL_BYTES):
        return 0
    name = span[len(VERTICAL_BYTES) : -len(VERTICAL_BYTES)].strip(_BLANKS)
    return len(span) - len(VERTICAL_BYTES) if name.lower() in _SECRET_NAMES else 0


def _cells(line: bytes) -> list[tuple[int, int]] | None:
    """The cells of a box row between its ``│`` as (start, end) without their blanks, None when the line is none."""
    stripped = line.rstrip(_BLANKS)
    if not stripped.lstrip(_BLANKS).startswith(VERTICAL_BYTES) or not stripped.endswith(VERTICAL_BYTES):
        return None
    cells, start = [], line.find(VERTICAL_BYTES) + len(VERTICAL_BYTES)
    while (bar := line.find(VERTICAL_BYTES, start)) >= 0:
        cell_start, cell_end = start, bar
        while cell_start < cell_end and line[cell_start] in _BLANKS:
            cell_start += 1
        while cell_end > cell_start and line[cell_end - 1] in _BLANKS:
            cell_end -= 1
        cells.append((cell_start, cell_end))
        start = bar + len(VERTICAL_BYTES)
    return cells


def box_table(
    data: bytes, line_start: int, header_end: int, over_budget: Callable[[int], int]
) -> tuple[list[tuple[int, int, bool]], int] | None:
    """The secret columns' cells (start, end, password-like) of the box table whose header is
    ``data[line_start:header_end]``, and where reading stopped; None when the header is none or no rule follows."""
    # The rule first: a hint on every line with no rule under it (``│ password │ x │`` rows) is then refused by one
    # look at the next line's first character, not by splitting the header into cells (a third of such a text's time)
    rule_start = header_end + 1
    rule_end = data.find(b"\n", rule_start)
    rule_end = len(data) if rule_end < 0 else rule_end
    rule = data[rule_start:rule_end]
    if rule.lstrip(b" \t")[:3] not in _RULE_FIRST or _RULE.fullmatch(rule.decode("utf-8", "replace")) is None:
        return None
    header = _cells(data[line_start:header_end])
    if header is None:
        return None
    names = [data[line_start + start : line_start + end].lower() for start, end in header]
    secret = [(index, name in _PASSWORD_NAMES) for index, name in enumerate(names) if name in _SECRET_NAMES]
    if not secret:
        return None
    found: list[tuple[int, int, bool]] = []
    ended = rule_end + 1
    for row_start, row_end in table_rows(data, rule_end + 1, over_budget):
        row = data[row_start:row_end]
        text = row.decode("utf-8", "replace").strip()
        if _RULE.fullmatch(text):
            continue  # a rule between rows (``.mode box`` with separators)
        cells = _cells(row)
        if text.startswith(_BOTTOM_FIRST) or cells is None or len(cells) != len(header):
            ended = row_start
            break
        found += [(row_start + cells[index][0], row_start + cells[index][1], password_like)
                  for index, password_like in secret]
        ended = row_end + 1
    return found, ended
