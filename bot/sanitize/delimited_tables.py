"""Delimited results with a secret's column: a header of the columns' own names, one delimiter between them, then one
row per line with as many cells. ``tables.py`` reads headers aligned by blanks and written as headers are
(``TOKEN``); this reads the delimited ones:

- **tabs**: ``mysql -B`` (batch mode, what ``mysql -e`` prints through a pipe) and ``psql -A -F $'\\t'``;
- **"|"**: ``psql -A`` (unaligned: ``name|password``, the rows, then ``(2 rows)``), ``sqlite3``'s default list mode;
- **","**: CSV, ``psql --csv``, ``sqlite3 -csv -header``, ``mysqlsh --result-format=csv``, AWS IAM's
  ``credentials.csv`` (``User name,Password,Access key ID,Secret access key,...``): names may hold blanks and
  cells may be quoted (``"a,b"``, ``""`` for a quote), as RFC 4180 writes them;
- **";"**: the same CSV as a spreadsheet in a locale whose decimal mark is "," exports it (Excel, LibreOffice,
  ``mysqlsh`` with ``--fields-terminated-by=';'``).

A header of names and values (``name,value``, ``Key;Value``: an app settings or a parameter export) has no secret's
column: each row's value is judged by the name in its first cell (``box_tables.named_value``: ``DB_PASSWORD`` takes
any one-word value that is no placeholder, ``LOG_LEVEL`` none).

A header's names are SQL-like names (a letter or ``_`` first; with blanks in CSV), one of them a secret's (psql's list,
``psql_tables.PSQL_SECRET_COLUMNS``; in CSV also with blanks for ``_``); a name that looks like a commit's hash
(``a1b2c3d``) makes the line no header, so ``git log --format='%h|%an|%s'`` is none. The rows below are read up to a
blank line or a line with another number of cells (psql's ``(2 rows)`` footer ends it). Found by a branch of the token
pass's scan (``DELIMITED_HEADER_HINT``, in ``tables.HEADER_HINT``: anchored at a line's start, so each line is read by
it once); each row is read once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.box_tables import NAME_COLUMNS, named_value
from bot.sanitize.psql_tables import PSQL_NAME_ALTERNATION, PSQL_SECRET_COLUMNS, table_rows

_SPACED_SECRET_COLUMNS = frozenset(name.replace("_", " ") for name in PSQL_SECRET_COLUMNS if "_" in name)
_CSV_NAME_ALTERNATION = (
    "(?i:" + "|".join(sorted(PSQL_SECRET_COLUMNS | _SPACED_SECRET_COLUMNS, key=len, reverse=True)) + ")"
)
_FIELD = r"[A-Za-z_][A-Za-z0-9_]*"
_CSV_FIELD = r"\"?[A-Za-z_][A-Za-z0-9_ ]*\"?"


def _hint(field: str, separator: str, names: str) -> str:
    """A header's line: names joined by ``separator`` (one at least), a secret's among them, then the separator and
    the next name's first character, or the line's end."""
    secret = r"\"?" + names + r"\"?" if field == _CSV_FIELD else names
    following = rf"(?:{separator}[\"A-Za-z_]|\r?(?m:$))"
    return rf"(?m:^)(?:(?:{field}{separator})+{secret}{following}|{secret}{separator}[\"A-Za-z_])"


# A names-and-values header: a name's column first, then a value's (``name,value``, ``"Key";"Value"``).
_NAMES_THEN_VALUES = (
    r"(?m:^)\"?(?:Name|NAME|name|Key|KEY|key)\"?[\t|,;]\"?(?:Value|VALUE|value)\"?(?:[\t|,;][\"A-Za-z_]|\r?(?m:$))"
)
DELIMITED_HEADER_HINT = "|".join((
    _hint(_FIELD, r"\t", PSQL_NAME_ALTERNATION),
    _hint(_FIELD, r"\|", PSQL_NAME_ALTERNATION),
    _hint(_CSV_FIELD, ",", _CSV_NAME_ALTERNATION),
    _hint(_CSV_FIELD, ";", _CSV_NAME_ALTERNATION),
    _NAMES_THEN_VALUES,
))
# What a delimited header's line starts with: a name's first character, or a quote before it (CSV).
DELIMITED_FIRST = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_\"")
_SECRET_NAMES = frozenset(name.encode() for name in PSQL_SECRET_COLUMNS)
_CSV_SECRET_NAMES = _SECRET_NAMES | frozenset(name.encode() for name in _SPACED_SECRET_COLUMNS)
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_CSV_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_ ]*")
# A commit's abbreviated hash (or longer), which a name of letters and digits may look like: no header's name.
_HASH = re.compile(rb"(?=[a-f]*[0-9])[0-9a-f]{7,40}")
# One CSV cell (RFC 4180): quoted (a quote inside doubled), or anything up to the next comma (or semicolon).
_CSV_CELLS = {b",": re.compile(rb'"(?:[^"]|"")*"|[^,"]*'), b";": re.compile(rb'"(?:[^"]|"")*"|[^;"]*')}
_CSV_SEPARATORS = frozenset(_CSV_CELLS)
# The longest CSV record read across lines (a quoted cell holding newlines: a multi-line note, a PEM key's 28 lines):
# past it the table ends where the record began, as at any line that does not fit it. Each line is counted once (its
# quotes) and charged to the density budget as a row, so the bound in lines keeps a quote that never closes (then
# thousands of short lines) from spending the budget on lines that only end the table.
_RECORD_BYTES = 16384
_RECORD_LINES = 64


def _separator(line: bytes) -> bytes:
    """The delimiter of a header's line: a tab, "|", "," or ";" (the first one found of them, in that order)."""
    for separator in (b"\t", b"|", b",", b";"):
        if separator in line:
            return separator
    return b""


def _csv_cells(line: bytes, separator: bytes = b",") -> list[tuple[int, int]] | None:
    """The cells of a CSV line as (start, end), a quoted cell's without its quotes; None when the line is none (a
    quote that does not close the cell before a comma or the line's end)."""
    cells, pos, length = [], 0, len(line)
    cell, delimiter = _CSV_CELLS[separator], separator[0]
    while True:
        found = cell.match(line, pos)
        if found is None:
            return None
        start, end = found.span()
        if end < length and line[end] != delimiter:
            return None
        quoted = end - start >= 2 and line[start] == 0x22  # '"'
        cells.append((start + 1, end - 1) if quoted else (start, end))
        if end >= length:
            return cells
        pos = end + 1


def _cells(line: bytes, separator: bytes) -> list[tuple[int, int]] | None:
    if separator in _CSV_SEPARATORS:
        return _csv_cells(line, separator)
    cells, offset = [], 0
    for cell in line.split(separator):
        cells.append((offset, offset + len(cell)))
        offset += len(cell) + 1
    return cells


# A header without quotes read whole (its names and separators by one match, a hash-like name by one search): a line
# of 100,000 one-letter names after ``password,`` was read at 2.5 MB/s a cell at a time (found by review, revsan5).
_PLAIN_HEADERS = {
    separator: re.compile(rb"%s(?:%s%s)+" % (name.pattern, re.escape(separator), name.pattern))
    for separator, name in ((b",", _CSV_NAME), (b";", _CSV_NAME), (b"\t", _NAME), (b"|", _NAME))
}
_HASH_NAMES = {
    separator: re.compile(rb"(?:^|(?<=%s))%s(?=%s|$)" % (re.escape(separator), _HASH.pattern, re.escape(separator)))
    for separator in (b",", b";", b"\t", b"|")
}
_HEX_RUN = re.compile(rb"[0-9a-f]{7}")  # (what a hash-like name holds: the search above only where one may be)


def _names(line: bytes, separator: bytes) -> list[bytes] | None:
    """The header's names (lower case, blanks joined), None when ``line`` is no header."""
    if b'"' not in line and separator in _PLAIN_HEADERS:
        if _PLAIN_HEADERS[separator].fullmatch(line) is None or (
                _HEX_RUN.search(line) is not None and _HASH_NAMES[separator].search(line) is not None):
            return None
        lowered = line.lower().split(separator)
        return [b" ".join(name.split()) for name in lowered] if b" " in line else lowered
    cells = _cells(line, separator)
    if cells is None or len(cells) < 2:
        return None
    name_shape = _CSV_NAME if separator in _CSV_SEPARATORS else _NAME
    names = [line[start:end] for start, end in cells]
    if not all(name_shape.fullmatch(name) and not _HASH.fullmatch(name) for name in names):
        return None
    return [b" ".join(name.lower().split()) for name in names]


def delimited_hint_end(span: bytes) -> int:
    """Where the hint's secret column name ends when ``span`` is a ``DELIMITED_HEADER_HINT`` match, else 0."""
    separator = _separator(span)
    if not separator:
        return 0
    names = span.rstrip(b"\r").split(separator)
    if len(names) < 2:
        return 0
    if names[0].strip(b'"').lower() in NAME_COLUMNS and names[1].strip(b'"').lower() == b"value":
        return len(separator.join(names[:2]))  # a names-and-values header
    secret = _CSV_SECRET_NAMES if separator in _CSV_SEPARATORS else _SECRET_NAMES
    if names[-1].strip(b'"').lower() not in secret:  # "<sep>x": the next column's first character
        names.pop()
    return len(separator.join(names)) if names[-1].strip(b'"').lower() in secret else 0


def delimited_table(
    data: bytes, line_start: int, header_end: int, over_budget: Callable[[int], int]
) -> tuple[list[tuple[int, int, bool | None]], int] | None:
    """The secret columns' cells (start, end, password-like) under the delimited header
    ``data[line_start:header_end]`` and where reading stopped, None when the line is no such header. Under a
    names-and-values header, the value cells already judged secrets by their row's name (start, end, None)."""
    header = data[line_start:header_end].rstrip(b"\r")
    separator = _separator(header)
    names = _names(header, separator) if separator else None
    if names is None:
        return None
    secret_names = _CSV_SECRET_NAMES if separator in _CSV_SEPARATORS else _SECRET_NAMES
    secret = [(i, b"pass" in name) for i, name in enumerate(names) if name in secret_names]
    values = [i for i, name in enumerate(names) if name == b"value"] if names[0] in NAME_COLUMNS else []
    if not secret and not values:
        return None
    found: list[tuple[int, int, bool | None]] = []
    ended = header_end + 1
    record_start = -1  # where a CSV record whose quoted cell holds a newline began (RFC 4180), -1 when none is open
    record_lines = 0  # the lines of that record so far
    csv = separator in _CSV_SEPARATORS
    for line_start, row_end in table_rows(data, header_end + 1, over_budget):
        row_start = line_start if record_start < 0 else record_start
        # an odd number of quotes in the record so far (each line's counted once): a quoted cell is still open
        if csv and (data.count(b'"', line_start, row_end) % 2) != (record_start >= 0):
            record_lines = record_lines + 1 if record_start >= 0 else 1
            record_start = row_start
            if record_lines <= _RECORD_LINES and row_end - record_start <= _RECORD_BYTES:
                continue  # a quoted cell goes on past this line: the record ends on a later one
            ended = record_start
            break
        record_start = -1
        row = data[row_start:row_end].rstrip(b"\r")
        cells = _cells(row, separator) if row.strip() else None
        if cells is None or len(cells) != len(names):
            ended = row_start
            break
        found += [(row_start + cells[index][0], row_start + cells[index][1], password_like)
                  for index, password_like in secret]
        name = row[cells[0][0] : cells[0][1]]
        found += [(row_start + cells[index][0], row_start + cells[index][1], None) for index in values
                  if named_value(name, row[cells[index][0] : cells[index][1]])]
        ended = row_end + 1
    return found, ended
