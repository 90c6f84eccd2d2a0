"""An argv's names judged as they read, without the characters that draw nothing.

A zero-width space inside a name (``--from-literal=pass\\u200bword=PW``, ``--pass\\u2060word PW``) split the word
the detectors look for, so the value showed on the approval card beside the invisible-character warning. The card
still shows every such character escaped (what is read is what runs), but whether a value is secret is decided on
the argv with those characters taken out (``visible``): the markers that judgement puts in an item are carried back
onto the item as it is (``carried_back``). Characters that draw something (letters, the no-break space, controls,
which the card escapes and ``redact_argv`` strips) stay: taking them out would join words that read apart.
"""

from __future__ import annotations

import re
import unicodedata

from bot.sanitize.controls import _BLANK_LOOKING as BLANK_LOOKING
from bot.sanitize.redact import MARKER, fingerprint

# Formats (zero-width space and joiners, word joiner, soft hyphen, tag characters, bidi marks), combining and
# enclosing marks (variation selectors, accents stacked on the letter before), and the blank-looking letters
# (Hangul fillers, the braille blank): in a name they read as nothing.
_DRAWLESS_CATEGORIES = frozenset({"Cf", "Mn", "Me"})
_MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)(?:#[0-9a-f]{6})?\]")


def _drawless(char: str) -> bool:
    return unicodedata.category(char) in _DRAWLESS_CATEGORIES or char in BLANK_LOOKING


def visible(item: str) -> str:
    """``item`` without the characters that draw nothing (itself when it has none: ASCII has none)."""
    if item.isascii():
        return item
    return "".join(char for char in item if not _drawless(char))


def _covered(item: str, redacted: str, places: list[int]) -> tuple[int, int, str] | None:
    """Where in ``item`` the one marker of ``redacted`` stands (start, end, the marker), ``redacted`` being ``item``
    read at ``places`` (the item's positions of the characters it was read from) with one span replaced by a
    marker; None when it holds no marker, several (which characters each covered is not certain) or does not
    line up with the item."""
    markers = list(_MARKER.finditer(redacted))
    if len(markers) != 1:
        return None
    read = "".join(item[place] for place in places)
    before, after = redacted[: markers[0].start()], redacted[markers[0].end() :]
    if not (read.startswith(before) and read.endswith(after) and len(before) + len(after) < len(read)):
        return None
    return places[len(before)], places[len(read) - len(after) - 1] + 1, markers[0].group()


def _whole(item: str, judged: str, fingerprints: bool) -> str:
    markers = list(_MARKER.finditer(judged))
    kind = markers[0][1] if markers else "secret"
    return MARKER.format(kind=f"{kind}#{fingerprint(item.encode('utf-8', 'surrogatepass'))}" if fingerprints
                         else kind)


def carried_back(item: str, judged: str, fingerprints: bool, shown: str | None = None) -> str | None:
    """What to show of ``item`` when its visible form was shown as ``judged`` (the visible form with markers in
    it) and the item as it is as ``shown``; None when ``judged`` hides nothing ``shown`` does not.

    The visible reading's marker is put over the same characters of the item, the invisible ones among and
    around them included (a soft hyphen inside a token: the reading with it saw only the token's head, the tail
    stayed shown beside the escape); a marker of ``shown`` that reaches past it is joined with it. With several
    markers in a reading that adds something, which characters each covered is not certain, so the whole item
    becomes one marker (it fails closed: a name is hidden with its value, never a value shown)."""
    if shown is None:
        shown = item
    drawn = [index for index, char in enumerate(item) if not _drawless(char)]
    found = _covered(item, judged, drawn)
    if found is None:
        # several markers: the visible reading hides more when it leaves fewer drawn characters shown
        if not _MARKER.search(judged) or len(_MARKER.sub("", judged)) >= len(visible(_MARKER.sub("", shown))):
            return None
        return _whole(item, judged, fingerprints)
    start, end, marker = found
    # the invisible characters right around the span draw nothing either: they go under the marker
    while start > 0 and _drawless(item[start - 1]):
        start -= 1
    while end < len(item) and _drawless(item[end]):
        end += 1
    if not _MARKER.search(shown):
        return item[:start] + marker + item[end:]
    own = _covered(item, shown, list(range(len(item))))
    if own is None:
        return _whole(item, judged, fingerprints)
    own_start, own_end, own_marker = own
    if own_start <= start and end <= own_end:
        return None  # the item's own reading already hides it all
    if own_end < start:
        return item[:own_start] + own_marker + item[own_end:start] + marker + item[end:]
    if end < own_start:
        return item[:start] + marker + item[end:own_start] + own_marker + item[own_end:]
    return item[: min(start, own_start)] + marker + item[max(end, own_end) :]
