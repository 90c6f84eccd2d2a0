"""Refusing an assignment candidate without the full judgement, where its value alone says no.

The density budget (``candidates.py``) exists to bound the Python work per byte: a unit stands for about a
microsecond. A full judgement (the anchored parse, then ``judge.judge`` reading the candidate in its context) costs
6-15 us and is charged ``JUDGEMENT_UNITS``. Ordinary output is full of secret-named assignments whose value says
no at once, each one different so that the verdict memo never sees it twice: a placeholder or a boolean
(``token: ***``, ``"token": "[MASKED]"``, ``NPM_TOKEN: ${{ secrets.X }}``, ``db_password = (sensitive value)``,
``"csrf_token_present":true``), a path (``--kubelet-client-key=/etc/kubernetes/pki/x.key``), a readable name
where only a generated value would be a secret (``secret="db-credentials"``, ``auth: oidc``), a YAML alias, a
mapping's first key on the next line (``secrets:`` then ``  db_password:``). At full price, 46 KiB of the project's
own benign corpus spent the budget and lost 265 lines to dense markers. Their refusal needs a few microseconds:
the head the loop has read already (before the parse: ``refuse_head``) or the parse (``refuse_parsed``) gives the
name, the separator and where the value starts, and ``shapes.refused_everywhere`` decides.

Sound by construction, not by a second set of rules: each refusal here is one ``judge.judge`` returns for the same
value before reading anything else (its structural refusals, ``accept_assignment``'s refusals that come before
every acceptance), and the guards make sure the value read here is the one the parse gives (same line, no block
scalar, no ``:=``) and that judge would not read on past it (a plain value that a delimiter glues to its line is
judged whole on a key line: ``password: ***;x9Kq`` is not refused here). Anything else (None) is left to the full
judgement, so a screen that gives up early can cost coverage, never a secret.
"""

from __future__ import annotations

import re

from bot.sanitize import code_expressions, secret_names, shapes
from bot.sanitize.judge import line_value_refused
from bot.sanitize.value_spans import NAME, SEPARATOR, VALUE, quoted_span, read_on, reads_line

# An assignment's unquoted value on its separator's line (the parse's ``_BARE_VALUE`` after its blanks; the same
# pattern as ``assignment_screen._CODE_VALUE``, whose match the loop may pass on).
BARE_VALUE = re.compile(rb"[ \t]{0,4}([^\s\"',;&}\])]{1,256})")
_BLANKS_RUN = re.compile(rb"[ \t]{1,4}")
# An unquoted value on the next line (the parse's "\n" then 1..16 blanks): a YAML mapping's first key, when it
# ends with ":" (``secrets:`` then ``  db_password:``), which judge refuses before reading anything else.
_NEXT_LINE = re.compile(rb"[ \t]{0,4}\n[ \t]{1,16}[^\s\"',;&}\])]{1,256}")
_NOT_HERE = b"|>"  # a block scalar's indicator: the parse reads the value on the next line, not here
_NODE_FIRST = b"*&!"  # where a plain value's first byte may make it a YAML node's reference
_QUOTES = (34, 39)  # '"' and "'"
_BLANKS = (b" ", b"\t")
_DELIMITERS = (b"&", b";", b",", b")", b"}", b"]")  # what glues a plain value to more (``value_spans.reads_line``)
_COLON = 58
_BACKSLASH = 0x5C
_LOOK_AROUND = 128  # how far judge looks after a value for the words of a sentence (``value_spans.LOOK_AROUND``)
# ``shapes.REFUSED_WORDS`` as bytes: a plain word's lower-case spelling looked up without decoding it
REFUSED_WORDS = frozenset(word.encode() for word in shapes.REFUSED_WORDS)
# A refusal's verdicts (an int, None when the full judgement must decide): refused and not remembered (0, False),
# refused and remembered under the candidate's memo key (1, True), refused after reading on to the line's end or a
# glued tail as judge does (``READ_ON``: not remembered, and charged about what judge's reading costs).
READ_ON = 2
# The checks ``refuse_parsed`` reads: judge's assignment tail (after its named checks) and a line's plain value.
PARSED_CHECKS = frozenset({"assignment", "aligned", "line_value"})


def unrefusable_password_word(word: bytes, following: bytes) -> bool:
    """Whether a password's unquoted value ``word`` (``following``: the byte after it) is refused by nothing cheap: a
    plain word (ASCII letters and digits, a letter first) that is no trivial value nor an algorithm
    (``shapes.rejected_value``), with no words after it. Asked before any attempt (a password's value on every line
    lands here: ``pass: x{i}``), so that the attempt is not paid for where it cannot refuse."""
    return word.isalnum() and len(word) > 2 and word[0] > 57 and word.lower() not in REFUSED_WORDS \
        and word.count(word[:1]) != len(word) and following not in _BLANKS


def refuse_head(
    data: bytes, head: re.Match[bytes], candidate_end: int, value: re.Match[bytes] | None = None
) -> int | None:
    """Whether the assignment whose head (``assignment_screen._ASSIGNMENT_HEAD``: a boundary, the name, its
    separator) is ``head`` is refused by what its value alone says, read without the parse: None when this cannot
    tell (the full judgement decides), else refused, True when the verdict may be remembered under the candidate's
    memo key. ``value``: ``BARE_VALUE`` matched at the head's end already (by the scan's dismissal), or None.

    Only for a head the loop takes as the assignment's alone (``assignment_screen._assignment_head``), not at the
    text's start, whose full parse is then the assignment branch anchored at the head's start: the same boundary, the
    same name (the whole run of name characters, in its quotes) and separator, then the value read here. A
    refused assignment resumes one byte on (at its name) either way."""
    start, after = head.start(), head.end()
    if start == 0 or data[after : after + 1] == b"=" or arrow_ahead(data, after):
        return None  # "^" may open the name; ":=" (Go, make) or "==": the parse's separator is not the head's
    name_start, name_end = start + 1, head.end(1)
    if data[name_start] == 39:  # "'": the parse's '...' name takes both quotes (else it fails: refused all the same)
        if data[name_end] != 39:
            return False
        name_end += 1
    elif data[name_end] == 34:  # the parse's "? closing the name
        name_end += 1
    if value is None:
        value = BARE_VALUE.match(data, after)
    if value is not None:
        word, following = value.group(1), data[value.end() : value.end() + 1]
        if unrefusable_password_word(word, following):
            # A plain word (ASCII letters and digits, a letter first) that is no trivial value nor an algorithm
            # (``shapes.rejected_value``), with no words after it: asked first and alone, since a password's or a
            # token's value on every line lands here. Under a password's name nothing cheap refuses it; under a
            # name that needs a generated value, ``shapes.refused_everywhere`` comes down to this (no path, no
            # Kubernetes name, no code, unquoted; a delimiter after it is read on as judge reads it, below).
            name = head.group(1).decode("utf-8", "replace")
            kind = secret_names.name_kind(name)
            if kind is None or kind[1]:
                return None
            if following not in _DELIMITERS and not _changes(data, value.end()):
                if (shapes.environment_secret(name, kind[0]) or len(word) >= 8 and shapes.generated(word.decode())
                        or kind[0] == "auth" and shapes.basic_credentials(word.decode())):
                    return None
                return value.end() <= candidate_end
        value_span, quoted = value.span(1), False
        if data[value_span[0]] in _NOT_HERE:
            return None
    elif (quoted_span_ := _closed_quote(data, after)) is not None:
        value_span, quoted = quoted_span_, True
    else:
        below = _NEXT_LINE.match(data, after)
        if below is not None and data[below.end() - 1] == _COLON:  # a mapping's first key on the next line
            return below.end() <= candidate_end
        return _structural(data, name_start, after - 1, candidate_end)  # an unclosed quote, a delimiter, nothing
    return _refused(data, (name_start, name_end), after - 1, value_span, quoted, candidate_end)


def _closed_quote(data: bytes, after: int) -> tuple[int, int] | None:
    """The span of a quoted value (its quotes with it) after up to four blanks, closed on its line within the
    parse's bound of 256 characters (``_QUOTED_VALUE``), else None. Two memchr scans, not a pattern's per-byte
    steps: a quote that never closes (``token="`` then 257 characters) is read once here, as by the parse."""
    blanks = _BLANKS_RUN.match(data, after)
    opening = blanks.end() if blanks is not None else after
    quote = data[opening : opening + 1]
    if quote not in (b'"', b"'"):
        return None
    close = data.find(quote, opening + 1, opening + 258)
    if close <= opening + 1 or data.find(b"\n", opening + 1, close) >= 0 or data[close - 1] == _BACKSLASH:
        return None
    return opening, close + 1


def refuse_parsed(data: bytes, check: str, match: re.Match[bytes], index: int, candidate_end: int) -> int | None:
    """``refuse_head`` for a candidate parsed as the assignment or an aligned column, or a line's
    plain value (``line_value``: ``judge.line_value_refused``), from its name, separator and value as the parse
    gives them: the judgement is spared, not the parse. (Its name holds a secret: the loop asked that first.)"""
    value_start, value_end = match.span(VALUE[index])
    if arrow_ahead(data, match.end(SEPARATOR[index])):
        return None  # a plan's change may follow: judge reads its new value (``value_spans.changed_to``)
    if check == "line_value":  # judge's verdict on it, remembered where the line ends with the candidate
        if b"->" in data[value_start:value_end]:
            return None  # a plan's change on the line: judge's own reading
        separator = "=" if b"=" in match.group(SEPARATOR[index]) else ":"  # its group holds blanks around it
        start, end = quoted_span(data, match, index)  # what the loop hands judge
        if not line_value_refused(separator, data[start:end].decode("utf-8", "replace")):
            return None
        return data[value_end : value_end + 1] in (b"", b"\n")
    name_span = match.span(NAME[index])
    separator_start, separator_end = match.span(SEPARATOR[index])
    if separator_end - separator_start != 1 or name_span[0] == 0 or b"\n" in data[name_span[1] : value_start]:
        return None  # ":=" or "?=", a name opening the text ("^"), a value on the next line: judge's own reading
    quoted = data[value_start] in _QUOTES
    if quoted and (value_end - value_start < 2 or data[value_end - 1] != data[value_start]):
        return None  # an unclosed quote
    return _refused(data, name_span, separator_start, (value_start, value_end), quoted, candidate_end)


def arrow_ahead(data: bytes, after: int) -> bool:
    """Whether "->" stands on the line within the parse's bound after ``after`` (a plan's ``"old" -> "new"``):
    asked first, since every refusal, whatever decides it, would skip judge's reading of the new value. The line's
    end is found first (memchr) and "->" looked for before it only: a two-byte search reads every byte of its
    window, which on short lines (``token: x{i}`` on every line) was 300 bytes a candidate for a dozen."""
    stop = after + 300
    newline = data.find(b"\n", after, stop)
    return data.find(b"->", after, newline if newline >= 0 else stop) >= 0


def _changes(data: bytes, end: int) -> bool:
    """Whether a plan's change arrow follows the value ending at ``end`` (``"changeme" -> "new"``, ``null -> "x"``):
    the judgement reads the new value then (``value_spans.changed_to``), so nothing is refused cheaply there."""
    return data[end : end + 8].lstrip(b" \t")[:2] == b"->"


def _structural(data: bytes, name_start: int, separator_at: int, candidate_end: int) -> int | None:
    """judge's refusals that read no value, or only its first two bytes (True: remembered, when the candidate's span
    holds what they read): a URL's scheme (``credential.https://...``), a path of code (``SecretKey::from_slice``),
    a field of a colon-separated identifier (``arn:aws:secretsmanager:...:secret:x``: the byte before the name)."""
    if data[separator_at] != _COLON:
        return None
    if data[separator_at + 1 : separator_at + 2] == b":" or data[separator_at + 1 : separator_at + 3] == b"//":
        return separator_at + 3 <= candidate_end
    return True if data[name_start - 1] == _COLON else None


def _refused(
    data: bytes, name_span: tuple[int, int], separator_at: int, value_span: tuple[int, int], quoted: bool,
    candidate_end: int,
) -> int | None:
    """The verdict of judge's assignment tail on these spans when a cheap reading refuses it, else None."""
    structural = _structural(data, name_span[0], separator_at, candidate_end)
    if structural is not None:
        return structural
    memo_end = value_span[1]  # the parse's match ends with the value (and its closing quote)
    if quoted and data[memo_end - 2] == _BACKSLASH:
        return None  # a closing quote that may be escaped: judge reads the whole string (``value_spans.quoted_span``)
    value_start, value_end = (value_span[0] + 1, memo_end - 1) if quoted else value_span
    if _changes(data, memo_end):
        return None  # a plan's "old" -> "new": judge reads the new value too (``value_spans.changed_to``)
    colon = data[separator_at] == _COLON
    shown = data[value_start:value_end].decode("utf-8", "replace")
    name = data[name_span[0] : name_span[1]].decode("utf-8", "replace")
    if quoted and "/" not in shown:
        # A quoted value under a password's name (``password: "[MASKED]1"``, ``"password": "..."`` on every line):
        # ``refused_everywhere`` refuses it only when trivial, an algorithm or a path (no sentence rule for a quoted
        # value, and no code), so anything else is left to the judgement without reading the line around it
        found = secret_names.name_kind(name)
        if found is not None and found[1] and not shapes.rejected_value(shown):
            return None
    if colon and not quoted and data[value_start] in _NODE_FIRST and shapes.yaml_node_reference(shown):
        return memo_end <= candidate_end  # a YAML alias or a node's bare properties, refused before reading on
    # judge's ``spaced``: a blank before the separator, as code and ini files write it (not an aligned column)
    spaced = data[separator_at - 1 : separator_at] in _BLANKS and separator_at - name_span[1] <= 4
    # Words after an unquoted value on its line: after ":" judge's last word is the sentence's (``judge.judge``);
    # after "=" with a blank after it and none before, the prose rule judges it as after ":" alone
    words = not quoted and data[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()[:1].isalpha()
    prose = words and not colon and not spaced and data[separator_at + 1 : separator_at + 2] in _BLANKS
    literal = quoted and spaced and not colon
    if not shapes.refused_everywhere(name, shown, spaced_literal=literal, sentence=words and colon) and not (
        # an expression of code (``password = settings.X``, ``token: os.environ["X"]``), in every call judge makes
        not quoted and code_expressions.EXPRESSION_HINT.search(shown) is not None
        and code_expressions.code_reference(
            shown, data[value_end : value_end + 1].decode("utf-8", "replace"), colon or prose)
    ):
        return None
    if prose or words and colon:
        return False  # the verdict read the words after the value: never remembered
    if not quoted and reads_line(data, value_start, value_end):
        # judge reads on to the line's end on a key line, or with a glued tail after "=": when it reads no further
        # (mid-line, nothing glued), refused then, never remembered
        return READ_ON if read_on(data, ":" if colon else "=", name_span, value_span) is None else None
    return memo_end <= candidate_end
