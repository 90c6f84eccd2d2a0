"""The cheap questions the search loop asks of an assignment candidate before (or instead of) judging it in full.

A candidate of the assignment automaton alone is read by a simple head pattern (``_ASSIGNMENT_HEAD``: the boundary,
then the whole run of name characters up to the separator), its name judged once per process and remembered
(``_judge_name``), and its unquoted value asked whether it is an expression of code (``_code_expression``); a name
the bounded parse cannot take is told apart without trying it (``_within_reach``). Each answer is what the full
parse and ``judge`` would say of the candidate, at a fraction of the cost: source code and logs are made of such
candidates. Kept apart from the loop (``candidates.run_pass``), which decides when to ask them and what each costs
in its density budget.
"""

from __future__ import annotations

import re
from re import _parser as sre_parse  # type: ignore[attr-defined]

from bot.sanitize import code_expressions, secret_names
from bot.sanitize.automata import MEMO_ENTRIES, Leftmost
from bot.sanitize.cheap_rejection import BARE_VALUE
from bot.sanitize.context_patterns import _NAME
from bot.sanitize.value_spans import plain_line_value, reads_line

# An assignment's head as the assignment detector reads it: the boundary character, then the name (the whole
# run of name characters up to the separator, since a boundary precedes it and the separator follows it).
# Possessive (``{1,85}+``): a shorter name is followed by a name character, never by a quote, a blank or the
# separator, so giving characters back never matched; it only cost 85 tries at every candidate whose name runs
# longer (2.8 us against 0.3: a quoted value that never closes, ``token="`` then 257 "x", on one line).
_ASSIGNMENT_HEAD = re.compile(rb"[^A-Za-z0-9_.-][\"']?([A-Za-z0-9_.-]{1,85}+)[\"']?[ \t]{0,4}[:=]")
# An assignment's unquoted value on its separator's line, as the assignment detector reads it
# (context_patterns._BARE_VALUE; the pattern ``cheap_rejection`` reads too, so that one match serves both).
_CODE_VALUE = BARE_VALUE
# code_expressions.EXPRESSION_HINT on the value's bytes (no decoding): where it finds nothing, _code_expression says
# False (the one non-ASCII match of the decoded hint, "ſtr" for "str", is no type name to code_reference either).
_EXPRESSION_HINT = re.compile(code_expressions.EXPRESSION_HINT.pattern.encode())
_HINT_CHARACTER = re.compile(rb"[.(\[$:>_&*]")  # the hint's first alternative (``_hinted``)
# The type names the hint's last alternative takes alone (``code_expressions.EXPRESSION_HINT``), lower case.
_TYPE_WORDS = frozenset((b"str", b"string", b"bytes", b"int", b"any", b"object", b"char", b"byte"))

# Assignment names already judged by secret_names.name_kind: True when the name holds no secret.
_HARMLESS_NAMES: dict[bytes, bool] = {}
# The same names: True when the name is a password's (``secret_names.name_kind``'s second part), for ``dismiss``'s
# screen.
_PASSWORD_NAMES: dict[bytes, bool] = {}
# A key whose last byte is one of these may be a value whose verdict reads its whole line on a key line
# (``value_spans.reads_line``: a delimiter, or a line's end after a bracket), so a remembered verdict is taken for it
# only where the name does not open its line. Other keys (``fetch_token(scope=`` then a quote, on every line of
# ``grep``) need no such test.
_LINE_READING_LAST = frozenset(b"&;,)}]\n\r")
_LINE_READING_TEXT = "&;,)}]\n\r"  # the same, decoded (and "" in it: the text's end)


def _assignment_head(
    data: bytes, start: int, leftmost: Leftmost, automaton: int, scanned: re.Match[bytes] | None = None
) -> re.Match[bytes] | None:
    """The head (its group 1: the name) of the assignment candidate at ``start``, None when the candidate may be
    another detector's.

    A hit of the assignment's own automaton where no other automaton hits (``Leftmost``) means the alternation
    picked the assignment (its last branch), whose name is then the whole run of name characters between the
    boundary and the separator: read by a simple pattern, judged by ``secret_names.name_kind`` exactly as the full parse
    would (``token_type=``, ``secretName:`` end here). It used to take an anchored match of every other detector
    at each candidate (an RE2 call: about a third of a dismissed candidate's cost)."""
    if leftmost.source != automaton or leftmost.ambiguous:
        return None
    if scanned is not None and scanned.start() == start:  # read by the scan's dismissal already (``scanned``)
        return scanned
    return _ASSIGNMENT_HEAD.match(data, start)


# Where a sensitive word must start in a name for the bounded name pattern (``context_patterns._NAME``) to take it:
# up to 40 characters before the word, and "key" may follow up to 13 more ("sharedaccess_key").
_REACH_WORDS = (b"pass", b"pwd", b"secret", b"token", b"credential", b"signature", b"auth")
_WORD_REACH = 40
_KEY_REACH = _WORD_REACH + 13


def _within_reach(name: bytes) -> bool:
    """False when the assignment parse cannot take ``name`` (the whole run of name characters, as the head reads
    it): no sensitive word starts within the bounded pattern's reach. The finder's name is unbounded (RE2's DFA
    states, ``_FINDER_NAME``), so a name with 41 or more characters before its word is a candidate that the parse
    then refuses after trying each of the 41 prefixes with each word (7 us; "name runs: long" ran at 4 MB/s at
    8 KiB): a name within reach (every name of ordinary output) is parsed as before."""
    if len(name) <= _WORD_REACH:
        return True  # a word in it starts within reach, or the parse refuses it as it always did
    low = name.lower()
    return any(low.find(word, 0, _WORD_REACH + len(word)) >= 0 for word in _REACH_WORDS) \
        or low.find(b"key", 0, _KEY_REACH + 3) >= 0


# The longest name the assignment parse takes (``context_patterns._NAME``'s widest match), and a run of name
# characters longer than that after the candidate's boundary (and an optional quote): such a candidate's parse fails
# whatever follows, since its name must be the whole run (a boundary before it, a quote, a blank or the separator
# after it). The head pattern above reads at most 85, so such a run is no head and the loop parsed it with the whole
# alternation, 100-400 us a candidate: ``token="`` then 257 "x" on one line, each unit a candidate once a quoted value
# longer than the window is one (``context_patterns.QUOTED``).
_LONGEST_NAME = sre_parse.parse(_NAME).getwidth()[1]
_NAME_BEYOND_REACH = re.compile(rb"[^A-Za-z0-9_.-]?[\"']?[A-Za-z0-9_.-]{%d}" % (_LONGEST_NAME + 1))


def name_beyond_reach(data: bytes, start: int) -> bool:
    """Whether the assignment candidate at ``start`` holds a name longer than the parse takes (``_LONGEST_NAME``)."""
    return _NAME_BEYOND_REACH.match(data, start) is not None


def _quoted(head: bytes) -> bool:
    """Whether an assignment's head holds a quote. Its byte values, not ``b'"' in head``: a bytes operand goes
    through the buffer protocol (0.15 us against 0.015, on every line of source code)."""
    return 34 in head or 39 in head  # '"' and "'"


def _plain_word(value: bytes) -> bool:
    """A value of ASCII letters and digits in one case, no type's name: ``_hinted`` is False for it (no separator
    or bracket, no camel hump, not "str"), known from three C calls instead of two searches (an environment line's
    value on every line: ``+DB_PASSWORD=a1f3``)."""
    return value.isalnum() and (value.islower() or value.isupper() or value.isdigit()) \
        and value.lower() not in _TYPE_WORDS


def _hinted(value: bytes) -> bool:
    """``_EXPRESSION_HINT`` found in ``value``; its one-character class first, alone (a third of the time of the
    whole alternation, tried at every position), since most values of code hold a separator or a bracket."""
    return _HINT_CHARACTER.search(value) is not None or _EXPRESSION_HINT.search(value) is not None


def _code_expression(
    data: bytes, head: re.Match[bytes], value: re.Match[bytes] | None = None, hinted: bool = False
) -> bool:
    """Whether the assignment with this head has an unquoted value on its own line that is an expression of code
    (``password = settings.DB_PASSWORD``): every context rejects it (``shapes.accept_assignment``), so it is
    dismissed without the full parse. Source code (``grep -rn password src/``, ``git diff``) is made of these:
    judged in full, a thousand lines of it spent the density budget and lost chunks to the dense marker.
    ``value``: ``_CODE_VALUE`` matched at the head's end already; ``hinted``: ``_hinted`` found its hint (then
    the decoded value has it too: the hint's bytes are ASCII, which decoding keeps)."""
    if value is None:
        value = _CODE_VALUE.match(data, head.end())
    if value is None:
        return False
    if code_expressions.settings_reference(value[1]):
        return True  # what code_reference says of it in every context, without decoding it or the general parse
    return _general_expression(data, head, value, hinted)


def _general_expression(data: bytes, head: re.Match[bytes], value: re.Match[bytes], hinted: bool) -> bool:
    """``_code_expression`` of a value that is no settings reference (``code_expressions.settings_reference`` said
    False)."""
    shown = value[1].decode("utf-8", "replace")
    if not hinted and code_expressions.EXPRESSION_HINT.search(shown) is None:
        return False  # no separator, bracket, "$", "_" or camel hump: one word, never an expression but a type
    following = data[value.end() : value.end() + 1].decode("utf-8", "replace")
    colon = head[0].endswith(b":")
    if not code_expressions.code_reference(shown, following, colon):
        return False
    if following in _LINE_READING_TEXT and reads_line(data, value.start(1), value.end()) \
            and _opens_its_line(data, head.start(1)):
        plain = plain_line_value(data, value.start(1))  # a YAML or ini line's whole value is judged
        if plain is not None:
            return code_expressions.line_expression(plain, colon)
    return True


def _opens_its_line(data: bytes, name_start: int) -> bool:
    """Whether only blanks, a list's "-", a quote, a diff's "+" and a quote's ">" stand before the name on its line
    (within 128 bytes): what a key line needs (``value_spans.on_key_line``), asked first because it costs a fifth of
    that (``grep -rn`` prints a file's name and line number before every line of code it finds)."""
    lookback = max(0, name_start - 128)
    newline = data.rfind(b"\n", lookback, name_start)
    if newline < 0 and lookback > 0:
        return False
    return not data[newline + 1 : name_start].strip(b" \t-\"'+>")


def _judge_name(name: bytes) -> bool:
    """Whether an assignment's name holds no secret (``secret_names.name_kind``), remembered in ``_HARMLESS_NAMES`` (and
    whether it is a password's in ``_PASSWORD_NAMES``)."""
    kind = secret_names.name_kind(name.decode("utf-8", "replace"))
    if len(_HARMLESS_NAMES) >= MEMO_ENTRIES:
        _HARMLESS_NAMES.clear()
        _PASSWORD_NAMES.clear()
    _HARMLESS_NAMES[name] = kind is None
    _PASSWORD_NAMES[name] = kind is not None and kind[1]
    return kind is None
