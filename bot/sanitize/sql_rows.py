"""Secrets in a SQL dump's rows: ``mysqldump``'s ``INSERT INTO `users` VALUES (1,'a@x','PW',...),(...)``, an ORM's
or ``pg_dump --column-inserts``' ``INSERT INTO users (id, email, password) VALUES (...)`` and ``pg_dump``'s ``COPY
public.users (id, email, encrypted_password) FROM stdin;`` then tab-separated rows. A row holds no name beside its
values, so no detector of the passes reads them: the column a cell is in names it.

Which columns: the statement's own column list (``INSERT INTO t (a, b)``, ``COPY t (a, b)``), else the ``CREATE
TABLE`` of that table earlier in the same text (mysqldump prints it before the data); a cell under a column whose
name holds a secret (``password``, ``api_key``, ``remember_token``) is judged by that name's rules (a password's
takes any value; a key's or a token's a generated one). With neither, a table of accounts or of secrets by its name
(``users``, ``admins``, ``api_keys``, ``oauth_tokens``) has each quoted cell that is shaped like a password (three
of lower case, capitals, digits and symbols) or a password's hash hidden; emails, dates, UUIDs, URLs and words stay.
Any other table's rows are not read.

Linear: gated by the statements' words (a substring search); each statement's head found once by a forward search,
each row of a statement read once, cell by cell, and only in the statements with a column to hide.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize import shapes
from bot.sanitize.literals import containment

Marker = Callable[[str, bytes], bytes]

_HAS_INSERT = (containment(b"INSERT INTO"), containment(b"insert into"))
_HAS_COPY = containment(b"COPY ")
_IDENTIFIER = rb"[`\"\[]?[A-Za-z_][A-Za-z0-9_$]{0,63}[`\"\]]?"
_TABLE = rb"(?P<table>" + _IDENTIFIER + rb"(?:\." + _IDENTIFIER + rb")?)"
_INSERT = re.compile(
    rb"(?i:insert)[ \t]+(?:(?i:ignore)[ \t]+)?(?i:into)[ \t]+" + _TABLE
    + rb"[ \t]*(?:\((?P<columns>[^()\n]{1,4096})\)[ \t]*)?(?i:values)[ \t]*"
)
_COPY = re.compile(rb"(?m:^)COPY[ \t]+" + _TABLE + rb"[ \t]*\((?P<columns>[^()\n]{1,4096})\)[ \t]+FROM stdin;\r?\n")
_CREATE = re.compile(rb"(?i:create)[ \t]+(?i:table)[ \t]+(?:(?i:if not exists)[ \t]+)?" + _TABLE + rb"[ \t]*\(")
# A column's definition in a CREATE TABLE, one a line as dumps print them (a key's or a constraint's line is none).
_COLUMN_LINE = re.compile(rb"[ \t]*[`\"\[]?([A-Za-z_][A-Za-z0-9_$]{0,63})[`\"\]]?[ \t]+[A-Za-z]")
_NOT_COLUMNS = frozenset({b"primary", b"key", b"unique", b"constraint", b"index", b"foreign", b"check", b"fulltext",
                          b"spatial", b"period", b"exclude"})
_CREATE_BYTES = 65536  # the most of a CREATE TABLE read for its columns
# One cell of a row: a quoted string (a backslash escape or a doubled quote inside), or anything else up to the next
# "," or ")" (a number, NULL, a function's call with its own parentheses, _binary 'x' as one).
_QUOTED_CELL = rb"'(?:[^'\\]|\\.|'')*'"
_CELL = re.compile(
    rb"[ \t\r\n]*(?:(?P<quoted>" + _QUOTED_CELL + rb")|(?:[^,()'\n]|\([^()\n]*\)|" + _QUOTED_CELL + rb")+)[ \t\r\n]*"
)
_ROW_START = re.compile(rb"[ \t\r\n]*\(")
_ROW_NEXT = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*\(")

# Tables of accounts or of secrets, by a word of their name.
_ACCOUNT_WORDS = frozenset({"user", "users", "account", "accounts", "admin", "admins", "administrators", "member",
                            "members", "login", "logins", "credential", "credentials", "operator", "operators",
                            "staff", "auth", "secret", "secrets", "passwords"})
# A password's hash as frameworks keep it: crypt(3)'s $id$..., Django's algorithm$iterations$salt$hash, an LDAP
# scheme, or a hex digest of an old one (md5, sha1, sha256, sha512).
_PASSWORD_HASH = re.compile(
    r"\$[0-9a-z]{1,8}\$\S{8,}|[a-z0-9_]{3,32}\$\d{1,8}\$\S{4,}|\{[A-Z0-9-]{2,16}\}\S{8,}"
    r"|[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{128}"
)
_NOT_A_PASSWORD = re.compile(
    r"[^@\s]{1,64}@[^@\s]{1,255}|[a-z][a-z0-9+.-]{1,16}://\S*|\d{4}-\d{2}-\d{2}(?:[ T][\d:.]{1,20})?\S{0,8}"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_SYMBOLS = re.compile(r"[+/=~!#%^*@?&_.-]")


def redact_sql_rows(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """``data`` with the secret cells of its SQL statements' rows replaced by their markers, and how many."""
    inserts = any(has(data) for has in _HAS_INSERT)
    copies = _HAS_COPY(data)
    if not (inserts or copies):
        return data, 0
    spans: list[tuple[int, int, str]] = []
    created = _created_tables(data)
    if inserts:
        for head in _INSERT.finditer(data):
            columns = _column_list(head.group("columns"), created, head.group("table"))
            if columns is not None or _account_table(head.group("table")):
                spans += _insert_cells(data, head.end(), columns)
    if copies:
        for head in _COPY.finditer(data):
            spans += _copy_cells(data, head.end(), _column_list(head.group("columns"), {}, b""))
    return _replace(data, spans, marker)


def _name(identifier: bytes) -> str:
    return identifier.strip(b"`\"[] \t").decode("ascii", "replace")


def _table_key(table: bytes) -> str:
    return _name(table.split(b".")[-1]).lower()


def _account_table(table: bytes) -> bool:
    name = _table_key(table)
    return any(word in _ACCOUNT_WORDS for word in re.split(r"[_$]", name)) or shapes.name_kind(name) is not None


def _created_tables(data: bytes) -> dict[str, list[str]]:
    """The columns of each CREATE TABLE in ``data``, by the table's name (lower case, its schema left out)."""
    tables: dict[str, list[str]] = {}
    if not any(has(data) for has in _HAS_CREATE):
        return tables
    for head in _CREATE.finditer(data):
        columns: list[str] = []
        stop = min(len(data), head.end() + _CREATE_BYTES)
        for line in data[head.end() : stop].split(b"\n")[1:]:
            if line.lstrip()[:1] in (b")", b""):
                break
            found = _COLUMN_LINE.match(line)
            if found is not None and found.group(1).lower() not in _NOT_COLUMNS:
                columns.append(found.group(1).decode("ascii"))
        if columns:
            tables[_table_key(head.group("table"))] = columns
    return tables


_HAS_CREATE = (containment(b"CREATE TABLE"), containment(b"create table"))


def _column_list(listed: bytes | None, created: dict[str, list[str]], table: bytes) -> list[str] | None:
    """The statement's columns: its own list, else its table's CREATE TABLE's, else None (not known)."""
    if listed is not None:
        return [_name(column) for column in listed.split(b",")]
    return created.get(_table_key(table)) if table else None


def _secret_column(column: str) -> bool:
    """Whether a column may hold a secret: its name names one, or a password's hash (``password_digest``)."""
    return shapes.name_kind(column) is not None or "pass" in column.lower()


def _secret_cell(column: str | None, value: str) -> bool:
    """Whether a quoted cell's value (its quotes off) is a secret: under a known column, by the column's name; under
    none (a table of accounts whose columns are not known), by its shape alone."""
    if not value or "[REDACTED:" in value or shapes.trivial(value):
        return False
    if column is not None:
        if shapes.name_kind(column) is None:  # a password's hash under its describing name (password_digest)
            return "pass" in column.lower() and _PASSWORD_HASH.fullmatch(value) is not None
        return shapes.accept_assignment(column, "=", value, True, quoted=True, code=False) is not None
    if _NOT_A_PASSWORD.fullmatch(value) or " " in value:
        return False
    if _PASSWORD_HASH.fullmatch(value):
        return True
    kinds = (value != value.upper()) + (value != value.lower()) + any(c.isdigit() for c in value)
    return kinds + (_SYMBOLS.search(value) is not None) >= 3 and shapes.generated(value)


def _insert_cells(data: bytes, pos: int, columns: list[str] | None) -> list[tuple[int, int, str]]:
    """The secret cells of an INSERT's rows from ``pos`` (after VALUES) to the statement's end."""
    if columns is not None and not any(_secret_column(column) for column in columns):
        return []
    spans = []
    row = _ROW_START.match(data, pos)
    while row is not None:
        pos, index = row.end(), 0
        while (cell := _CELL.match(data, pos)) is not None and cell.end() > pos:
            quoted = cell.group("quoted")
            if quoted is not None:
                column = columns[index] if columns is not None and index < len(columns) else None
                if (columns is None or column is not None) and _secret_cell(column, _unquoted(quoted)):
                    spans.append((cell.start("quoted") + 1, cell.end("quoted") - 1, "password"))  # (quotes kept)
            pos, index = cell.end(), index + 1
            if data[pos : pos + 1] != b",":
                break
            pos += 1
        if data[pos : pos + 1] != b")":
            break
        row = _ROW_NEXT.match(data, pos + 1)
    return spans


def _unquoted(quoted: bytes) -> str:
    return quoted[1:-1].replace(b"''", b"'").replace(b"\\'", b"'").decode("utf-8", "replace")


def _copy_cells(data: bytes, pos: int, columns: list[str] | None) -> list[tuple[int, int, str]]:
    """The secret cells of a COPY's tab-separated rows from ``pos`` to its ``\\.`` line."""
    secret = [index for index, column in enumerate(columns or []) if _secret_column(column)]
    if not secret or columns is None:
        return []
    spans = []
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end].rstrip(b"\r")
        if line == b"\\.":
            break
        cells = line.split(b"\t")
        if len(cells) != len(columns):
            break
        start = pos
        for index, cell in enumerate(cells):
            value = cell.decode("utf-8", "replace")
            if index in secret and cell != b"\\N" and _secret_cell(columns[index], value):
                spans.append((start, start + len(cell), "password"))
            start += len(cell) + 1
        pos = end + 1
    return spans


def _replace(data: bytes, spans: list[tuple[int, int, str]], marker: Marker) -> tuple[bytes, int]:
    if not spans:
        return data, 0
    pieces: list[bytes] = []
    last = 0
    for start, end, kind in spans:
        pieces += (data[last:start], marker(kind, data[start:end]))
        last = end
    pieces.append(data[last:])
    return b"".join(pieces), len(spans)
