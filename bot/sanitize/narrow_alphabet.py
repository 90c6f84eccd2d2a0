"""Which detectors can match at all in text made of a few bytes only (base64 and line breaks).

Text that is nothing but base64 (``kubectl get secret -o jsonpath``, ``base64 -w 64``, ``openssl rand -base64``)
holds no candidate of most detectors: no blank, quote, ":" or "=" for an assignment, a header or a URL. Yet asking
whether it holds one scanned it with the passes' largest automata, and random base64 is where their DFAs keep
building states (each fresh line a new run of name characters: 12 MB/s at 64 KiB in 64-column lines, issue #11).
Before that scan, ``any_candidate.candidate_scan`` asks whether the text's bytes all lie in one of ``ALPHABETS``; if so
it scans each automaton's branches that can match a string of those bytes (``satisfiable``), a few small automata,
and the passes run as before wherever one of them hits.

Sound by construction: a branch that matches somewhere in such a text matches a string of its bytes, so the
reading below must never call a pattern that can match one unsatisfiable. It over-approximates where unsure:
zero-width assertions (``^``, ``$``, ``\\b``) count as satisfied, a repetition that may be empty as satisfied, a
construct it does not know (or a pattern Python's parser refuses) as satisfiable, case-insensitive letters as both
cases. Only the set of bytes a single character can take is computed exactly, on the ASCII a text of these
alphabets is made of.
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# Narrowest first: text without "=" (lines of a long base64 stream) leaves the fewest branches; "=" (a stream's
# padding at its end) brings back the assignments' and a few tokens' branches.
ALPHABETS: tuple[bytes, ...] = (_BASE64 + b"\r\n", _BASE64 + b"\r\n=")
_WIDEST = ALPHABETS[-1]
# Bytes of the text read first: ordinary output fails on one of them, so the whole text is read only when it may pass.
_PROBE = 256

_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W",
}


def alphabet_of(data: bytes) -> int:
    """The index in ``ALPHABETS`` of the narrowest alphabet that holds every byte of ``data``, -1 when none does."""
    if not data or data[:_PROBE].translate(None, _WIDEST):
        return -1
    for index, alphabet in enumerate(ALPHABETS):
        if not data.translate(None, alphabet):
            return index
    return -1


def satisfiable(pattern: str, alphabet: bytes) -> bool:
    """Whether ``pattern`` may match some string made of ``alphabet``'s bytes (False only when it never can)."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, ValueError, TypeError, OverflowError):
        return True  # a construct Python's parser does not read: assume it can
    ignore_case = bool(parsed.state.flags & sre.SRE_FLAG_IGNORECASE)
    return _sequence(list(parsed), frozenset(alphabet), ignore_case)


def _sequence(items: list[tuple[Any, Any]], alphabet: frozenset[int], ignore_case: bool) -> bool:
    for op, argument in items:
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            if not _one_character(op, argument, alphabet, ignore_case):
                return False
        elif op is sre.SUBPATTERN:
            _group, add_flags, del_flags, inner = argument
            scoped = (ignore_case or bool(add_flags & sre.SRE_FLAG_IGNORECASE)) \
                and not del_flags & sre.SRE_FLAG_IGNORECASE
            if not _sequence(list(inner), alphabet, scoped):
                return False
        elif op is sre.BRANCH:
            if not any(_sequence(list(branch), alphabet, ignore_case) for branch in argument[1]):
                return False
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, _high, inner = argument
            if low > 0 and not _sequence(list(inner), alphabet, ignore_case):
                return False
        # Anything else (assertions, anchors, lookaround, group references...): assumed satisfied.
    return True


def _one_character(op: Any, argument: Any, alphabet: frozenset[int], ignore_case: bool) -> bool:
    """Whether the one-character item ``op``/``argument`` takes some byte of ``alphabet``."""
    if op is sre.ANY:
        return bool(alphabet - {10})
    if op is sre.LITERAL:
        return bool(_cased(argument, ignore_case) & alphabet)
    if op is sre.NOT_LITERAL:
        return bool(alphabet - {argument})  # (not folded, as a negated class below)
    # A negated class excludes what it lists, so folding case there would exclude more: read as written instead
    # (it then takes at least what it takes), which keeps the answer an over-approximation.
    negated = bool(argument) and argument[0][0] is sre.NEGATE
    folded = ignore_case and not negated
    members: set[int] = set()
    for item_op, item in argument[1:] if negated else argument:
        if item_op is sre.LITERAL:
            members |= _cased(item, folded)
        elif item_op is sre.RANGE:
            low, high = item
            if folded and high > 127:  # a non-ASCII letter may fold to an ASCII one (the Kelvin sign to "k")
                members |= {byte for byte in alphabet if chr(byte).isalpha()}
            members |= {byte for byte in alphabet if low <= byte <= high
                        or folded and any(low <= code <= high for code in _cased(byte, True))}
        elif item_op is sre.CATEGORY and item in _CATEGORIES:
            members |= {byte for byte in alphabet if re.fullmatch(_CATEGORIES[item], chr(byte))}
        else:
            return True  # unknown: assume it takes one
    return bool(alphabet - members) if negated else bool(alphabet & members)


def _cased(code: int, ignore_case: bool) -> set[int]:
    character = chr(code)
    return {code, ord(character.lower()[0]), ord(character.upper()[0])} if ignore_case else {code}
