"""A 1Password field's value beside its ``CONCEALED`` type in a table's row, whichever side it stands on.

A table of an item's fields (``op item get`` reshaped by ``jq -r '... | [.label, .type, .value] | @tsv'``, a
``column -t`` of them, a script's report) writes the type as a cell of its own: ``password  CONCEALED  PW`` (label,
type, value) or ``db  PW  CONCEALED  op://...`` (label, value, type, reference). What the vault keeps concealed is a
secret whatever its label or shape, so a cell beside the type is hidden unless it reads as something else: the
field's label or a column's name (it names a secret, ``secret_names.name_kind``, or is ``LABEL``, ``VALUE``...),
its reference (``op://``), 1Password's placeholder (``[use 'op item get ... --reveal' to reveal]``) or a marker
already there; the cell before it stays when a value follows it and it is the row's first (the label's place).
``password  CONCEALED`` (a field list without values) stays; ``PW  CONCEALED`` is hidden. Cells are split as
aligned tables write them: a tab, or two blanks or more.

Each line holding the word is read once (found by ``bytes.find``, then passed over to its end), so the pass is
linear; text without ``CONCEALED`` costs one search.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize import secret_names
from bot.sanitize.literals import containment

_WORD = b"CONCEALED"
_HAS_WORD = containment(_WORD)
# A cell and the gap after it: a tab, or two blanks or more, end a cell; one blank is inside it ("api key").
_CELL = re.compile(rb"([^\t ](?:[^\t ]| (?! ))*+)([ \t]*+)")
_COLUMN_NAMES = frozenset({"label", "name", "field", "value", "type", "id", "purpose", "section", "reference"})
_KEPT_VALUE = re.compile(rb"\[use 'op |\[REDACTED:[a-z0-9_]{1,40}(?:#[0-9a-f]{6})?\]\r?$|<concealed|op://")
KIND = "password"
_CELL_EDGES = (b" ", b"\t", b"\n", b"\r", b"")  # what stands on either side of a cell
Marker = Callable[[str, bytes], bytes]


def _kept(cell: bytes) -> bool:
    """Whether a cell beside the type is no value: the field's label or a column's name (a secret's name, ``LABEL``),
    its reference (``op://...``), 1Password's placeholder or a marker already there."""
    if _KEPT_VALUE.match(cell):
        return True
    text = cell.decode("utf-8", "replace")
    return text.lower() in _COLUMN_NAMES or secret_names.name_kind(text) is not None


def _value_cells(cells: list[tuple[int, int]], at: int, data: bytes) -> list[tuple[int, int]]:
    """The spans of the value's cells in a row whose cell ``at`` is the type: each neighbour that is no label,
    reference or placeholder (``_kept``); the one before only where none after is a value or it is not the row's
    first cell (``password  CONCEALED  PW``: the first is the label)."""
    before = cells[at - 1] if at > 0 and not _kept(data[cells[at - 1][0] : cells[at - 1][1]]) else None
    after = cells[at + 1] if at + 1 < len(cells) and not _kept(data[cells[at + 1][0] : cells[at + 1][1]]) else None
    found = [before] if before is not None and (after is None or at - 1 > 0) else []
    return found + [after] if after is not None else found


def redact_concealed_cells(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """``data`` with the value beside each ``CONCEALED`` cell replaced by ``marker``, and how many were."""
    if not _HAS_WORD(data):
        return data, 0
    pieces: list[bytes] = []
    last = count = line_end = 0
    found = data.find(_WORD)
    while found >= 0:
        if data[found - 1 : found] not in _CELL_EDGES or data[found + 9 : found + 10] not in _CELL_EDGES:
            found = data.find(_WORD, found + 9)  # inside a word or quotes (JSON's "CONCEALED"): no cell of its own
            continue
        line_start = data.rfind(b"\n", line_end, found) + 1 or line_end  # (back to the previous line read, at most)
        line_end = data.find(b"\n", found)
        line_end = len(data) if line_end < 0 else line_end
        cells = [cell.span(1) for cell in _CELL.finditer(data, line_start, line_end)]
        types = [i for i, (start, end) in enumerate(cells) if data[start:end].rstrip(b"\r") == _WORD]
        for start, end in _value_cells(cells, types[0], data) if types else ():
            end -= 1 if data[end - 1 : end] == b"\r" else 0
            pieces += (data[last:start], marker(KIND, data[start:end]))
            last, count = end, count + 1
        found = data.find(_WORD, line_end)
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
