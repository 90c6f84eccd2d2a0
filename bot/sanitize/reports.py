"""What the token pass reports without redacting it, and the spans read from there: a table's secret cells
(``tables.py``) and the lines after an echoed command that asks for a secret (``echoed.py``).

Both are found by branches of the token pass's own scan (no scan of their own: a search over every text cost 1.5 ms
per MiB), and both read their lines in the text the token pass was given, since its markers would move a table's
cells from under their columns. ``apply_reports`` then joins their spans with the token pass's own replacements
(``Reports.edits``, in the same text) in one rebuild of the text: running the token pass a second time on the
result cost as much as the first for every text holding such a hint (found by review).
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
    # The token pass's replacements in the text it read: (start, end, the marker's bytes), in increasing order.
    edits: list[tuple[int, int, bytes]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.tables or self.echoes)


def apply_reports(data: bytes, reports: Reports, marker: Marker) -> tuple[bytes, int]:
    """``data`` with the token pass's replacements (``reports.edits``) and the reported spans replaced by their
    markers, and how many. A span inside one before it (a token on a withheld line, a table printed after an echoed
    command) is left to the earlier one; one that reaches past it has its rest replaced by its own marker (fails
    closed: no byte either found is shown)."""
    spans: list[tuple[int, int, str | bytes]] = [*reports.edits]
    spans += withheld_lines(data, reports.echoes) + secret_cells(data, reports.tables)
    spans.sort(key=lambda span: (span[0], -span[1]))
    pieces: list[bytes] = []
    last = count = 0
    length = len(data)
    for start, end, replacement in spans:
        if end <= last:
            continue
        if start < last or isinstance(replacement, str):
            start = max(start, last)
            # Only a span that starts or ends on a non-ASCII byte can cut a character (asked inline: a withheld line
            # or a table cell on every line of dense text is replaced here)
            if start < length and data[start] >= 0x80 or end < length and data[end] >= 0x80:
                start, end = whole_characters(data, start, end, last)
            replacement = marker(replacement if isinstance(replacement, str) else "reported_overlap",
                                 data[start:end])
        pieces += (data[last:start], replacement)
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
