"""A Kubernetes Secret's ``data:``/``stringData:`` block that the cap's head ends inside: its deciding lines.

A capped output's tail is cleaned apart from its head (``cap.sanitize_captured``). A Secret written ``kind:`` first
(``cat secret.yaml``, ``helm template``, a hand-written JSON manifest) whose ``stringData:`` runs past the head left
the tail's values with neither their kind nor their block above them: plain strings, no base64 to judge them by, so
``structured``'s cut-start rule (base64 values of an object whose kind is not in the text) could not take them, and
they were shown (found by review, issue #11). ``open_secret_block`` finds the head's open block and its ``kind:
Secret`` line, so that ``cut_context`` puts both before the tail for the redaction.

Linear: the lines that may enclose the head's last line are found from the end by a search over the head reversed
(each a line indented less than the one before, at most ``MAX_DEPTH`` of them), the mapping's kind lines by one
search over the mapping's own lines.
"""

from __future__ import annotations

import re

from bot.sanitize.literals import containment
from bot.sanitize.structured import _DATA_OPENING, _KEY, _SECRET_KIND

_has_secret = containment(b"Secret")
# The most lines indented less and less that are read up from the head's end (each a search, and a pattern compiled
# for its indentation): a Secret's block is a few levels deep; a staircase of indentations made to cost us ends here
# (no carried lines: the tail is read alone, as before ``cut_context``).
MAX_DEPTH = 64
_DATA_KEYS = (b"data", b"stringData")
# A kind key's line (the walk's ``_KEY`` reads it the same way), for the search over one mapping's lines.
_KIND_LINE = re.compile(rb'(?m)^(?P<indent>[ \t]*+)(?P<item>-[ \t]++)?"?kind"?[ \t]*+:[ \t]*+(?P<value>[^\n]*)')
# In the head reversed: a line's first character that is no blank and no "#" (a comment), after (so, in the head,
# before) at most N blanks and then a newline or the text's start; one pattern per N, compiled once.
_SHALLOWER: dict[int, re.Pattern[bytes]] = {}
_ANY_FILLED = re.compile(rb"[^ \t\n#][ \t]*+(?:\n|\Z)")


def _shallower(bound: int) -> re.Pattern[bytes]:
    pattern = _SHALLOWER.get(bound)
    if pattern is None:
        if len(_SHALLOWER) >= 64:
            _SHALLOWER.clear()
        pattern = _SHALLOWER[bound] = re.compile(rb"[^ \t\n#][ \t]{0,%d}+(?:\n|\Z)" % (bound - 1))
    return pattern


def _line_before(head: bytes, rev: bytes, pos: int, bound: int | None) -> tuple[int, int, int] | None:
    """The last filled line (no comment) that starts before ``pos`` (a line's start, or the head's end) and is
    indented less than ``bound`` (None: any): its start, end and indentation. ``rev`` is ``head`` reversed."""
    if bound is not None and bound <= 0:
        return None
    found = (_ANY_FILLED if bound is None else _shallower(bound)).search(rev, len(head) - pos)
    if found is None:
        return None
    first = len(head) - 1 - found.start()  # the line's first character, in the head
    start = head.rfind(b"\n", 0, first) + 1
    end = head.find(b"\n", first)
    return start, len(head) if end < 0 else end, first - start


def open_secret_block(head: bytes) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The spans of the ``kind: Secret`` line and of the ``data:``/``stringData:`` line of the Secret whose block runs
    to the end of ``head`` (its values are what the tail starts with), else None: no such block, or its object's kind
    is not before it (kubectl prints ``data:`` before ``kind:``; ``structured`` judges those in the tail, where the
    kind then stands)."""
    if not _has_secret(head):
        return None
    rev = head[::-1]
    pos, bound = len(head), None
    for _ in range(MAX_DEPTH):
        line = _line_before(head, rev, pos, bound)
        if line is None:
            return None
        start, end, indent = line
        text = head[start:end]
        if text.strip() == b"---":
            return None
        match = _KEY.match(text, indent)
        if match is not None:
            item, key, value = match.groups()
            key_indent = indent + len(item or b"")
            opening = _DATA_OPENING.fullmatch(value.strip()) if key in _DATA_KEYS else None
            if opening is not None and not opening.group("flow") and (bound is None or key_indent < bound):
                kind = None if item else _secret_kind_line(head, rev, start, key_indent)
                return None if kind is None else (kind, (start, end))
        pos, bound = start, indent
    return None


def _secret_kind_line(head: bytes, rev: bytes, data_start: int, key_indent: int) -> tuple[int, int] | None:
    """The span of a ``kind: Secret`` key of the mapping whose key at ``key_indent`` starts the line at
    ``data_start``, before that line (None: no such key). The mapping starts after the last line before it indented
    less (a list item whose key is at ``key_indent`` is its first line), or after a ``---``."""
    floor = 0
    boundary = _line_before(head, rev, data_start, key_indent) if key_indent > 0 else None
    if boundary is not None:
        start, end, indent = boundary
        item = _KEY.match(head, start + indent, end)
        opens = item is not None and item.group("item") and indent + len(item.group("item")) == key_indent
        floor = start if opens else end
    separator = head.rfind(b"\n---", floor, data_start)
    if separator >= 0:
        floor = separator + 4
    for kind in _KIND_LINE.finditer(head, floor, data_start):
        if len(kind.group("indent")) + len(kind.group("item") or b"") == key_indent and _SECRET_KIND.match(
                kind.group("value").strip()) is not None:
            return kind.start(), kind.end()
    return None
