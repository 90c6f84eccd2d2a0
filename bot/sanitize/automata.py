"""Where candidates start: the RE2 automata of the two detector passes, built once at import.

Kept apart from the loop that judges candidates (``candidates.py``) because building the automata is a
different job with its own constraints: how the detectors are grouped into automata (a DFA's states multiply
across detectors that keep counters alive at once, so some get an automaton of their own), each automaton's
memory budget, and the leftmost-first merge of their hits (``Leftmost``) that the judging loop consumes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import re2

from bot.sanitize.context_detectors import CONTEXT, PARSER_CHARACTER_RUNS
from bot.sanitize.context_patterns import _NAME as SENSITIVE_NAME
from bot.sanitize.detectors import TOKENS, Detector
from bot.sanitize.literals import Literal, literal_containment
from bot.sanitize.parser_dispatch import FirstByteParsers
from bot.sanitize.parser_rewrites import rewrite

_ANCHOR_START = re2._Anchor.ANCHOR_START
UNANCHORED = re2._Anchor.UNANCHORED

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


# A verdict memo's key: the candidate's bytes and one byte each side, or at an edge of the text, the bytes there
# and whether the candidate starts / ends at that edge (``candidates.run_pass``). What decides "^", "$" and "\\b"
# at a span's ends lies in it (RE2 looks no further around a match).
MemoKey = bytes | tuple[bytes, bool, bool]
# A search loop's verdict memo (key -> where it resumes, relative to the candidate's start) and what charges a
# remembered verdict's unit of its budget (True: spent, within it), for a scan to dismiss (``Automaton.searcher``).
Remembered = tuple[dict[MemoKey, int], Callable[[int], bool]]
# Spans longer than this are no memo key (``candidates.run_pass``), nor a key of ``Automaton``'s span memo.
MEMO_KEY_BYTES = 192
# The most keys a memo holds (then it starts over: bounded memory, and recurring text refills it at once).
MEMO_ENTRIES = 4096


def memo_key(data: bytes, start: int, end: int, length: int) -> MemoKey:
    """The key of span ``start``..``end`` of ``data`` (``length`` bytes) in a verdict or span memo."""
    if start > 0 and end < length:  # a byte on each side: no edge of the text in it
        return data[start - 1 : end + 1]
    low, high = max(0, start - 1), min(length, end + 1)  # at an edge, which decides "^", "$" and "\\b" as a byte would
    return data[low:high], low == start, high == end


@dataclass(frozen=True)
class Automaton:
    """One finder automaton; ``literals`` are in every match (text without one of them is not searched; a tuple among
    them is a choice, present when one of its strings is)."""

    finder: re2._Regexp
    literals: tuple[Literal, ...] = ()
    # The unanchored scan, when some detector has a ``search``: where a finder match may start, without the long
    # value counters (their overlapping threads multiplied RE2's DFA states); ``finder`` is then matched anchored
    # at each hit (one thread, bounded window), which gives the span the unanchored finder would have given.
    search: re2._Regexp | None = None
    # When the scan mixes detectors with a ``search`` and detectors without (a pass's alternation): the searches
    # alone, asked (anchored) whether a hit may be a searched detector's (see ``searcher``).
    searched: re2._Regexp | None = None
    # Scan hits known to be their finder's span (``searcher``): key -> True once proven, False when seen once.
    plain_spans: dict[MemoKey, bool] = field(default_factory=dict, compare=False, repr=False)
    # The finder is the assignment's alone, whose match starts with a boundary then an optionally double-quoted
    # name (``_QUOTED_NAME_HEAD``): a start whose finder match fails before '"' then a name character fails one
    # byte on too (see ``searcher``).
    quoted_name: bool = False

    def __post_init__(self) -> None:
        # RE2's own Match of the scan and of the finder, looked up once (``searcher``'s closures close over them).
        object.__setattr__(self, "_scan", self.search._regexp.Match if self.search is not None else None)
        object.__setattr__(self, "_verify", self.finder._regexp.Match)
        object.__setattr__(self, "_searched", self.searched._regexp.Match if self.searched is not None else None)
        object.__setattr__(self, "_contains", tuple((lit, literal_containment(lit)) for lit in sorted(
            self.literals, key=lambda lit: len(lit) if isinstance(lit, bytes) else 1 << 20)))

    def may_match(self, data: bytes, known: dict[Literal, bool] | None = None) -> bool:
        """Whether every literal is in ``data`` (the one-byte ones first: a missing one answers at once).
        ``known``: what earlier automata's literals said of the same ``data``, added to here (two automata gated by
        one literal, the mid-line columns' five blanks, search the text for it once)."""
        if known is None:
            return all(contains(data) for _, contains in self._contains)  # type: ignore[attr-defined]
        for literal, contains in self._contains:  # type: ignore[attr-defined]
            found = known.get(literal)
            if found is None:
                found = known[literal] = contains(data)
            if not found:
                return False
        return True

    def scan_hits(self, data: bytes, start: int = 0, end: int = -1) -> bool:
        """Whether the unanchored scan (``search``, else ``finder``) hits anywhere in ``data`` (within ``start`` ..
        ``end``, read in the whole text's context: "^" and "\\b" see the bytes around): no finder match without a
        hit, and no anchored match at each hit (``any_candidate.has_candidate`` only asks whether to run the
        passes)."""
        scan = self._scan or self._verify  # type: ignore[attr-defined]
        return bool(scan(UNANCHORED, data, start, len(data) if end < 0 else end)[0][0] >= 0)

    def first(
        self, data: bytes, pos: int, length: int, dismiss: Callable[[int], bool] | None = None
    ) -> tuple[int, int]:
        """(start, end) of the leftmost ``finder`` match at or after ``pos``, (-1, -1) when none (``searcher``)."""
        return self.searcher(data, length, dismiss)(pos)

    def searcher(
        self, data: bytes, length: int, dismiss: Callable[[int], bool] | None = None,
        remembered: Remembered | None = None,
    ) -> Callable[[int], tuple[int, int]]:
        """``find(pos)``: (start, end) of the leftmost ``finder`` match in ``data`` at or after ``pos``, (-1, -1)
        when none. One closure per text, called once per candidate: dense text spends as long in the layers of
        Python around the RE2 search as in the search itself.

        ``dismiss(start)`` True: no candidate of this automaton is wanted at ``start`` (an assignment whose name
        holds no secret), so the scan goes on without matching the finder there.

        A scan hit whose key (``memo_key``) is in ``plain_spans`` as proven is the finder's span without the
        anchored finder match (one RE2 call for a recurring candidate, not two: ``Bearer x`` on every line). Why
        that holds: the scan is the alternation of each detector's ``search``, or its finder when it has none,
        in the finder alternation's order. The scan's span at ``start`` is the first branch that matches there,
        at that branch's preferred end; whether a branch matches ending at ``end`` depends only on the bytes of
        the key. A key is proven where the scan hit and no ``search`` matched at ``start`` at all (``searched``,
        anchored), so the hit was branch k of a detector without a search. Wherever the same key comes back, the
        scan's span is again branch k's (an earlier branch matching would end where k does, within the key, and
        would have matched the first time), so no earlier finder matches there either (a finder match starts
        with its ``search``'s, which would be an earlier scan branch), and branch k's finder is its scan: the
        finder's span is the scan's. A key is proven the second time it is seen (one more anchored call), so
        candidates that never recur cost a dictionary entry, not a call.

        ``remembered``: the caller's verdict memo (key -> where its search resumes, relative to the candidate's
        start) and ``charge(start)`` (True once the unit a remembered verdict costs is spent within its budget):
        a proven span whose key the memo holds is then dismissed here, and the scan goes on from there instead of
        returning the hit (``Leftmost`` passes it only to its last automaton left). The memo is asked directly, so
        a candidate it does not hold (a table's header on every line) costs a lookup, not a call."""
        scan, verify = self._scan, self._verify  # type: ignore[attr-defined]
        if scan is None:
            def plain(pos: int) -> tuple[int, int]:
                return verify(UNANCHORED, data, pos, length)[0]
            return plain
        searched, spans = self._searched, self.plain_spans  # type: ignore[attr-defined]
        memo, charge = remembered if remembered is not None else (None, None)
        quoted_name = self.quoted_name and searched is None  # (no proven span can skip the anchored match there)

        def scanned(pos: int) -> tuple[int, int]:
            while (hit := scan(UNANCHORED, data, pos, length)[0])[0] >= 0:
                start, end = hit
                if dismiss is not None and dismiss(start):
                    pos = start + 1
                    continue
                key: MemoKey | None = None
                if searched is not None and end - start <= MEMO_KEY_BYTES:
                    # memo_key, inline where it can be: this runs once per candidate of dense text
                    inner = start > 0 and end < length
                    key = data[start - 1 : end + 1] if inner else memo_key(data, start, end, length)
                    if spans.get(key):
                        if memo is not None and (resume := memo.get(key)) is not None and charge(start):  # type: ignore[misc]
                            pos = start + resume
                            continue
                        return hit
                span = verify(_ANCHOR_START, data, start, length)[0]
                if span[0] >= 0:
                    if key is not None and span == hit:
                        if len(spans) >= MEMO_ENTRIES:
                            spans.clear()
                        if key not in spans:
                            spans[key] = False  # seen once: proven only if it comes back (below)
                        elif searched(_ANCHOR_START, data, start, length)[0][0] < 0:
                            spans[key] = True
                    return span
                pos = start + 1  # the scan's superset (a quote never closed): no finder match starts here
                if quoted_name and pos + 1 < length and data[pos] == 34 and data[start] not in _NAME_BYTES \
                        and data[pos + 1] in _NAME_BYTES:  # 34: '"'
                    # A boundary, '"' then a name: the failed match read the '"' as the name's opening quote, and
                    # one at the '"' (the boundary then) reads the same name and what follows it, so it fails too.
                    # The scan hits there (the same reasoning), so that start is still offered to ``dismiss`` (its
                    # budget), but neither searched nor matched: a quoted value that never closes
                    # (``token="`` then 257 "x", on one line) cost two scans and two matches, not one each.
                    if dismiss is not None:
                        dismiss(pos)
                    pos += 1
            return -1, -1
        return scanned


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

    Branch i's groups are ``b{i}_<name>`` (its secret ``b{i}_v``), and ``branch_of`` maps each group's name to
    i: the group that closed last (``Match.lastgroup``) is the matched branch's. A branch is not itself a group:
    Python's ``re`` skips an alternative that cannot start at the byte without entering it only when no group
    opens first, and groups around the branches cost a quarter of the parse. The match is the branch's span.
    ``rejected`` is the verdict memo: candidate key -> where the search resumes, relative to its start."""

    finders: tuple[Automaton, ...]
    parser: re.Pattern[bytes]
    detectors: tuple[Detector, ...]
    rejected: dict[MemoKey, int]
    # The index in ``finders`` of the automaton that holds the assignment detector alone (-1: none). A hit of
    # that automaton at a start no other automaton shares (``Leftmost.source``, not ``ambiguous``) is an
    # assignment, whose name is then read by a simple pattern instead of a full parse.
    assignment_automaton: int = -1
    # The assignment branch alone, same group names: where the candidate is an assignment, no other branch can
    # accept there (every finder holds what its detector accepts), so the candidate is parsed by this instead of
    # trying the alternation's branches one by one (a third of a judgement's cost).
    assignment_parser: re.Pattern[bytes] | None = None
    branch_of: dict[str, int] = field(default_factory=dict)
    # ``parser.match`` by the candidate's first byte, of the branches that can start with it (``parser_dispatch``)
    parsers: list[Callable[[bytes, int], re.Match[bytes] | None]] = field(default_factory=list, repr=False)
    # By automaton (its index in ``finders``): the branches of the detectors it holds (one, or a ``group``'s in the
    # pass's order), none for the alternation's and the assignment's (which has ``assignment_parser``). A candidate
    # that only such an automaton found (its ``Leftmost.source``, not ``ambiguous``) is the first of those branches
    # that matches there, when one does: no branch before them can match at that start, since their automata's
    # finders, which hold what they accept, found nothing there. The alternation's branches before it (55 of them for
    # a mid-line aligned name) cost up to 10 us a candidate. Where they fail, the whole parse decides, as before.
    own_branches: tuple[tuple[int, ...], ...] = ()
    # ``FirstByteParsers.alone``: the parser of those branches alone, compiled on first use.
    parse_alone: Callable[[tuple[int, ...]], Callable[[bytes, int], re.Match[bytes] | None]] = field(
        default=lambda branches: _no_parse, repr=False)


def _no_parse(data: bytes, pos: int) -> None:
    return None  # (a pass built without ``own_branches`` never asks)


def _nothing(pos: int) -> tuple[int, int]:
    return -1, -1


class Leftmost:
    """The leftmost hit of several automata from a position on, each automaton searched again only once the
    position passes its last hit (a hit at or after the position is still the leftmost one of that automaton),
    so the text is scanned once per automaton, not once per candidate. An automaton that finds nothing is not
    searched again; when one is left, ``find`` is a plain search (most text: the URL detector finds nothing)."""

    def __init__(
        self, finders: tuple[Automaton, ...], data: bytes, dismiss: Callable[[int], bool] | None = None,
        dismissing: int = -1, remembered: Remembered | None = None, skip: frozenset[int] = frozenset(),
    ) -> None:
        # RE2's own Match, not the wrapper's search (which builds a generator and a match object per call: 9 us
        # against 0.5 us); it returns the spans, (-1, -1) when nothing matched. ``dismiss`` goes to the
        # searcher of automaton ``dismissing`` (see ``Automaton.searcher``), and ``remembered`` to the searcher of
        # the one automaton left (``_narrow``: no other automaton's hit can then come first or share a start).
        self._finders, self._dismiss, self._dismissing, self._remembered = finders, dismiss, dismissing, remembered
        # ``skip``: automata (their ``id``) whose scan is known to find nothing in ``data`` (``candidate_scan``).
        known: dict[Literal, bool] = {}
        self._sources = [i for i, a in enumerate(finders) if id(a) not in skip and a.may_match(data, known)]
        self._data, self._length = data, len(data)
        self._matches = [
            finders[i].searcher(data, self._length, dismiss if i == dismissing else None) for i in self._sources
        ]
        self._hits: list[tuple[int, int]] = [(-1, -1)] * len(self._matches)
        self.hits = self._hits  # read by ``dismiss`` while the last automaton is searched: the others' hits
        self._searched_from = -1
        self.ambiguous = False  # two automata hit at the last start: which branch the one alternation would
        # have chosen there is unknown, so the candidate's span is not a memo key
        self.source = self._sources[0] if len(self._sources) == 1 else -1  # the index of the last hit's automaton
        if len(self._matches) <= 1:
            self._narrow()

    def _narrow(self) -> None:
        """One automaton (or none) is left: ``find`` becomes its search, without the merge, and skips the candidates
        the caller's verdict memo dismisses (``remembered``) inside the scan."""
        find = self._matches[0] if self._matches else _nothing
        if self._matches and self._remembered is not None:
            source = self._sources[0]
            find = self._finders[source].searcher(
                self._data, self._length, self._dismiss if source == self._dismissing else None, self._remembered)
        self.find = find  # type: ignore[method-assign,assignment]

    def find(self, pos: int) -> tuple[int, int]:
        """(start, end) of the leftmost hit at or after ``pos``, (-1, -1) when none. Read again for every search
        (``_narrow`` replaces it once one automaton is left)."""
        hits = self._hits
        first_search = self._searched_from < 0
        self._searched_from = pos
        for i, match in enumerate(self._matches):
            if first_search or 0 <= hits[i][0] < pos:
                hits[i] = match(pos)
        if (-1, -1) in hits:  # never searched again: none from here on
            live = [i for i, hit in enumerate(hits) if hit[0] >= 0]
            self._matches = [self._matches[i] for i in live]
            self._sources = [self._sources[i] for i in live]
            self._hits = self.hits = hits = [hits[i] for i in live]
            self.ambiguous = False
            if len(hits) <= 1:
                self.source = self._sources[0] if hits else -1
                self._narrow()
                return hits[0] if hits else (-1, -1)
        if len(hits) == 2:  # the usual case (a pass's alternation and its assignment), without the generic scans
            first, second = hits
            self.ambiguous = first[0] == second[0]
            self.source = self._sources[0 if first <= second else 1]
            return first if first <= second else second
        best = min(hits)
        self.ambiguous = [hit[0] for hit in hits].count(best[0]) > 1
        self.source = self._sources[hits.index(best)]
        return best


# How the assignment's finder starts (``context_patterns._ASSIGNMENT_HEAD``): the text's start or a boundary (no
# name character), then the name, optionally in double quotes (or in single quotes, both required). Every name
# the finder takes starts with a name character (``finder_name.FINDER_NAME``).
_QUOTED_NAME_HEAD = r"(?:^|[^A-Za-z0-9_.-])(?P<name>\"?"
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _ungrouped(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _groups(detectors: tuple[Detector, ...]) -> list[tuple[tuple[Detector, ...], tuple[Literal, ...]]]:
    """The alternation's detectors, then each ``own_automaton`` detector alone with its literals, or with the
    detectors next to it of its ``group``, in one alternation without literals (in the pass's order, so that at a
    start where two of them match, the first wins as in the pass's parser)."""
    together = tuple(d for d in detectors if not d.own_automaton)
    groups: list[tuple[tuple[Detector, ...], tuple[Literal, ...]]] = [(together, ())] if together else []
    previous: Detector | None = None
    for detector in detectors:
        if detector.own_automaton and detector.group and previous is not None and previous.group == detector.group:
            groups[-1] = ((*groups[-1][0], detector), ())
        elif detector.own_automaton:
            groups.append(((detector,), () if detector.group else detector.literals))
        previous = detector if detector.own_automaton else None
    return groups


def _automata(detectors: tuple[Detector, ...]) -> tuple[Automaton, ...]:
    """The finders of these detectors: one automaton for the alternation, one for each ``own_automaton`` (or
    ``group`` of them)."""
    automata = []
    for group, literals in _groups(detectors):
        searches = tuple(d for d in group if d.search)
        automata.append(Automaton(
            _alternation(group, lambda d: d.finder or d.pattern), literals,
            _alternation(group, lambda d: d.search or d.finder or d.pattern) if searches else None,
            # Only where some detectors have no search: a hit of the others is always matched by its finder.
            _alternation(searches, lambda d: d.search) if searches and len(searches) < len(group) else None,
            quoted_name=len(group) == 1 and group[0].check == "assignment"
            and (group[0].finder or group[0].pattern).startswith(_QUOTED_NAME_HEAD),
        ))
    return tuple(automata)


def _alternation(detectors: tuple[Detector, ...], pattern: Callable[[Detector], str]) -> re2._Regexp:
    return compile_automaton("|".join(f"(?:{_ungrouped(pattern(d))})" for d in detectors))


# After a detector automaton's pattern: an alternative that never matches (a byte, then the text's start), which
# leftmost-first never prefers to the empty one, so every match is the pattern's own, at the same span. It makes the
# program one RE2 cannot run one-pass (the byte conflicts with any continuation), so RE2 keeps no one-pass tables:
# it builds them at compile time for every program that can, up to a quarter of the DFA budget, for anchored
# searches with submatches or on texts of at most 16 bytes, which no detector search is (they ask for spans, on
# whole texts). Those tables were 1 MiB of a ready runner (README, runner RSS); the suffix's thread is cut by the
# match before it in the DFA, and searches ran at the same speed.
_NO_ONE_PASS = "(?:|\\C^)"


def compile_automaton(pattern: str) -> re2._Regexp:
    """A detector automaton: ``pattern`` with ``re2_options``, without RE2's one-pass tables (``_NO_ONE_PASS``)."""
    return re2.compile(f"(?:{pattern}){_NO_ONE_PASS}", re2_options())


def _compile_pass(detectors: tuple[Detector, ...]) -> DetectorPass:
    parts = []
    for index, detector in enumerate(detectors):
        # Rewritten for Python's backtracking (parser_rewrites: the same matches and groups, fewer steps)
        pattern = rewrite(detector.pattern, SENSITIVE_NAME)
        inner = re.sub(r"\(\?P<(\w+)>", lambda m, i=index: f"(?P<b{i}_{m.group(1)}>", pattern)  # type: ignore[misc]
        for run, as_utf8 in PARSER_CHARACTER_RUNS:  # counted in characters, as RE2 counts them
            inner = inner.replace(run, as_utf8)
        parts.append(f"(?:{inner})")
    def compiled(pattern: str) -> re.Pattern[bytes]:
        # Python's "$" also matches before a final newline; RE2's (outside multi-line mode) only at the very end.
        return re.compile(re.sub(r"(?<![\\(:m])\$", r"\\Z", pattern).encode())

    finders = _automata(detectors)
    assignment, assignment_parser = -1, None
    if detectors[-1].check == "assignment" and detectors[-1].own_automaton:
        assignment = len(finders) - 1  # the last detector's own automaton comes last (``_automata``)
        assignment_parser = compiled(parts[-1])
    parser = compiled("|".join(parts))
    branch_of = {name: int(name[1 : name.index("_")]) for name in parser.groupindex}
    # Each own automaton's detectors (``_groups``' order, which ``_automata`` keeps), none for the alternation's
    index_of = {id(d): i for i, d in enumerate(detectors)}
    own_branches = [tuple(index_of[id(d)] for d in group) if group[0].own_automaton else ()
                    for group, _ in _groups(detectors)]
    if assignment >= 0:
        own_branches[assignment] = ()
    dispatch = FirstByteParsers(parts, compiled)
    return DetectorPass(finders=finders, parser=parser, detectors=detectors, rejected={},
                        assignment_automaton=assignment, assignment_parser=assignment_parser, branch_of=branch_of,
                        parsers=dispatch.parsers, own_branches=tuple(own_branches), parse_alone=dispatch.alone)


TOKEN_PASS = _compile_pass(TOKENS)
CONTEXT_PASS = _compile_pass(CONTEXT)
