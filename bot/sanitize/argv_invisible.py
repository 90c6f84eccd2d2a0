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


def carried_back(item: str, judged: str, fingerprints: bool) -> str:
    """What to show of ``item`` when its visible form was shown as ``judged`` (the visible form with markers in
    it): one marker put over the same characters of the item (the invisible ones among them), the rest of the item
    as it is; with several markers, which characters each covered is not certain, so the whole item becomes one
    marker (it fails closed: a name is hidden with its value, never a value shown)."""
    seen = visible(item)
    markers = list(_MARKER.finditer(judged))
    if len(markers) == 1:
        before, after = judged[: markers[0].start()], judged[markers[0].end() :]
        if seen.startswith(before) and seen.endswith(after) and len(before) + len(after) < len(seen):
            # where the visible characters stand in the item
            places = [index for index, char in enumerate(item) if not _drawless(char)]
            start = places[len(before)]
            end = places[len(seen) - len(after) - 1] + 1
            return item[:start] + markers[0].group() + item[end:]
    kind = markers[0][1] if markers else "secret"
    return MARKER.format(kind=f"{kind}#{fingerprint(item.encode('utf-8', 'surrogatepass'))}" if fingerprints
                         else kind)
