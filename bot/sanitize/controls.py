"""Terminal control sequences and control characters: removed from every text a person or the model reads.

An escape sequence can recolour, hide, move the cursor over or split text (a secret split by ``\x1b[1m`` would
escape the redactor), so it goes before anything else looks at the text. The pattern is linear: every branch
starts with a fixed character and its repetitions are followed only by optional parts, so a match never
backtracks and each character is looked at a bounded number of times.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

_CONTROLS = re.compile(
    # CSI (colors, cursor moves, erase); an unfinished one at the end of the text goes too.
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    # OSC (titles, OSC 8 hyperlinks), DCS, SOS, PM, APC: up to BEL or ST, or the end of the line.
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    # Any other escape sequence (charset selection, keypad modes, ESC 7/8 ...), or a lone ESC.
    r"|\x1b[ -/]*[0-~]?"
    # C0 except tab and newline (this drops every \r: \r\n becomes \n, a bare \r disappears), DEL, C1.
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
    # Bidirectional overrides, which can make displayed text differ from what it is.
    r"|[\u202a-\u202e\u2066-\u2069]"
)


# The first character of every sequence above: one character class, which ``re`` scans fast (~2.5 ms/MB
# against ~32 ms/MB for the alternation), so text without controls costs only this scan.
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


# The same first characters for ASCII text (C1 controls and bidi marks are not ASCII): every one is mapped to ESC
# by one ``bytes.translate``, then found by ``bytes.find`` (memchr), in ASCII a byte offset being a character
# offset. About five times faster than ``re`` scanning the str.
_MARK_CONTROLS = bytes(0x1B if b < 0x20 and b not in (0x09, 0x0A) or b == 0x7F else b for b in range(256))


def _control_finder(text: str) -> Callable[[int], int]:
    """A function giving the offset of the first control character at or after a position, -1 if none."""
    if text.isascii():
        marked = text.encode("ascii").translate(_MARK_CONTROLS)
        return lambda pos: marked.find(b"\x1b", pos)

    def search(pos: int) -> int:
        found = _ANY_CONTROL.search(text, pos)
        return -1 if found is None else found.start()

    return search


def strip_controls(text: str) -> str:
    """Remove terminal control sequences and control characters, keeping newlines and tabs.

    Sequences are found from their first character and parsed where they start; once controls turn out dense
    (more than one per 64 characters so far), the rest goes through the alternation in one ``sub``, which is
    then cheaper."""
    next_control = _control_finder(text)
    start = next_control(0)
    if start < 0:
        return text
    pieces: list[str] = []
    pos = hits = 0
    while start >= 0:
        hits += 1
        if hits > 16 and hits * 64 > start:
            pieces += (text[pos:start], _CONTROLS.sub("", text[start:]))
            return "".join(pieces)
        sequence = _CONTROLS.match(text, start)
        pieces.append(text[pos:start])
        pos = sequence.end() if sequence is not None and sequence.end() > start else start + 1
        start = next_control(pos)
    pieces.append(text[pos:])
    return "".join(pieces)


# Characters that draw nothing (or look like a plain space) although Unicode files them under a visible
# category: Hangul fillers (Lo), the braille blank (So), the Mongolian vowel separator, and the like.
_BLANK_LOOKING = frozenset(
    # ... and the musical null notehead (So), which draws nothing in common fonts
    "\u115f\u1160\u3164\uffa0\u2800\u180e\u17b4\u17b5\u034f\u2061\u2062\u2063\u2064\U0001d159"
)
# Categories that never show as themselves in a code block: controls and formats (bidi overrides, zero-width
# characters, tag characters), separators other than the plain space, combining and enclosing marks (they
# stack on the previous character; variation selectors are Mn), unassigned, private-use and surrogates.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp", "Zs", "Mn", "Me"})


def _escape(char: str) -> str:
    if char == " " or (unicodedata.category(char) not in _INVISIBLE_CATEGORIES and char not in _BLANK_LOOKING):
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# ASCII's characters that do not show as themselves: C0 controls (tab and newline included) and DEL.
_ASCII_INVISIBLE = re.compile(r"[\x00-\x1f\x7f]")


def has_invisible(text: str) -> bool:
    """Whether ``reveal_invisible`` would escape any character of ``text``: asked of the argv that runs, since
    a redaction marker hides what it covers (a zero-width space inside a password still runs)."""
    if text.isascii():
        return _ASCII_INVISIBLE.search(text) is not None
    return any(_escape(c) != c for c in text)


def reveal_invisible(text: str) -> tuple[str, bool]:
    """``text`` with every character that would not show as itself written as an escape, and whether any was.

    For approval cards, where what a person reads must be what runs: a right-to-left override, a zero-width
    space, a Hangul filler that looks like nothing, a combining mark that changes the letter before it, or a
    newline that looks like a second command. (Legitimate accented text written with combining marks is shown
    escaped too: on a card, exactness beats prettiness.)"""
    shown = "".join(_escape(c) for c in text)
    return shown, shown != text
