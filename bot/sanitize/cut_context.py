"""What the cap's head tells its tail: lines put before the tail for the redaction, and lines withheld after it.

A capped output keeps a head and a tail and cleans each alone (``cap.sanitize_captured``); the bytes between are
gone, and with them whatever in the head decides what the tail's first lines are (found by review, issue #11):

- the header of a table with a secret's column that runs to the head's end (``cut_tables``);
- the ``kind: Secret`` and ``stringData:``/``data:`` lines of a Secret whose block runs to the head's end
  (``cut_manifests``: plain values, no base64 to judge them by);
- a Key Vault secret's id in the head's last ``KEY_VAULT_LOOKBACK`` bytes: the object's ``"value"`` comes a few
  lines on (``context_programs.key_vault_value``);
- an echoed command asking for a secret (``$ vault kv get -field=password ...``) within ``MAX_WITHHELD_LINES`` lines
  of the head's end: what it printed goes on in the tail (``echoed``).

The first three are lines put before the tail, read with it as if nothing were between, then taken off
(``cap._clean_tail``). The last is applied to the cleaned tail: its leading lines, up to the next echoed command,
are withheld as the head's lines after the command were, counting none of the lines the cut dropped (at least the
one cut on each side: fails closed, more is withheld, never less).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.sanitize.context_programs import KEY_VAULT_LOOKBACK, KEY_VAULT_SECRET_ID
from bot.sanitize.controls import strip_controls
from bot.sanitize.cut_manifests import open_secret_block
from bot.sanitize.cut_tables import open_table_span
from bot.sanitize.echoed import MAX_WITHHELD_LINES, open_withholding, starts_echoed_command, withholds
from bot.sanitize.redact import MARKER

_SECRET_ID = re.compile(KEY_VAULT_SECRET_ID)


@dataclass(frozen=True)
class TailContext:
    """``lines``: the head's lines to put before the tail (b"": none), without a final newline; ``opened``: they
    start with a Secret's deciding lines, so the tail is read as a text that starts there (not as one cut at its
    start). ``withheld``: the kind of the echoed command whose printed lines go on in the tail and how many of its
    lines the tail may still hold (None: no such command)."""

    lines: bytes = b""
    opened: bool = False
    withheld: tuple[str, int] | None = None


def tail_context(head: bytes) -> TailContext:
    """What the head's end gives its tail (the module's docstring). ``head`` is the head as cut at the gap."""
    end = len(head) - 1 if head.endswith(b"\n") else len(head)
    if end <= 0:
        return TailContext()
    withheld = _open_echo(head, end)
    table = open_table_span(head)
    if table is not None:
        return TailContext(head[table[0] : table[1]], withheld=withheld)
    manifest = open_secret_block(head)
    if manifest is not None:
        (kind_start, kind_end), (data_start, data_end) = manifest
        return TailContext(head[kind_start:kind_end] + b"\n" + head[data_start:data_end], True, withheld)
    vault = _key_vault_id_line(head, end)
    return TailContext(head[vault:end] if vault >= 0 else b"", withheld=withheld)


def _open_echo(head: bytes, end: int) -> tuple[str, int] | None:
    """The last echoed command line of the head's last ``MAX_WITHHELD_LINES`` lines, when it asks for a secret: its
    marker's kind, and how many lines the tail may still hold of what it printed. Only the last one matters: an
    echoed command ends what the one before it withholds (``echoed.withheld_lines``). Read without control sequences,
    as the redaction reads it (a CI log colours its echoed commands: ``\x1b[32;1m$ terraform output ...``)."""
    region = head.rfind(b"\n", 0, end) + 1
    for _ in range(MAX_WITHHELD_LINES - 1):
        if region == 0:
            break
        region = head.rfind(b"\n", 0, region - 1) + 1
    lines = strip_controls(head[region:end].decode("utf-8", "replace")).encode("utf-8", "surrogatepass")
    start, rows = lines.rfind(b"\n") + 1, 1
    while not starts_echoed_command(lines, start):
        if start == 0:
            return None
        start, rows = lines.rfind(b"\n", 0, start - 1) + 1, rows + 1
    kind = open_withholding(lines, start, len(lines))
    return None if kind is None else (kind, MAX_WITHHELD_LINES - rows + 1)


def _key_vault_id_line(head: bytes, end: int) -> int:
    """Where the line of the last Key Vault secret id in the head's last ``KEY_VAULT_LOOKBACK`` bytes starts (-1:
    none): its object's ``"value"`` may be in the tail, a few lines on."""
    floor = max(0, end - KEY_VAULT_LOOKBACK)
    slash = head.rfind(b"/secrets/", floor, end)
    if slash < 0:
        return -1
    https = head.rfind(b"https://", max(floor, slash - 64), slash)
    if https < 0 or _SECRET_ID.match(head, https, end) is None:
        return -1
    return head.rfind(b"\n", 0, https) + 1


def withhold_leading_lines(text: str, withheld: tuple[str, int]) -> tuple[str, int]:
    """``text`` (a cleaned tail) with its leading lines replaced by ``[REDACTED:<kind>]``, up to the next echoed
    command line or as many lines as ``withheld`` allows; blank lines stay, as ``echoed.withheld_lines`` leaves them.
    The part of a line before the tail's first newline is the end of a line the cut dropped (blank) or a line's
    rest: withheld when it is not blank, counted as no line."""
    kind, rows = withheld
    lines = text.split("\n", rows + 1)
    rest = lines.pop() if len(lines) > rows + 1 else None
    count = 0
    for number, line in enumerate(lines):
        if number and starts_echoed_command(line.encode(), 0):
            break
        if line.strip() and withholds(kind, line):
            lines[number] = MARKER.format(kind=kind)
            count += 1
    return "\n".join(lines if rest is None else [*lines, rest]), count
