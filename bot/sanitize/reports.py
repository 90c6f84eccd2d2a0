"""What the token pass reports without redacting it, and the spans read from there: a table's secret cells
(``tables.py``) and the lines after an echoed command that asks for a secret (``echoed.py``).

Both are found by branches of the token pass's own scan (no scan of their own: a search over every text cost 1.5 ms
per MiB), and both read their lines in the text the token pass was given, since its markers would move a table's
cells from under their columns. ``redact.Redactor`` then applies the spans and runs the token pass again on the
result, only for the texts that hold such a header or echoed command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.sanitize.characters import whole_characters
from bot.sanitize.echoed import withheld_lines
from bot.sanitize.tables import secret_cells

Marker = Callable[[str, bytes], bytes]


@dataclass
class Reports:
    """Where the token pass found a table's header naming a secret's column, and an echoed command line."""

    tables: list[int] = field(default_factory=list)
    echoes: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.tables or self.echoes)


def apply_reports(data: bytes, reports: Reports, marker: Marker) -> tuple[bytes, int]:
    """``data`` with the reported spans replaced by their markers, and how many. A span that overlaps one before it
    (a table printed after an echoed command, whose lines are withheld whole) is left to the earlier one."""
    spans = sorted(withheld_lines(data, reports.echoes) + secret_cells(data, reports.tables))
    pieces: list[bytes] = []
    last = count = 0
    for start, end, kind in spans:
        if start < last:
            continue
        start, end = whole_characters(data, start, end, last)
        pieces += (data[last:start], marker(kind, data[start:end]))
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
