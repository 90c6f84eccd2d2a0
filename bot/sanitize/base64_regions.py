"""Base64 regions of a mixed text (a PEM body), and which patterns can match across a region's edge.

A CA bundle (``cat /etc/ssl/certs/ca-certificates.crt``) is long runs of 64-column base64 between BEGIN/END lines
and comment lines: it is not base64 alone, so ``narrow_alphabet``'s shortcut does not apply, and the passes' large
alternations built DFA states on every fresh line of it (4.7 MB/s at 64 KiB, issue #11). Asked whether an automaton
hits anywhere in such a text (``any_candidate.candidate_scan``), the answer is split by where a match can lie:

- inside a region (a run of base64 lines): then it is a string of ``narrow_alphabet.ALPHABETS[0]``'s bytes (and
  spaces, in an indented region), so its branch is one of the automaton's branches narrowed to those bytes, which
  a small automaton scans the whole text for;
- outside every region: the automaton itself scans the text between the regions (the gaps);
- across a region's edge: only the branches ``crosses_edge`` says may, scanned over the whole text (few and small:
  an ``AccountKey=`` or an ``Authorization:`` whose value may start on the next line).

A region follows its BEGIN line, which ends with "-", and nothing but breaks and spaces after that line's break; it
is followed by a break (or the text's end), starts and ends with a base64 byte and holds nothing but base64 lines
(each indented by spaces, in an indented region: a PEM in a YAML block scalar, ``kubectl get cm kube-root-ca.crt
-o yaml``). A match that holds a region's byte and a byte outside it therefore holds the BEGIN line's "-", its
break, the breaks and spaces after it and the region's first base64 bytes up to the match's end or a break; or it
starts in a region line's base64 bytes, or in the breaks and spaces before the region (or an inner line's), and
holds base64 bytes up to the match's end (from the breaks and spaces before the region) or a break. ``crosses_edge``
asks a small automaton that accepts such strings whether some string a pattern matches takes it to its accepting
state, exactly for the byte classes it tells apart (base64, break, space, "-", other; a space counts as "other" for a
region with no space in it or before it, whose edges only a break touches) and over-approximating only where it
cannot read a construct (assertions count as satisfied, an unknown construct or a pattern Python cannot parse as
crossing), so a branch it calls safe never matches across an edge.
"""

from __future__ import annotations

import re
from array import array
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import re2

from bot.sanitize.literals import containment

BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# A region shorter than this is left in its gap: each region costs the gap scans a call or two more.
MIN_REGION = 512
# The armour a region follows (its BEGIN line): only texts holding it are searched for regions.
_BEGIN = b"-----BEGIN"
_HAS_BEGIN = containment(_BEGIN)
# The longest run of base64 bytes and line breaks at a position (an anchored match: one DFA state, ~1 ns a byte).
_RUN_OPTIONS = re2.Options()
_RUN_OPTIONS.log_errors = False
_RUN = re2.compile(b"[A-Za-z0-9+/\n ]*", _RUN_OPTIONS)._regexp.Match
_LEAD = b"\n "  # what may stand between the BEGIN line and a region, and between a region and what follows
_ANCHOR_START = re2._Anchor.ANCHOR_START

# What a match that crosses a region's edge holds (see the module docstring), as an automaton over five byte
# classes (0 base64, 1 line break, 2 any other byte, 3 space, 4 "-"): the BEGIN line's last "-", its break, breaks
# and spaces, then base64 bytes that end the match or a break (it reaches into a region, or over one); or, from the
# match's start, breaks and spaces then base64 bytes and a break (it starts inside a region, or in what precedes
# one), or at least one break or space then base64 bytes that end it. States: 0 nothing read, 1 read something
# else, 2 "-" last, 3 breaks and spaces after "-" and a break, 4 base64 bytes after those (accepting at the match's
# end), 5 crossing (accepting), 6 breaks and spaces since the start, 7 base64 bytes after those (accepting at the
# end), 8 base64 bytes since the start.
_INDENTED = (
    (8, 6, 1, 6, 2), (1, 1, 1, 1, 2), (1, 3, 1, 1, 2), (4, 3, 1, 3, 2), (4, 5, 1, 1, 2), (5, 5, 5, 5, 5),
    (7, 6, 1, 6, 2), (7, 5, 1, 1, 2), (8, 5, 1, 1, 2),
)
# The same for a region with no space in it or before it (a CA bundle's): a space is any other byte there, so a value
# after blanks (``password:`` then a line of ``  value``) cannot reach into the region.
_FLAT = tuple((*row[:3], row[2], row[4]) for row in _INDENTED)
_ACCEPTING = 1 << 4 | 1 << 5 | 1 << 7
_ALL = (1 << 256) - 1
_HIGH = _ALL ^ ((1 << 128) - 1)  # the bytes of a non-ASCII character's UTF-8 form
_BASE64_BITS = sum(1 << byte for byte in BASE64)
_NL_BIT = 1 << 10
_SPACE_BIT = 1 << 32
_DASH_BIT = 1 << 45
_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W",
}


class _Unknown(Exception):
    """A construct the reading does not know: the pattern counts as crossing."""


def regions(data: bytes) -> tuple[list[tuple[int, int]], bool]:
    """The base64 regions of ``data`` (start, end), in order: each PEM body's leading run of base64 lines (up to
    the END line, or to the line before a byte of another kind: ``=`` padding, an armour header), when at least
    ``MIN_REGION`` bytes long; and whether one is indented (a PEM in a YAML block, ``kubectl get cm
    kube-root-ca.crt -o yaml``: each line's leading spaces are inside the region, the first line's before it).
    Empty for a text without ``-----BEGIN``."""
    if not _HAS_BEGIN(data):
        return [], False
    found: list[tuple[int, int]] = []
    indented, length, pos = False, len(data), 0
    while (begin := data.find(_BEGIN, pos)) >= 0:
        line_end = data.find(b"\n", begin)
        if line_end < 0:
            break
        start = line_end + 1
        if data[line_end - 1] != 45:  # "-": what the edge reading takes to stand before the region's breaks
            pos = start
            continue
        while start < length and data[start] in _LEAD:  # (a region starts with a base64 byte)
            start += 1
        end = _RUN(_ANCHOR_START, data, start, length)[0][1]
        if end < length:  # a byte of another kind: the region ends with the line before it
            end = max(start, data.rfind(b"\n", start, end))
        end = _whole_lines(data, start, end)
        if end - start >= MIN_REGION:
            found.append((start, end))
            indented = indented or data.find(b" ", line_end, end) >= 0
        pos = max(end, start)
    return found, indented


def _whole_lines(data: bytes, start: int, end: int) -> int:
    """Where the region from ``start`` ends: before its first line that is not base64 bytes after spaces (a blank
    line, a space after a base64 byte), with no break or space at its end."""
    while end > start and data[end - 1] in _LEAD:
        end -= 1
    if data.find(b" ", start, end) < 0:
        return end  # (no indentation: base64 lines and breaks only)
    stop = start
    for line in data[start:end].split(b"\n"):
        body = line.lstrip(b" ")
        if not body or b" " in body:
            break
        stop += len(line) + 1
    return max(start, stop - 1)


def crosses_edge(pattern: str, indented: bool = False) -> bool:
    """Whether ``pattern`` may match a string that crosses the edge of a base64 region, one that may be
    ``indented`` (``regions``), as the module docstring says."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, ValueError, TypeError, OverflowError):
        return True
    ignore_case = bool(parsed.state.flags & sre.SRE_FLAG_IGNORECASE)
    dot_all = bool(parsed.state.flags & sre.SRE_FLAG_DOTALL)
    try:
        return bool(_sequence(list(parsed), 1, _STEPS[indented], ignore_case, dot_all) & _ACCEPTING)
    except _Unknown:
        return True


# A set of the automaton's states, as bits.
_States = int
_OTHER_BITS = _ALL & ~(_BASE64_BITS | _NL_BIT | _SPACE_BIT | _DASH_BIT)
_CLASS_BITS = (_BASE64_BITS, _NL_BIT, _OTHER_BITS, _SPACE_BIT, _DASH_BIT)


def _step(moves: tuple[tuple[int, ...], ...], classes: int, states: _States) -> _States:
    reached = 0
    for state in range(len(moves)):
        if states >> state & 1:
            for byte_class in range(len(_CLASS_BITS)):
                if classes >> byte_class & 1:
                    reached |= 1 << moves[state][byte_class]
    return reached


def _steps(moves: tuple[tuple[int, ...], ...]) -> tuple[array[int], ...]:
    """For each set of byte classes, the states one byte of them takes each set of states to: a set's reach is its
    lowest state's and the rest's (``_step`` of each single state, the sets in counting order). 16-bit entries (9
    states, 512 sets): as tuples of ints, the two tables held 0.65 MiB of a runner's memory for a reading that only
    the first text with a PEM body asks (README, runner RSS)."""
    table = []
    for classes in range(1 << len(_CLASS_BITS)):
        single = [_step(moves, classes, 1 << state) for state in range(len(moves))]
        reach = array("H", bytes(2 << len(moves)))
        for states in range(1, 1 << len(moves)):
            lowest = states & -states
            reach[states] = reach[states ^ lowest] | single[lowest.bit_length() - 1]
        table.append(reach)
    return tuple(table)


# For each automaton (flat, indented), the states one byte of a set of classes (bit 0 base64, 1 break, 2 other,
# 3 space, 4 "-") takes each set of states to.
_STEPS = (_steps(_FLAT), _steps(_INDENTED))
# One-character items already read (the name patterns' classes recur in many detectors): key -> their classes
_CLASSES: dict[tuple[Any, ...], int] = {}
_Steps = tuple["array[int]", ...]


def _sequence(
    items: list[tuple[Any, Any]], states: _States, steps: _Steps, ignore_case: bool, dot_all: bool
) -> _States:
    """The states the strings of ``items`` may take the automaton to from ``states``."""
    for op, argument in items:
        states = _node(op, argument, states, steps, ignore_case, dot_all)
        if not states:
            break
    return states


def _node(op: Any, argument: Any, states: _States, steps: _Steps, ignore_case: bool, dot_all: bool) -> _States:
    if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
        key = (op, tuple(argument) if op is sre.IN else argument, ignore_case, dot_all)
        classes = _CLASSES.get(key)
        if classes is None:
            taken = _bytes_of(op, argument, ignore_case, dot_all)
            classes = _CLASSES[key] = sum(1 << c for c, bits in enumerate(_CLASS_BITS) if taken & bits)
        return steps[classes][states]
    if op is sre.SUBPATTERN:
        _group, add_flags, del_flags, inner = argument
        scoped = (ignore_case or bool(add_flags & sre.SRE_FLAG_IGNORECASE)) and not del_flags & sre.SRE_FLAG_IGNORECASE
        dotted = (dot_all or bool(add_flags & sre.SRE_FLAG_DOTALL)) and not del_flags & sre.SRE_FLAG_DOTALL
        return _sequence(list(inner), states, steps, scoped, dotted)
    if op is sre.BRANCH:
        reached = 0
        for branch in argument[1]:
            reached |= _sequence(list(branch), states, steps, ignore_case, dot_all)
        return reached
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, inner = argument
        for _ in range(low):
            states = _sequence(list(inner), states, steps, ignore_case, dot_all)
        reached, seen = states, {states}
        for _ in range(high - low):  # each further count, until it reaches a set of states seen before
            states = _sequence(list(inner), states, steps, ignore_case, dot_all)
            if states in seen:
                break
            seen.add(states)
            reached |= states
        return reached
    if op is sre.AT:
        return states  # an assertion reads no byte: counted as satisfied
    raise _Unknown(op)


def _bytes_of(op: Any, argument: Any, ignore_case: bool, dot_all: bool) -> int:
    """The bytes a one-character item may take as the first or only byte of its UTF-8 form, and every byte of a
    non-ASCII character's (``_HIGH``), as a bit set."""
    if op is sre.ANY:
        return _ALL if dot_all else _ALL & ~_NL_BIT
    if op is sre.LITERAL:
        return _cased(argument, ignore_case)
    if op is sre.NOT_LITERAL:
        return _ALL & ~(1 << argument) if argument < 128 else _ALL
    negated = bool(argument) and argument[0][0] is sre.NEGATE
    members = 0
    for item_op, item in argument[1:] if negated else argument:
        if item_op is sre.LITERAL:
            members |= (1 << item if item < 128 else 0) if negated else _cased(item, ignore_case)
        elif item_op is sre.RANGE:
            low, high = item
            for code in range(low, min(high, 127) + 1):
                members |= 1 << code if negated else _cased(code, ignore_case)
            if high > 127 and not negated:
                members |= _HIGH
        elif item_op is sre.CATEGORY and item in _CATEGORIES:
            members |= sum(1 << code for code in range(128) if re.fullmatch(_CATEGORIES[item], chr(code)))
            if not negated:
                members |= _HIGH  # (a category may hold non-ASCII characters)
        else:
            raise _Unknown(item_op)
    # A negated class excludes only the ASCII bytes it lists: every non-ASCII byte stays in.
    return _ALL & ~members if negated else members


def _cased(code: int, ignore_case: bool) -> int:
    if code > 127:
        return _HIGH
    bits = 1 << code
    if ignore_case:
        character = chr(code)
        bits |= 1 << ord(character.lower()) | 1 << ord(character.upper())
        if character.lower() in "ks":  # the Kelvin sign and the long s fold to these (non-ASCII bytes)
            bits |= _HIGH
    return bits
