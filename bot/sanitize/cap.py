"""Turn raw tool output into the one text that both Slack and the model see (DESIGN.md invariant 5).

Order matters and is applied once: decode UTF-8 with replacement, remove terminal control sequences (so an
escape sequence can't hide or split a secret), redact secrets, and only then cap to ``output_limit`` bytes
keeping head and tail. Redacting before capping means the cap can never cut a secret in half and leave a
recognisable prefix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.sanitize.controls import strip_controls
from bot.sanitize.cut_context import tail_context, withhold_leading_lines
from bot.sanitize.redact import MARKER, build_redactor
from bot.sanitize.withheld import TextRedactor

DEFAULT_OUTPUT_LIMIT = 65536
# At the gap between head and tail the raw bytes are cut at a line end within this distance, else at the
# nearest whitespace however far: a token that straddles the gap (a secret, a UTF-8 character, an escape
# sequence) is dropped whole rather than shown in part, whatever its length (issue #11: a 109-character key
# with no whitespace near the gap kept 65 characters under the old 1 KiB window).
LINE_GUARD = 4096
_DELIMITERS = (b" ", b"\t", b"\n", b'"', b"'", b",", b"{", b"}", b"<", b">")
# What ends a URL's user-info (context_tools.py: url_password's value is [^\s"'<>]).
_URL_ENDS = (b" ", b"\t", b"\n", b"\r", b'"', b"'", b"<", b">")

_PEM_END = re.compile(r"-----END(?:[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?| OpenVPN Static key V\d)-----")


@dataclass(frozen=True)
class Captured:
    """What was kept of an output. ``omitted`` bytes between ``head`` and ``tail`` were dropped."""

    head: bytes
    tail: bytes
    total_bytes: int

    @property
    def omitted(self) -> int:
        """Bytes written by the child that are in neither ``head`` nor ``tail``."""
        return self.total_bytes - len(self.head) - len(self.tail)


@dataclass(frozen=True)
class SanitizedOutput:
    """The text to show, whether anything was left out, and how many secrets were redacted."""

    text: str
    truncated: bool
    redactions: int


def omission_marker(omitted: int) -> str:
    """The line put where bytes were left out; ``omitted`` counts bytes of what the tool wrote."""
    return f"\n… [{omitted} bytes omitted] …\n"


def _head_bytes(text: str, limit: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 form fits in ``limit`` bytes (never half a character)."""
    return text.encode()[: max(0, limit)].decode("utf-8", "ignore")


def _tail_bytes(text: str, limit: int) -> str:
    """The longest suffix of ``text`` whose UTF-8 form fits in ``limit`` bytes (never half a character).

    A text shorter than ``limit`` is kept whole: slicing from ``len - limit`` would go negative there and
    Python would count it from the end, keeping only a sliver of a tail that fits (issue #18)."""
    data = text.encode()
    return data[max(0, len(data) - limit) :].decode("utf-8", "ignore") if limit > 0 else ""


# Longer than any marker ("[REDACTED:" + a kind + "#" + a fingerprint + "]"), so a look back this far finds one.
_MARKER_REACH = 128
_MARKER_START = MARKER.split("{", 1)[0]


def _whole_marker_head(text: str, head: str) -> str:
    """``head`` (a prefix of ``text``) without a marker the byte budget cut in half: ``[REDACTED:secr`` at the
    gap told the reader nothing and looked like a broken redaction (a withheld output is markers only)."""
    cut = len(head)
    start = text.rfind(_MARKER_START, max(0, cut - _MARKER_REACH), cut + len(_MARKER_START))
    if 0 <= start < cut and text.find("]", start, cut + _MARKER_REACH) >= cut:
        return head[:start]
    return head


def _whole_marker_tail(text: str, tail: str) -> str:
    """``tail`` (a suffix of ``text``) without the end of a marker the byte budget cut off (the mirror)."""
    cut = len(text) - len(tail)
    start = text.rfind(_MARKER_START, max(0, cut - _MARKER_REACH), cut + len(_MARKER_START))
    if 0 <= start < cut:
        end = text.find("]", start, cut + _MARKER_REACH)
        if end >= cut:
            return text[end + 1 :]
    return tail


def _split_budget(budget: int, head_size: int, tail_size: int) -> tuple[int, int]:
    """Bytes for the head and the tail: half each, and what one side cannot use goes to the other."""
    tail_share = min(tail_size, budget // 2)
    head_share = min(head_size, budget - tail_share)
    return head_share, min(tail_size, budget - head_share)


def _cut_head_at_space(data: bytes) -> bytes:
    """The head up to the end of its last whole token: the partial token at the gap is dropped however long.

    A whole line is preferred when one ends within ``LINE_GUARD`` bytes of the gap (a quoted value may hold
    spaces); otherwise the last delimiter no detected secret contains unquoted (whitespace, quotes, JSON
    punctuation: minified JSON keeps its shape), wherever it is. None at all: nothing of the head is shown,
    since it may all be one secret."""
    newline = data.rfind(b"\n")
    if newline >= 0 and len(data) - newline <= LINE_GUARD:
        return data[: newline + 1]
    cut = max(data.rfind(d) for d in _DELIMITERS)
    # A URL's password may hold "," "{" "}" (only whitespace, quotes and <> end it): cut inside one, the head
    # would show its start with no "@" left to find it by. Then the cut goes before the URL.
    url_start = max(data.rfind(d, 0, cut) for d in _URL_ENDS)
    if data.find(b"://", url_start + 1, cut) >= 0:
        cut = url_start
    return data[: cut + 1]


def _cut_tail_at_space(data: bytes) -> bytes:
    """The tail from the start of its first whole token (the mirror of ``_cut_head_at_space``)."""
    newline = data.find(b"\n")
    if 0 <= newline < LINE_GUARD:
        return data[newline:]
    found = [i for i in (data.find(d) for d in _DELIMITERS) if i >= 0]
    if not found:
        return b""
    # The mirror: the tail may start inside a URL's password ("cret,tail@host"); up to the end of the first
    # token a URL's password could span, an "@" means so, and the tail starts after that token.
    ends = [i for i in (data.find(d) for d in _URL_ENDS) if i >= 0]
    url_end = min(ends) if ends else len(data)
    if data.find(b"@", min(found), url_end) >= 0:
        return data[url_end:]
    return data[min(found) :]


def _redact_orphan_pem_end(text: str) -> tuple[str, int]:
    """A tail that starts inside a private key block (its BEGIN line was omitted): redact up to its END."""
    match = _PEM_END.search(text)
    if match is None or "-----BEGIN" in text[: match.start()]:
        return text, 0
    return MARKER.format(kind="private_key") + text[match.end() :], 1


def _clean(data: bytes, redactor: TextRedactor, *, cut_start: bool = False, cut_end: bool = False) -> tuple[str, int]:
    return redactor.redact(strip_controls(data.decode("utf-8", "replace")), cut_start=cut_start, cut_end=cut_end)


def _clean_tail(tail: bytes, head: bytes, redactor: TextRedactor) -> tuple[str, int]:
    """The tail cleaned with what the head's end tells it (``cut_context``): after the head's lines that give its
    first lines their meaning (a table's header, a Secret's kind and block, a Key Vault id), which are then taken
    off; and with its first lines withheld when an echoed command near the head's end asked for a secret.

    The carried lines are put before a tail that starts at a newline (one cut mid-line, in a line longer than
    ``LINE_GUARD``, is cleaned alone as before), and the tail's text is what follows their last newline. A marker
    that took newlines of those lines (a value spanning lines) moves that point on, so fewer of the tail's lines are
    shown, never a line of the head again. The redactions counted are the tail's."""
    context = tail_context(head)
    if context.lines and tail.startswith(b"\n"):
        carried = strip_controls(context.lines.decode("utf-8", "replace"))
        text, redactions = _clean(context.lines + tail, redactor, cut_start=not context.opened)
        at = -1
        for _ in range(carried.count("\n") + 1):
            at = text.find("\n", at + 1)
            if at < 0:
                text, at = "", 0  # markers took the carried lines and the tail with them
                break
        text, redactions = text[at:], max(0, redactions - text.count(_MARKER_START, 0, at))
    else:
        text, redactions = _clean(tail, redactor, cut_start=True)
    if context.withheld is not None:
        text, withheld = withhold_leading_lines(text, context.withheld)
        redactions += withheld
    return text, redactions


def sanitize_captured(captured: Captured, redactor: TextRedactor, output_limit: int) -> SanitizedOutput:
    """Decode, strip controls, redact and cap captured output; the omitted count is relative to the total.

    The marker says how many bytes of what the tool wrote are not shown: ``total_bytes`` minus the UTF-8
    size of the head and tail that are shown (so bytes removed as control sequences count as omitted too).
    """
    if captured.omitted == 0:
        text, redactions = _clean(captured.head + captured.tail, redactor)
        if len(text.encode()) <= output_limit:
            return SanitizedOutput(text=text, truncated=False, redactions=redactions)
        head_text, tail_text = text, text
    else:
        head_cut = _cut_head_at_space(captured.head)
        head_text, head_n = _clean(head_cut, redactor, cut_end=True)
        tail_text, tail_n = _clean_tail(_cut_tail_at_space(captured.tail), head_cut, redactor)
        tail_text, pem_n = _redact_orphan_pem_end(tail_text)
        redactions = head_n + tail_n + pem_n
    budget = max(0, output_limit - len(omission_marker(captured.total_bytes).encode()))
    head_budget, tail_budget = _split_budget(budget, len(head_text.encode()), len(tail_text.encode()))
    head = _whole_marker_head(head_text, _head_bytes(head_text, head_budget))
    tail = _whole_marker_tail(tail_text, _tail_bytes(tail_text, tail_budget))
    omitted = max(0, captured.total_bytes - len(head.encode()) - len(tail.encode()))
    return SanitizedOutput(text=head + omission_marker(omitted) + tail, truncated=True, redactions=redactions)


def sanitize_output(
    data: bytes,
    *,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    secret_values: Iterable[str] = (),
    redact_patterns: Iterable[str] = (),
) -> SanitizedOutput:
    """Sanitize a complete byte string (for callers that already hold the whole output)."""
    captured = Captured(head=data, tail=b"", total_bytes=len(data))
    return sanitize_captured(captured, build_redactor(secret_values, redact_patterns), output_limit)
