"""A PuTTY ``.ppk`` key file's secret parts: the base64 lines after ``Private-Lines: N``, and the MAC line.

A ``.ppk`` (versions 2 and 3; 1 wrote ``Private-Hash:``) is a header, ``Encryption:``, ``Comment:``,
``Public-Lines: N`` and N base64 lines of the public key, for version 3 with a passphrase the key derivation's
parameters (``Key-Derivation:``, ``Argon2-Memory/Passes/Parallelism/Salt:``), then ``Private-Lines: N`` with N
base64 lines of the private key (encrypted when ``Encryption:`` is not ``none``), and ``Private-MAC: <hex>``.
The private lines and the MAC are redacted (a MAC over an unencrypted key is keyed by a known string, so it lets
anyone check guesses of the key); the rest stays: the public lines are public, and the Argon2 parameters and
salt are stored in clear by design (a salt only makes each file's guessing its own work, and without the private
lines there is nothing to guess against).

Two detectors of the token pass (``detectors.TOKENS``) find the header and the MAC; this module extends the
first private line over the following ones, and finds private lines whose header is not in the text:

- the block runs over every whole base64 line after its header (the N lines of the file; when the text ends
  inside the block, as a capped head does, to the text's end), as an unterminated PEM block runs to the end;
- base64 lines right before a ``Private-MAC:`` line whose header is not there (a capped tail that starts inside
  the block, ``tail -n 5 key.ppk``) are private lines too, as ``cap._redact_orphan_pem_end`` reads a PEM block's
  END without its BEGIN.

Both are single forward or backward scans over bytes no other step scans again for this purpose: linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.characters import whole_characters

PRIVATE_KEY_KIND = "private_key"
# The base64 lines after the first one: each whole (up to a newline, a JSON string's "\n" escape or its closing
# quote, or the text's end), so "Private" of the "Private-MAC:" line that follows is never taken for one. The
# character class holds none of the separators, so the repetition never backtracks over more than one line.
_MORE_PRIVATE_LINES = re.compile(
    rb"(?:(?:\r?\n|\\r\\n|\\n)[ \t]{0,16}[A-Za-z0-9+/=]{1,256}(?=[\r\n\\\"']|\Z))*"
)
# A whole private line, indented as the file may be (a YAML block scalar: a ConfigMap's or a chart's values)
_BASE64_LINE = re.compile(rb"([ \t]{0,16})[A-Za-z0-9+/=]{1,256}\r?")
_MAC_LINES = (b"Private-MAC:", b"Private-Hash:")
_LONGEST_LINE = 16 + 256 + 2  # an indented base64 line and its "\r\n"


def private_lines_end(data: bytes, end: int) -> int:
    """Where a ``.ppk``'s private block that starts before ``end`` (the end of its first line) ends."""
    return _MORE_PRIVATE_LINES.match(data, end).end()  # type: ignore[union-attr]  # matches empty at least


def _orphan_start(data: bytes, mac: int, floor: int) -> int:
    """The start of the whole base64 lines right before the line at ``mac`` (``mac`` when there are none),
    reading back no further than ``floor``."""
    start = cursor = mac - 1  # the newline that ends the line above
    while cursor > floor:
        low = max(floor, cursor - _LONGEST_LINE)
        newline = data.rfind(b"\n", low, cursor)
        if newline < 0 and low > 0:
            break  # the line starts before ``floor`` or is too long for a base64 line: not a private line
        line_start = newline + 1
        line = _BASE64_LINE.fullmatch(data, line_start, cursor)
        if line is None:
            break
        start = line.end(1)  # the first line's indentation stays
        if newline < 0:
            break
        cursor = newline
    return start if start < mac - 1 else mac


def redact_orphan_private_lines(data: bytes, marker: Callable[[str, bytes], bytes]) -> tuple[bytes, int]:
    """The base64 lines right before each ``Private-MAC:`` line, as one marker: a ``.ppk``'s private block whose
    ``Private-Lines:`` header is not in ``data`` (with it, the token pass redacted them already, so a marker
    stands there and nothing is found)."""
    pieces: list[bytes] = []
    last = count = 0
    pos = data.find(b"Private-")
    while pos >= 0:
        line_end = data.find(b"\n", pos)
        resume = len(data) if line_end < 0 else line_end
        before = data[max(last, pos - 16) : pos]  # the MAC line's indentation, if any (at most 16 blanks)
        mac = pos - (len(before) - len(before.rstrip(b" \t")))  # where the MAC line starts
        if mac > last and data[mac - 1 : mac] == b"\n" and data.startswith(_MAC_LINES, pos):
            start = _orphan_start(data, mac, last)
            if start < mac:
                if data[start] >= 0x80:  # (the end is a newline's: whole)
                    start, _ = whole_characters(data, start, mac - 1, last)
                pieces += (data[last:start], marker(PRIVATE_KEY_KIND, data[start : mac - 1]))
                last, count = mac - 1, count + 1
        pos = data.find(b"Private-", resume)
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
