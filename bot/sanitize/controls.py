"""Terminal control sequences and control characters: removed from every text a person or the model reads.

An escape sequence can recolour, hide, move the cursor over or split text (a secret split by ``\x1b[1m`` would
escape the redactor), so it goes before anything else looks at the text. The pattern is linear: every branch
starts with a fixed character and its repetitions are followed only by optional parts, so a match never
backtracks and each character is looked at a bounded number of times.
"""

from __future__ import annotations

import re

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


def strip_controls(text: str) -> str:
    """Remove terminal control sequences and control characters, keeping newlines and tabs."""
    return _CONTROLS.sub("", text)
