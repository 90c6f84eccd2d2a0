"""What the token pass reports without redacting it, and the spans read from there: a table's secret cells
(``tables.py``) and the lines after an echoed command that asks for a secret (``echoed.py``).

Both are found by branches of the token pass's own scan (no scan of their own: a search over every text cost 1.5 ms
per MiB), and both read their lines in the text the token pass was given, since its markers would move a table's
cells from under their columns. ``apply_reports`` then joins their spans with the token pass's own replacements
(``Reports.edits``, in the same text) in one rebuild of the text: running the token pass a second time on the
result cost as much as the first for every text holding such a hint (found by review). Which of the token pass's
candidates is such a hint rather than a token, the search loop asks ``reported_hint``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.sanitize.characters import whole_characters
from bot.sanitize.echoed import PROMPT_FIRST, echo_hint, withheld_lines
from bot.sanitize.tables import MAX_HINT_NAME, header_hint_end, secret_cells

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


def reported_hint(data: bytes, start: int, end: int) -> int:
    """Whether the token pass's candidate at ``start`` is one it reports (``Reports``) rather than a token: -1 for
    an echoed command (resume one byte on), the length of a table header's secret column name with its blanks before
    it (resume there), else 0. Asked of every candidate of the token pass, so its first byte decides what is read:
    an echoed command opens its line with "$", "#" or "+"; a header's hint holds a column's name and blanks, not a
    token's length of characters."""
    first = data[start]
    if first in PROMPT_FIRST and (start == 0 or data[start - 1] == 10) and echo_hint(data, start, end):  # 10: "\n"
        return -1
    if first in b"$#+":  # (no hint: a token, ``$2y$10$...``)
        return 0
    if first == 0xE2:  # "│" or "║" (their first byte): a box's header (``box_tables.BOX_HEADER_HINT``)
        return header_hint_end(data[start:end])
    if (start == 0 or data[start - 1] == 10) and first not in b" \t" and (
            data.find(b"\t", start, end) >= 0 or data.find(b",", start, end) >= 0 or data.find(b"|", start, end) >= 0
            or data.find(b";", start, end) >= 0):
        return header_hint_end(data[start:end])  # a delimited header (``delimited_tables.DELIMITED_HEADER_HINT``)
    # A header's hint starts with its blanks (a later column), or ends with the next column's first letter after a
    # blank (the first column); a token may start with one blank, and is longer than a column's name.
    if first in b" \t" or end - start > 2 and data[end - 2] in b" \t":
        span = data[start:end]
        if len(span) - span.count(b" ") - span.count(b"\t") <= MAX_HINT_NAME:
            return header_hint_end(span)
    return 0
