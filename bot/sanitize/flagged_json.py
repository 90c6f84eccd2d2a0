"""Every leaf under a JSON value that a flag of its object marks secret: a Terraform output marked sensitive, a
1Password field of type CONCEALED.

``terraform output -json`` prints a sensitive output in clear: ``{"sensitive": true, "type": ..., "value": ...}``.
A string's value is one detector's (``context_tools``: ``sensitive_value``), but an object's or a map's value is a
block of pretty-printed JSON (``"value": {"db": "PW", ...}``, its type a list over several lines), whose keys name
nothing secret. So the structure decides: in a JSON object holding ``"sensitive": true``, every string and number
under its ``"value"`` key is hidden (keys, ``true``/``false``/``null`` and the empty string stay), before or after
that key (``terraform state pull`` writes ``value`` first, ``output -json`` and ``show -json`` ``sensitive`` first).
A plan's output change marks its values the same way (``"after_sensitive": true`` for ``"after"``,
``"before_sensitive": true`` for ``"before"``). A 1Password field object (``op item get --format json``, jq's
reshapings of it, op v1's ``{"k": "concealed", ..., "v": ...}``) marks its ``"value"`` by ``"type": "CONCEALED"``,
before or after it, whatever keys stand between (``context_programs``' detector reads the type first only, within
five keys).

One forward pass over the JSON tokens of a text that holds such a flag (``_FLAG``; other text costs one search):
each token is read once and pushed at most once on the stack of open objects and arrays, and the leaves to hide
are ranges of one list, merged in one sort, so the walk is linear in the text. Strings end on their line (JSON's
do), so a stray quote in prose beside the JSON misleads at most its own line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.literals import containment

# What must be in the text: a flag (``"sensitive": true``, ``"after_sensitive": true``, ``"type": "CONCEALED"``),
# after one of its words (``containment``: a rare byte first).
_WORDS = tuple(containment(word) for word in (b"sensitive", b"CONCEALED", b"concealed"))
_FLAG = re.compile(rb'(?:"(?:after_|before_)?sensitive"|"type"|"k")[ \t\r\n]{0,64}:[ \t\r\n]{0,64}'
                   rb'(?:true|"CONCEALED"|"concealed")')
# The tokens the walk reads: a string (to its closing quote on its line, escapes honoured), a structural character, a
# number, a literal. Anything else (blanks, prose around the JSON) is passed over by the search.
_TOKEN = re.compile(
    rb'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|[{}\[\]:,]|-?[0-9][0-9.eE+-]*+|true|false|null'
)
# Which key a flag (its key, then its value) marks, in the object holding both.
_SENSITIVE, _CONCEALED = "sensitive_value", "password"
_MARKS = {
    (b'"sensitive"', b"true"): (b'"value"', _SENSITIVE), (b'"after_sensitive"', b"true"): (b'"after"', _SENSITIVE),
    (b'"before_sensitive"', b"true"): (b'"before"', _SENSITIVE), (b'"type"', b'"CONCEALED"'): (b'"value"', _CONCEALED),
    (b'"k"', b'"concealed"'): (b'"v"', _CONCEALED),
}
_FLAG_KEYS = frozenset(key for key, _ in _MARKS)
_LITERAL_FIRSTS = frozenset(b"tfn")  # true, false, null
_QUOTE, _COLON, _COMMA = 0x22, 0x3A, 0x2C
_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
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
        self.marked: list[tuple[bytes, str]] = []  # the keys a flag marks, each with its secret's kind


# Arrays keep nothing of their own (no key, no flag, no spans: only an object's keys set those), so one shared
# entry stands for every open array: a text of ``[[[[...`` makes no object per bracket for the collector to walk.
_ARRAY = _Open(False)


def _hidden_leaves(data: bytes) -> list[tuple[int, int, str]]:
    """The byte spans of the leaves to hide, in order, each with its kind."""
    leaves: list[tuple[int, int]] = []  # every string or number read as a value (not a key), in order
    ranges: list[tuple[int, int, str]] = []  # ranges of ``leaves`` under a marked key, with its kind
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
                flag = previous if previous in _FLAG_KEYS else b""
            previous = b":"
            continue
        if first in _CLOSERS or first == _COMMA:
            if top is not None and top.is_object and top.key:
                top.spans[top.key] = (top.key_at, len(leaves))
                top.key = b""
            if first in _CLOSERS and top is not None:
                stack.pop()
                ranges += ((*top.spans[key], kind) for key, kind in top.marked if key in top.spans)
        elif first in _OPENERS:
            stack.append(_Open(True) if first == 0x7B else _ARRAY)
        else:
            if flag and top is not None and (mark := _MARKS.get((flag, token.group()))) is not None:
                top.marked.append(mark)  # (``flag`` is set only right after a flag's ":")
            if first not in _LITERAL_FIRSTS:
                leaves.append((start, end))  # a string or a number (not true, false, null)
        previous, flag = token.group() if first == _QUOTE else data[start : start + 1], b""
    spans: list[tuple[int, int, str]] = []
    last = 0
    for begin, stop, kind in sorted(ranges):  # inner objects close first: merged in order of their first leaf
        spans += ((*leaf, kind) for leaf in leaves[max(begin, last) : stop])
        last = max(last, stop)
    return spans


def redact_flagged_values(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """``data`` with every leaf under a value its object's flag marks replaced by ``marker`` (a string keeps its
    quotes), and how many were. Run after the detector passes: a string one of them hid whole (a string output's
    value, ``sensitive_value``) stays as it is; one they hid in part (a URL's password) is hidden whole."""
    if not any(contains(data) for contains in _WORDS) or _FLAG.search(data) is None:
        return data, 0
    pieces: list[bytes] = []
    last = count = 0
    for start, end, kind in _hidden_leaves(data):
        if data[start] == _QUOTE:
            start, end = start + 1, end - 1
            if end == start or _WHOLE_MARKER.fullmatch(data, start, end):
                continue  # empty, or hidden already
        pieces += (data[last:start], marker(kind, data[start:end]))
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
