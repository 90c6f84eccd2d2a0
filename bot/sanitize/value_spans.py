"""Where a candidate's value starts and ends, and what text the verdict on it reads: the spans half of judging it.

``judge`` decides whether a candidate is a secret; this module says which bytes that verdict reads (a quoted value
inside its quotes, a JSON string past an escaped quote, a YAML or ini line's plain value to its line's end, a value
glued to more text by a delimiter) and, once it is accepted, which bytes are replaced (``extended_end``, a plan's
new value: ``changed_to``). Every look is bounded (``VALUE_BOUND``, ``LOOK_AROUND``, the line) and each scan forward
happens once per accepted value, which keeps the search loop linear. Kept apart from ``judge`` because the search
loop (``candidates.run_pass``) and ``cheap_rejection`` ask these questions without a judgement.
"""

from __future__ import annotations

import re

from bot.sanitize import putty
from bot.sanitize.detectors import VALUE_BOUND, Detector

# Continuations of a value that reached its pattern's bound: one forward scan, never a second search.
_BARE_CONTINUATION = re.compile(rb"[^\s\"',;&}\])]*")
_TOKEN_CONTINUATION = re.compile(rb"[A-Za-z0-9_\-./+=]*")
# The rest of a JSON string after an escaped quote (``"abc\"def"``): escapes honoured, to the real closing quote or
# the line's end (the alternatives share no first byte: one way to read each byte, linear).
_JSON_STRING_REST = re.compile(rb'(?:[^"\\\n]|\\[^\n])*')
_SINGLE_STRING_REST = re.compile(rb"[^'\n]*+")
# How far a verdict looks before or after its candidate, within its line (a search to a line's start or end could
# cross a megabyte-long line for every candidate on it: quadratic).
LOOK_AROUND = 128
_FIXED_LENGTH_KINDS = frozenset(
    {"aws_secret_key", "aws_access_key_id", "npm_token", "google_api_key", "bearer", "azure_storage_key",
     "telegram_token", "newrelic_key", "age_key", "shopify_token", "brevo_key", "twilio_key",
     "databricks_token", "postman_key", "pulumi_token", "buildkite_token"}
)
# What stands before a value that runs to its line's end: a YAML block mapping's indentation, list "- ", key, ":"
# and blanks; or an ini/conf file's key and " = " (my.cnf, php.ini, pgbouncer.ini: blanks around the "="). Either
# may follow a diff's line marker or a quote's ">" (``context_patterns._LINE_OPENER``).
_YAML_KEY_LINE = re.compile(
    rb"(?:[+-]|(?:>[ \t]{0,4}){1,4})?"
    rb"(?:[ \t]*(?:-[ \t]+)?[\"']?[\w.\-]{1,128}[\"']?[ \t]*:[ \t]*|[ \t]*[\w.\-]{1,128}[ \t]*=[ \t]*)"
)
_YAML_COMMENT = re.compile(rb"[ \t]#")
# What ends a bare value elsewhere (a query string's "&", a connection string's ";", a flow mapping's "," "}"),
# but is a character of a YAML or ini line's plain value.
_PLAIN_DELIMITERS = frozenset((b"&", b";", b",", b")", b"}", b"]"))  # sets: asked of every value judged
_LINE_ENDS = frozenset((b"", b"\n", b"\r"))
# A delimiter glued to more text mid-line (``_glued_end``): the value runs on to the next blank or quote, unless
# the next pair of a list follows (``;Database=``, ``&page=``) or a blank, a quote or the line's end does.
_GLUE_STOPS = (b"", b" ", b"\t", b"\n", b"\r", b"\v", b"\f", b'"', b"'")
_NEXT_PAIR = re.compile(rb"[A-Za-z_][A-Za-z0-9_.\-]{0,63}=")
_GLUED_TAIL = re.compile(rb"[^\s\"']*")
_YAML_COMMENT_TEXT = re.compile(r"[ \t]#")
# Numbers joined by the delimiters (``pass=3,4``, ``retries=1;2;5``): no password read on from a short first run
_NUMBER_LIST = re.compile(r"[0-9]+(?:[,;&)}\]][0-9]+)*")
# Each branch's group names (``automata._compile_pass``: branch i's parts are ``b{i}_<part>``), spelled
# once: formatting them cost a few percent of a judgement, which dense text does on every line.
_BRANCHES = 256
NAME, VALUE, SEPARATOR, QUOTE = (tuple(f"b{i}_{part}" for i in range(_BRANCHES)) for part in ("name", "v", "sep", "q"))


def read_on(text: bytes, separator: str, name_span: tuple[int, int], value_span: tuple[int, int]) -> str | None:
    """The text an unquoted assignment's verdict reads on to when a delimiter glues its refused first run
    (``value_span``) to more (``reads_line``), None when it reads no further (refused then): a YAML or ini line's
    plain value to the line's end (a key opens the line), or mid-line after "=" the value with its glued tail
    (``_glued_end``). Shared by ``judge`` and ``cheap_rejection``."""
    name_start, name_end = name_span
    value_start, value_end = value_span
    plain = plain_line_value(text, value_start)
    if plain is None and separator == "=":  # mid-line NAME=value glued on past it (``_glued_end``): an argv's
        # ``--api_token=Wq4vN8,mR2kT7xL9``; a first run too short to judge alone (``-e DB_PASSWORD=ab;cdefghij``)
        # only in an argv's word, and never a list of numbers (``pass=3,4``)
        # short as the finder's _GLUED_SHORT_RUN reads it, not any trivial run: a long trivial first run
        # (``null;Xk9...``, ``aaaa)Xk9...``) was read with its glued tail on 3f59870 wherever the name stood
        shown = text[value_start:value_end].decode("utf-8", "replace")
        short = len(shown) <= 2 or len(shown) <= 6 and shown.isascii() and shown.isdigit()
        if not short or _argv_assignment(text, name_start, name_end):
            plain = _glued_word(text, name_start, value_start, value_end)
            if short and plain is not None and _NUMBER_LIST.fullmatch(plain):
                plain = None
    return plain


# A plan's change of a value (``terraform plan``'s ``~ password = "old" -> "new"``): the new value after the old one's
# closing quote, within its line and bounded as a quoted value is.
_CHANGED_TO = re.compile(rb'[ \t]{1,4}->[ \t]{1,4}"([^"\n]{1,%d})' % VALUE_BOUND)
CHANGE_CHECKS = frozenset({"assignment", "aligned"})


def changed_to(data: bytes, detector: Detector, end: int) -> tuple[int, int] | None:
    """The span of the new value when a quoted value ending at ``end`` (its closing quote there), a ``null`` or
    Terraform's ``(sensitive value)`` is a plan's change (``"old" -> "new"``, ``null -> "new"``, ``(sensitive value)
    -> "new"``: a variable newly marked sensitive shows its new value), else None. An accepted old value's verdict
    is the new one's (the same attribute): hiding the old one alone showed the new password (found by review); a
    rejected one's new value is judged on its own (``changed_kind``). One bounded match per candidate of these
    checks."""
    if detector.check not in CHANGE_CHECKS:
        return None
    if data[end : end + 1] == b'"':
        arrow_at = end + 1
    elif data[end - 4 : end] == b"null":
        arrow_at = end
    elif data[end - 10 : end] == b"(sensitive" and data[end : end + 7] == b" value)":
        arrow_at = end + 7  # Terraform's old value marked sensitive: its bare candidate is "(sensitive"
    else:
        return None
    change = _CHANGED_TO.match(data, arrow_at)
    if change is None:
        return None
    stop = change.end(1)
    if stop - change.start(1) == VALUE_BOUND:
        stop = _line_stop(data, stop, b'"')
    return change.start(1), stop


def quoted_span(data: bytes, match: re.Match[bytes], index: int) -> tuple[int, int]:
    """The secret's span inside its quotes (a quoted value keeps its quotes visible)."""
    start, end = match.span(VALUE[index])
    quote = data[start : start + 1]
    if quote in (b'"', b"'"):
        if end - start > 1 and data[end - 1 : end] == quote:
            if quote == b'"' and data[end - 2] == 0x5C and _escaped(data, start, end - 1):
                return start + 1, escaped_string_end(data, end)
            return start + 1, end - 1
        return start + 1, end
    return start, end


def unclosed_long_value(data: bytes, start: int, end: int) -> bool:
    """Whether the quoted value ``start``..``end`` (inside its quotes, as ``quoted_span`` gives it) is the window of a
    value longer than it (``context_patterns.QUOTED``) that no quote closes before its line ends: refused, as the
    patterns refused every unclosed value before a newline when the window had to hold the closing quote (a judgement
    of 256 characters on every line of ``token="`` then 257 "x" cost 35 us a line). One forward scan to the quote or
    the line's end, which the accepted value's ``extended_end`` would have read anyway; the scans of two candidates
    never overlap (a candidate's window holds no quote of its kind, so the next one starts past this one's scan)."""
    if end - start != VALUE_BOUND or start == 0:
        return False
    quote = data[start - 1]
    if quote == 0x22:
        stop = _JSON_STRING_REST.match(data, end).end()  # type: ignore[union-attr]
    elif quote == 0x27:
        stop = _SINGLE_STRING_REST.match(data, end).end()  # type: ignore[union-attr]
    else:
        return False
    return data[stop : stop + 1] == b"\n"


def escaped_string_end(data: bytes, after: int) -> int:
    """Where a JSON string whose pattern stopped at an escaped quote (``"a\\"bcdef"``, just before ``after``) really
    ends: at its closing quote, read on by one bounded forward scan (``VALUE_BOUND`` bytes more, within the line), so
    that it is judged on all of it, not on the part before the escape (``a\\`` alone is trivial: ``"a\\"bcdef"``
    showed)."""
    rest = _JSON_STRING_REST.match(data, after, min(len(data), after + VALUE_BOUND))
    return rest.end() if rest is not None else after


def on_key_line(data: bytes, value_start: int) -> bool:
    """Whether the value at ``value_start`` follows a key that opens its line (``_YAML_KEY_LINE``), looking back
    at most ``LOOK_AROUND`` bytes."""
    lookback = max(0, value_start - LOOK_AROUND)
    newline = data.rfind(b"\n", lookback, value_start)
    if newline < 0 and lookback > 0:
        return False
    return _YAML_KEY_LINE.fullmatch(data, newline + 1, value_start) is not None


def reads_line(data: bytes, value_start: int, value_end: int) -> bool:
    """Whether the verdict on the unquoted value ``value_start``..``value_end`` reads its whole line when a key
    opens that line (``plain_line_value``): a delimiter follows it, or it opens a bracket and ends its line. A
    verdict that read the line is never remembered (the memo keys hold the value and one byte after it)."""
    after = data[value_end : value_end + 1]
    return after in _PLAIN_DELIMITERS or after in _LINE_ENDS and (
        data.find(b"(", value_start, value_end) >= 0 or data.find(b"[", value_start, value_end) >= 0)


def plain_line_value(data: bytes, value_start: int) -> str | None:
    """The plain value at ``value_start`` to its line's end (at most ``VALUE_BOUND`` bytes; a `` #`` comment and
    trailing blanks aside), when a key opens the line (a YAML block mapping, an ini file), else None: mid-line
    (prose, a flow mapping, a query string) the delimiters end a value."""
    if not on_key_line(data, value_start):
        return None
    line = data[value_start : value_start + VALUE_BOUND].split(b"\n", 1)[0]
    return without_comment(line.decode("utf-8", "replace"))


def without_comment(value: str) -> str:
    """A plain value without its `` #`` comment and trailing blanks (and "\r")."""
    comment = _YAML_COMMENT_TEXT.search(value)
    return (value[: comment.start()] if comment else value).rstrip()


def _yaml_plain_end(data: bytes, value_start: int, end: int) -> int:
    """Where an accepted bare value ends when it is a YAML block mapping's plain scalar (``password: ab&cd;ef``,
    a container's ``value: Tr0ub4dor&3x``) or an ini file's (``password = ab&cd``): at its line's end, a `` #``
    comment and trailing blanks aside. The
    delimiters that end a value elsewhere (``&`` of a query string, ``;`` of a connection string, ``,``/``}`` of
    a flow mapping) are characters of the password there, and stopping at them showed its tail. The look back
    is bounded and the scan forward happens once per accepted value (the next search starts after it)."""
    if data[end : end + 1] not in _PLAIN_DELIMITERS or not on_key_line(data, value_start):
        return end  # mid-line (prose, a flow mapping {password: x, user: y}, a query string): its delimiters hold
    return _plain_line_end(data, end)


def _glued_end(data: bytes, name_start: int, end: int, stop: int | None = None) -> int:
    """Where an accepted bare value ends mid-line when a delimiter stops it glued to more text: at the next blank
    (or quote, or the line's end). In an argv as ``ps`` or a log prints it (``docker run -e
    MYSQL_ROOT_PASSWORD=z9<3zU;2pwBLY3cH -p ...``) a ";" "," "&" ")" "}" "]" with no blank after it is a character
    of the value (a shell's ";" is followed by a blank), and stopping there showed the tail. Fails closed: a
    password is never cut at such a delimiter, at the price of a few characters more hidden after a real one.
    Two lists keep their delimiters (today's behaviour): a query string's parameter (the name after "?" or "&",
    ``?token=abc&page=2``) and any value followed by the list's next pair, ``;name=`` (a connection string's
    ``;Database=app``, a query's ``&next=``). One forward scan per accepted value (the next search starts after
    it; ``stop`` bounds a look that is not consumed)."""
    if data[end : end + 1] not in _PLAIN_DELIMITERS or data[end + 1 : end + 2] in _GLUE_STOPS:
        return end
    if data[name_start - 1 : name_start] in (b"?", b"&") or _NEXT_PAIR.match(data, end + 1):
        return end
    return _GLUED_TAIL.match(data, end, len(data) if stop is None else stop).end()  # type: ignore[union-attr]


def _argv_assignment(data: bytes, name_start: int, name_end: int) -> bool:
    """Whether ``NAME=`` stands as an argv word writes it (``-e DB_PASSWORD=ab;cd``, ``--password=x;9Kq``): the name
    opens a word (after a blank, the text's start, or an option's "=": ``--env=DB_PASSWORD=``) and "=" alone
    follows it. Asked before a value whose first run is too short to judge alone (``ab`` before ``;``) is read
    with its glued tail: in code such a run is an expression's (``login(password=pw),next()``, ``secret :=
    []byte(...)``, ``(pass==1)&&x``), and reading on from it hid the code. Make's ``:=`` and ``?=`` written
    right after the name count as "=" (``export DB_PASSWORD:=ab;cdefghij`` was hidden whole on 3f59870, its finder
    reading ":" then "=ab"; Go's ``secret := ...`` has a blank before it)."""
    after = data[name_end : name_end + 3]
    return (name_start == 0 or data[name_start - 1 : name_start] in (b" ", b"\t", b"=")) and (
        after[:1] == b"=" and after[1:2] != b"=" or after[:2] in (b":=", b"?=") and after[2:3] != b"=")


def _glued_word(data: bytes, name_start: int, value_start: int, value_end: int) -> str | None:
    """The value at ``value_start`` with its glued tail (``_glued_end``), at most ``VALUE_BOUND`` bytes (a
    rejected candidate's look must stay bounded: the next one may lie in the same long word), else None when no
    delimiter glues it to more text."""
    end = _glued_end(data, name_start, value_end, value_start + VALUE_BOUND)
    return None if end == value_end else data[value_start:end].decode("utf-8", "replace")


def _plain_line_end(data: bytes, end: int) -> int:
    """Where a plain value that runs on from ``end`` to its line's end stops: before a `` #`` comment and
    trailing blanks (and "\r"). One forward scan, bounded by the line."""
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    comment = _YAML_COMMENT.search(data, end, line_end)
    stop = comment.start() if comment else line_end
    while stop > end and data[stop - 1 : stop].isspace():
        stop -= 1
    return stop


def _line_stop(data: bytes, end: int, *quotes: bytes) -> int:
    """The first of ``quotes`` from ``end`` on within its line, else the line's end: each search stops at the
    newline (a quote searched for past it could lie a megabyte on, and be searched for again by the next
    candidate: quadratic on lines without that quote)."""
    newline = data.find(b"\n", end)
    line_end = len(data) if newline < 0 else newline
    found = [i for i in (data.find(quote, end, line_end) for quote in quotes) if i >= 0]
    return min(found) if found else line_end


def _escaped(data: bytes, floor: int, end: int) -> bool:
    """Whether the quote at ``end`` is escaped: an odd run of backslashes before it (looking back no further than
    ``floor``, the value's opening quote)."""
    run = end
    while run > floor and data[run - 1] == 0x5C:
        run -= 1
    return (end - run) % 2 == 1


def extended_end(data: bytes, match: re.Match[bytes], index: int, detector: Detector, start: int, end: int) -> int:
    """Past the pattern's bound: an accepted value runs on to its real end (one forward scan, never repeated,
    since the next search starts after it)."""
    value_start = match.start(VALUE[index])
    quote = data[value_start : value_start + 1]
    if quote in (b'"', b"'"):
        if quote == b'"' and end > match.end(VALUE[index]):  # read on past an escaped quote (``quoted_span``)
            return _JSON_STRING_REST.match(data, end).end()  # type: ignore[union-attr]
        if quote == b'"' and data[end : end + 1] == quote and _escaped(data, value_start, end):
            # the pattern's closing quote is an escaped one (``"password":"abc\"def"``): the value runs on to the
            # string's real end (one forward scan, consumed: the next search starts after it)
            return _JSON_STRING_REST.match(data, end + 1).end()  # type: ignore[union-attr]
        if end - start < VALUE_BOUND or data[end : end + 1] == quote:
            return end
        if quote == b'"':  # to the string's real end: an escaped quote past the bound is inside it (leaks11)
            return _JSON_STRING_REST.match(data, end).end()  # type: ignore[union-attr]
        return _line_stop(data, end, quote)
    if detector.check == "line_value":
        return _plain_line_end(data, start)
    if detector.check == "env_line":
        if match.end(VALUE[index]) - value_start < VALUE_BOUND:
            return end
        stop = data.find(b"\n", end)
        stop = len(data) if stop < 0 else stop
        while stop > end and data[stop - 1 : stop].isspace():  # one backward step per trailing blank
            stop -= 1
        return stop
    if detector.check in ("assignment", "aligned", "env_pair"):
        end = _BARE_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]
        plain_end = _yaml_plain_end(data, value_start, end)
        return plain_end if plain_end != end else _glued_end(data, match.start(NAME[index]), end)
    if detector.check == "env_string":  # to the closing quote (or the line's end), never past it
        if end - start < VALUE_BOUND:
            return end
        return _line_stop(data, end, b'"', b"'")
    if detector.check == "private_lines":
        return putty.private_lines_end(data, end)
    if detector.kind in _FIXED_LENGTH_KINDS or detector.check in ("url_password", "xml_pair"):
        return end
    return _TOKEN_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]
