"""Finding and judging secret candidates: one RE2 search loop per detector pass, each candidate judged in Python.

RE2 finds where a candidate starts (a DFA scan, linear, no backtracking); Python's ``re`` takes that one
candidate apart in a bounded window and ``shapes`` judges its name and value. Two things keep the Python part
cheap and bounded whatever the text:

- **Verdict memo.** A rejection that depends only on the candidate's own bytes (a describing name such as
  ``token_type=``, a trivial value, a value that does not look generated) is remembered, keyed on those bytes
  and the one byte on each side (which decides ``^``, ``$`` and ``\\b``). Logs repeat themselves, so most
  candidates of ordinary output are then dismissed after the RE2 search alone. Only rejections are memoized (an
  accepted candidate is parsed to find the value to replace), and only short candidates, in a bounded table.
- **Density budget.** An RE2 hit costs about a microsecond of Python and judging a candidate several more, so
  text that is nothing but candidates (``pass: abc`` on every line, each one different) would run at a few
  MB/s. A pass spends one unit per hit, ``JUDGEMENT_UNITS`` more per candidate it judges and ``ACCEPT_UNITS``
  more per redaction, and may spend ``FREE_UNITS`` plus one per ``BYTES_PER_UNIT`` bytes of text before the
  candidate. A candidate beyond that budget is not judged: the text from it to the end of the line
  ``DENSE_SPAN`` bytes on is replaced by one ``[REDACTED:dense_candidates]`` marker and never searched again.
  That fails closed (nothing in a dense run can leak) and bounds the Python work per byte by a constant,
  whatever the text. Ordinary output stays below it (the benign corpora, the realistic bench input, a describing
  or recurring name on every line; an integer or a one- or two-character value is not even a hit, see
  ``Detector.finder``); a long run of lines each needing a full judgement (a new password-like name with a
  prose value on every line) can reach it, and then parts of that run show the marker.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

import re2

from bot.sanitize import shapes
from bot.sanitize.detectors import CONTEXT, TOKENS, VALUE_BOUND, Detector

Marker = Callable[[str, bytes], bytes]

# Continuations of a value that reached its pattern's bound: one forward scan, never a second search.
_BARE_CONTINUATION = re.compile(rb"[^\s\"',;&}\])]*")
_TOKEN_CONTINUATION = re.compile(rb"[A-Za-z0-9_\-./+=]*")
_LOOK_AROUND = 128
# How environment variables are named (upper case words joined by "_"): JWT_SECRET, API_KEY, not jwtSecret
_ENVIRONMENT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_LINE_START = re.compile(rb"[ \t\-{,\[]*")
_FIXED_LENGTH_KINDS = frozenset(
    {"aws_secret_key", "aws_access_key_id", "npm_token", "google_api_key", "bearer", "azure_storage_key",
     "telegram_token", "newrelic_key", "age_key", "shopify_token", "brevo_key", "twilio_key"}
)
_HEX = re.compile(r"[0-9a-fA-F]+")
# An assignment's head as the assignment detector reads it: the boundary character, then the name (the whole
# run of name characters up to the separator, since a boundary precedes it and the separator follows it).
_ASSIGNMENT_HEAD = re.compile(rb"[^A-Za-z0-9_.-][\"']?([A-Za-z0-9_.-]{1,85})[\"']?[ \t]{0,4}[:=]")
# An assignment's unquoted value on the separator's line, as the assignment detector reads it (detectors._BARE_VALUE).
_CODE_VALUE = re.compile(rb"[ \t]{0,4}([^\s\"',;&}\])]{1,256})")
# shapes.EXPRESSION_HINT on the value's bytes (no decoding): where it finds nothing, _code_expression says False
# (the one non-ASCII match of the decoded hint, "ſtr" for "str", is no type name to code_reference either).
_EXPRESSION_HINT = re.compile(shapes.EXPRESSION_HINT.pattern.encode())
_ANCHOR_START = re2._Anchor.ANCHOR_START
UNANCHORED = re2._Anchor.UNANCHORED

# The density budget (see the module docstring).
FREE_UNITS = 512
BYTES_PER_UNIT = 32
HEAD_UNITS = 1
NAME_UNITS = 2
JUDGEMENT_UNITS = 6
EXPRESSION_UNITS = 2  # an assignment whose value is an expression of code, dismissed without the full parse
ACCEPT_UNITS = 4
DENSE_SPAN = 4096
DENSE_KIND = "dense_candidates"
# The verdict memo: candidates up to this many bytes, at most this many remembered (then it starts over).
_MEMO_KEY_BYTES = 192
_MEMO_ENTRIES = 4096
# Assignment names already judged by shapes.name_kind: True when the name holds no secret.
_HARMLESS_NAMES: dict[bytes, bool] = {}
# Assignments (head, value, the byte after it) whose value is an expression of code (``_code_expression``); only
# keys of up to ``_MEMO_KEY_BYTES`` bytes.
_CODE_EXPRESSIONS: set[bytes] = set()


# Each automaton's memory budget: its program, then its forward and reverse DFA state caches. RE2 keeps every
# state it builds up to this budget, then drops its cache and builds again (a search that keeps running out falls
# back to its NFA), so this bounds what cleaning varied text can make a process hold. Measured (README "Resident
# memory", bench/bench_rss.py): with 256 or 64 MiB, 10 MiB of varied unseen text added +47 MiB; with 32 MiB +36
# and flat, at the same speed. The largest automaton (~146k instructions) needs more than 16 MiB to keep a DFA
# at all (16 MiB: every search on realistic output runs on the NFA, 4 MB/s instead of 80; 20 MiB is enough):
# 32 MiB leaves it 1.6x that, and tests/test_sanitize_memory.py fails when an automaton outgrows the margin.
MAX_MEM_PER_AUTOMATON = 32 << 20


def re2_options() -> re2.Options:
    """RE2 options for every detector automaton: a bounded DFA budget, and no logging from RE2 itself.

    ``log_errors`` off: RE2 otherwise writes "DFA out of memory" to the process's stderr (not through our
    logging, so not redacted or rate-limited) for every search that spends the budget and runs on its NFA;
    that fallback is correct, only slower, so it is no error of ours to report."""
    options = re2.Options()
    options.max_mem = MAX_MEM_PER_AUTOMATON
    options.log_errors = False
    return options


@dataclass(frozen=True)
class Automaton:
    """One finder automaton; ``literals`` are in every match (text without one of them is not searched)."""

    finder: re2._Regexp
    literals: tuple[bytes, ...] = ()
    # The unanchored scan, when some detector has a ``search``: where a finder match may start, without the long
    # value counters (their overlapping threads multiplied RE2's DFA states); ``finder`` is then matched anchored
    # at each hit (one thread, bounded window), which gives the span the unanchored finder would have given.
    search: re2._Regexp | None = None

    def may_match(self, data: bytes) -> bool:
        return all(literal in data for literal in self.literals)

    def first(
        self, data: bytes, pos: int, length: int, dismiss: Callable[[int], bool] | None = None
    ) -> tuple[int, int]:
        """(start, end) of the leftmost ``finder`` match at or after ``pos``, (-1, -1) when none.

        ``dismiss(start)`` True: no candidate of this automaton is wanted at ``start`` (an assignment whose name
        holds no secret), so the scan goes on without matching the finder there."""
        if self.search is None:
            return self.finder._regexp.Match(UNANCHORED, data, pos, length)[0]
        scan, verify = self.search._regexp.Match, self.finder._regexp.Match
        while (start := scan(UNANCHORED, data, pos, length)[0][0]) >= 0:
            if dismiss is not None and dismiss(start):
                pos = start + 1
                continue
            span = verify(_ANCHOR_START, data, start, length)[0]
            if span[0] >= 0:
                return span
            pos = start + 1  # the scan's superset (a quote never closed): no finder match starts here
        return -1, -1


@dataclass(frozen=True)
class DetectorPass:
    """One alternation, compiled twice: RE2 without groups finds where a candidate starts (a DFA scan, linear
    and fast), then Python's ``re`` re-matches that one candidate to take its groups apart. Both use
    leftmost-first semantics, so they agree on the match; the second costs only a bounded window per
    candidate, while RE2's own group extraction (its NFA over the whole alternation) measured ~200 us each.

    ``finders``: the alternation's branches in one automaton, and each ``own_automaton`` detector in one of its
    own (the leftmost hit of all of them is the candidate: ``Leftmost``). A DFA's states are sets of the
    pattern's positions, so one automaton over detectors that each keep a counter alive at once holds the
    product of their counts: kept apart, their states add up instead.

    Branch i is group ``b{i}``; its secret is group ``b{i}_v``. ``rejected`` is the verdict memo: candidate
    key -> where the search resumes, relative to the candidate's start."""

    finders: tuple[Automaton, ...]
    parser: re.Pattern[bytes]
    detectors: tuple[Detector, ...]
    rejected: dict[tuple[bytes, bool, bool], int]
    # The index in ``finders`` of the automaton that holds the assignment detector alone (-1: none). A hit of
    # that automaton at a start no other automaton shares (``Leftmost.source``, not ``ambiguous``) is an
    # assignment, whose name is then read by a simple pattern instead of a full parse.
    assignment_automaton: int = -1
    # The assignment branch alone, same group names: where the candidate is an assignment, no other branch can
    # accept there (every finder holds what its detector accepts), so the candidate is parsed by this instead of
    # trying the alternation's branches one by one (a third of a judgement's cost).
    assignment_parser: re.Pattern[bytes] | None = None


class Leftmost:
    """The leftmost hit of several automata from a position on, each automaton searched again only once the
    position passes its last hit (a hit at or after the position is still the leftmost one of that automaton),
    so the text is scanned once per automaton, not once per candidate. An automaton that finds nothing is not
    searched again; when one is left, ``find`` is a plain search (most text: the URL detector finds nothing)."""

    def __init__(
        self, finders: tuple[Automaton, ...], data: bytes, dismiss: Callable[[int], bool] | None = None,
        dismissing: int = -1,
    ) -> None:
        # RE2's own Match, not the wrapper's search (which builds a generator and a match object per call: 9 us
        # against 0.5 us); it returns the spans, (-1, -1) when nothing matched. ``dismiss`` goes to the
        # ``first`` of automaton ``dismissing`` (see ``Automaton.first``).
        self._sources = [i for i, a in enumerate(finders) if a.may_match(data)]
        self._matches = [
            functools.partial(finders[i].first, dismiss=dismiss) if i == dismissing else finders[i].first
            for i in self._sources
        ]
        self._data, self._length = data, len(data)
        self._hits: list[tuple[int, int]] = [(-1, -1)] * len(self._matches)
        self.hits = self._hits  # read by ``dismiss`` while the last automaton is searched: the others' hits
        self._searched_from = -1
        self.ambiguous = False  # two automata hit at the last start: which branch the one alternation would
        # have chosen there is unknown, so the candidate's span is not a memo key
        self.source = self._sources[0] if len(self._sources) == 1 else -1  # the index of the last hit's automaton

    def find(self, pos: int) -> tuple[int, int]:
        """(start, end) of the leftmost hit at or after ``pos``, (-1, -1) when none."""
        data, length = self._data, self._length
        if len(self._matches) <= 1:
            if not self._matches:
                return -1, -1
            return self._matches[0](data, pos, length)
        hits = self._hits
        first_search = self._searched_from < 0
        self._searched_from = pos
        for i, match in enumerate(self._matches):
            if first_search or 0 <= hits[i][0] < pos:
                hits[i] = match(data, pos, length)
        live = [i for i, hit in enumerate(hits) if hit[0] >= 0]
        if len(live) < len(hits):  # never searched again: none from here on
            self._matches = [self._matches[i] for i in live]
            self._sources = [self._sources[i] for i in live]
            self._hits = self.hits = hits = [hits[i] for i in live]
            self.ambiguous = False
            if not hits:
                return -1, -1
            if len(hits) == 1:
                self.source = self._sources[0]
                return hits[0]
        best = min(hits)
        self.ambiguous = sum(1 for hit in hits if hit[0] == best[0]) > 1
        self.source = self._sources[hits.index(best)]
        return best


def _ungrouped(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _groups(detectors: tuple[Detector, ...]) -> list[tuple[tuple[Detector, ...], tuple[bytes, ...]]]:
    """The alternation's detectors, then each ``own_automaton`` detector alone, with its literals."""
    together = tuple(d for d in detectors if not d.own_automaton)
    groups: list[tuple[tuple[Detector, ...], tuple[bytes, ...]]] = [(together, ())] if together else []
    return groups + [((d,), d.literals) for d in detectors if d.own_automaton]


def _automata(detectors: tuple[Detector, ...]) -> tuple[Automaton, ...]:
    """The finders of these detectors: one automaton for the alternation, one for each ``own_automaton``."""
    groups = _groups(detectors)
    return tuple(
        Automaton(_alternation(group, lambda d: d.finder or d.pattern), literals,
                  _alternation(group, lambda d: d.search or d.finder or d.pattern)
                  if any(d.search for d in group) else None)
        for group, literals in groups
    )


def _alternation(detectors: tuple[Detector, ...], pattern: Callable[[Detector], str]) -> re2._Regexp:
    return re2.compile("|".join(f"(?:{_ungrouped(pattern(d))})" for d in detectors), re2_options())


def _compile_pass(detectors: tuple[Detector, ...]) -> DetectorPass:
    parts = []
    for index, detector in enumerate(detectors):
        inner = re.sub(r"\(\?P<(\w+)>", lambda m, i=index: f"(?P<b{i}_{m.group(1)}>", detector.pattern)  # type: ignore[misc]
        parts.append(f"(?P<b{index}>{inner})")
    def compiled(pattern: str) -> re.Pattern[bytes]:
        # Python's "$" also matches before a final newline; RE2's (outside multi-line mode) only at the very end.
        return re.compile(re.sub(r"(?<![\\(:m])\$", r"\\Z", pattern).encode())

    finders = _automata(detectors)
    assignment, assignment_parser = -1, None
    if detectors[-1].check == "assignment" and detectors[-1].own_automaton:
        assignment = len(finders) - 1  # the last detector's own automaton comes last (``_automata``)
        assignment_parser = compiled(parts[-1])
    return DetectorPass(finders=finders, parser=compiled("|".join(parts)), detectors=detectors, rejected={},
                        assignment_automaton=assignment, assignment_parser=assignment_parser)


TOKEN_PASS = _compile_pass(TOKENS)
CONTEXT_PASS = _compile_pass(CONTEXT)
# Both passes' candidates in as few automata as the passes use: text in which they find none (most output)
# skips both passes; text with a candidate pays only the scans up to the first one. Only the scans, a superset of
# the finders (a hit the finder would refuse only runs the passes for nothing), so no finder is compiled twice.
# The automata apart come first (the assignment's is the likeliest to hit at once in logs); the assignment is
# kept apart here too: merged, its states and the rest's multiplied on random base64 with ":@._-" (64 KiB at
# 11 MB/s, against 50 apart).
_ANY_CANDIDATE = tuple(
    Automaton(_alternation(group, lambda d: d.search or d.finder or d.pattern), literals)
    for group, literals in reversed(_groups((*TOKENS, *CONTEXT)))
)


def has_candidate(data: bytes) -> bool:
    """Whether either pass may find a candidate in ``data`` (False: it finds none)."""
    return any(a.may_match(data) and a.first(data, 0, len(data))[0] >= 0 for a in _ANY_CANDIDATE)


_FIRST_WORD = re.compile(r"[^\s\"',;&}\])]+")


def _judge(detector: Detector, match: re.Match[bytes], index: int, value: bytes) -> tuple[str | None, bool]:
    """The kind to report when the candidate is a secret (None when its shape says it is not), and whether that
    verdict depends on the candidate's bytes alone (not on the rest of its line), so it may be memoized."""
    check = detector.check
    if not check:
        return detector.kind, True
    shown = value.decode("utf-8", "replace")
    if check == "not_hex":
        return (None if _HEX.fullmatch(shown) else detector.kind), True
    if check == "not_placeholder":
        return (None if shapes.trivial(shown) else detector.kind), True
    if check == "generated":
        return (detector.kind if shapes.generated(shown.rstrip("=")) else None), True
    if check == "url_password":
        return (detector.kind if shapes.accept_url_password(shown) else None), True
    text = match.string
    name_start, name_end = match.span(f"b{index}_name")
    name = text[name_start:name_end].decode("utf-8", "replace")
    if shapes.name_kind(name) is None:
        return None, True  # most candidates in ordinary logs end here (token_type=, key_id=): cached, cheap
    value_start, value_end = match.span(f"b{index}_v")
    quoted = text[value_start : value_start + 1] in (b'"', b"'")
    if check == "env_line":
        # The whole rest of the line, else its first word as a mid-line assignment would judge it: an environment
        # line hides at least what the assignment detector would (it cannot start again inside this name). A line
        # that is an expression of code (``password=os.environ["X"]``) is judged whole, never by its first word.
        # Only an indented line may be code (a keyword argument: ``    password=os.environ["X"],``); ``env``, a .env
        # file, ``export`` and a YAML list item (``- DB_PASSWORD=...``) hold literals.
        code = text[match.start(f"b{index}") : name_start].strip(b"\n")[:1] in (b" ", b"\t") and not re.search(
            rb"[-a-z]", text[match.start(f"b{index}") : name_start]
        )
        verdict = shapes.accept_assignment(name, "=", shown, True, code=code, environment=not code)
        first = _FIRST_WORD.match(shown)
        if verdict is None and first is not None and first.end() < len(shown) and not (
            code and shapes.code_reference(shown)
        ):
            following = shown[first.end() : first.end() + 1]
            verdict = shapes.accept_assignment(name, "=", first.group(), True, following=following, code=code)
        return verdict, True
    if check in ("env_pair", "xml_pair"):
        return shapes.accept_assignment(name, "=", shown, True, quoted=quoted, environment=check == "env_pair"), True
    if check == "env_string":  # "NAME=value" in quotes: an environment entry, its value a literal
        return shapes.accept_assignment(name, "=", shown, True, code=False, environment=True), False
    if check == "key_value_line":  # "password    Va-ult-Pw9": no separator, so only a generated value counts
        verdict = shapes.accept_assignment(name, ":", shown, False, True, code=False)
        return verdict, False
    if check == "quoted_pair":
        # 'password' => 'x', define('DB_PASSWORD', 'x'), and ":" only in escaped JSON (\"password\":\"x\"): a
        # plain JSON pair is the assignment detector's, whose verdict must not be taken again here.
        pair_separator = text[name_end : name_end + 8].lstrip(b"\\\"' \t")[:1]  # bounded: no copy of the rest
        if pair_separator == b":" and not match.group(f"b{index}_q").startswith(b"\\"):
            return None, False
        pair_start = match.start(f"b{index}_q")
        if pair_separator == b"," and not text[max(0, pair_start - 8) : pair_start].rstrip().endswith(b"("):
            return None, False  # "a","b" is a JSON value then a key; only a call's arguments pair a name and value
        return shapes.accept_assignment(name, "=", shown, True, quoted=True, code=False), False
    if check == "flag":
        # --token VALUE: a password-like flag takes any value unless words follow it (prose: "--password flag is
        # deprecated"), others a generated one; the next word is outside the candidate, so not memoized.
        rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
        sentence = rest[:1].isalpha() and not quoted
        following = text[value_end : value_end + 1].decode("utf-8", "replace")
        return shapes.accept_assignment(name, ":", shown, not sentence, sentence, quoted=quoted,
                                        following=following), False
    if b"\n" in text[name_end:value_start] and shown.endswith(":"):
        return None, True  # "credentials:" opening a YAML mapping, its first key on the next line
    separator = "=" if match.group(f"b{index}_sep").endswith(b"=") else ":"  # make's ?= and :=, Go's := are "="
    sep_start = match.start(f"b{index}_sep")
    if separator == ":" and text[name_start - 1 : name_start] == b":":
        return None, True  # a field of a colon-separated identifier (arn:aws:secretsmanager:...:secret:name)
    if text[max(0, name_start - 9) : name_start] == b"checksum/":
        return None, False  # a chart's annotation: checksum/secret is the digest of the rendered Secret
    if separator == ":" and text[sep_start + 1 : sep_start + 3] == b"//":
        return None, True  # a URL's scheme (credential.https://github.com...), not a key and its value
    if separator == ":" and text[sep_start + 1 : sep_start + 2] == b":":
        return None, True  # a path of code (SecretKey::from_slice, Config::TOKEN), not a key and its value
    # What follows the value decides a call (``get_token(`` then ``)``): one byte, inside the memo key.
    following = text[value_end : value_end + 1].decode("utf-8", "replace")
    # The most permissive context (at a line's start, no words after the value) rejects: every context does.
    # After "=" the context does not matter at all (shapes.accept_assignment: NAME=value is structured).
    spaced = text[sep_start - 1 : sep_start] in (b" ", b"\t")
    if separator == "=" and not spaced and text[sep_start + 1 : sep_start + 2] in (b" ", b"\t"):
        # "password= and token= ...": a blank after "=" only and words after the value is prose, judged as a
        # sentence (a generated value only); "password= hunter2" alone stays a password. Reads past the
        # candidate, so not memoized.
        rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
        if rest[:1].isalpha() and not quoted:
            return shapes.accept_assignment(name, ":", shown, False, True, quoted=quoted, following=following,
                                            spaced=spaced), False
    # An environment variable's name (JWT_SECRET=, compose's or a ConfigMap's JWT_SECRET: at a line's start) holds
    # its secret whatever it looks like (shapes.accept_assignment's ``environment``); its context is read below.
    env_name = _ENVIRONMENT_NAME.fullmatch(name.strip("\"'")) is not None
    verdict = shapes.accept_assignment(name, separator, shown, True, False, quoted=quoted, following=following,
                                       spaced=spaced, environment=env_name)
    if verdict is None or separator == "=" and not env_name:
        return verdict, True
    if separator == "=":  # API_TOKEN=not a token: words after the value are prose, and its value needs a shape
        rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
        if rest[:1].isalpha() and not quoted:
            verdict = shapes.accept_assignment(name, separator, shown, True, False, quoted=quoted,
                                               following=following, spaced=spaced)
        return verdict, False
    # Looks around the candidate stay bounded (a search to the line's start or end could cross a megabyte-long
    # line for every candidate on it, which is quadratic).
    lookback = max(0, name_start - _LOOK_AROUND)
    newline = text.rfind(b"\n", lookback, name_start)
    line_start = newline + 1 if newline >= 0 or lookback == 0 else -1
    at_line_start = line_start >= 0 and _LINE_START.fullmatch(text, line_start, name_start) is not None
    rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
    sentence = rest[:1].isalpha() and not quoted  # more words follow: prose
    return shapes.accept_assignment(name, separator, shown, at_line_start, sentence, quoted=quoted,
                                    following=following, spaced=spaced,
                                    environment=env_name and at_line_start and not sentence), False


def _quoted_span(data: bytes, match: re.Match[bytes], index: int) -> tuple[int, int]:
    """The secret's span inside its quotes (a quoted value keeps its quotes visible)."""
    start, end = match.span(f"b{index}_v")
    quote = data[start : start + 1]
    if quote in (b'"', b"'"):
        return (start + 1, end - 1) if end - start > 1 and data[end - 1 : end] == quote else (start + 1, end)
    return start, end


def _line_stop(data: bytes, end: int, *quotes: bytes) -> int:
    """The first of ``quotes`` from ``end`` on within its line, else the line's end: each search stops at the
    newline (a quote searched for past it could lie a megabyte on, and be searched for again by the next
    candidate: quadratic on lines without that quote)."""
    newline = data.find(b"\n", end)
    line_end = len(data) if newline < 0 else newline
    found = [i for i in (data.find(quote, end, line_end) for quote in quotes) if i >= 0]
    return min(found) if found else line_end


def _extended_end(data: bytes, match: re.Match[bytes], index: int, detector: Detector, start: int, end: int) -> int:
    """Past the pattern's bound: an accepted value runs on to its real end (one forward scan, never repeated,
    since the next search starts after it)."""
    value_start = match.start(f"b{index}_v")
    quote = data[value_start : value_start + 1]
    if quote in (b'"', b"'"):
        if end - start < VALUE_BOUND or data[end : end + 1] == quote:
            return end
        return _line_stop(data, end, quote)
    if detector.check == "env_line":
        if match.end(f"b{index}_v") - value_start < VALUE_BOUND:
            return end
        stop = data.find(b"\n", end)
        stop = len(data) if stop < 0 else stop
        while stop > end and data[stop - 1 : stop].isspace():  # one backward step per trailing blank
            stop -= 1
        return stop
    if detector.check == "assignment" or detector.check == "env_pair":
        return _BARE_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]
    if detector.check == "env_string":  # to the closing quote (or the line's end), never past it
        if end - start < VALUE_BOUND:
            return end
        return _line_stop(data, end, b'"', b"'")
    if detector.kind in _FIXED_LENGTH_KINDS or detector.check in ("url_password", "xml_pair"):
        return end
    return _TOKEN_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]


def _remember(rejected: dict[tuple[bytes, bool, bool], int], key: tuple[bytes, bool, bool], resume: int) -> None:
    if len(rejected) >= _MEMO_ENTRIES:
        rejected.clear()  # bounded memory; ordinary logs refill it with their few recurring candidates at once
    rejected[key] = resume


def _assignment_head(
    data: bytes, start: int, leftmost: Leftmost, automaton: int, scanned: re.Match[bytes] | None = None
) -> re.Match[bytes] | None:
    """The head (its group 1: the name) of the assignment candidate at ``start``, None when the candidate may be
    another detector's.

    A hit of the assignment's own automaton where no other automaton hits (``Leftmost``) means the alternation
    picked the assignment (its last branch), whose name is then the whole run of name characters between the
    boundary and the separator: read by a simple pattern, judged by ``shapes.name_kind`` exactly as the full parse
    would (``token_type=``, ``secretName:`` end here). It used to take an anchored match of every other detector
    at each candidate (an RE2 call: about a third of a dismissed candidate's cost)."""
    if leftmost.source != automaton or leftmost.ambiguous:
        return None
    if scanned is not None and scanned.start() == start:  # read by the scan's dismissal already (``scanned``)
        return scanned
    return _ASSIGNMENT_HEAD.match(data, start)


def _code_expression(data: bytes, head: re.Match[bytes], value: re.Match[bytes] | None = None) -> bool:
    """Whether the assignment with this head has an unquoted value on its own line that is an expression of code
    (``password = settings.DB_PASSWORD``): every context rejects it (``shapes.accept_assignment``), so it is
    dismissed without the full parse. Source code (``grep -rn password src/``, ``git diff``) is made of these:
    judged in full, a thousand lines of it spent the density budget and lost chunks to the dense marker.
    ``value``: ``_CODE_VALUE`` matched at the head's end already."""
    if value is None:
        value = _CODE_VALUE.match(data, head.end())
    if value is None:
        return False
    shown = value.group(1).decode("utf-8", "replace")
    if shapes.EXPRESSION_HINT.search(shown) is None:
        return False  # no separator, bracket, "$", "_" or camel hump: one word, never an expression but a type
    following = data[value.end() : value.end() + 1].decode("utf-8", "replace")
    return shapes.code_reference(shown, following, head.group(0).endswith(b":"))


def _judge_name(name: bytes) -> bool:
    """Whether an assignment's name holds no secret (``shapes.name_kind``), remembered in ``_HARMLESS_NAMES``."""
    harmless = shapes.name_kind(name.decode("utf-8", "replace")) is None
    if len(_HARMLESS_NAMES) >= _MEMO_ENTRIES:
        _HARMLESS_NAMES.clear()
    _HARMLESS_NAMES[name] = harmless
    return harmless


def _dense_end(data: bytes, start: int) -> int:
    """Where a run of candidates over budget is cut: the end of the line ``DENSE_SPAN`` bytes on (one forward
    scan; the text up to there is replaced and never searched again)."""
    newline = data.find(b"\n", min(len(data), start + DENSE_SPAN))
    return len(data) if newline < 0 else newline


def run_pass(data: bytes, pass_: DetectorPass, marker: Marker) -> tuple[bytes, int]:
    """One search loop over ``data``; each search resumes where the previous secret ended (see detectors.py)."""
    pieces: list[bytes] = []
    last = pos = count = spent = 0
    assignment = pass_.assignment_automaton
    # What ``dismiss`` read at the last start it did not dismiss, for the loop not to read it again: the head, and
    # the start whose value it found to be no expression of code.
    scanned_head: re.Match[bytes] | None = None
    not_expression_at = -1

    def dismiss(start: int) -> bool:
        """An assignment the loop below would only dismiss, dismissed in the scan while the budget lasts: a name
        that holds no secret (``token_type=``, ``secretName:``; one unit when the name was judged before, as a
        remembered verdict, else what the loop charges for judging it), or a secret's name whose value is an
        expression of code (``password = settings.DB_PASSWORD``: what the loop charges for that dismissal). Either
        costs less here (no anchored finder match, no memo key, no round of the loop: that saved about half of a
        dismissed line of source code). Another detector's candidate at the same start is still reported by its
        own automaton, and wins there as it does in the one alternation (the loop too judges the assignment only
        where no other automaton hits)."""
        nonlocal spent, scanned_head, not_expression_at
        budget = FREE_UNITS + start // BYTES_PER_UNIT
        if spent + 1 > budget:
            return False  # over budget: reported, so that the loop cuts the run there
        head = scanned_head = _ASSIGNMENT_HEAD.match(data, start)
        if head is None:
            return False
        name = head.group(1)
        harmless = _HARMLESS_NAMES.get(name)
        cost = 1  # what the loop charges a remembered verdict
        if harmless is None:  # judged here, charged as the loop charges it (it will not judge it again)
            if spent + 1 + HEAD_UNITS + NAME_UNITS > budget:
                return False
            spent += NAME_UNITS
            harmless = _judge_name(name)
            cost += HEAD_UNITS
        if harmless:
            spent += cost
            return True
        if b'"' in head.group(0) or b"'" in head.group(0):
            return False
        for hit in leftmost.hits:  # the other automata's are current (this one is searched last, ``Leftmost``)
            if hit[0] == start:
                return False  # shared: the loop parses it in full (password=x is an environment line too)
        value = _CODE_VALUE.match(data, head.end())
        if value is None or _EXPRESSION_HINT.search(value.group(1)) is None:
            not_expression_at = start  # as _code_expression decides (the loop need not ask again)
            return False
        # What the verdict reads: the head, the value and the one byte after it (``_code_expression``).
        key = data[start : value.end() + 1] if value.end() - start < _MEMO_KEY_BYTES else b""
        if key and key in _CODE_EXPRESSIONS:  # a remembered verdict (``grep`` prints the same call on many lines)
            spent += 1
            return True
        cost = 1 + HEAD_UNITS + EXPRESSION_UNITS
        if spent + cost > budget:
            return False
        if not _code_expression(data, head, value):
            not_expression_at = start  # the loop need not ask again
            return False
        if key:
            if len(_CODE_EXPRESSIONS) >= _MEMO_ENTRIES:
                _CODE_EXPRESSIONS.clear()
            _CODE_EXPRESSIONS.add(key)
        spent += cost
        return True

    leftmost = Leftmost(pass_.finders, data, dismiss if assignment >= 0 else None, assignment)
    find, parse, length = leftmost.find, pass_.parser.match, len(data)
    assignment_parse = pass_.assignment_parser.match if pass_.assignment_parser is not None else None
    rejected = pass_.rejected
    while (span := find(pos))[0] >= 0:
        candidate_start, candidate_end = span
        spent += 1
        if spent > FREE_UNITS + candidate_start // BYTES_PER_UNIT:
            end = _dense_end(data, candidate_start)
            pieces += (data[last:candidate_start], marker(DENSE_KIND, data[candidate_start:end]))
            last = pos = end
            count += 1
            continue
        key = None
        if candidate_end - candidate_start <= _MEMO_KEY_BYTES and not leftmost.ambiguous:
            low, high = max(0, candidate_start - 1), min(length, candidate_end + 1)
            key = (data[low:high], low == candidate_start, high == candidate_end)
            resume = rejected.get(key)
            if resume is not None:
                pos = candidate_start + resume
                continue
        spent += HEAD_UNITS
        head = _assignment_head(data, candidate_start, leftmost, assignment, scanned_head) if assignment >= 0 else None
        if head is not None:
            name = head.group(1)
            harmless = _HARMLESS_NAMES.get(name)
            if harmless is None:  # a name not seen yet: splitting it into words costs about a judgement
                spent += NAME_UNITS
                harmless = _judge_name(name)
            if harmless:
                pos = candidate_start + 1  # where a rejected assignment resumes: its name's start
                if key is not None:
                    _remember(rejected, key, 1)
                continue
            if (b'"' not in head.group(0) and b"'" not in head.group(0) and not_expression_at != candidate_start
                    and _code_expression(data, head)):
                spent += EXPRESSION_UNITS
                resume = max(1, head.start(1) - candidate_start)  # as a rejected assignment: at its name
                if key is not None:
                    _remember(rejected, key, resume)
                pos = candidate_start + resume
                continue
        spent += JUDGEMENT_UNITS
        match = (assignment_parse if head is not None and assignment_parse else parse)(data, candidate_start)
        if match is None:  # the engines disagree (a construct they read differently): skip this position
            pos = candidate_start + 1
            continue
        index = int(match.lastgroup[1:])  # type: ignore[index]  # the branch group closes last
        detector = pass_.detectors[index]
        start, end = _quoted_span(data, match, index)
        if detector.check == "env_line":  # the line's trailing whitespace (and "\r") is not the value's
            end = start + len(data[start:end].rstrip())
        kind, context_free = _judge(detector, match, index, data[start:end])  # judged on the bounded value
        if kind is None and detector.check == "quoted_pair" and assignment_parse is not None:
            # quoted_pair won the tie at this start and rejected: where both start at one byte (the text's start,
            # '"password": "x"' opening an output) quoted_pair leaves plain JSON to the assignment, which cannot
            # start again inside the name, so it is judged here or never. (An environment line's rejection is
            # final: it judged the first word as the assignment would.)
            fallback = assignment_parse(data, candidate_start)
            if fallback is not None:
                match, context_free = fallback, False  # not memoized: two parses read this span
                index = int(match.lastgroup[1:])  # type: ignore[index]
                detector = pass_.detectors[index]
                start, end = _quoted_span(data, match, index)
                kind, _ = _judge(detector, match, index, data[start:end])
        if kind is not None:
            spent += ACCEPT_UNITS
            end = _extended_end(data, match, index, detector, start, end)  # only now: one scan, then consumed
            pieces += (data[last:start], marker(kind, data[start:end]))
            last, count = end, count + 1
            pos = max(end, candidate_start + 1)
            continue
        # No assignment can start inside its name: the search moves on from there.
        resume = max(1, match.start(f"b{index}_name") - candidate_start) if detector.check == "assignment" else 1
        # The key holds the candidate's span (plus a byte each side): a verdict is remembered only when what it
        # read lies inside it. A short finder's hit may be parsed as another, longer branch (a two-column line's
        # "password =" parsed as the assignment "password = var.db_password"): remembered on the short span, that
        # rejection hid "password = \"hunter2-Prod!\"" later in the same process.
        if context_free and key is not None and match.end() <= candidate_end:
            _remember(rejected, key, resume)
        pos = candidate_start + resume
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
