"""psql's aligned tables: a secret's column named in lower case, its cells under a ``---+---`` rule (issue #11).

``psql -c 'select name, password from users'`` prints

     name  |     password
    -------+------------------
     alice | Xk9mQ2vL7pRt4wZ8

A header of lower-case names is no header to ``tables.py`` (there a lower-case ``password  x`` is a row or prose),
and ``key_value_line`` reads only a two-column row whose first cell is the secret's name. Here the header is a
header because psql says so: its cells are separated by ``|`` and the next line is psql's rule, whose ``+`` stand
exactly where the header's and the rows' ``|`` do (``\\pset border 2`` opens and closes each line with one more; a
Markdown table's rule is read the same way, ``|`` for ``+``).
A row's cell is read between those offsets; a row whose ``|`` moved (a wide character in a cell) is split at its
``|`` when it holds as many cells as the header, and any other line ends the table.

Found like the other tables' headers, by a branch of the token pass (``tables.HEADER_HINT``): a secret column's
name between blanks, beside a ``|``. Linear: each hinted header is read once, each row once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import NamedTuple

# Column names whose cells are secrets as SQL names them (lower case, "_" between words); with ``tables``' own
# names, so a "secret", "token" or "api_key" column counts too. Hashes of passwords count (a hash is what an
# attacker cracks offline), a column about them does not (``password_changed_at``, ``token_count``).
PSQL_SECRET_COLUMNS = frozenset({
    "password", "passwd", "passphrase", "secret", "token", "auth_token", "authtoken", "access_token",
    "refresh_token", "api_token", "api_key", "apikey", "secret_key", "private_key", "client_secret",
    "secret_access_key", "secret_value", "bootstrap_token", "session_token", "signing_key", "signing_secret",
    "rolpassword", "password_hash", "password_digest", "encrypted_password", "hashed_password", "password_plain",
    "plain_password", "authentication_string",
})  # fmt: skip
_SECRET_BYTES = frozenset(name.encode() for name in PSQL_SECRET_COLUMNS)
_PASSWORD_WORDS = (b"pass",)
# The hint's name part (RE2 and Python syntax): any case, psql prints names as the query wrote them.
PSQL_NAME_ALTERNATION = "(?i:" + "|".join(sorted(PSQL_SECRET_COLUMNS, key=len, reverse=True)) + ")"
# The hint as the token pass reports it: blanks, "|", blanks, the name, blanks, and "|" or the line's end (a later
# column), or the line's start, an optional border "|", blanks, the name, blanks and "|" (the first column).
PSQL_HEADER_HINT = (
    r"(?m:^)\|?[ \t]{1,64}" + PSQL_NAME_ALTERNATION + r"[ \t]{1,64}\|"
    r"|[ \t]\|[ \t]{1,64}" + PSQL_NAME_ALTERNATION + r"[ \t]{0,64}(?:\||\r?(?m:$))"
)
MAX_PSQL_NAME = max(map(len, PSQL_SECRET_COLUMNS))
_HINT_SPAN = re.compile(rb"[ \t]*\|?[ \t]*([A-Za-z_]{1,%d})[ \t]*\|?\r?" % MAX_PSQL_NAME)
# psql's rule under the header: dashes joined by "+" (border 1), or opened and closed by "+" too (border 2); and a
# Markdown table's, joined by "|" (``|------|:--------:|``), and "=" for "-" (``===+=====``: ``airflow connections
# get``'s tables), which tools print the same way.
_RULE = re.compile(rb"[+|]?:?[-=]+:?(?:[+|]:?[-=]+:?)*[+|]?\r?")
_JOINTS = frozenset(b"+|")
# Past any row's end (``tables.MAX_ROW_BYTES`` ends a table before): where the last column of border 1 ends.
_ROW_END = 1 << 30
# The line that ends a result: "(2 rows)", "(1 row)".
_ROW_COUNT = re.compile(rb"\(\d+ rows?\)\r?")


# Verdicts remembered by their bytes, in bounded tables (then they start over): a table printed many times (a
# query run in a loop, ``watch psql``) repeats its header and rule, and reading them again cost most of a row's time.
MEMO_ENTRIES = 1024
_MEMO_KEY_BYTES = 1024  # longer headers are read every time (their keys would hold the memory)


class _Table(NamedTuple):
    """A psql header read with its rule, as its rows are read under it (``_cells``)."""

    columns: list[tuple[int, int, bytes]]  # (start, end, lower-case name), ``_columns``
    secret: list[tuple[int, bool]]  # the secret columns: (index, password-like)
    joints: list[int]  # where a row's "|" stand
    closed: bool  # a border closes each row: nothing but blanks after its last "|"


_HEADERS: dict[bytes, _Table | None] = {}


def psql_hint_end(span: bytes) -> int:
    """Where the secret column's name ends in a hint's bytes when they are a ``PSQL_HEADER_HINT`` match (a "|",
    blanks and the name), else 0: no token is one (a token is never one of these names)."""
    if b"|" not in span:
        return 0
    found = _HINT_SPAN.fullmatch(span)
    return found.end(1) if found is not None and found.group(1).lower() in _SECRET_BYTES else 0


def table_rows(data: bytes, row_start: int, over_budget: Callable[[int], int]) -> Iterator[tuple[int, int]]:
    """Each line from ``row_start`` on as (start, end without its newline) that ``over_budget`` lets be read (0;
    else the text up to where it says is a dense span, skipped), up to the text's end: the rows of a table, for
    ``psql_table`` and ``tables.secret_cells``, which stop reading where a line does not fit their table."""
    length = len(data)
    while row_start < length:
        if dense_end := over_budget(row_start):
            row_start = dense_end + 1
            continue
        row_end = data.find(b"\n", row_start)
        row_end = length if row_end < 0 else row_end
        yield row_start, row_end
        row_start = row_end + 1


def _secret_columns(header: bytes, rule: bytes) -> _Table | None:
    """``_columns`` of a header and its rule, and the secret ones among them (index, password-like), None when they
    are no psql header with a secret column; remembered by their bytes (``_HEADERS``)."""
    key = header + b"\n" + rule if len(header) + len(rule) < _MEMO_KEY_BYTES else b""
    if key and key in _HEADERS:
        return _HEADERS[key]
    columns = _columns(header, rule)
    found = None
    if columns is not None:
        secret = [(i, any(word in name for word in _PASSWORD_WORDS))
                  for i, (_, _, name) in enumerate(columns) if name in _SECRET_BYTES]
        joints = [end for _, end, _ in columns if end != _ROW_END]
        found = _Table(columns, secret, joints, columns[-1][1] != _ROW_END) if secret else None
    if key:
        if len(_HEADERS) >= MEMO_ENTRIES:
            _HEADERS.clear()
        _HEADERS[key] = found
    return found


def _columns(header: bytes, rule: bytes) -> list[tuple[int, int, bytes]] | None:
    """The columns (start, end, lower-case name) a psql header and its rule give, None when they are not one: every
    "+" of the rule stands under a "|" of the header."""
    if _RULE.fullmatch(rule) is None:
        return None
    rule = rule.rstrip(b"\r")
    joints = [i for i, byte in enumerate(rule) if byte in _JOINTS]
    bars = joints
    if any(header[i : i + 1] != b"|" for i in joints):
        # psql aligns by display width: a name with a character of several bytes (``név``) moves the header's "|"
        # off the rule's "+" in bytes. The names are then read between the header's own "|", as many as the rule's.
        bars = [i for i, byte in enumerate(header) if byte == 124]  # 124: "|"
        if len(bars) != len(joints):
            return None
    bounds, names = _bounds(rule, joints), _bounds(rule, bars)
    return [(left + 1, right, header[name_left + 1 : name_right].strip().lower())
            for (left, right), (name_left, name_right) in zip(pairwise(bounds), pairwise(names), strict=True)]


def _bounds(rule: bytes, joints: list[int]) -> list[int]:
    """The offsets that bound a header's or a row's columns, given where its "|" stand under the rule's joints:
    -1 before a first column without a border, ``_ROW_END`` after a last one."""
    bounds = [-1, *joints] if rule[:1] not in (b"+", b"|") else list(joints)
    if rule[-1:] not in (b"+", b"|"):
        bounds.append(_ROW_END)  # the last column runs to the row's end
    return bounds


def _cells(row: bytes, table: _Table) -> list[tuple[int, int]] | None:
    """The secret columns' cells in ``row`` (start, end, blanks around it dropped; in ``table.secret``'s order),
    None when the row is no row of this table: its "|" stand at the header's offsets, or it holds as many
    "|"-separated cells."""
    columns, joints = table.columns, table.joints
    if all(row[i : i + 1] == b"|" for i in joints) and (not table.closed or len(row.rstrip()) == joints[-1] + 1):
        spans = [(columns[i][0], min(columns[i][1], len(row))) for i, _ in table.secret]
    else:
        pieces = row.split(b"|")
        bordered = columns[0][0] > 0
        if bordered:
            pieces = pieces[1:-1] if len(pieces) >= 2 else []
        if len(pieces) != len(columns):
            return None
        starts, at = [], 1 if bordered else 0
        for piece in pieces:
            starts.append(at)
            at += len(piece) + 1
        spans = [(starts[i], starts[i] + len(pieces[i])) for i, _ in table.secret]
    cells = []
    for start, end in spans:
        cell = row[start:end]
        lead = len(cell) - len(cell.lstrip())
        cells.append((start + lead, start + len(cell.rstrip())))
    return cells


def psql_table(
    data: bytes, line_start: int, header_end: int, over_budget: Callable[[int], int], max_row: int
) -> tuple[list[tuple[int, int, bool]], int] | None:
    """The secret columns' cells of the psql table whose header is ``data[line_start:header_end]``, as (start,
    end, password-like) in ``data``, and where the table ends; None when the header is no psql header (no rule
    under it, or no secret column). ``over_budget`` is asked before each row is read (``tables.secret_cells``'
    share of the density budget: 0, or where the dense span that starts at the row ends); a row longer than
    ``max_row`` ends the table."""
    length = len(data)
    rule_start = header_end + 1
    rule_end = data.find(b"\n", rule_start)
    rule_end = length if rule_end < 0 else rule_end
    table = _secret_columns(data[line_start:header_end], data[rule_start:rule_end])
    if table is None:
        return None
    columns, secret = table.columns, table.secret
    cells: list[tuple[int, int, bool]] = []
    # The last row's cells, taken once the next line shows it was no header: without a border (border 1) a rule
    # under a row makes that row the next table's header (two results printed one after the other).
    last: list[tuple[int, int, bool]] = []
    last_start = rule_end + 1
    ended = length  # where the table ends: the text's end, unless a line ends it first
    bordered = columns[0][0] > 0
    for row_start, row_end in table_rows(data, rule_end + 1, over_budget):
        ended = row_start
        row = data[row_start:row_end]
        stripped = row.strip()
        if _RULE.fullmatch(stripped):
            if not bordered and last:
                last, ended = [], last_start  # the next table's header: its own hint reads it
            break
        if not stripped or len(row) > max_row or _ROW_COUNT.fullmatch(row):
            break
        spans = _cells(row, table)
        if spans is None:
            break
        cells += last
        last = [(row_start + start, row_start + end, password_like)
                for (start, end), (_, password_like) in zip(spans, secret, strict=True) if end > start]
        last_start, ended = row_start, length
    return cells + last, ended
