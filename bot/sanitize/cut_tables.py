"""A table's header carried across the cap's gap, so that rows in the tail are read under their header.

A capped output keeps a head and a tail and cleans each alone (``cap.sanitize_captured``). A table longer than
both (``psql -c 'select * from users'``, ``sqlite3 -box``, an aligned listing with a ``PASSWORD`` column: a few
thousand rows) had its header in the head and the rest of its rows in the tail, where nothing named their
columns: every secret cell of the tail was shown (found by review, issue #11). When the head's last table with a
secret column runs to the head's end, its header lines are put before the tail for the redaction, and taken off
again after it.
"""

from __future__ import annotations

import re2

from bot.sanitize.automata import UNANCHORED, re2_options
from bot.sanitize.tables import HEADER_HINT, read_tables

_HINTS = re2.compile(HEADER_HINT, re2_options())._regexp.Match


def carried_header(head: bytes) -> bytes:
    """The header lines (with a psql or box table's rule) of the last table with a secret column whose rows run to
    the end of ``head``, else b""."""
    span = open_table_span(head)
    return b"" if span is None else head[span[0] : span[1]]


def open_table_span(head: bytes) -> tuple[int, int] | None:
    """The span of ``carried_header``'s lines in ``head`` (None: no such table). One scan for the headers' hints,
    then each table's rows read once (linear)."""
    hints, pos, length = [], 0, len(head)
    while pos < length:
        start, end = _HINTS(UNANCHORED, head, pos, length)[0]
        if start < 0:
            break
        hints.append(start)
        pos = end if end > start else start + 1
    if not hints:
        return None
    return read_tables(head, hints)[1]
