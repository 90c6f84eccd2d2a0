"""Markers replace whole characters: a span of the UTF-8 text widened to the characters it touches.

The detectors run on UTF-8 bytes, and a bound or a byte class can stop inside a multi-byte character (a quoted value
of 256 bytes whose last byte is the first of "é"): a marker there left the character's other bytes behind, bytes no
decoder takes, so the output showed U+FFFD for a character the tool printed (and before ``redact._decode``'s guard,
raised and lost the whole output). Every place that replaces a span asks ``whole_characters`` first; widening shows
less, never more.
"""

from __future__ import annotations

# The most continuation bytes a UTF-8 character has (a four-byte character's last three).
_MOST_CONTINUATIONS = 3


def _continuation(byte: int) -> bool:
    return 0x80 <= byte < 0xC0


def whole_characters(data: bytes, start: int, end: int, floor: int = 0) -> tuple[int, int]:
    """``start``..``end`` of ``data`` widened to whole characters: back to the first byte of the character ``start``
    falls in (never before ``floor``, where the text already replaced ends), on to the end of the one ``end`` falls
    in. At most three bytes each way: UTF-8 has no longer run of continuation bytes."""
    if start < end:
        lowest = max(floor, start - _MOST_CONTINUATIONS)
        while start > lowest and _continuation(data[start]):
            start -= 1
    highest = min(len(data), end + _MOST_CONTINUATIONS)
    while end < highest and _continuation(data[end]):
        end += 1
    return start, end
