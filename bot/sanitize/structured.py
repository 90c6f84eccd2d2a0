"""Kubernetes Secret manifests: every value under ``data:`` / ``stringData:`` of a ``kind: Secret`` object.

``kubectl get secret -o yaml`` (or ``-o json``) is the classic chatops leak: the values are base64 and carry no
recognisable shape, so only the structure says they are secrets. kubectl prints keys sorted, so ``data:``
comes *before* ``kind: Secret``: the decision is taken when the object closes.

One pass over the lines, with a stack of open mappings keyed by indentation; YAML (``key: value``, list items
``- key: value``) and indented JSON (``"key": value,``, closing braces) share it. Each line is read once and
pushed on at most one pending list, so the pass is linear. A single-line JSON object is handled by a bounded
pattern on lines that mention ``"Secret"`` (``manifest_compact.py``).

Python reads only the lines that can change something (``_next_line``: a line indented less than the innermost
open mapping, ``---``, a ``kind``/``apiVersion``/``data``/``stringData`` key, a one-line JSON Secret); one ``re``
search passes over the others, and a data block's lines are taken as a whole (``_block_end``) and their values
replaced together (``manifest_values``). Even so a text made of nothing but such lines (``kind: Secret`` /
``data:`` / one value, over and over: 6 MB/s) costs a couple of microseconds a line, so the walk has a budget as
the detector passes do (``candidates.py``): ``FREE_UNITS`` plus one per ``BYTES_PER_UNIT`` bytes of text, a read
line costing ``LINE_UNITS`` and a value ``VALUE_UNITS`` (below). Past it the text from the line the walk stopped at
to the end becomes one ``[REDACTED:dense_candidates]`` marker, and every open mapping counts as a Secret (its kind
may be in what is hidden): it fails closed. Ordinary output stays below it (``bench/bench_manifests.py``: a
listing of Secrets spends one unit per 32-104 bytes, 3.2-10x below; one of Secrets holding 10-40 short keys each, the
densest ordinary case, one per 14-26 bytes, 1.4-2.6x below).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.literals import containment
from bot.sanitize.manifest_compact import BASE64, redact_compact, redact_compact_orphans, redact_open_compact
from bot.sanitize.manifest_values import KIND, VALUE, replace_values

# (Matched at a line's indentation, ``match(line, indent)``: no "^", which would hold only at the line's start.)
# Possessive repeats (``*+``) here and in the walk's searches: what each takes is never given back, since what
# follows it cannot start with what it takes (a blank, a key's character): the same matches, up to half the time.
_KEY = re.compile(rb'(?P<item>-[ \t]++)?"?(?P<key>[A-Za-z0-9_.\-/]{1,253}+)"?[ \t]*+:(?:[ \t]++|$)(?P<value>.*)$')
_SECRET_KIND = re.compile(rb'^["\']?Secret["\']?,?[ \t]*(?:#.*)?$')
# What an uncut text must hold for a value to be redacted here (a one-line object's "Secret", or a key "kind"
# whose value is Secret, as _KEY and _SECRET_KIND read it): one search instead of the pass over every line, which
# cost a fifth of cleaning source code that mentions "Secret" ("X-Api-Secret") on a few lines. A superset (any
# blank after the colon): never skips a text the pass would change.
_SECRET_SIGN = re.compile(rb'"Secret"|kind"?[ \t]*:\s*["\']?Secret')
_KIND_SECRET = re.compile(rb'kind"?[ \t]*:\s*["\']?Secret')  # its second alternative, matched where "kind" stands
# What may follow a data key on its line (``_visit``): node properties (an anchor, a tag), then nothing or "{" (a
# block follows), or a one-line flow mapping with something in it, then a comment. Possessive throughout: a line
# of any length is read once (``data: {`` then a megabyte and no "}" is refused without trying each split).
_DATA_OPENING = re.compile(
    rb'(?:[&!][^ \t{}]*+[ \t]*+)*+(?:\{?|(?P<flow>\{[ \t]*+[^{}\s][^{}\n]*+\},?))[ \t]*+(?:#.*)?')
# The walk's budget (see the module docstring), in units of about 0.4 us of Python, each charge what its work
# was measured to cost: a line read outside a data block costs LINE_UNITS (a "---" SEPARATOR_UNITS), one that
# opens a data block BLOCK_UNITS more (the block's end is searched for and its lines taken; 2-3 us with the line,
# charged at the top of that, the walk's costliest step), a value line
# VALUE_UNITS (replaced with the others of its Secret in a few substitutions; an approval card's fingerprinted
# markers take each line alone, CARD_VALUE_UNITS), a one-line JSON Secret COMPACT_LINE_UNITS more than a line (its
# data objects' substitution) and its values VALUE_UNITS each (replaced by a split and a join), COMPACT_VALUE_UNITS on
# a card.
FREE_UNITS = 1024
BYTES_PER_UNIT = 10
LINE_UNITS = 5
SEPARATOR_UNITS = 3
BLOCK_UNITS = 8
VALUE_UNITS = 1
CARD_VALUE_UNITS = 3
COMPACT_VALUE_UNITS = 3
COMPACT_LINE_UNITS = 8
DENSE_KIND = "dense_candidates"


class _Mapping:
    """An open mapping of the walk. A plain class (a dataclass's generated ``__init__`` with a default factory took
    half a microsecond, once per object of a dense text)."""

    __slots__ = ("indent", "is_secret", "pending", "is_object", "kind_seen", "orphan")

    def __init__(self, indent: int, pending: list[int] | None = None, orphan: bool = False) -> None:
        self.indent = indent
        self.is_secret = False
        self.pending: list[int] = [] if pending is None else pending
        self.is_object = False  # has an apiVersion: a Kubernetes object, whose kind may lie beyond a cut
        self.kind_seen = False
        self.orphan = orphan  # holds the leading lines of a tail whose opening line was cut off


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


def _filled_line(lines: list[bytes], numbers: range) -> int:
    """The first of these lines that is not blank, -1 if none is."""
    return next((number for number in numbers if lines[number].strip()), -1)


def _next_line(top_indent: int) -> re.Pattern[bytes]:
    """A newline and the line after it, when that line can change what the walk knows with its innermost open
    mapping at ``top_indent``: one indented less (it closes that mapping: a superset, any character but a blank, a
    newline or "#" where its text starts), a "---", a key that decides something (``kind``, ``apiVersion``,
    ``data``, ``stringData``, as ``_KEY`` reads them); a one-line JSON Secret (a line holding ``"Secret"``) is
    found apart, by ``bytes.find`` (in this pattern it cost a scan of every line). Any other line would only open a
    mapping that no such key fills (its lines are indented at least as deep as the innermost open one), which
    changes nothing: a mapping is opened again, empty, by the first deciding key at its indentation. So most lines
    of a large YAML text that mentions a Secret are passed over by this search instead of by Python."""
    shallower = rb"[ \t]{0,%d}+[^ \t\n#]|" % (top_indent - 1) if top_indent > 0 else b""
    pattern = re.compile(rb'\n(?:' + shallower + rb'[ \t\r\x0b\x0c]*+---'
                         rb'|[ \t]*+(?:-[ \t]++)?"?(?:kind|apiVersion|data|stringData)"?[ \t]*+:)')
    return _remember(_NEXT_LINES, top_indent, pattern)


def _block_end(key_indent: int) -> re.Pattern[bytes]:
    """A newline and the line after it, when that line may end a data block whose key is indented ``key_indent``:
    one indented no deeper than the key (a superset: any character but a blank, a newline or "#" where its text
    starts; the walk reads that line and ends the block only when it is filled)."""
    return _remember(_BLOCK_ENDS, key_indent, re.compile(rb"\n[ \t]{0,%d}+[^ \t\n#]" % key_indent))


# The two searches above per indentation, compiled once (a dict read costs less than an lru_cache call, and the
# walk asks once a line it reads); bounded, since a text chooses its indentations.
_NEXT_LINES: dict[int, re.Pattern[bytes]] = {}
_NEXT_LINE_ANY = re.compile(rb"\n")  # (a placeholder: the walk picks its search before its first use)
_BLOCK_ENDS: dict[int, re.Pattern[bytes]] = {}


def _remember(patterns: dict[int, re.Pattern[bytes]], indent: int, pattern: re.Pattern[bytes]) -> re.Pattern[bytes]:
    if len(patterns) >= 64:
        patterns.clear()
    patterns[indent] = pattern
    return pattern


def _orphan_lines(lines: list[bytes]) -> tuple[list[int], int]:
    """For a text cut at its start: the leading lines more indented than what follows them (the end of a
    mapping whose opening line was cut off), and the indentation of the first key after them (-1: none)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or _indent(lines[first]) == 0:
        return [], -1
    floor, closed = _indent(lines[first]), False
    orphans: list[int] = []
    for number in range(first, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        indent = _indent(line)
        match = _KEY.match(line, indent)
        if indent < floor or closed and indent <= floor:
            if match is None:  # a JSON closer ("},"): the keys of the enclosing object come next
                floor, closed = indent, True
                continue
            return orphans, indent + len(match.group("item") or b"")
        if match is not None and not closed:
            orphans.append(number)
    return orphans, -1  # no key after them: their object's kind is not in the text


def _secret_signed(data: bytes) -> bool:
    """``_SECRET_SIGN`` found in ``data``: each of its two alternatives starts with a literal (``"Secret"``,
    ``kind``) that ``bytes.find`` looks for at memchr speed, so ``re`` is asked only where "kind" stands, anchored
    there (``_KIND_SECRET``). Searched by ``re`` once "kind" was anywhere, a text tried both alternatives at every
    byte (0.2 ms per 64 KiB): grep output that says "-Secret" on every line and "kind" in one name somewhere."""
    if b'"Secret"' in data:
        return True
    at = data.find(b"kind")
    while at >= 0:
        if _KIND_SECRET.match(data, at) is not None:
            return True
        at = data.find(b"kind", at + 4)
    return False


_has_secret = containment(b"Secret")  # asked of every text: ``in`` cost 150 us on 256 KiB without it


def redact_secret_manifests(
    data: bytes, marker: Callable[[str, bytes], bytes], *, cut_start: bool = False, cut_end: bool = False,
    constant_marker: bool = False,
) -> tuple[bytes, int]:
    """``data`` with the values of every Secret's data/stringData replaced; and how many were replaced.

    ``cut_start`` / ``cut_end`` say the text is the tail / head of a capped output. kubectl prints ``data:``
    before ``kind:``, so a cut can separate a Secret's values from the line that says it is one: at the end, the
    values of an open object whose kind was cut off are redacted; at the start, values whose opening line was cut
    off are redacted when their object turns out to be a Secret."""
    if not _has_secret(data) and not (cut_end and b"apiVersion" in data) and not (cut_start and _starts_inside(data)):
        return data, 0
    if not cut_start and not cut_end and not _secret_signed(data):
        return data, 0  # "Secret" only in other words (grep output, prose): no object here is a Secret
    lines = data.split(b"\n")
    count = 0
    constant = marker(KIND, b"") if constant_marker else None

    def close(mapping: _Mapping) -> None:
        nonlocal count
        if mapping.orphan and not mapping.kind_seen and _base64_values(lines, mapping.pending):
            mapping.is_secret = True  # cut off from its kind (people write kind: before data:): fail closed
        if not mapping.is_secret or not mapping.pending:
            return
        count += replace_values(lines, mapping.pending, marker, constant)

    first_line, last_line = _filled_line(lines, range(len(lines))), _filled_line(lines, range(len(lines) - 1, -1, -1))
    stack: list[_Mapping] = []
    collecting: tuple[_Mapping, int] | None = None
    orphans, orphan_indent = _orphan_lines(lines) if cut_start else ([], -1)
    if orphans:
        stack.append(_Mapping(orphan_indent, pending=orphans, orphan=True))
    # The lines before the first filled one are blank, the orphans were read above: the walk starts after both.
    number = orphans[-1] + 1 if orphans else first_line if first_line >= 0 else len(lines)
    offset = sum(len(lines[i]) + 1 for i in range(number))  # where lines[number] starts in data
    last_offset = len(data) + 1 - sum(len(lines[i]) + 1 for i in range(last_line, len(lines))) if cut_end else -1
    value_units = VALUE_UNITS if constant is not None else CARD_VALUE_UNITS
    units = FREE_UNITS + len(data) // BYTES_PER_UNIT - len(orphans) * value_units  # what the walk may still spend
    line_units, total = LINE_UNITS, len(lines)
    # The search for the next line, for the innermost indentation; none chosen yet (-2: an orphan mapping whose
    # indentation is unknown has -1, and taking that for the chosen one left the placeholder reading every line,
    # which ran a cut tail of ordinary lines out of budget: a dense marker over its end)
    search_top, search = -2, _NEXT_LINE_ANY.search
    compact_line = -1  # where the next line holding '"Secret"' starts, once searched for
    while number < total:
        units -= line_units
        if units < 0:
            break  # over budget: hidden from this line on, below
        line = lines[number]
        after = offset + len(line) + 1  # where the next line starts
        stripped = line.strip()
        if stripped and stripped[0] != 35:  # 35: "#", a comment
            indent = len(line) - len(line.lstrip(b" \t"))
            if collecting is not None and indent > collecting[1]:
                collecting[0].pending.append(number)
            elif stripped == b"---":
                units += LINE_UNITS - SEPARATOR_UNITS
                collecting = None
                while stack:
                    close(stack.pop())
            else:
                collecting = None
                if b'"Secret"' in stripped and b"{" in stripped and b"}" in stripped:
                    lines[number], found = redact_compact(line, marker, constant)
                    count += found
                    units -= COMPACT_LINE_UNITS + found * (VALUE_UNITS if constant is not None else COMPACT_VALUE_UNITS)
                if cut_start and number == first_line and b"}" in stripped:
                    lines[number], found = redact_compact_orphans(lines[number], marker)
                    count += found
                if cut_end and number == last_line and b"{" in stripped:
                    lines[number], found = redact_open_compact(lines[number], marker)
                    count += found
                collecting = _visit(stack, close, line, indent)
                if collecting is not None and collecting[1] < 0:  # a flow mapping's values, on this line
                    collecting[0].pending.append(number)
                    units -= value_units
                    collecting = None
                elif collecting is not None:
                    units -= BLOCK_UNITS
        if number >= last_line:
            number = total
            break  # only blank lines follow
        if collecting is not None:
            # The data block: every line up to the first filled one indented no deeper than its key (found by one
            # search), each filled line a value.
            stop = (_BLOCK_ENDS.get(collecting[1]) or _block_end(collecting[1])).search(data, after - 1)
            end = len(data) + 1 if stop is None else stop.start() + 1
            skipped = data.count(b"\n", after, end)
            pending = collecting[0].pending
            first = number + 1
            texts = list(map(bytes.strip, lines[first : first + skipped]))
            if units >= skipped * value_units and all(texts) and data.find(b"#", after, end) < 0:
                units -= skipped * value_units  # every line a value (the common case), seen without a Python loop
                pending.extend(range(first, first + skipped))
            else:
                for inside, text in enumerate(texts, first):
                    if text and text[0] != 35:  # 35: "#", a comment
                        units -= value_units
                        if units < 0:
                            number = inside
                            break
                        pending.append(inside)
                if units < 0:
                    break
        else:
            # The next line that can change anything (``_next_line``): the lines before it are read no further.
            top = stack[-1].indent if stack else 0
            if top != search_top:
                search_top, search = top, (_NEXT_LINES.get(top) or _next_line(top)).search
            if compact_line < after:  # the next line holding '"Secret"' (by bytes.find, faster than re)
                found = data.find(b'"Secret"', after)
                compact_line = len(data) + 1 if found < 0 else data.rfind(b"\n", 0, found) + 1
            found_line = search(data, after - 1, compact_line)  # (only up to it: each byte searched once)
            end = compact_line if found_line is None else found_line.start() + 1
            if cut_end and end > last_offset:
                end = last_offset  # the last filled line of a head is read whatever it holds
            skipped = data.count(b"\n", after, end) if end > after else 0
        number, offset = number + 1 + skipped, end
    if number < total:  # the walk ran out of budget at this line
        for mapping in stack:
            mapping.is_secret = True  # its kind may be in what is hidden: fail closed
        while stack:
            close(stack.pop())
        lines[number:] = [marker(DENSE_KIND, b"\n".join(lines[number:]))]
        return b"\n".join(lines), count + 1
    while stack:
        mapping = stack.pop()
        if cut_end and mapping.is_object and not mapping.kind_seen:
            mapping.is_secret = True  # its kind was cut off: it may be a Secret
        close(mapping)
    return b"\n".join(lines), count


def _visit(
    stack: list[_Mapping], close: Callable[[_Mapping], None], line: bytes, indent: int
) -> tuple[_Mapping, int] | None:
    """One filled line outside a data block: the mappings it closes, the one it opens, what its key says of it;
    the mapping and indentation of the data block it opens, if it does."""
    match = _KEY.match(line, indent)
    if match is None:
        while stack and stack[-1].indent > indent:
            close(stack.pop())
        return None
    item, key, value = match.groups()
    key_indent = indent + len(item) if item else indent
    while stack and (stack[-1].indent > key_indent or stack[-1].indent == key_indent and item):
        close(stack.pop())
    value = value.strip()
    if key == b"apiVersion" and stack and stack[-1].indent == key_indent and stack[-1].is_object:
        # A second apiVersion in one mapping: concatenated manifests with no "---" between them (kubectl
        # prints apiVersion first). The first object closes here, so the next one's kind cannot decide its
        # data (a Secret followed by a ConfigMap showed the Secret's values); the next one, should its kind
        # not follow, is judged as a cut-off object is (fail closed on base64 values).
        close(stack.pop())
        stack.append(_Mapping(key_indent, orphan=True))
    if not stack or stack[-1].indent < key_indent:
        stack.append(_Mapping(key_indent))
    mapping = stack[-1]
    if key == b"kind":
        mapping.kind_seen = True
        # Sticky: two kinds in one mapping (hand-written objects run together, data before each kind) leave
        # no telling whose data is whose, so one Secret among them makes all of it secret.
        mapping.is_secret = mapping.is_secret or _SECRET_KIND.match(value) is not None
    elif key == b"apiVersion":
        mapping.is_object = True
    elif key in (b"data", b"stringData"):
        # After the key: an anchor or a tag (``data: &d``), a comment (``data:  # base64``), then a block's
        # lines; or the whole mapping in flow style on this line (``data: {tls.key: ..., tls.crt: ...}``, or
        # indented JSON's ``"data": {"k": "v"},``), whose values are this line's (-1: no block follows)
        opening = _DATA_OPENING.fullmatch(value)
        if opening is not None:
            return mapping, -1 if opening.group("flow") else key_indent
    return None


def _base64_values(lines: list[bytes], numbers: list[int]) -> bool:
    """Whether every one of these ``key: value`` lines has a base64 value (and one of them a telling one:
    padded or 16 characters long, so ``name: test`` alone does not count)."""
    values = []
    for number in numbers:
        match = VALUE.match(lines[number])
        if match is None:
            return False
        values.append(match.group("value").strip().rstrip(b","))
    return bool(values) and all(BASE64.fullmatch(v) for v in values) and any(
        v.rstrip(b'"').endswith(b"=") or len(v) >= 16 for v in values)


def _starts_inside(data: bytes) -> bool:
    """Whether a tail may start inside a mapping: its first line is indented, or closes a brace it did not open."""
    text = data.lstrip(b"\n")
    line = text[: text.find(b"\n")] if b"\n" in text else text
    close = line.find(b"}")
    return line[:1] in (b" ", b"\t") or close >= 0 and b"{" not in line[:close]
