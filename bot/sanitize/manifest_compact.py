"""One-line JSON Secrets (``kubectl get secret -o json | jq -c``): the values of their data objects, found by bounded
patterns on the line (``structured.py``'s walk hands over each line holding ``"Secret"``), and the halves of one a
capped output's cut leaves at the start of its tail or the end of its head."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import chain, repeat

from bot.sanitize.manifest_values import KIND

# A JSON string's content, its escapes honoured (``"{\"password\":\"PW\"}"``: a manifest file's stringData holds
# quotes and braces; read to the first quote, the rest of the value showed). The alternatives share no first byte:
# one way to read each byte.
_STRING = rb'(?:[^"\\]|\\.)'
# A data object's body: strings (braces inside them are the value's) and what lies between them, no brace.
_BODY = rb'(?P<body>(?:[^{}"]|"' + _STRING + rb'*")*)'
_COMPACT_DATA = re.compile(rb'"(?:data|stringData)"\s*:\s*\{' + _BODY + rb'\}', re.S)
_COMPACT_VALUE = re.compile(rb'(?P<key>"[^"]{1,253}"\s*:\s*)"(?P<value>' + _STRING + rb'{0,65536})"', re.S)
# The data object a head cut in the middle of a one-line JSON object leaves open (its "}" is past the cut), the
# cut maybe inside a value (its closing quote past the cut, maybe right after a backslash).
_OPEN_COMPACT_DATA = re.compile(
    rb'"(?:data|stringData)"\s*:\s*\{(?P<body>(?:[^{}"]|"' + _STRING + rb'*")*(?:"' + _STRING + rb'*\\?)?)\Z', re.S)
_COMPACT_KIND = re.compile(rb'"kind"\s*:\s*"(?P<kind>[^"]{0,253})"')
# What every value of a Secret's data is (kubectl prints them base64): a kind-less half whose values all look
# like this may be one.
BASE64 = re.compile(rb'"?(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)"?')


def redact_compact(
    line: bytes, marker: Callable[[str, bytes], bytes], constant: bytes | None = None
) -> tuple[bytes, int]:
    """A one-line JSON Secret (``kubectl get secret -o json | jq -c``): every value of its data objects.
    ``constant``: what ``marker`` returns for every value, when it does not depend on it; the values are then
    replaced without a Python call each (a split keeps each pair's key, the joining is C)."""
    count = 0

    def body(match: re.Match[bytes]) -> bytes:
        nonlocal count

        def value(inner: re.Match[bytes]) -> bytes:
            nonlocal count
            count += 1
            return inner.group("key") + b'"' + marker(KIND, inner.group("value")) + b'"'

        whole, body_text = match.group(0), match.group("body")
        start = match.start("body") - match.start()
        if constant is None:
            replaced = _COMPACT_VALUE.sub(value, body_text)
        else:  # the parts: what lies between pairs, then each pair's key and value
            parts = _COMPACT_VALUE.split(body_text)
            count += len(parts) // 3
            quoted = b'"' + constant + b'"'
            replaced = b"".join(chain.from_iterable(zip(parts[0::3], parts[1::3], repeat(quoted)))) + parts[-1]
        return whole[:start] + replaced + whole[start + len(body_text) :]

    return _COMPACT_DATA.sub(body, line), count


def _redact_pairs(text: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
    count = 0

    def value(inner: re.Match[bytes]) -> bytes:
        nonlocal count
        count += 1
        return inner.group("key") + b'"' + marker(KIND, inner.group("value")) + b'"'

    return _COMPACT_VALUE.sub(value, text), count


def redact_compact_orphans(line: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
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
    if kind is None and not (values and all(BASE64.fullmatch(v) for v in values)):
        return line, 0
    redacted, count = _redact_pairs(head, marker)
    return redacted + line[close:], count


def redact_open_compact(line: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
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
