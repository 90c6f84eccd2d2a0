"""Secret redaction in linear time: RE2 patterns with bounded repetitions, value-shape checks in Python.

Engine choice (measured by ``bench/bench_sanitize.py --engines``, figures in the README): google-re2 runs the
whole detector set as one automaton (no backtracking, so no input can make it slow) at hundreds of MB/s on
text without candidates; Python's ``re`` backtracks (the old ``token`` x 28,000 line took 41 s) and a literal
prefilter only moves the problem to the windows it selects; hyperscan is as fast at finding but reports only
where a match ends, so every hit needs a second engine to find the parts to keep, and it is x86-only.

Order, each step one linear pass over the text (as UTF-8 bytes, so RE2 positions need no conversion):
private key blocks; the exact credential values of this process; the operator's patterns; self-identifying
tokens; Kubernetes Secret manifests; context detectors (assignments, URLs, headers...); the leaves of JSON values a
flag marks (Terraform outputs marked sensitive, 1Password's CONCEALED fields) and a CONCEALED field's cell in a table.
Every redaction leaves
``[REDACTED:<kind>]`` (with ``#<fingerprint>`` on approval cards) so a reader knows something was there.

Build once per process (``build_redactor`` is memoized): compiling the automata costs milliseconds.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

import re2

from bot.sanitize.any_candidate import candidate_scan
from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS, re2_options
from bot.sanitize.candidates import Marker, run_pass
from bot.sanitize.characters import whole_characters
from bot.sanitize.concealed_cells import redact_concealed_cells
from bot.sanitize.flagged_json import redact_flagged_values
from bot.sanitize.literals import containment
from bot.sanitize.putty import redact_orphan_private_lines
from bot.sanitize.reports import Reports, apply_reports
from bot.sanitize.sql_rows import redact_sql_rows
from bot.sanitize.structured import redact_secret_manifests

MARKER = "[REDACTED:{kind}]"
# Exact credential values shorter than this are not redacted: "1", "true" or "dev" would shred the output.
MIN_SECRET_VALUE_LENGTH = 6

# PEM private keys, PGP's private key block, and OpenVPN's static key (tls-auth/tls-crypt: a shared secret, no
# "PRIVATE" in its armour)
# and a NATS .creds file's user JWT and nkey seed (``nsc generate creds``: its END lines have six dashes)
_PRIVATE_KEY_BEGIN = re.compile(
    rb"-----BEGIN(?:[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?| OpenVPN Static key V\d| NATS USER JWT| USER NKEY SEED)-----")
# Asked first of every text (``re``'s search for the block cost 150 us on 256 KiB without one): every block has it.
_HAS_BEGIN = containment(b"-----BEGIN")
_PRIVATE_KEY_END = re.compile(
    rb"-----END(?:[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?| OpenVPN Static key V\d| NATS USER JWT| USER NKEY SEED)-----+")
# A per-process key for approval-card fingerprints: stable within a process, useless for guessing offline.
_FINGERPRINT_KEY = os.urandom(32)


def fingerprint(secret: bytes) -> str:
    """A short keyed digest, so two different secrets on one card look different."""
    return hmac.new(_FINGERPRINT_KEY, secret, hashlib.sha256).hexdigest()[:6]


def _plain_marker(kind: str, secret: bytes) -> bytes:
    """``[REDACTED:<kind>]``, formatted once per kind (dense text redacts on every line)."""
    marker = _PLAIN_MARKERS.get(kind)
    if marker is None:
        marker = _PLAIN_MARKERS[kind] = MARKER.format(kind=kind).encode()
    return marker


_PLAIN_MARKERS: dict[str, bytes] = {}


def _fingerprint_marker(kind: str, secret: bytes) -> bytes:
    return MARKER.format(kind=f"{kind}#{fingerprint(secret)}").encode()


def _redact_private_keys(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """PEM private key blocks, across lines; an unterminated block (its END cut off) runs to the end."""
    if not _HAS_BEGIN(data):
        return data, 0
    pieces: list[bytes] = []
    last = count = 0
    while (begin := _PRIVATE_KEY_BEGIN.search(data, last)) is not None:
        end = _PRIVATE_KEY_END.search(data, begin.end())
        stop = len(data) if end is None else end.end()
        pieces += (data[last : begin.start()], marker("private_key", data[begin.start() : stop]))
        last, count = stop, count + 1
    pieces.append(data[last:])
    return b"".join(pieces), count


@dataclass(frozen=True)
class Redactor:
    """A compiled detector set for one process: its credential values, the operator's patterns, the detectors."""

    values: re2._Regexp | None
    custom: tuple[re2._Regexp, ...]
    # The credential values' bytes when there are few (``_ASKED_VALUES``): text holding none of them is not scanned
    # for them. ``in`` finds a long literal in ~9 us per 64 KiB (it skips ahead by the literal's length), where the
    # values' automaton scans every byte (~100 us per 64 KiB, however many values): a runner's handful of removed
    # credentials cost 100 us of every large output. Empty: ``values`` scans every text.
    value_bytes: tuple[bytes, ...] = ()

    def redact(
        self, text: str, *, fingerprints: bool = False, cut_start: bool = False, cut_end: bool = False
    ) -> tuple[str, int]:
        """Return ``text`` with every secret replaced by its marker, and the number of redactions.

        ``fingerprints`` adds a short keyed digest of each secret to its marker (approval cards: two different
        secrets must look different). ``cut_start`` / ``cut_end``: ``text`` is the tail / head of a capped output,
        so a structure may have lost its start / end (see ``structured.redact_secret_manifests``)."""
        marker = _fingerprint_marker if fingerprints else _plain_marker
        data = text.encode("utf-8", "surrogatepass")
        data, count = _redact_private_keys(data, marker)
        if self.values is not None and (not self.value_bytes or any(value in data for value in self.value_bytes)):
            data, found = _run_literal(data, self.values, "secret_value", marker)  # (a match is a value's bytes)
            count += found
        for pattern in self.custom:
            data, found = _run_literal(data, pattern, "custom", marker)
            count += found
        candidates, missed = candidate_scan(data)  # ``missed``: automata that find nothing in these bytes
        scanned = data
        if candidates:
            data, found = self._tokens_and_reports(data, marker, missed)
            count += found
            if found:  # a .ppk's MAC is a token of this pass: the private lines before it may lack their header
                data, found = redact_orphan_private_lines(data, marker)
                count += found
        data, found = redact_secret_manifests(data, marker, cut_start=cut_start, cut_end=cut_end,
                                              constant_marker=not fingerprints)
        count += found
        data, rows = redact_sql_rows(data, marker)  # a SQL dump's secret cells, by their column (``sql_rows.py``)
        count += rows
        if candidates or found or rows:  # a manifest's markers change the text the context pass reads
            # (unchanged since the scan, it is searched without the automata that found nothing in it)
            data, found = run_pass(data, CONTEXT_PASS, marker, skip=missed if data is scanned else frozenset())
            count += found
        data, found = redact_flagged_values(data, marker)  # (one search each in text without their words)
        count += found
        data, found = redact_concealed_cells(data, marker)
        count += found
        return _decode(data), count


    @staticmethod
    def _tokens_and_reports(data: bytes, marker: Marker, missed: frozenset[int]) -> tuple[bytes, int]:
        """The token pass, then what it reported (``reports.py``: the secret cells of a table whose header names a
        secret's column, the lines after an echoed command asking for a secret) read in the text it was given, and
        both sets of spans applied to that text in one rebuild (no second token pass)."""
        reports = Reports()
        redacted, count = run_pass(data, TOKEN_PASS, marker, reports, missed)
        if reports:
            return apply_reports(data, reports, marker)
        return redacted, count


def _decode(data: bytes) -> str:
    """The redacted bytes as text. Every span is widened to whole characters where it is replaced
    (``characters.whole_characters``), so no marker leaves part of a multi-byte character behind; should one ever
    do, the broken bytes become U+FFFD rather than an exception that would lose the call's whole output (a guard:
    replacing them shows less, never more)."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def _run_literal(data: bytes, pattern: re2._Regexp, kind: str, marker: Marker) -> tuple[bytes, int]:
    """Whole-match redaction (exact values, operator patterns): RE2's own iterator, one linear pass."""
    pieces: list[bytes] = []
    last = count = 0
    for match in pattern.finditer(data):
        start, end = match.span()
        if end == start or end <= last:
            continue
        start, end = whole_characters(data, max(start, last), end, last)  # an operator's pattern may cut one
        pieces += (data[last:start], marker(kind, data[start:end]))
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count


def compile_operator_pattern(pattern: str) -> re2._Regexp:
    """An operator pattern; one RE2 cannot run in linear time (backreferences, lookaround) is refused."""
    try:
        return re2.compile(pattern, re2_options())
    except re2.error as exc:
        raise re.error(f"redact pattern {pattern!r} is not supported (RE2 syntax, linear time): {exc}") from exc


# Up to this many credential values are looked for with ``in`` before their automaton scans a text (``Redactor``):
# each ``in`` costs about a tenth of that scan.
_ASKED_VALUES = 8


def value_forms(value: str) -> list[bytes]:
    """The bytes a credential value has in the texts the redactor reads. A value from the environment may hold
    lone surrogates (``os.environ`` decodes bytes that are not UTF-8 with ``surrogateescape``): a child printing
    it writes those bytes, which output decoding turns into U+FFFD, while a text that carries the surrogates
    themselves (an argv) is read with ``surrogatepass``. Strict UTF-8 raised on such a value and stopped the
    runner's redactor from being built at all."""
    passed = value.encode("utf-8", "surrogatepass")
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte made
        raw = passed
    printed = raw.decode("utf-8", "replace").encode("utf-8")
    return [passed] if printed == passed else [passed, printed]


@functools.lru_cache(maxsize=32)
def _build(values: tuple[str, ...], patterns: tuple[str, ...]) -> Redactor:
    forms = list(dict.fromkeys(form for v in values for form in value_forms(v)))
    values_re = re2.compile(b"|".join(re2.escape(form) for form in forms), re2_options()) if forms else None
    asked = tuple(forms) if len(forms) <= _ASKED_VALUES else ()  # (as RE2 matches them)
    return Redactor(values=values_re, custom=tuple(compile_operator_pattern(p) for p in patterns), value_bytes=asked)


def build_redactor(secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> Redactor:
    """The redactor for these credential values and operator patterns, compiled once per process and reused.

    ``patterns`` are operator-configured regular expressions in RE2 syntax; an invalid one raises ``re.error``
    so a bad configuration is noticed at startup rather than silently letting a secret through.
    """
    return _build_as_given(tuple(secret_values), tuple(patterns))


@functools.lru_cache(maxsize=32)
def _build_as_given(secret_values: tuple[str, ...], patterns: tuple[str, ...]) -> Redactor:
    """``build_redactor`` remembered per values and patterns as the caller gives them: a runner asks with the
    same few credential values on every call, and sorting and filtering them cost more than finding the
    redactor (two orders of the same values still share one compiled redactor through ``_build``)."""
    values = tuple(sorted({v for v in secret_values if len(v) >= MIN_SECRET_VALUE_LENGTH}, key=lambda v: (-len(v), v)))
    return _build(values, tuple(p for p in patterns if p))


DEFAULT_REDACTOR = build_redactor()


def redact(text: str, secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> tuple[str, int]:
    """Convenience: redact ``text`` with the (memoized) redactor for these values and patterns."""
    return build_redactor(secret_values, patterns).redact(text)
