"""A secret in a table's column: the header names the column, the rows below hold the values with nothing beside them.

``twilio api:core:keys:create`` prints ``SID   Secret`` and a row ``SK...  <32 characters>``; ``kubeadm token list``
prints ``TOKEN   TTL   EXPIRES ...`` and rows that start with a bootstrap token. No detector that reads a value with
its name can find those cells: the name is on another line. This pass reads the header instead:

- a **header** is a line of two or more column names separated by two or more blanks (or a tab), each name one to
  four words of letters written as a header is (``TOKEN``, ``Secret``, ``Auth Token``), at least one of them
  exactly a secret's column name (``_SECRET_COLUMNS``; ``Key``, ``Value``, ``Secrets``, ``SecretName`` are not);
- its **rows** are the lines that follow it, up to a blank line or a line that does not fit the table (a row fits
  when cells start, after a blank, where two of the header's columns start, or when it has as many cells as the
  header has columns; a separator row, ``---  -----``, fits and holds nothing);
- a cell of a secret column is redacted when its value looks like a secret (``_secret_cell``: not ``<none>``,
  ``-``, ``true``, a duration, a date or a short word).

Found in the same scan as the tokens (``HEADER_HINT``, a branch of ``detectors.TOKENS``): the token pass reports
where a secret's column name stands between blanks (``candidates.run_pass``), and only then is this pass run, on the
text the token pass read (its markers would move the cells), and the token pass again on what it returns. Linear:
each hinted header line is split once (at most ``MAX_COLUMNS`` columns of a line up to ``MAX_HEADER_BYTES``), each
row is read once and only at the header's column offsets, and a hint inside a table already read is skipped.
``kubectl get secrets`` (``NAME  TYPE  DATA  AGE``) and ``vault token lookup`` (``Key  Value``) have no such column.
"""

from __future__ import annotations

import re

from bot.sanitize import shapes
from bot.sanitize.box_tables import (
    BOX_HEADER_HINT,
    DOUBLE_VERTICAL_BYTES,
    VERTICAL_BYTES,
    box_hint_end,
    box_table,
    named_value,
)
from bot.sanitize.box_tables import (
    NAME_COLUMNS as _NAME_COLUMNS,
)
from bot.sanitize.delimited_tables import (
    DELIMITED_FIRST,
    DELIMITED_HEADER_HINT,
    delimited_hint_end,
    delimited_table,
)
from bot.sanitize.psql_tables import (
    MAX_PSQL_NAME,
    MEMO_ENTRIES,
    PSQL_HEADER_HINT,
    psql_hint_end,
    psql_table,
    table_rows,
)

# Column names whose cells are secrets, compared lower-case with single blanks (``Auth  Token`` is two columns).
_SECRET_COLUMNS = frozenset({
    "secret", "password", "passwd", "passphrase", "token", "auth token", "authtoken", "access token",
    "refresh token", "api token", "api key", "apikey", "secret key", "private key", "client secret",
    "secret access key", "secret value", "bootstrap token", "session token", "signing key", "signing secret",
})  # fmt: skip
_SECRET_BYTES = frozenset(column.encode() for column in _SECRET_COLUMNS)
_PASSWORD_COLUMNS = frozenset({b"password", b"passwd", b"passphrase"})


def _header_styled(column: str) -> str:
    """A secret's column name as a header writes it (``_header_style``): each word's first letter a capital, the
    rest in any case (``Secret``, ``TOKEN``, ``API Key``). A lower-case ``password  x`` is a row's or prose's, not
    a header: as a hint it cost the search loop microseconds per line and found nothing (found by review)."""
    return " ".join(word[0].upper() + "(?i:" + word[1:] + ")" for word in column.split(" "))


_SECRET_ALTERNATION = "|".join(_header_styled(column) for column in sorted(_SECRET_COLUMNS, key=len, reverse=True))
# Where a header may be: a secret's column name at the line's start or after two blanks (or a tab), then the next
# column's name, or, after blanks, the line's end (a header has two columns or more). Searched by the token pass's
# automaton (RE2 syntax, and Python's: the pass parses it too): a scan of its own cost every text 1.5 ms per MiB.
# A hint makes the passes run on a text that may have no other candidate, so it asks for what a header has:
# "password" then 40 blanks and "=", or the text's end, is none.
_NAME_THEN_COLUMN = r"(?:" + _SECRET_ALTERNATION + r")(?:[ \t]{2}|\t)[ \t]{0,62}[A-Za-z]"
# A table of names and values with a third column (``az webapp config appsettings list -o table``: ``Name  Value
# SlotSetting``): a name's column then a value's, each row's value judged by its name (``box_tables.named_value``).
_NAMES_THEN_VALUES = (
    r"(?m:^)(?:Name|NAME|Key|KEY)(?:[ \t]{2}|\t)[ \t]{0,62}(?:Value|VALUE)(?:[ \t]{2}|\t)[ \t]{0,62}[A-Za-z]"
)
_NAMES_THEN_VALUES_BYTES = frozenset({b"name value", b"key value"})
# And psql's header, a secret column's name in any case beside a "|" (``psql_tables.py``), SQLite's box
# (``box_tables.py``) and the delimited ones: mysql -B's tabs, psql -A's "|", CSV (``delimited_tables.py``).
HEADER_HINT = (  # the first column (another follows), or a later one (after blanks: another follows, or none)
    r"(?P<v>(?m:^)" + _NAME_THEN_COLUMN + r"|(?:[ \t]{2}|\t)(?:" + _NAME_THEN_COLUMN
    + r"|(?:" + _SECRET_ALTERNATION + r")[ \t]{0,64}\r?(?m:$))|" + PSQL_HEADER_HINT
    + "|" + BOX_HEADER_HINT + "|" + DELIMITED_HEADER_HINT + "|" + _NAMES_THEN_VALUES + ")"
)
MAX_HEADER_BYTES = 1024
# The most a header hint holds without its blanks: the longest secret's column name, a blank and a letter (or
# psql's, and a "|" on each side).
MAX_HINT_NAME = max(max(map(len, _SECRET_COLUMNS)), MAX_PSQL_NAME) + 2
MAX_COLUMNS = 32
MAX_ROW_BYTES = 16384
# The tables' share of the density budget (``candidates.py``): reading a header or a row costs microseconds, so a
# text of short lines under one header (``NAME  TOKEN  AGE`` repeated) or of header-like lines (``password  x``)
# ran at 2-6 MB/s (found by review), 3.8-9 MB/s with 2048 free lines and one per 128 bytes (review again: a row
# costs ~4.5 us). A text may have this many lines read, plus one per this many bytes before the line (a real
# table's row is longer); past that, the text from the line to the end of the line ``DENSE_SPAN`` bytes on is one
# ``dense_candidates`` marker (fails closed, as the passes' own budget does) and reading goes on after it.
FREE_LINES = 256
BYTES_PER_LINE = 160
DENSE_SPAN = 4096
DENSE_KIND = "dense_candidates"
# One column name: up to four words of letters (a word may hold "_", "-", "/", "#", "." and digits after its
# first letter, as ``EXTRA GROUPS``, ``Date Created``, ``TTL``), joined by single blanks.
_COLUMN_NAME = re.compile(rb"[A-Za-z][A-Za-z0-9_#./()-]{0,31}(?: [A-Za-z][A-Za-z0-9_#./()-]{0,31}){0,3}")
# A row's cells: runs without two blanks or a tab in them.
_CELL = re.compile(rb"[^ \t\r\n](?:[^ \t\r\n]| (?=[^ \t\r\n]))*")
# A separator row under a header (``---   -----``, ``===``, ``+---+``): part of the table, nothing in it.
_RULE = re.compile(rb"[ \t]*[-=+|:]{2,}(?:[ \t]+[-=+|:]{2,})*[ \t]*\r?")
_RULE_FIRST = frozenset(bytes((c,)) for c in b"-=+|:")  # what a _RULE row starts with after its blanks
# A date or a time (``2026-12-02T10:00:00Z``, ``2026-12-02 10:00``, ``10:00:00``) or a duration (``23h``,
# ``1h30m0s``, ``<invalid>``): what a table's TTL or EXPIRES column holds, never a secret.
_DATE_OR_DURATION = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+Z-]*)?|\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?"
    r"|(?:\d+(?:\.\d+)?(?:ns|us|ms|s|m|h|d|w|y))+"
)


def _header_style(name: bytes) -> bool:
    """A column name as tools write headers: all capitals (``TOKEN``, ``EXTRA GROUPS``) or each word capitalised
    (``Secret``, ``Date Created``, ``SID``). A lower-case first word is a row's value, not a header (``token
    hvs.x`` in ``vault token create``'s table)."""
    return name[:1].isupper() and all(word[:1].isupper() for word in name.split(b" "))


# A header as the rows are read under it: its columns (offset, name), its secret columns (offset, password-like),
# each column's neighbours (``_column_bounds``) and the secret columns by their position (index, password-like).
_Header = tuple[
    list[tuple[int, bytes]], list[tuple[int, bool | None]], dict[int, tuple[int, int, int]],
    list[tuple[int, bool | None]],
]


def _header(line: bytes) -> _Header | None:
    """The header ``line`` is, None when it is none or names no secret's column; remembered by its bytes (a header
    line is at most ``MAX_HEADER_BYTES``)."""
    if line in _HEADERS:
        return _HEADERS[line]
    found: _Header | None = None
    columns = _columns(line)
    if columns is not None:
        secret: list[tuple[int, bool | None]] = [(offset, name.lower() in _PASSWORD_COLUMNS)
                  for offset, name in columns if b" ".join(name.lower().split()) in _SECRET_BYTES]
        if columns[0][1].lower() in _NAME_COLUMNS:  # a value's cells, judged by the row's name (None)
            secret += [(offset, None) for offset, name in columns[1:] if name.lower() == b"value"]
        if secret:
            position = {offset: i for i, (offset, _) in enumerate(columns)}
            found = (columns, secret, _column_bounds(columns),
                     [(position[offset], password_like) for offset, password_like in secret])
    if len(line) <= MAX_HEADER_BYTES:
        if len(_HEADERS) >= MEMO_ENTRIES:
            _HEADERS.clear()
        _HEADERS[line] = found
    return found


def _columns(line: bytes) -> list[tuple[int, bytes]] | None:
    """The header's columns (start offset, name), None when ``line`` is no header."""
    if len(line) > MAX_HEADER_BYTES:
        return None
    cells = [(m.start(), m.group()) for m in _CELL.finditer(line)]
    if not 2 <= len(cells) <= MAX_COLUMNS:
        return None
    for _, name in cells:
        if _COLUMN_NAME.fullmatch(name) is None or not _header_style(name):
            return None
    return cells


# A Kubernetes object's name (DNS-1123: lower-case letters, digits, "-" and "."), in parts: ``kubectl get
# certificates`` (cert-manager), External Secrets and service accounts list a Secret's name under SECRET or TOKEN.
_OBJECT_NAME = re.compile(r"[a-z0-9]+(?:[-.][a-z0-9]+)+")
_NAME_PARTS = re.compile(r"[-.]")
_HEX_LETTERS = frozenset("abcdef")


def _object_name(shown: str) -> bool:
    """Whether a cell is an object's name: DNS-1123 parts, one of them a word (three letters or more, not all of them
    hexadecimal digits: ``example-com-tls``, ``default-token-x7k2p``), which a generated value's parts are not."""
    return _OBJECT_NAME.fullmatch(shown) is not None and any(
        len(part) >= 3 and part.isalpha() and not _HEX_LETTERS.issuperset(part) for part in _NAME_PARTS.split(shown))


def _secret_cell(value: bytes, password_like: bool) -> bool:
    """Whether a secret column's cell holds a secret: not empty, ``<none>``, ``-``, ``true``, a placeholder, a date,
    a duration or a masked value; a password column's any other word, another column's a generated-looking one."""
    shown = value.decode("utf-8", "replace")
    if shapes.trivial(shown) or shown[:1].isdecimal() and _DATE_OR_DURATION.fullmatch(shown) \
            or shown.strip("*•x") == "":  # (each of its branches starts with a digit, "\d": what isdecimal says)
        return False
    if password_like and " " not in shown and len(shown) >= 6:
        return True
    return shapes.generated(shown) and not _object_name(shown)  # the cheap one first: most cells are short


def _cell_at(line: bytes, offset: int) -> tuple[int, int] | None:
    """The cell that starts exactly at ``offset`` (after a blank, or at the line's start), as (start, end)."""
    if offset >= len(line) or line[offset] in b" \t\r" or offset > 0 and line[offset - 1] not in b" \t":
        return None
    cell = _CELL.match(line, offset)
    return (cell.start(), cell.end()) if cell is not None else None


def _cells_starting(line: bytes, columns: list[tuple[int, bytes]]) -> int:
    """How many of the header's columns have a cell of ``line`` (a row, no newline in it) starting exactly under
    them: where ``_cell_at`` finds one, known without matching it (``_CELL`` matches wherever ``_cell_at`` lets it
    try, since a row holds no newline), as a row of every column was matched in full only to be counted."""
    length, count = len(line), 0
    for offset, _ in columns:
        if offset < length and line[offset] not in b" \t\r" and (offset == 0 or line[offset - 1] in b" \t"):
            count += 1
    return count


# Verdicts remembered by their bytes (bounded: then they start over), as a table printed again and again (``watch``,
# a loop, a log of its runs) repeats its header: a hint's verdict (``header_hint_end``), and a header line's columns.
_HINT_ENDS: dict[bytes, int] = {}
_HEADERS: dict[bytes, _Header | None] = {}


def header_hint_end(span: bytes) -> int:
    """Where the secret's column name ends in a candidate's bytes when they are a ``HEADER_HINT`` match (blanks, the
    name, then blanks and the next column's first letter, or the line's end), else 0: no token is such a match.
    Remembered by the span's bytes (``_HINT_ENDS``): it is asked of every hint the token pass finds."""
    found = _HINT_ENDS.get(span)
    if found is None:
        found = _hint_end(span)
        if len(_HINT_ENDS) >= MEMO_ENTRIES:
            _HINT_ENDS.clear()
        _HINT_ENDS[span] = found
    return found


def _hint_end(span: bytes) -> int:
    if span[0] in DELIMITED_FIRST and _delimited(span):
        return delimited_hint_end(span)  # a tab-, "|"- or comma-separated header: ``delimited_tables.py``
    if span.startswith((VERTICAL_BYTES, DOUBLE_VERTICAL_BYTES)):
        return box_hint_end(span)  # a box's bars: ``box_tables.py``
    if b"|" in span:
        return psql_hint_end(span)
    name = span.rstrip()
    if name[-1:].isalpha() and name[-2:-1] in (b" ", b"\t"):
        name = name[:-1].rstrip()  # the next column's first letter
    words = b" ".join(name.lower().split())
    return len(name) if words in _SECRET_BYTES or words in _NAMES_THEN_VALUES_BYTES else 0


def secret_cells(data: bytes, hints: list[int]) -> list[tuple[int, int, str]]:
    """The spans (start, end, kind) of every secret-looking cell of a secret column, in increasing order. ``hints``:
    where the token pass found ``HEADER_HINT`` in ``data``, in increasing order."""
    return read_tables(data, hints)[0]


def read_tables(data: bytes, hints: list[int]) -> tuple[list[tuple[int, int, str]], tuple[int, int] | None]:
    """``secret_cells``, and the span of the header lines (a psql or box table's with its rule) of the last table
    with a secret column whose rows run to the end of ``data`` (None when none does): a capped output's head that
    ends inside such a table leaves its rows in the tail without their header (``cap.carried_header``)."""
    spans: list[tuple[int, int, str]] = []
    open_span: tuple[int, int] | None = None
    pos, length, read = 0, len(data), 0

    def over_budget(line_start: int) -> int:
        """0 while a line at ``line_start`` may be read, else where the dense span that starts there ends."""
        nonlocal read
        read += 1
        if read <= FREE_LINES + line_start // BYTES_PER_LINE:
            return 0
        end = data.find(b"\n", min(length, line_start + DENSE_SPAN))
        end = length if end < 0 else end
        spans.append((line_start, end, DENSE_KIND))
        return end

    for hint in hints:
        if hint < pos:
            continue  # on a line already read (a header's, or a row's)
        # Back to the line's start, never before the last line read (each byte is read back once at most).
        line_start = data.rfind(b"\n", max(0, pos - 1), hint) + 1 or pos
        if dense_end := over_budget(line_start):
            pos = dense_end + 1
            continue
        header_end = data.find(b"\n", hint)
        header_end = length if header_end < 0 else header_end
        pos = header_end + 1
        if data[line_start] in DELIMITED_FIRST and _delimited(data[line_start:header_end]):
            tabbed = delimited_table(data, line_start, header_end, over_budget)  # (``delimited_tables``)
            if tabbed is not None:
                tab_cells, pos = tabbed
                if pos >= length:
                    open_span = (line_start, header_end)
                spans += [(start, end, "table_secret") for start, end, password_like in tab_cells
                          if password_like is None or _secret_cell(data[start:end], password_like)]
                continue
        if VERTICAL_BYTES in data[line_start:header_end] or DOUBLE_VERTICAL_BYTES in data[line_start:header_end]:
            box = box_table(data, line_start, header_end, over_budget)  # a box, its rule on the next line
            if box is not None:
                box_cells, pos = box
                if pos >= length:
                    open_span = (line_start, _line_end(data, header_end + 1))
                spans += [(start, end, "table_secret") for start, end, password_like in box_cells
                          if password_like is None or _secret_cell(data[start:end], password_like)]
            continue
        if b"|" in data[line_start:header_end]:  # psql's header, its rule on the next line (``psql_tables``)
            table = psql_table(data, line_start, header_end, over_budget, MAX_ROW_BYTES)
            if table is not None:
                psql_cells, pos = table
                if pos >= length:
                    open_span = (line_start, _line_end(data, header_end + 1))
                spans += [(start, end, "table_secret") for start, end, password_like in psql_cells
                          if _secret_cell(data[start:end], password_like)]
            continue
        header = _header(data[line_start:header_end])
        if header is None:
            continue
        columns, secret, bounds, by_position = header
        named = secret[-1][1] is None  # a names-and-values table: each row's name cell read too (its values last)
        ended = length  # where the table ends: the text's end, unless a line ends it first
        for row_start, row_end in table_rows(data, header_end + 1, over_budget):
            row = data[row_start:row_end]
            if not row.strip() or len(row) > MAX_ROW_BYTES:
                ended = row_start
                break
            if row.lstrip(b" \t")[:1] not in _RULE_FIRST or _RULE.fullmatch(row) is None:
                name_cell: tuple[int, int] | None = None
                if _cells_starting(row, columns) >= 2:  # only the secret columns' cells are then read
                    cells = [(_cell_at(row, offset) or _cell_under(row, offset, bounds[offset]), password_like)
                             for offset, password_like in secret]
                    name_cell = _cell_at(row, columns[0][0]) if named else None
                elif len(found := [(m.start(), m.end()) for m in _CELL.finditer(row)]) == len(columns):
                    # As many cells as the header has columns but not aligned under it (a tool that pads by
                    # another width): the secret columns' cells by their position.
                    cells = [(found[position], password_like) for position, password_like in by_position]
                    name_cell = found[0]
                else:
                    ended = row_start
                    break  # the table ended: this line does not fit it
                for cell, password_like in cells:
                    if cell is None:
                        continue
                    value = row[cell[0] : cell[1]]
                    if password_like is None:  # a names-and-values table's value: its row's name decides
                        if name_cell is not None and named_value(row[name_cell[0] : name_cell[1]], value):
                            spans.append((row_start + cell[0], row_start + cell[1], "table_secret"))
                    elif _secret_cell(value, password_like):
                        spans.append((row_start + cell[0], row_start + cell[1], "table_secret"))
        if ended >= length:
            open_span = (line_start, header_end)
        pos = max(pos, ended)
    return spans, open_span


def _delimited(line: bytes) -> bool:
    """Whether a header's line holds a delimiter of ``delimited_tables`` (a tab, "|", "," or ";")."""
    return b"\t" in line or b"," in line or b"|" in line or b";" in line


def _line_end(data: bytes, start: int) -> int:
    end = data.find(b"\n", start)
    return len(data) if end < 0 else end


def _column_bounds(columns: list[tuple[int, bytes]]) -> dict[int, tuple[int, int, int]]:
    """Each column's neighbours as ``_cell_under`` reads them: by its offset, (the previous column's offset, the end
    of its own name, the next column's offset)."""
    offsets = [offset for offset, _ in columns]
    return {offset: (offsets[i - 1] if i else -1, offset + len(name), offsets[i + 1] if i + 1 < len(offsets)
                     else MAX_ROW_BYTES + 1) for i, (offset, name) in enumerate(columns)}


def _cell_under(row: bytes, offset: int, bounds: tuple[int, int, int]) -> tuple[int, int] | None:
    """The cell of a column whose value does not start under its name: right-aligned (or centred) under it, as
    ``column -R``, psql's numbers and many reports align values: the first cell that starts after the previous
    column's start (a long value of that column spilling to the right starts there), ends by the next column's
    start and reaches under the name or past it."""
    previous, _, following = bounds
    for cell in _CELL.finditer(row, previous + 1, min(len(row), following)):
        if row[cell.start() - 1 : cell.start()] not in (b" ", b"\t"):
            continue  # the rest of a cell that started at the previous column (or before it)
        if cell.end() > offset:
            return cell.start(), cell.end()
    return None

