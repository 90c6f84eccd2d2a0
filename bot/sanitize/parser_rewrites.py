"""Rewrites of the candidate parser's patterns that keep every match and every group span, but backtrack less.

Only the pass's Python parser (``automata._compile_pass``) is rewritten, never the RE2 finders. The parser takes a
candidate apart where RE2 found it, and on dense text (an environment line on every line) it spends most of its
time on the bounded sensitive name (``context_patterns._NAME``: up to 40 name characters, a sensitive word, up
to 40 more): Python's ``re`` gives the greedy leading run back one character at a time and tries every word at
each, and a branch that fails (the line-start detector on ``DB_PASSWORD=x``, whose separator wants a blank after
"=") tries every split of the name before it gives up. Two rewrites, each applied only where a check made here
on the pattern itself shows that it keeps the parse:

- **Forced end, lazy lead.** Where what follows the name can only start with a character that no name holds
  (``=`` of an environment line, the line-start separator, an assignment's quote, blank or separator), every
  match of the name ends where its run of name characters ends, whatever split of the name the engine tries
  first. The leading run is then made lazy (``{0,40}?``): the engine finds the split from the left (the word is
  near the start of most names) instead of from the right, and reaches the same match, with the same groups.
- **Name guard.** Where the name group is followed by an element (a separator group, a column's blanks) that
  cannot start with a name character nor match the empty string, a lookahead first asks for the whole run of
  name characters (possessive, at most the name's longest match) followed by that element; failing it, the
  branch fails at once, where each split of the name would have failed at the element. It asks only what the
  match asks at the same place.

What the checks read: a superset of the characters a pattern can start with (``first_characters``, from Python's
own parse of the pattern), the characters it can hold at all, and whether it can match the empty string.
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import cast

from bot.sanitize.context_patterns import WIDE_BLANKS

NAME_CHARACTERS = frozenset(ord(c) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_RUN = "[A-Za-z0-9_.-]"
_EVERY = frozenset(range(256))  # the parser reads bytes
_BLANKS = frozenset(b" \t")
_ASCII_LETTERS = frozenset(range(65, 91)) | frozenset(range(97, 123))
_DIGITS = frozenset(range(48, 58))
_CATEGORIES = {
    sre.CATEGORY_DIGIT: _DIGITS,
    sre.CATEGORY_SPACE: frozenset(b" \t\n\r\f\v"),
    sre.CATEGORY_WORD: _DIGITS | _ASCII_LETTERS | {95},
}


def _with_other_case(characters: set[int]) -> set[int]:
    """Closed under ASCII case (a ``(?i:...)`` may apply: more characters, never fewer, so still a superset)."""
    return characters | {c ^ 0x20 for c in characters if c in _ASCII_LETTERS}


def _class(items: list[tuple[object, object]]) -> frozenset[int]:
    characters: set[int] = set()
    negated = False
    for op, value in items:
        if op is sre.NEGATE:
            negated = True
        elif op is sre.LITERAL:
            characters.add(value)  # type: ignore[arg-type]
        elif op is sre.RANGE:
            bounds = cast(tuple[int, int], value)
            characters.update(range(bounds[0], bounds[1] + 1))
        elif op is sre.CATEGORY and value in _CATEGORIES:
            characters |= _CATEGORIES[value]
        else:
            return _EVERY  # not read here: any character (also when negated: a superset either way)
    if negated:  # the complement of the class as written: "[^A-Z]" takes "a" unless a flag ignores case (a
        # case-closed complement took no letter at all, and the AWS key's "[^A-Z0-9]" lost its "xAKIA..." starts)
        return _EVERY - characters
    return frozenset(_with_other_case(characters))


def _first(sequence: list[tuple[object, object]]) -> tuple[frozenset[int], bool]:
    """(a superset of the characters a match of ``sequence`` can start with, whether it can match empty)."""
    first: set[int] = set()
    for op, value in sequence:
        characters, empty = _first_of(op, value)
        first |= characters
        if not empty:
            return frozenset(first), False
    return frozenset(first), True


def _first_of(op: object, value: object) -> tuple[frozenset[int], bool]:
    if op is sre.LITERAL:
        return frozenset(_with_other_case({value})), False  # type: ignore[arg-type]
    if op is sre.IN:
        return _class(value), False  # type: ignore[arg-type]
    if op is sre.AT:
        return frozenset(), True
    if op is sre.SUBPATTERN:
        return _first(value[-1])  # type: ignore[index]
    if op is sre.BRANCH:
        first: set[int] = set()
        empty = False
        for alternative in value[1]:  # type: ignore[index]
            characters, alternative_empty = _first(alternative)
            first |= characters
            empty = empty or alternative_empty
        return frozenset(first), empty
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _, item = cast(tuple[int, int, list[tuple[object, object]]], value)
        characters, empty = _first(item)
        return characters, empty or low == 0
    if op in (sre.NOT_LITERAL, sre.ANY):
        return _EVERY, False
    return _EVERY, True  # anything else: assume the worst


def first_characters(pattern: str) -> tuple[frozenset[int], bool]:
    """A superset of the characters a match of ``pattern`` can start with, and whether it can match empty. The
    pattern is read as the parser's bytes read it (ASCII classes and case; a non-ASCII character as its UTF-8
    bytes, as ``automata._compile_pass`` encodes the pattern: a no-break space starts with 0xc2)."""
    return _first(list(sre_parse.parse(pattern if pattern.isascii() else pattern.encode())))


def _held(sequence: list[tuple[object, object]]) -> frozenset[int]:
    """A superset of every character a match of ``sequence`` can hold."""
    held: set[int] = set()
    for op, value in sequence:
        if op is sre.LITERAL:
            held |= _with_other_case({value})  # type: ignore[arg-type]
        elif op is sre.IN:
            held |= _class(value)  # type: ignore[arg-type]
        elif op is sre.AT:
            continue
        elif op is sre.SUBPATTERN:
            held |= _held(value[-1])  # type: ignore[index]
        elif op is sre.BRANCH:
            for alternative in value[1]:  # type: ignore[index]
                held |= _held(alternative)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            held |= _held(value[2])  # type: ignore[index]
        else:
            return _EVERY
    return frozenset(held)


def _groupless_name(name: str) -> int | None:
    """The longest match of ``name`` when it holds only name characters and no group, else None."""
    if re.compile(name).groups:
        return None
    parsed = sre_parse.parse(name)
    if not _held(list(parsed)) <= NAME_CHARACTERS:
        return None
    low, high = parsed.getwidth()
    return int(high) if low >= 1 and high < sre.MAXREPEAT else None


def _skip_class(pattern: str, i: int) -> int:
    """The index after the character class that opens at ``pattern[i]`` ("[")."""
    i += 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


_QUANTIFIER = re.compile(r"[?*+]|\{\d*,?\d*\}")


def _continuation(pattern: str, end: int) -> str | None:
    """The text that a match may go on with after ``pattern[:end]`` (``end`` outside any class or escape): the
    rest of the enclosing alternative, then what follows each enclosing group in turn, to the pattern's end. None
    when an enclosing group is repeated (its continuation could loop back into the name)."""
    pieces: list[str] = []
    i, depth, start = end, 0, end
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[":
            i = _skip_class(pattern, i)
        elif c == "(":
            depth, i = depth + 1, i + 1
        elif c == ")" and depth:
            depth, i = depth - 1, i + 1
        elif c == ")":  # an enclosing group closes: the rest of its alternative is taken, go on after it
            pieces.append(pattern[start:i])
            if _QUANTIFIER.match(pattern, i + 1):
                return None
            i = start = i + 1
        elif c == "|" and depth == 0:  # another alternative of the enclosing group: not this match's way
            pieces.append(pattern[start:i])
            close = _group_end(pattern, i)
            if close < 0:
                return "".join(pieces)  # the pattern's own alternation: the match ends here
            if _QUANTIFIER.match(pattern, close + 1):
                return None
            i = start = close + 1
        else:
            i += 1
    pieces.append(pattern[start:])
    return "".join(pieces)


def _group_end(pattern: str, i: int) -> int:
    """The index of the ")" that closes the group enclosing ``pattern[i]``, -1 at the top level."""
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _skip_class(pattern, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return -1


def _ends_forced(pattern: str, end: int) -> bool:
    """Whether every match goes on after ``pattern[:end]`` with a character that is no name character."""
    rest = _continuation(pattern, end)
    if rest is None:
        return False
    first, empty = first_characters(rest)
    return not empty and not first & NAME_CHARACTERS


def lazy_names(pattern: str, name: str) -> str:
    """``pattern`` with the leading run of each occurrence of ``name`` made lazy where its end is forced, and
    atomic there once it has reached its run's end (``(?>NAME(?!run))``): every split of the name that ends at
    the run's end leaves the same text to the rest of the branch, so when the rest fails after the first such
    split it fails after each other one too (an aligned ``password`` + 40 blanks + ``: a1`` that the line-value
    branch refuses tried the rest again after every split: two thirds of that line's parse)."""
    lead = _NAME_RUN + "{0,40}"
    if not name.startswith(lead) or _groupless_name(name) is None:
        return pattern
    lazy = "(?>(?:" + lead + "?" + name[len(lead) :] + f")(?!{_NAME_RUN}))"
    pieces: list[str] = []
    last = 0
    for found in re.finditer(re.escape(name), pattern):
        if _ends_forced(pattern, found.end()):
            pieces += (pattern[last : found.start()], lazy)
            last = found.end()
    return "".join(pieces) + pattern[last:]


def _next_element(pattern: str, i: int) -> tuple[str, int] | None:
    """The element that starts at ``pattern[i]`` (a group, a class, an escape or a character, with its quantifier)
    as a pattern of its own (a named group made non-capturing), and where it ends; None for what cannot stand
    alone (an alternative's end, a group's close, the pattern's end)."""
    if i >= len(pattern) or pattern[i] in "|)":
        return None
    if pattern[i] == "(":
        close = _group_end(pattern, i + 1)
        inner = pattern[i + 1 : close]
        named = re.match(r"\?P<\w+>", inner)
        element, end = ("(?:" + inner[named.end() :] + ")" if named else pattern[i : close + 1]), close + 1
    elif pattern[i] == "[":
        end = _skip_class(pattern, i)
        element = pattern[i:end]
    else:
        end = i + (2 if pattern[i] == "\\" else 1)
        element = pattern[i:end]
    quantifier = _QUANTIFIER.match(pattern, end)
    if quantifier is not None:
        end = quantifier.end() + (pattern[quantifier.end() : quantifier.end() + 1] in ("?", "+"))
        element += pattern[quantifier.start() : end]
    return element, end


# An element's unbounded count at its end: ``{m,}`` or ``+`` (not lazy, not possessive).
_UNBOUNDED_END = re.compile(r"(?:\{(\d+),\}|(?<!\\)\+)$")


def guard_names(pattern: str, name: str) -> str:
    """``pattern`` with a lookahead before each ``(?P<name>NAME)`` followed by an element that cannot start with a
    name character nor match empty (a separator, a column's blanks): the whole run of name characters (at most
    the name's longest match), then that element."""
    longest = _groupless_name(name)
    head = f"(?P<name>{name})"
    if longest is None:
        return pattern
    pieces: list[str] = []
    last = 0
    for found in re.finditer(re.escape(head), pattern):
        following = _next_element(pattern, found.end())
        if following is None or "(?P<" in following[0]:
            continue  # nothing to ask, or a group that would be named twice
        first, empty = first_characters(following[0])
        if empty or first & NAME_CHARACTERS:
            continue
        # In a lookahead nothing follows the element: its least count asks what an unbounded count would (an
        # aligned column's ``{5,}``: five blanks, not the whole run of them, one group iteration each)
        element = _UNBOUNDED_END.sub(lambda m: f"{{{m.group(1)}}}" if m.group(1) else "", following[0])
        pieces += (pattern[last : found.start()], f"(?={_NAME_RUN}{{1,{longest}}}+{element})")
        last = found.start()
    return "".join(pieces) + pattern[last:]


# A run of blanks: bounded (``[ \\t]{m,n}``), or an aligned column's, whose blank may be a no-break space too
# (``context_patterns.ALIGNED_BLANK``: ``(?:[ \\t]|\u00a0){m,}`` or ``+``, unbounded: its fast spelling is).
_BLANK_RUN = re.compile(
    "\\[ \\\\t\\]\\{\\d+,\\d+\\}(?![?+])|\\(\\?:\\[ \\\\t\\]\\|" + re.escape(WIDE_BLANKS)
    + "\\)(?:\\{\\d+,\\}|\\+)(?![?+])"
)
# What a run's blank may start with: a blank, or a no-break space (U+00A0; its first UTF-8 byte is 0xc2).
_RUN_FIRST = _BLANKS | {0xA0, 0xC2, 0xE2, 0xE3}  # (U+2007 and U+202F start with 0xe2, U+3000 with 0xe3)


def possessive_blanks(pattern: str) -> str:
    """``pattern`` with each run of blanks (``_BLANK_RUN``) made possessive where the element after it cannot start
    with a blank nor match empty (a separator, a value): a match must then take the whole run (at most ``n``), so
    each shorter run that a failing branch gave back one blank at a time failed at that element anyway (an aligned
    column's 40 blanks before its "=" were given back 40 times)."""
    pieces: list[str] = []
    last = 0
    for found in _BLANK_RUN.finditer(pattern):
        if _inside_class(pattern, found.start()):
            continue
        following = _next_element(pattern, found.end())
        if following is None:
            continue
        first, empty = first_characters(following[0])
        if empty or first & (_RUN_FIRST if found.group().startswith("(") else _BLANKS):
            continue
        run = found.group()
        if run.startswith("("):  # an aligned column's run: each blank a group's iteration, slow in Python's re
            run = _fast_aligned_run(run)
        pieces += (pattern[last : found.start()], run, "+")
        last = found.end()
    return "".join(pieces) + pattern[last:]


def _fast_aligned_run(run: str) -> str:
    """An aligned column's run of blanks (``(?:[ \\t]|NBSP){m,}`` or ``+``) spelled for Python's ``re`` with the
    same matches once possessive: a run of blanks is taken by one class repeat instead of one group iteration per
    blank (an aligned ``password`` + 40 blanks parsed five times slower as a group), and its least count, when
    over one, is asked first by a lookahead of that many iterations."""
    blank, quantifier = run[: run.index(")") + 1], run[run.index(")") + 1 :]
    fast = "(?:[ \\t]++|" + WIDE_BLANKS + ")+"  # possessive once the caller appends "+"
    least = int(quantifier[1 : quantifier.index(",")]) if quantifier.startswith("{") else 1
    return (f"(?={blank}{{{least}}})" if least > 1 else "") + fast


def _inside_class(pattern: str, i: int) -> bool:
    """Whether ``pattern[i]`` lies inside a character class or is escaped (scanned from the start)."""
    j = 0
    while j < i:
        if pattern[j] == "\\":
            j += 2
        elif pattern[j] == "[":
            end = _skip_class(pattern, j)
            if end > i:
                return True
            j = end
        else:
            j += 1
    return j != i


# A quoted value's run closed within the window (``context_patterns.QUOTED``, ``_QUOTED_VALUE``): its class holds
# neither the closing quote nor a newline, so only the whole run can be followed by the quote or the text's end. A
# run that does not close in 255 characters (a value longer than the window, then read by the next alternative) was
# given back one character at a time, 255 tries per candidate: possessive, it fails at once.
_CLOSED_RUNS = {
    run: run.replace("{1,255}", "{1,255}+")
    for run in (r"[^\"\n]{1,255}\"", r"[^'\n]{1,255}'", r"[^\"\n]{1,255}(?:\"|$)", r"[^'\n]{1,255}(?:'|$)")
}


def possessive_quoted(pattern: str) -> str:
    """``pattern`` with each quoted value's closed run (``_CLOSED_RUNS``) possessive."""
    for run, possessive in _CLOSED_RUNS.items():
        pattern = pattern.replace(run, possessive)
    return pattern


def rewrite(pattern: str, name: str) -> str:
    """The rewrites of a detector's parser pattern (the guard first: it reads the name as written)."""
    return possessive_quoted(possessive_blanks(lazy_names(guard_names(pattern, name), name)))
