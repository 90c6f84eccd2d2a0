"""Replacing the values of one Kubernetes Secret's ``data:`` / ``stringData:`` lines (``structured.py`` finds them).

Each value line is ``lead`` (indentation, a list's ``-``, the key, the colon) then the value, which is replaced and
its quotes and a JSON comma kept; a line indented deeper than the others is inside a block scalar (``key: |``) and
is replaced whole. ``replace_values`` reads every line so in Python (about 1.4 us a line) unless the marker is the
same for every value (the output's ``[REDACTED:k8s_secret]``, not an approval card's fingerprinted one): then the
common forms (``key: value``, ``key: "value"``, ``"key": "value",``) of all the lines are replaced by three
substitutions over the lines joined, and only the lines none of them took are read in Python. A Secret of
thousands of short keys (an application's environment) cost a microsecond and a half a line, slower than any
other output, and a text of them spent the manifest walk's budget (``structured.BYTES_PER_UNIT``).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from itertools import chain, repeat

import re2

KIND = "k8s_secret"
# A key may be quoted either way (``'tls.key': ...`` in a hand-written manifest).
VALUE = re.compile(rb'^(?P<lead>[ \t]*(?:-[ \t]+)?["\']?[A-Za-z0-9_.\-/]{1,253}["\']?[ \t]*:[ \t]*)(?P<value>.*)$')
# Values the reading below leaves alone: no value, a block scalar's indicator, a JSON object's brace.
_NOT_VALUES = (b"", b"|", b"|-", b">", b">-", b"{", b"}")
# Possessive repeats (``*+``): what each takes is never given back, since what follows it cannot start with what
# it takes (a key's characters are no quote, blank or colon): the same matches, a third less time.
_LEAD = rb'[ \t]*(?:-[ \t]+)?["\']?[A-Za-z0-9_.\-/]{1,253}+["\']?[ \t]*+:[ \t]*+'
# The forms the substitutions take, each exactly what ``_replace_line`` makes of it: an unquoted value with no
# blank, comma or YAML indicator in it, then a JSON comma and blanks; a quoted one whose inside holds no quote of
# its kind and does not start with "{" (a chart's template, ``{{ .Values.x }}``, is left alone there).
_FORMS = (rb"(%s)[^\s\"'{}|>,][^\s,]*+(,?[ \t]*+)", rb'(%s)"(?:[^"\n{][^"\n]*+)?"(,?[ \t]*+)',
          rb"(%s)'(?:[^'\n{][^'\n]*+)?'(,?[ \t]*+)")
_ANY_INDENTATION = tuple(re.compile(form % _LEAD) for form in _FORMS)  # the forms, for a line alone
_QUOTES = (b"", b'"', b"'")
_SUBSTITUTIONS: dict[int, tuple[re.Pattern[bytes], ...]] = {}
_ONE_SEPARATOR: dict[int, re2._Regexp] = {}
_AFTER_SEPARATOR = re.compile(rb": [^\n]*+")  # (a line's value, where _one_separator holds: its only ": ")
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.encoding = re2.Options.Encoding.LATIN1  # bytes as bytes, as ``re`` reads them
_RE2_OPTIONS.log_errors = False


def replace_values(lines: list[bytes], numbers: list[int], marker: Callable[[str, bytes], bytes],
                   constant: bytes | None) -> int:
    """Replace the values of ``lines[numbers]`` (one Secret's data lines); how many were replaced. ``constant``:
    what ``marker`` returns for every value, when it does not depend on the value (None: it does)."""
    if constant is not None and len(numbers) == 1:  # (a small Secret, or one line a Secret: as common)
        for form, quote in zip(_ANY_INDENTATION, _QUOTES, strict=True):
            taken = form.fullmatch(lines[numbers[0]])
            if taken is not None:
                lines[numbers[0]] = taken.group(1) + quote + constant + quote + taken.group(2)
                return 1
    before = list(map(lines.__getitem__, numbers))
    if constant is not None and len(numbers) > 1:
        # The first form, at the first line's indentation: when it takes every line (the common case), each once,
        # they are all indented alike (none inside a block scalar) and none is left to read.
        first = before[0]
        after = _substituted(before, len(first) - len(first.lstrip(b" \t")), constant)
        if isinstance(after, list):
            if numbers[-1] - numbers[0] + 1 == len(numbers):
                lines[numbers[0] : numbers[-1] + 1] = after
            else:
                for number, new in zip(numbers, after, strict=True):
                    lines[number] = new
            return len(numbers)
    # Each line's indentation (its length less that of its text after the blanks), computed without a Python loop.
    indents = list(map(operator.sub, map(len, before), map(len, map(bytes.lstrip, before, repeat(b" \t")))))
    child_indent = min(indents)
    todo = list(zip(numbers, indents, strict=True))
    count = 0
    if constant is not None and len(numbers) > 1:
        if child_indent != indents[0]:
            after = _substituted(before, child_indent, constant)
        todo = []
        for number, indent, old, new in zip(numbers, indents, before, after, strict=True):
            if new == old:  # no substitution took it: read below
                todo.append((number, indent))
            else:
                lines[number] = new
                count += 1
    for number, indent in todo:
        line = lines[number]
        if indent > child_indent:  # inside a block scalar (``key: |``): the whole line is secret
            lines[number] = line[:indent] + marker(KIND, line.strip())
            count += 1
        else:
            new_line = _replace_line(line, marker)
            if new_line is not None:
                lines[number] = new_line
                count += 1
    return count


def _substituted(before: list[bytes], child_indent: int, constant: bytes) -> list[bytes] | tuple[bytes, ...]:
    """The lines with the values the three forms take replaced by ``constant``: a list when the first form took
    every one of them (each once), else a tuple, in which a line none took is unchanged."""
    joined = b"\n" + b"\n".join(before)
    if _one_separator(child_indent).fullmatch(joined) is not None:
        # Each line "key: value" in the first form with one blank after its colon, and no ": " but that one: the
        # value is what follows the line's ": ", replaced by one substitution with no group (C throughout)
        return _AFTER_SEPARATOR.sub(b": " + constant.replace(b"\\", b"\\\\"), joined)[1:].split(b"\n")
    plain, *quoted = _substitutions(child_indent)
    parts = plain.split(joined)
    if len(parts) // 3 == len(before):  # (the parts: each line's lead and trail, and what lies between, empty)
        return list(map(b"".join, zip(parts[1::3], repeat(constant), parts[2::3])))
    joined = _rejoin(parts, constant)
    for pattern, quote in zip(quoted, _QUOTES[1:], strict=True):
        joined = _rejoin(pattern.split(joined), quote + constant + quote)
    return tuple(joined[1:].split(b"\n"))


def _rejoin(parts: list[bytes], middle: bytes) -> bytes:
    """What a pattern's ``split`` cut (a newline, then its groups, the lead and the trail, around a value), joined
    with ``middle`` in each value's place. ``re.sub`` with a template that names groups calls Python for each match
    in Python 3.11 (2.6 us); a split keeps the groups and the joining is all C."""
    betweens = parts[0::3]
    joined = b"".join(chain.from_iterable(zip(betweens, repeat(b"\n"), parts[1::3], repeat(middle), parts[2::3])))
    return joined + betweens[-1]


def _one_separator(child_indent: int) -> re2._Regexp:
    """Lines joined after a newline each, every one a value line of the first form indented ``child_indent`` whose
    colon one blank follows (``  password: cGFzcw==``), checked by RE2 at DFA speed (a third of the time the
    substitution's split takes)."""
    pattern = _ONE_SEPARATOR.get(child_indent)
    if pattern is None:
        line = rb'\n[ \t]{%d}(?:-[ \t]+)?"?[A-Za-z0-9_.\-/]{1,253}"?: [^ \t\n\r\f\v"\'{}|>,][^ \t\n\r\f\v,]*'
        pattern = re2.compile(b"(?:" + line % child_indent + b")*", _RE2_OPTIONS)
        if len(_ONE_SEPARATOR) >= 64:
            _ONE_SEPARATOR.clear()
        _ONE_SEPARATOR[child_indent] = pattern
    return pattern


def _substitutions(child_indent: int) -> tuple[re.Pattern[bytes], ...]:
    """The three forms of a value line indented exactly ``child_indent`` (deeper: inside a block scalar), each as a
    newline, the form, then a newline or the end (the lines are joined after a newline: a literal first byte,
    which ``re`` looks for fast, where ``^`` is tried at every byte)."""
    patterns = _SUBSTITUTIONS.get(child_indent)
    if patterns is None:
        lead = rb"[ \t]{%d}" % child_indent + _LEAD[len(rb"[ \t]*"):]  # (the key's first byte is no blank)
        patterns = tuple(re.compile(rb"\n" + form % lead + rb"(?=\n|\Z)") for form in _FORMS)
        if len(_SUBSTITUTIONS) >= 64:
            _SUBSTITUTIONS.clear()  # bounded: a text chooses its indentations
        _SUBSTITUTIONS[child_indent] = patterns
    return patterns


def _replace_line(line: bytes, marker: Callable[[str, bytes], bytes]) -> bytes | None:
    """One ``key: value`` line with its value replaced (quotes and a JSON comma kept), None when it has no value
    to replace."""
    match = VALUE.match(line)
    if match is None:
        return None
    value = match.group("value").rstrip(b" \t")
    trail = match.group("value")[len(value) :]
    if value.endswith(b","):  # indented JSON
        value, trail = value[:-1], b"," + trail
    if value in _NOT_VALUES:
        return None
    quote = value[:1] if value[:1] in (b'"', b"'") and value[-1:] == value[:1] and len(value) > 1 else b""
    inner = value[1:-1] if quote else value
    if inner.startswith(b"{{") and inner.rstrip().endswith(b"}}"):
        return None  # a chart's template ({{ .Values.db.password | quote }}): rendered later, no value yet
    return match.group("lead") + quote + marker(KIND, inner) + quote + trail

