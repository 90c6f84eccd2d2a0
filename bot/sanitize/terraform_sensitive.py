"""Every leaf under a Terraform output marked sensitive, whatever its type.

``terraform output -json`` prints a sensitive output in clear: ``{"sensitive": true, "type": ..., "value": ...}``.
A string's value is one detector's (``context_tools``: ``sensitive_value``), but an object's or a map's value is a
block of pretty-printed JSON (``"value": {"db": "PW", ...}``, its type a list over several lines), whose keys name
nothing secret. So the structure decides: in a JSON object holding ``"sensitive": true``, every string and number
under its ``"value"`` key is hidden (keys, ``true``/``false``/``null`` and the empty string stay), before or after
that key (``terraform state pull`` writes ``value`` first, ``output -json`` and ``show -json`` ``sensitive`` first).
A plan's output change marks its values the same way (``"after_sensitive": true`` for ``"after"``,
``"before_sensitive": true`` for ``"before"``).

One forward pass over the JSON tokens of a text that holds such a flag (``_FLAG``; other text costs one search):
each token is read once and pushed at most once on the stack of open objects and arrays, and the leaves to hide
are ranges of one list, merged in one sort, so the walk is linear in the text. Strings end on their line (JSON's
do), so a stray quote in prose beside the JSON misleads at most its own line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# What must be in the text: a flag set to true (``"sensitive": true``, ``"after_sensitive": true``).
_FLAG = re.compile(rb'"(?:after_|before_)?sensitive"[ \t\r\n]{0,64}:[ \t\r\n]{0,64}true')
# The tokens the walk reads: a string (to its closing quote on its line, escapes honoured), a structural character, a
# number, a literal. Anything else (blanks, prose around the JSON) is passed over by the search.
_TOKEN = re.compile(
    rb'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|[{}\[\]:,]|-?[0-9][0-9.eE+-]*+|true|false|null'
)
# Which key a flag marks, in the object holding both.
_MARKED = {b'"sensitive"': b'"value"', b'"after_sensitive"': b'"after"', b'"before_sensitive"': b'"before"'}
_QUOTE, _COLON, _COMMA = 0x22, 0x3A, 0x2C
_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
KIND = "sensitive_value"
_WHOLE_MARKER = re.compile(rb"\[REDACTED:[a-z0-9_]{1,40}(?:#[0-9a-f]{6})?\]")
Marker = Callable[[str, bytes], bytes]


class _Open:
    """An open object or array of the walk: for an object, the leaves its keys' values began at and ended at (the
    indices in the walk's list of leaves), and which keys a flag set to true marks."""

    __slots__ = ("is_object", "key", "key_at", "spans", "marked")

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.key = b""  # the key whose value is being read
        self.key_at = 0  # the index of the first leaf of that value
        self.spans: dict[bytes, tuple[int, int]] = {}  # key -> its value's leaves
        self.marked: list[bytes] = []  # the keys a flag set to true marks


def _hidden_leaves(data: bytes) -> list[tuple[int, int]]:
    """The byte spans of the leaves to hide, in order."""
    leaves: list[tuple[int, int]] = []  # every string or number read as a value (not a key), in order
    ranges: list[tuple[int, int]] = []  # ranges of ``leaves`` under a marked key
    stack: list[_Open] = []
    previous = b""  # the token before: a key's string before ":", a flag's ":" before "true"
    flag = b""  # the flag whose ":" was just read
    for token in _TOKEN.finditer(data):
        start, end = token.span()
        first = data[start]
        top = stack[-1] if stack else None
        if first == _COLON:
            if top is not None and top.is_object and previous[:1] == b'"':
                leaves.pop()  # the string before ":" was a key, not a value
                top.key, top.key_at = previous, len(leaves)
                flag = previous if previous in _MARKED else b""
            previous = b":"
            continue
        if first in _CLOSERS or first == _COMMA:
            if top is not None and top.is_object and top.key:
                top.spans[top.key] = (top.key_at, len(leaves))
                top.key = b""
            if first in _CLOSERS and top is not None:
                stack.pop()
                ranges += (top.spans[key] for key in top.marked if key in top.spans)
        elif first in _OPENERS:
            stack.append(_Open(first == 0x7B))
        elif first == 0x74:  # true
            if flag and previous == b":" and top is not None:
                top.marked.append(_MARKED[flag])
        elif first != 0x66 and first != 0x6E:  # a string or a number (not false, not null)
            leaves.append((start, end))
        previous, flag = token.group() if first == _QUOTE else data[start : start + 1], b""
    spans: list[tuple[int, int]] = []
    last = 0
    for begin, stop in sorted(ranges):  # inner objects close first: merged in order of their first leaf
        spans += leaves[max(begin, last) : stop]
        last = max(last, stop)
    return spans


def redact_sensitive_outputs(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """``data`` with every leaf under a Terraform output marked sensitive replaced by ``marker`` (a string keeps its
    quotes), and how many were. Run after the detector passes: a string one of them hid whole (a string output's
    value, ``sensitive_value``) stays as it is; one they hid in part (a URL's password) is hidden whole."""
    if b"sensitive" not in data or _FLAG.search(data) is None:
        return data, 0
    pieces: list[bytes] = []
    last = count = 0
    for start, end in _hidden_leaves(data):
        if data[start] == _QUOTE:
            start, end = start + 1, end - 1
            if end == start or _WHOLE_MARKER.fullmatch(data, start, end):
                continue  # empty, or hidden already
        pieces += (data[last:start], marker(KIND, data[start:end]))
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
