"""Kubernetes Secret manifests: every value under ``data:`` / ``stringData:`` of a ``kind: Secret`` object.

``kubectl get secret -o yaml`` (or ``-o json``) is the classic chatops leak: the values are base64 and carry no
recognisable shape, so only the structure says they are secrets. kubectl prints keys sorted, so ``data:``
comes *before* ``kind: Secret``: the decision is taken when the object closes.

One pass over the lines, with a stack of open mappings keyed by indentation; YAML (``key: value``, list items
``- key: value``) and indented JSON (``"key": value,``, closing braces) share it. Each line is read once and
pushed on at most one pending list, so the pass is linear. A single-line JSON object is handled by a bounded
pattern on lines that mention ``"Secret"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_KEY = re.compile(rb'^(?P<item>-[ \t]+)?"?(?P<key>[A-Za-z0-9_.\-/]{1,253})"?[ \t]*:(?:[ \t]+|$)(?P<value>.*)$')
_SECRET_KIND = re.compile(rb'^["\']?Secret["\']?,?[ \t]*(?:#.*)?$')
_VALUE = re.compile(rb'^(?P<lead>[ \t]*(?:-[ \t]+)?"?[A-Za-z0-9_.\-/]{1,253}"?[ \t]*:[ \t]*)(?P<value>.*)$')
_COMPACT_DATA = re.compile(rb'"(?:data|stringData)"\s*:\s*\{(?P<body>[^{}]*)\}')
_COMPACT_VALUE = re.compile(rb'(?P<key>"[^"]{1,253}"\s*:\s*)"(?P<value>[^"]{0,65536})"')
# The data object a head cut in the middle of a one-line JSON object leaves open (its "}" is past the cut).
_OPEN_COMPACT_DATA = re.compile(rb'"(?:data|stringData)"\s*:\s*\{(?P<body>[^{}]*)\Z')
# What an uncut text must hold for a value to be redacted here (a one-line object's "Secret", or a key "kind"
# whose value is Secret, as _KEY and _SECRET_KIND read it): one search instead of the pass over every line, which
# cost a fifth of cleaning source code that mentions "Secret" ("X-Api-Secret") on a few lines. A superset (any
# blank after the colon): never skips a text the pass would change.
_SECRET_SIGN = re.compile(rb'"Secret"|kind"?[ \t]*:\s*["\']?Secret')
_COMPACT_KIND = re.compile(rb'"kind"\s*:\s*"(?P<kind>[^"]{0,253})"')
# What every value of a Secret's data is (kubectl prints them base64): a kind-less half whose values all look
# like this may be one.
_BASE64 = re.compile(rb'"?(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)"?')


@dataclass
class _Mapping:
    indent: int
    is_secret: bool = False
    pending: list[int] = field(default_factory=list)
    is_object: bool = False  # has an apiVersion: a Kubernetes object, whose kind may lie beyond a cut
    kind_seen: bool = False
    orphan: bool = False  # holds the leading lines of a tail whose opening line was cut off


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


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
        match = _KEY.match(line[indent:])
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
    ``kind``) that ``bytes.find`` looks for at memchr speed, so text with neither (grep output that says "-Secret"
    on every line) is not searched by ``re`` (which tried both alternatives at every byte: 0.2 ms per 64 KiB)."""
    return (b'"Secret"' in data or b"kind" in data) and _SECRET_SIGN.search(data) is not None


def redact_secret_manifests(
    data: bytes, marker: Callable[[str, bytes], bytes], *, cut_start: bool = False, cut_end: bool = False
) -> tuple[bytes, int]:
    """``data`` with the values of every Secret's data/stringData replaced; and how many were replaced.

    ``cut_start`` / ``cut_end`` say the text is the tail / head of a capped output. kubectl prints ``data:``
    before ``kind:``, so a cut can separate a Secret's values from the line that says it is one: at the end, the
    values of an open object whose kind was cut off are redacted; at the start, values whose opening line was cut
    off are redacted when their object turns out to be a Secret."""
    if b"Secret" not in data and not (cut_end and b"apiVersion" in data) and not (cut_start and _starts_inside(data)):
        return data, 0
    if not cut_start and not cut_end and not _secret_signed(data):
        return data, 0  # "Secret" only in other words (grep output, prose): no object here is a Secret
    lines = data.split(b"\n")
    count = 0

    def close(mapping: _Mapping) -> None:
        nonlocal count
        if mapping.orphan and not mapping.kind_seen and _base64_values(lines, mapping.pending):
            mapping.is_secret = True  # cut off from its kind (people write kind: before data:): fail closed
        if not mapping.is_secret or not mapping.pending:
            return
        child_indent = min(_indent(lines[i]) for i in mapping.pending)
        for i in mapping.pending:
            line = lines[i]
            if _indent(line) > child_indent:  # inside a block scalar (``key: |``): the whole line is secret
                lines[i] = line[: _indent(line)] + marker("k8s_secret", line.strip())
                count += 1
                continue
            match = _VALUE.match(line)
            if match is None:
                continue
            value = match.group("value").rstrip(b" \t")
            trail = match.group("value")[len(value) :]
            if value.endswith(b","):  # indented JSON
                value, trail = value[:-1], b"," + trail
            if value in (b"", b"|", b"|-", b">", b">-", b"{", b"}"):
                continue
            quote = value[:1] if value[:1] in (b'"', b"'") and value[-1:] == value[:1] and len(value) > 1 else b""
            inner = value[1:-1] if quote else value
            if inner.startswith(b"{{") and inner.rstrip().endswith(b"}}"):
                continue  # a chart's template ({{ .Values.db.password | quote }}): rendered later, no value yet
            lines[i] = match.group("lead") + quote + marker("k8s_secret", inner) + quote + trail
            count += 1

    filled = [i for i, line in enumerate(lines) if line.strip()]
    first_line, last_line = (filled[0], filled[-1]) if filled else (-1, -1)
    stack: list[_Mapping] = []
    collecting: tuple[_Mapping, int] | None = None
    orphans, orphan_indent = _orphan_lines(lines) if cut_start else ([], -1)
    if orphans:
        stack.append(_Mapping(orphan_indent, pending=orphans, orphan=True))
    skip = orphans[-1] if orphans else -1
    for number, line in enumerate(lines):
        stripped = line.strip()
        if number <= skip or not stripped or stripped.startswith(b"#"):
            continue
        indent = _indent(line)
        if collecting is not None:
            if indent > collecting[1]:
                collecting[0].pending.append(number)
                continue
            collecting = None
        if stripped == b"---":
            while stack:
                close(stack.pop())
            continue
        if b'"Secret"' in stripped and b"{" in stripped and b"}" in stripped:
            lines[number], found = _redact_compact(line, marker)
            count += found
        if cut_start and number == first_line and b"}" in stripped:
            lines[number], found = _redact_compact_orphans(lines[number], marker)
            count += found
        if cut_end and number == last_line and b"{" in stripped:
            lines[number], found = _redact_open_compact(lines[number], marker)
            count += found
        match = _KEY.match(line[indent:])
        key_indent = indent
        if match is not None and match.group("item"):
            key_indent += len(match.group("item"))
        while stack and (stack[-1].indent > key_indent or stack[-1].indent == key_indent and match is not None
                         and match.group("item")):
            close(stack.pop())
        if match is None:
            continue
        key, value = match.group("key"), match.group("value").strip()
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
        elif key in (b"data", b"stringData") and value in (b"", b"{"):
            collecting = (mapping, key_indent)
    while stack:
        mapping = stack.pop()
        if cut_end and mapping.is_object and not mapping.kind_seen:
            mapping.is_secret = True  # its kind was cut off: it may be a Secret
        close(mapping)
    return b"\n".join(lines), count


def _redact_compact(line: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
    """A one-line JSON Secret (``kubectl get secret -o json | jq -c``): every value of its data objects."""
    count = 0

    def body(match: re.Match[bytes]) -> bytes:
        nonlocal count

        def value(inner: re.Match[bytes]) -> bytes:
            nonlocal count
            count += 1
            return inner.group("key") + b'"' + marker("k8s_secret", inner.group("value")) + b'"'

        whole, body_text = match.group(0), match.group("body")
        start = match.start("body") - match.start()
        return whole[:start] + _COMPACT_VALUE.sub(value, body_text) + whole[start + len(body_text) :]

    return _COMPACT_DATA.sub(body, line), count


def _base64_values(lines: list[bytes], numbers: list[int]) -> bool:
    """Whether every one of these ``key: value`` lines has a base64 value (and one of them a telling one:
    padded or 16 characters long, so ``name: test`` alone does not count)."""
    values = []
    for number in numbers:
        match = _VALUE.match(lines[number])
        if match is None:
            return False
        values.append(match.group("value").strip().rstrip(b","))
    return bool(values) and all(_BASE64.fullmatch(v) for v in values) and any(
        v.rstrip(b'"').endswith(b"=") or len(v) >= 16 for v in values)


def _redact_pairs(text: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
    count = 0

    def value(inner: re.Match[bytes]) -> bytes:
        nonlocal count
        count += 1
        return inner.group("key") + b'"' + marker("k8s_secret", inner.group("value")) + b'"'

    return _COMPACT_VALUE.sub(value, text), count


def _redact_compact_orphans(line: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
    """The first line of a tail that starts inside a one-line JSON object's data (its ``"data":{`` cut off):
    the pairs before the first ``}``, when the object turns out to be a Secret or its kind is not there and
    they are all base64 (fail closed)."""
    close = line.find(b"}")
    if b"{" in line[:close]:
        return line, 0
    head = line[:close]
    kind = _COMPACT_KIND.search(line, close)
    if kind is not None and kind.group("kind") != b"Secret":
        return line, 0
    values = [m.group("value") for m in _COMPACT_VALUE.finditer(head)]
    if kind is None and not (values and all(_BASE64.fullmatch(v) for v in values)):
        return line, 0
    redacted, count = _redact_pairs(head, marker)
    return redacted + line[close:], count


def _redact_open_compact(line: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
    """The last line of a head cut inside a one-line JSON object's data (its ``}`` and maybe its kind are past
    the cut): the open data object's values, unless the object says it is not a Secret."""
    match = _OPEN_COMPACT_DATA.search(line)
    if match is None:
        return line, 0
    start = line.rfind(b'"apiVersion"', 0, match.start())
    kind = _COMPACT_KIND.search(line, max(0, start), match.start()) if start >= 0 else None
    if start < 0 or kind is not None and kind.group("kind") != b"Secret":
        return line, 0
    redacted, count = _redact_pairs(line[match.start("body") :], marker)
    return line[: match.start("body")] + redacted, count


def _starts_inside(data: bytes) -> bool:
    """Whether a tail may start inside a mapping: its first line is indented, or closes a brace it did not open."""
    text = data.lstrip(b"\n")
    line = text[: text.find(b"\n")] if b"\n" in text else text
    close = line.find(b"}")
    return line[:1] in (b" ", b"\t") or close >= 0 and b"{" not in line[:close]
