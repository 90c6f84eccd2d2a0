"""Secret redaction in linear time: RE2 patterns with bounded repetitions, value-shape checks in Python.

Engine choice (measured by ``bench/bench_sanitize.py --engines``, figures in the README): google-re2 runs the
whole detector set as one automaton (no backtracking, so no input can make it slow) at hundreds of MB/s on
text without candidates; Python's ``re`` backtracks (the old ``token`` x 28,000 line took 41 s) and a literal
prefilter only moves the problem to the windows it selects; hyperscan is as fast at finding but reports only
where a match ends, so every hit needs a second engine to find the parts to keep, and it is x86-only.

Order, each step one linear pass over the text (as UTF-8 bytes, so RE2 positions need no conversion):
private key blocks; the exact credential values of this process; the operator's patterns; self-identifying
tokens; Kubernetes Secret manifests; context detectors (assignments, URLs, headers...). Every redaction leaves
``[REDACTED:<kind>]`` (with ``#<fingerprint>`` on approval cards) so a reader knows something was there.

Build once per process (``build_redactor`` is memoized): compiling the automata costs milliseconds.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import re2

from bot.sanitize import shapes
from bot.sanitize.detectors import CONTEXT, TOKENS, VALUE_BOUND, Detector
from bot.sanitize.structured import redact_secret_manifests

MARKER = "[REDACTED:{kind}]"
# Exact credential values shorter than this are not redacted: "1", "true" or "dev" would shred the output.
MIN_SECRET_VALUE_LENGTH = 6

_PRIVATE_KEY_BEGIN = re.compile(rb"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_END = re.compile(rb"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Continuations of a value that reached its pattern's bound: one forward scan, never a second search.
_BARE_CONTINUATION = re.compile(rb"[^\s\"',;&}\])]*")
_TOKEN_CONTINUATION = re.compile(rb"[A-Za-z0-9_\-./+=]*")
_LOOK_AROUND = 128
_LINE_START = re.compile(rb"[ \t\-{,\[]*")
_FIXED_LENGTH_KINDS = frozenset(
    {"aws_secret_key", "aws_access_key_id", "npm_token", "google_api_key", "bearer", "azure_storage_key"}
)
# A per-process key for approval-card fingerprints: stable within a process, useless for guessing offline.
_FINGERPRINT_KEY = os.urandom(32)
_UNANCHORED = re2._Anchor.UNANCHORED


def fingerprint(secret: bytes) -> str:
    """A short keyed digest, so two different secrets on one card look different."""
    return hmac.new(_FINGERPRINT_KEY, secret, hashlib.sha256).hexdigest()[:6]


def _options() -> re2.Options:
    options = re2.Options()
    # Room for the lazily built DFAs. With 64 MiB, random base64 kept creating states until RE2 dropped its cache
    # and fell back to its NFA: 14 MB/s at 4 MiB against 72 MB/s with 256 MiB. It is a budget, not an
    # allocation: the process peaked at 97 MiB RSS sanitizing 4 MiB of base64 either way.
    options.max_mem = 256 << 20
    return options


@dataclass(frozen=True)
class _Pass:
    """One alternation, compiled twice: RE2 without groups finds where a candidate starts (a DFA scan, linear
    and fast), then Python's ``re`` re-matches that one candidate to take its groups apart. Both use
    leftmost-first semantics, so they agree on the match; the second costs only a bounded window per
    candidate, while RE2's own group extraction (its NFA over the whole alternation) measured ~200 us each.

    Branch i is group ``b{i}``; its secret is group ``b{i}_v``."""

    finder: re2._Regexp
    parser: re.Pattern[bytes]
    detectors: tuple[Detector, ...]


def _compile_pass(detectors: tuple[Detector, ...]) -> _Pass:
    parts = []
    for index, detector in enumerate(detectors):
        inner = re.sub(r"\(\?P<(\w+)>", lambda m, i=index: f"(?P<b{i}_{m.group(1)}>", detector.pattern)  # type: ignore[misc]
        parts.append(f"(?P<b{index}>{inner})")
    grouped = "|".join(parts)
    finder = re2.compile(re.sub(r"\(\?P<\w+>", "(?:", grouped), _options())
    # Python's "$" also matches before a final newline; RE2's (outside multi-line mode) only at the very end.
    parser = re.compile(re.sub(r"(?<![\\(:m])\$", r"\\Z", grouped).encode())
    return _Pass(finder=finder, parser=parser, detectors=detectors)


_TOKEN_PASS = _compile_pass(TOKENS)
_CONTEXT_PASS = _compile_pass(CONTEXT)

Marker = Callable[[str, bytes], bytes]


def _plain_marker(kind: str, secret: bytes) -> bytes:
    return MARKER.format(kind=kind).encode()


def _fingerprint_marker(kind: str, secret: bytes) -> bytes:
    return MARKER.format(kind=f"{kind}#{fingerprint(secret)}").encode()


def _redact_private_keys(data: bytes, marker: Marker) -> tuple[bytes, int]:
    """PEM private key blocks, across lines; an unterminated block (its END cut off) runs to the end."""
    pieces: list[bytes] = []
    last = count = 0
    while (begin := _PRIVATE_KEY_BEGIN.search(data, last)) is not None:
        end = _PRIVATE_KEY_END.search(data, begin.end())
        stop = len(data) if end is None else end.end()
        pieces += (data[last : begin.start()], marker("private_key", data[begin.start() : stop]))
        last, count = stop, count + 1
    pieces.append(data[last:])
    return b"".join(pieces), count


def _accept(detector: Detector, match: re.Match[bytes], index: int, value: bytes) -> str | None:
    """The kind to report when the candidate is a secret, None when its shape says it is not."""
    check = detector.check
    if not check:
        return detector.kind
    shown = value.decode("utf-8", "replace")
    if check == "not_hex":
        return None if re.fullmatch(r"[0-9a-fA-F]+", shown) else detector.kind
    if check == "not_placeholder":
        return None if shapes.trivial(shown) else detector.kind
    if check == "generated":
        return detector.kind if shapes.generated(shown.rstrip("=")) else None
    if check == "url_password":
        return detector.kind if shapes.accept_url_password(shown) else None
    text = match.string
    name_start, name_end = match.span(f"b{index}_name")
    if shapes.name_kind(text[name_start:name_end].decode("utf-8", "replace")) is None:
        return None  # most candidates in ordinary logs end here (token_type=, key_id=): cached, cheap
    if check in ("env_pair", "xml_pair"):
        return shapes.accept_assignment(text[name_start:name_end].decode("utf-8", "replace"), "=", shown, True)
    # Looks around the candidate stay bounded (a search to the line's start or end could cross a megabyte-long
    # line for every candidate on it, which is quadratic).
    lookback = max(0, name_start - _LOOK_AROUND)
    newline = text.rfind(b"\n", lookback, name_start)
    line_start = newline + 1 if newline >= 0 or lookback == 0 else -1
    at_line_start = line_start >= 0 and _LINE_START.fullmatch(text, line_start, name_start) is not None
    name = text[name_start:name_end].decode("utf-8", "replace")
    if b"\n" in text[name_end : match.start(f"b{index}_v")] and shown.endswith(":"):
        return None  # "credentials:" opening a YAML mapping, its first key on the next line
    value_end = match.end(f"b{index}_v")
    rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
    sentence = rest[:1].isalpha() and not shown.startswith(("\"", "'"))  # more words follow: prose
    return shapes.accept_assignment(name, match.group(f"b{index}_sep").decode(), shown, at_line_start, sentence)


def _quoted_span(data: bytes, match: re.Match[bytes], index: int) -> tuple[int, int]:
    """The secret's span inside its quotes (a quoted value keeps its quotes visible)."""
    start, end = match.span(f"b{index}_v")
    quote = data[start : start + 1]
    if quote in (b'"', b"'"):
        return (start + 1, end - 1) if end - start > 1 and data[end - 1 : end] == quote else (start + 1, end)
    return start, end


def _extended_end(data: bytes, match: re.Match[bytes], index: int, detector: Detector, start: int, end: int) -> int:
    """Past the pattern's bound: an accepted value runs on to its real end (one forward scan, never repeated,
    since the next search starts after it)."""
    value_start = match.start(f"b{index}_v")
    quote = data[value_start : value_start + 1]
    if quote in (b'"', b"'"):
        if end - start < VALUE_BOUND or data[end : end + 1] == quote:
            return end
        stops = [i for i in (data.find(quote, end), data.find(b"\n", end)) if i >= 0]
        return min(stops) if stops else len(data)
    if detector.check == "assignment" or detector.check == "env_pair":
        return _BARE_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]
    if detector.kind in _FIXED_LENGTH_KINDS or detector.check in ("url_password", "xml_pair"):
        return end
    return _TOKEN_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]


def _run_pass(data: bytes, pass_: _Pass, marker: Marker) -> tuple[bytes, int]:
    """One search loop over ``data``; each search resumes where the previous secret ended (see detectors.py)."""
    pieces: list[bytes] = []
    last = pos = count = 0
    # RE2's own Match, not the wrapper's search (which builds a generator and a match object per call: 9 us
    # against 0.5 us); it returns the spans, (-1, -1) when nothing matched.
    find, parse, length = pass_.finder._regexp.Match, pass_.parser.match, len(data)
    while (candidate_start := find(_UNANCHORED, data, pos, length)[0][0]) >= 0:
        match = parse(data, candidate_start)
        if match is None:  # the engines disagree (a construct they read differently): skip this position
            pos = candidate_start + 1
            continue
        index = int(match.lastgroup[1:])  # type: ignore[index]  # the branch group closes last
        detector = pass_.detectors[index]
        start, end = _quoted_span(data, match, index)
        kind = _accept(detector, match, index, data[start:end])  # judged on the bounded value
        if kind is not None:
            end = _extended_end(data, match, index, detector, start, end)  # only now: one scan, then consumed
            pieces += (data[last:start], marker(kind, data[start:end]))
            last, count = end, count + 1
            pos = end
        elif detector.check == "assignment":
            pos = match.start(f"b{index}_name")  # no assignment can start inside its name: the search moves on
        else:
            pos = candidate_start + 1
        pos = max(pos, candidate_start + 1)
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count


@dataclass(frozen=True)
class Redactor:
    """A compiled detector set for one process: its credential values, the operator's patterns, the detectors."""

    values: re2._Regexp | None
    custom: tuple[re2._Regexp, ...]

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
        for pattern, kind in [(self.values, "secret_value")] + [(c, "custom") for c in self.custom]:
            if pattern is not None:
                data, found = _run_literal(data, pattern, kind, marker)
                count += found
        data, found = _run_pass(data, _TOKEN_PASS, marker)
        count += found
        data, found = redact_secret_manifests(data, marker, cut_start=cut_start, cut_end=cut_end)
        count += found
        data, found = _run_pass(data, _CONTEXT_PASS, marker)
        return data.decode("utf-8", "surrogatepass"), count + found


def _run_literal(data: bytes, pattern: re2._Regexp, kind: str, marker: Marker) -> tuple[bytes, int]:
    """Whole-match redaction (exact values, operator patterns): RE2's own iterator, one linear pass."""
    pieces: list[bytes] = []
    last = count = 0
    for match in pattern.finditer(data):
        start, end = match.span()
        if end == start:
            continue
        pieces += (data[last:start], marker(kind, data[start:end]))
        last, count = end, count + 1
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count


def compile_operator_pattern(pattern: str) -> re2._Regexp:
    """An operator pattern; one RE2 cannot run in linear time (backreferences, lookaround) is refused."""
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        raise re.error(f"redact pattern {pattern!r} is not supported (RE2 syntax, linear time): {exc}") from exc


@functools.lru_cache(maxsize=32)
def _build(values: tuple[str, ...], patterns: tuple[str, ...]) -> Redactor:
    values_re = re2.compile("|".join(re2.escape(v) for v in values), _options()) if values else None
    return Redactor(values=values_re, custom=tuple(compile_operator_pattern(p) for p in patterns))


def build_redactor(secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> Redactor:
    """The redactor for these credential values and operator patterns, compiled once per process and reused.

    ``patterns`` are operator-configured regular expressions in RE2 syntax; an invalid one raises ``re.error``
    so a bad configuration is noticed at startup rather than silently letting a secret through.
    """
    values = tuple(sorted({v for v in secret_values if len(v) >= MIN_SECRET_VALUE_LENGTH}, key=lambda v: (-len(v), v)))
    return _build(values, tuple(p for p in patterns if p))


DEFAULT_REDACTOR = build_redactor()


def redact(text: str, secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> tuple[str, int]:
    """Convenience: redact ``text`` with the (memoized) redactor for these values and patterns."""
    return build_redactor(secret_values, patterns).redact(text)
