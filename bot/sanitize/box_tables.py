"""Box-drawn tables (SQLite's ``.mode box``, PrettyTable, tabulate, ``doppler secrets``): a column whose header names
a secret, or a table of names and their values.

``sqlite3 app.db -box 'select * from users'`` draws ``│ id │ user  │ password │`` over a rule ``├────┼───────┼──┤`` and
one row per line between ``│``; PrettyTable's ``DOUBLE_BORDER`` and tabulate's ``double_grid`` draw the same with
``║`` (``╠══╬══╣`` under the header), tabulate's ``double_outline`` mixes them (``║ id │ password ║``). psql's and a
Markdown table's ``|`` are ``psql_tables.py``'s. ``doppler secrets`` draws a table of names and values (``│ NAME │
VALUE │``): there the row's first cell names the secret, and its value cell is judged as an environment variable's
definition (``DB_PASSWORD`` and a weak password are hidden, ``LOG_LEVEL  info`` stays).

The header is found by a branch of the token pass's scan (``BOX_HEADER_HINT``, in ``tables.HEADER_HINT``: a secret's
column name between two bars, or ``NAME`` then ``VALUE`` between bars: characters no ordinary output holds, so it
costs other text nothing); then the header line is split at its bars, the rule must follow it, and each row's cells
are read by position, up to the bottom border, a blank line or a line that does not fit (as many cells as the
header). Each line is read once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from bot.sanitize import shapes
from bot.sanitize.psql_tables import PSQL_NAME_ALTERNATION, PSQL_SECRET_COLUMNS, table_rows

VERTICAL = "\u2502"  # │
VERTICAL_BYTES = VERTICAL.encode()
DOUBLE_VERTICAL_BYTES = "\u2551".encode()  # ║
_BAR = "[\u2502\u2551]"
_BARS = re.compile(b"\xe2\x94\x82|\xe2\x95\x91")
# A name/value table's header: its names' column then a value column (``doppler secrets``: ``NAME``, ``VALUE``).
NAME_COLUMNS = frozenset({b"name", b"key"})
_VALUE_COLUMNS = frozenset({b"value", b"raw value", b"computed value"})
BOX_HEADER_HINT = (
    _BAR + r"[ \t]{0,64}(?:" + PSQL_NAME_ALTERNATION + r"|(?i:name|key)[ \t]{0,64}" + _BAR + r"[ \t]{0,64}(?i:value))"
    + r"[ \t]{0,64}" + _BAR
)
_SECRET_NAMES = frozenset(name.encode() for name in PSQL_SECRET_COLUMNS)
_PASSWORD_NAMES = frozenset({b"password", b"passwd", b"passphrase", b"password_plain", b"plain_password"})
# The rule under the header (light or double, box or table mode): ├──┼──┤, ╞══╪══╡, ╟──┼──╢, ╠══╬══╣.
_RULE = re.compile(
    "[ \t]*[\u251c\u255e\u255f\u2560][\u2500\u2550\u253c\u256a\u256b\u256c]*[\u2524\u2561\u2562\u2563][ \t]*\r?")
# The rule's first character (``_RULE``'s first class: ├, ╞, ╟, ╠) as UTF-8, asked before the pattern is matched.
_RULE_FIRST = frozenset(character.encode() for character in "\u251c\u255e\u255f\u2560")
_BOTTOM_FIRST = ("\u2514", "\u255a")  # └, ╚
_BLANKS = b" \t\r"
_BAR_BYTES = 3  # each bar is three bytes in UTF-8
_BAR_SET = frozenset({VERTICAL_BYTES, DOUBLE_VERTICAL_BYTES})


def box_hint_end(span: bytes) -> int:
    """Where the hint's secret column name (or a name/value header's value column) ends, before its closing bar
    (which may open the next column's hint), when ``span`` is a ``BOX_HEADER_HINT`` match, else 0."""
    bars = [found.start() for found in _BARS.finditer(span)]
    if len(bars) < 2 or bars[0] != 0 or bars[-1] != len(span) - _BAR_BYTES:
        return 0
    names = [span[left + _BAR_BYTES : right].strip(_BLANKS).lower() for left, right in pairwise(bars)]
    if len(names) == 1:
        return bars[-1] if names[0] in _SECRET_NAMES else 0
    return bars[-1] if len(names) == 2 and names[0] in NAME_COLUMNS and names[1] in _VALUE_COLUMNS else 0


def _cells(line: bytes) -> list[tuple[int, int]] | None:
    """The cells of a box row between its bars as (start, end) without their blanks, None when the line is none."""
    stripped = line.rstrip(_BLANKS)
    if stripped[-_BAR_BYTES:] not in _BAR_SET or stripped.lstrip(_BLANKS)[:_BAR_BYTES] not in _BAR_SET:
        return None
    if DOUBLE_VERTICAL_BYTES in stripped:
        bars = [found.start() for found in _BARS.finditer(stripped)]
    else:  # (the light box alone, as SQLite draws it: a byte search, a hint on every line reads it)
        bars, bar = [], stripped.find(VERTICAL_BYTES)
        while bar >= 0:
            bars.append(bar)
            bar = stripped.find(VERTICAL_BYTES, bar + _BAR_BYTES)
    cells = []
    for left, right in pairwise(bars):
        cell_start, cell_end = left + _BAR_BYTES, right
        while cell_start < cell_end and line[cell_start] in _BLANKS:
            cell_start += 1
        while cell_end > cell_start and line[cell_end - 1] in _BLANKS:
            cell_end -= 1
        cells.append((cell_start, cell_end))
    return cells


def box_table(
    data: bytes, line_start: int, header_end: int, over_budget: Callable[[int], int]
) -> tuple[list[tuple[int, int, bool | None]], int] | None:
    """The secret columns' cells (start, end, password-like) of the box table whose header is
    ``data[line_start:header_end]``, and where reading stopped; None when the header is none or no rule follows.
    In a table of names and values, the value cells already judged secrets (start, end, None)."""
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
    values = [index for index, name in enumerate(names) if index and name in _VALUE_COLUMNS] \
        if names[0] in NAME_COLUMNS else []
    if not (secret or values):
        return None
    found: list[tuple[int, int, bool | None]] = []
    ended = rule_end + 1
    for row_start, row_end in table_rows(data, rule_end + 1, over_budget):
        row = data[row_start:row_end]
        text = row.decode("utf-8", "replace").strip()
        if _RULE.fullmatch(text):
            continue  # a rule between rows (``.mode box`` with separators, tabulate's double_grid)
        cells = _cells(row)
        if text.startswith(_BOTTOM_FIRST) or cells is None or len(cells) != len(header):
            ended = row_start
            break
        found += [(row_start + cells[index][0], row_start + cells[index][1], password_like)
                  for index, password_like in secret]
        if values:
            found += _named_values(row, row_start, cells, values)
        ended = row_end + 1
    return found, ended


def _named_values(
    row: bytes, row_start: int, cells: list[tuple[int, int]], values: list[int]
) -> list[tuple[int, int, bool | None]]:
    """The value cells of a name/value table's row that hold a secret by its name (the first cell)."""
    name = row[cells[0][0] : cells[0][1]]
    return [(row_start + cells[index][0], row_start + cells[index][1], None) for index in values
            if named_value(name, row[cells[index][0] : cells[index][1]])]


def named_value(name_cell: bytes, value_cell: bytes) -> bool:
    """Whether a names-and-values table's value holds a secret by its row's name: judged as an environment
    variable's definition (a secret's name takes any non-trivial one-word value, placeholders aside)."""
    name = name_cell.decode("utf-8", "replace")
    if not value_cell or " " in name or shapes.name_kind(name) is None:
        return False
    value = value_cell.decode("utf-8", "replace")
    return shapes.accept_assignment(name, "=", value, True, code=False, environment=True) is not None
