"""Output redacted whole: what a call prints when its argv asked for a secret's value (``secret_argv.py``).

Such output is the secret, with no name beside it (``Sup3r;S3cret`` and a newline), so no detector can tell it
from any other word; every line of it is replaced instead. Each non-blank line becomes one marker with the
rule's kind and a short keyed fingerprint of the line (``[REDACTED:secret_field#3fa2c1]``, the fingerprint as
on approval cards: stable within a process, useless offline), so the reader still sees how many lines there
were, which are blank, and whether two values are the same. Blank lines stay as they are: they hold nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.sanitize.redact import MARKER, fingerprint


class TextRedactor(Protocol):
    """What the output's sanitizer asks of a redactor (``redact.Redactor`` and ``WithheldOutput``)."""

    def redact(
        self, text: str, *, fingerprints: bool = False, cut_start: bool = False, cut_end: bool = False
    ) -> tuple[str, int]: ...


@dataclass(frozen=True)
class WithheldOutput:
    """A redactor that replaces every non-blank line, under ``kind``, whatever it holds."""

    kind: str

    def redact(
        self, text: str, *, fingerprints: bool = False, cut_start: bool = False, cut_end: bool = False
    ) -> tuple[str, int]:
        """``text`` with each non-blank line a marker (always fingerprinted: the value is the only thing a
        reader could compare), and the number of lines replaced. ``cut_start``/``cut_end`` change nothing:
        a part of a line is redacted as a line."""
        lines = text.split("\n")
        count = 0
        for index, line in enumerate(lines):
            value = line.strip()
            if value:
                lines[index] = MARKER.format(kind=f"{self.kind}#{fingerprint(value.encode('utf-8', 'replace'))}")
                count += 1
        return "\n".join(lines), count
