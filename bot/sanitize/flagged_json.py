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
are ranges of one list, merged in one sort, so the walk is linear in the text. What needs no Python step per token
is read in one (a token of the walk costs about 1 us): a run of commas, of ``[``s (one shared stack entry each,
pushed at once), of ``]``s (the arrays above the last open object popped at once), and the leaves that open an
array, kept as one range and searched again for its leaves only when it is hidden. Strings end on their line (JSON's
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
_STRING = rb'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
_NUMBER = rb"-?[0-9][0-9.eE+-]*+"
_BLANKS = rb"[ \t\r\n]*"
# Runs the walk reads in one step, each one the same tokens the one-token search would read: ``[``s and the leaves
# that open the array, two or more separated by commas, the last before a comma or a closer (so none is a key:
# tried only in an array, a run costs keys and values nothing), commas, ``]``s (blanks between).
_TOKEN = re.compile(
    rb"\[[ \t\r\n\[]*(?P<run>(?:%(leaf)s)(?:%(blanks)s,%(blanks)s(?:%(leaf)s))+(?=%(blanks)s[,\]}]))?"
    rb"|%(string)s|,[ \t\r\n,]*|\][ \t\r\n\]]*|[{}:]|%(number)s|true|false|null"
    % {b"leaf": _STRING + b"|" + _NUMBER, b"blanks": _BLANKS, b"string": _STRING, b"number": _NUMBER}
)
_LEAF = re.compile(_STRING + b"|" + _NUMBER)  # the leaves of a run, found again only when they are hidden
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
    leaves: list[tuple[int, int]] = []  # every string or number read as a value (not a key), in order, or a run
    runs: set[int] = set()  # the indices in ``leaves`` of runs of leaves (found again only if hidden)
    ranges: list[tuple[int, int, str]] = []  # ranges of ``leaves`` under a marked key, with its kind
    stack: list[_Open] = []
    objects_at: list[int] = []  # where the open objects stand in ``stack`` (the arrays above the last close at once)
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
        if first == 0x5D:  # "]", one or several: each closes the open array or object on top
            closers = token.group().count(b"]")
            while closers and stack:
                arrays = min(closers, len(stack) - 1 - (objects_at[-1] if objects_at else -1))
                del stack[len(stack) - arrays :]  # the arrays on top, in one step
                closers -= arrays
                if closers and stack:  # an object, closed by a "]" as by a "}"
                    top = stack.pop()
                    objects_at.pop()
                    closers -= 1
                    if top.key:
                        top.spans[top.key] = (top.key_at, len(leaves))
                        top.key = b""
                    ranges += ((*top.spans[key], kind) for key, kind in top.marked if key in top.spans)
        elif first == 0x5B:  # "[", one or several, and the leaves that begin the last
            run = token.end("run")
            stack += [_ARRAY] * data.count(b"[", start, token.start("run") if run > 0 else end)
            if run > 0:  # (an array holds no key nor flag: its leaves are only kept, as one range found again)
                runs.add(len(leaves))
                leaves.append((token.start("run"), run))
                previous, flag = b",", b""
                continue
        elif first in _CLOSERS or first == _COMMA:
            if top is not None and top.is_object and top.key:
                top.spans[top.key] = (top.key_at, len(leaves))
                top.key = b""
            if first in _CLOSERS and top is not None:
                stack.pop()
                if top.is_object:
                    objects_at.pop()
                ranges += ((*top.spans[key], kind) for key, kind in top.marked if key in top.spans)
        elif first == 0x7B:
            objects_at.append(len(stack))
            stack.append(_Open(True))
        else:
            if flag and top is not None and (mark := _MARKS.get((flag, token.group()))) is not None:
                top.marked.append(mark)  # (``flag`` is set only right after a flag's ":")
            if first not in _LITERAL_FIRSTS:
                leaves.append((start, end))  # a string or a number (not true, false, null)
        previous, flag = token.group() if first == _QUOTE else data[start : start + 1], b""
    spans: list[tuple[int, int, str]] = []
    last = 0
    for begin, stop, kind in sorted(ranges):  # inner objects close first: merged in order of their first leaf
        begin = max(begin, last)
        if not runs or not runs.intersection(range(begin, stop)):
            spans += ((*leaf, kind) for leaf in leaves[begin:stop])
        else:
            for index in range(begin, stop):
                if index in runs:
                    spans += ((*found.span(), kind) for found in _LEAF.finditer(data, *leaves[index]))
                else:
                    spans.append((*leaves[index], kind))
        last = max(last, stop)
    return spans


def redact_flagged_values(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """``data`` with every leaf under a value its object's flag marks replaced by ``marker`` (a string keeps its
    quotes), and how many were. Run after the detector passes: a string one of them hid whole (a string output's
    value, ``sensitive_value``) stays as it is; one they hid in part (a URL's password) is hidden whole."""
    if not any(contains(data) for contains in _WORDS) or _FLAG.search(data) is None:
        return data, 0
    pieces: list[bytes] = []
    markers: dict[tuple[str, bytes], bytes] = {}
    last = count = 0
    for start, end, kind in _hidden_leaves(data):
        if data[start] == _QUOTE:
            start, end = start + 1, end - 1
            if end == start or _WHOLE_MARKER.fullmatch(data, start, end):
                continue  # empty, or hidden already
        secret = data[start:end]
        hidden = markers.get((kind, secret))
        if hidden is None:  # (a marker depends on its kind and secret only: a repeated leaf costs one look-up)
            hidden = markers[kind, secret] = marker(kind, secret)
        pieces += (data[last:start], hidden)
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
