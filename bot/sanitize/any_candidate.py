"""Whether a text may hold a candidate of either pass at all: the scan that runs before the passes.

Most output holds no candidate, and then the passes need not run: one scan of the text with each automaton the
passes search with (``automata``), which also names the automata that found nothing, so that the passes do not scan
the text with them again. Kept apart from ``automata.py`` (which builds the automata) because of the shortcuts for
text whose shape the large alternations are slow on: text of base64 and line breaks only (``narrow_alphabet``) and
text holding long base64 regions, a CA bundle (``base64_regions``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS, Automaton, _groups, _ungrouped, compile_automaton
from bot.sanitize.base64_regions import crosses_edge, regions
from bot.sanitize.blankless import candidate_scanner
from bot.sanitize.literals import Literal, literal_strings
from bot.sanitize.narrow_alphabet import ALPHABETS, alphabet_of, satisfiable

# Whether either pass may find a candidate: the passes' own scans (a superset of their finders, so a hit the
# finder would refuse only runs the passes for nothing), the assignment's first (the likeliest to hit at once in
# logs), then the others apart, then the alternations. One automaton over both passes' alternations (what this was)
# multiplied their DFA states instead of adding them: on random base64 it built states for every text it had not
# seen (8 KiB at 5 MB/s, fresh 1 MiB at half the speed of the passes' automata), and it held DFA budgets of its
# own. Searched with the passes' automata, the states this scan builds are the ones the passes then use.
_ANY_CANDIDATE = tuple(sorted(
    (*TOKEN_PASS.finders, *CONTEXT_PASS.finders),
    key=lambda a: (a is not CONTEXT_PASS.finders[CONTEXT_PASS.assignment_automaton], not a.literals),
))


def _scan_branches(automaton: Automaton) -> list[str]:
    """The branches of an automaton's scan (``automata._automata``: each detector's search, else its finder, else its
    pattern)."""
    return [d.search or d.finder or d.pattern for d in _GROUPS[id(automaton)]]


def _narrowed(alphabet: bytes) -> dict[int, Automaton]:
    """Each automaton of ``_ANY_CANDIDATE`` (by ``id``) cut down to the branches of its scan that can match a string
    of ``alphabet``'s bytes (``narrow_alphabet.satisfiable``), with its literals; an automaton left with none, or
    with a literal such a string cannot hold, is left out. In a text of those bytes these hit wherever
    ``_ANY_CANDIDATE`` hits: a scan's hit is one branch's match, made of the text's bytes."""
    narrowed = {}
    for automaton in _ANY_CANDIDATE:
        if any(all(set(choice) - set(alphabet) for choice in literal_strings(literal))
               for literal in automaton.literals):  # (a choice no such string can hold: none of its strings)
            continue
        kept = [branch for branch in _scan_branches(automaton) if satisfiable(branch, alphabet)]
        if kept:
            narrowed[id(automaton)] = Automaton(
                compile_automaton("|".join(f"(?:{_ungrouped(b)})" for b in kept)), automaton.literals)
    return narrowed


_GROUPS = {id(automaton): group for pass_ in (TOKEN_PASS, CONTEXT_PASS)
           for automaton, (group, _) in zip(pass_.finders, _groups(pass_.detectors), strict=True)}
_NARROWED = tuple(_narrowed(alphabet) for alphabet in ALPHABETS)
# ``candidate_scan``'s automata for a text of each of ``narrow_alphabet.ALPHABETS``, in ``_ANY_CANDIDATE``'s order.
_NARROW_CANDIDATE = tuple(tuple(by_id[id(a)] for a in _ANY_CANDIDATE if id(a) in by_id) for by_id in _NARROWED)


@dataclass(frozen=True)
class _RegionSplit:
    """How one automaton of ``_ANY_CANDIDATE`` is asked whether it hits in a text with base64 regions
    (``base64_regions``): ``narrowed`` (its branches that can match inside a region, None when none can) over the
    whole text, itself over the gaps between the regions, and ``crossing`` (its other branches that may match across
    a region's edge, None when none may) over the whole text. ``whole``: every branch may cross, so the automaton
    itself scans the whole text, as without regions."""

    narrowed: Automaton | None
    crossing: Automaton | None
    whole: bool

    def hits(self, automaton: Automaton, data: bytes, gaps: list[tuple[int, int]]) -> bool:
        if self.whole:
            return automaton.scan_hits(data)
        if self.narrowed is not None and self.narrowed.scan_hits(data):
            return True
        if self.crossing is not None and self.crossing.scan_hits(data):
            return True
        return any(automaton.scan_hits(data, start, end) for start, end in gaps)


@functools.cache
def _region_splits(indented: bool = False) -> dict[int, _RegionSplit]:
    """Each automaton's ``_RegionSplit`` for regions that may be ``indented`` (``base64_regions.regions``), built
    on the first text with such regions (reading every branch costs ~50 ms, which a process that never meets a PEM
    body need not pay at import)."""
    # A region is a string of ALPHABETS[0]'s bytes, and of spaces too where it is indented.
    alphabet = ALPHABETS[0] + b" " if indented else ALPHABETS[0]
    inside = _narrowed(alphabet) if indented else _NARROWED[0]
    splits = {}
    for automaton in _ANY_CANDIDATE:
        narrowed = inside.get(id(automaton))
        branches = _scan_branches(automaton)
        crossing = [b for b in branches
                    if not (narrowed is not None and satisfiable(b, alphabet)) and crosses_edge(b, indented)]
        whole = len(crossing) == len(branches)
        splits[id(automaton)] = _RegionSplit(
            narrowed, None if whole or not crossing else Automaton(
                compile_automaton("|".join(f"(?:{_ungrouped(b)})" for b in crossing)), automaton.literals),
            whole)
    return splits


# Regions must cover at least this share of a text for the split to pay (each gap costs every automaton a call).
_REGION_SHARE = 4


def has_candidate(data: bytes) -> bool:
    """Whether either pass may find a candidate in ``data`` (False: it finds none)."""
    return candidate_scan(data)[0]


def candidate_scan(data: bytes) -> tuple[bool, frozenset[int]]:
    """``has_candidate``, and the automata (their ``id``) it found nothing of (a literal of theirs missing, or scanned
    in full without a hit): a pass that searches the same bytes need not scan them again (``Leftmost``'s ``skip``).
    Text with a candidate of one pass only (``Bearer x`` on every line) had the other pass's automata and the
    assignment's scanned twice over the whole text, 7% of its cleaning; the literals asked twice cost 3-5% more.
    A text of base64 and line breaks only is first scanned with the branches that can match there
    (``_NARROW_CANDIDATE``): the passes' large automata built DFA states on every fresh line of it."""
    alphabet = alphabet_of(data)
    if alphabet >= 0 and not any(a.may_match(data) and a.scan_hits(data) for a in _NARROW_CANDIDATE[alphabet]):
        # Text of base64 and line breaks only, where no branch that can match such text hits: none hits. (Nothing
        # is named as missed: with no candidate, the passes do not search these bytes.)
        return False, frozenset()
    spans, indented = regions(data) if alphabet < 0 else ([], False)
    if spans and sum(end - start for start, end in spans) * _REGION_SHARE >= len(data):
        return _scan_with_regions(data, spans, indented)
    missed: list[int] = []
    known: dict[Literal, bool] = {}
    scanners = candidate_scanner(data)  # text without blanks: narrower scans, the same hits (``blankless``)
    for automaton in _ANY_CANDIDATE:
        scanner = scanners.get(id(automaton), automaton)
        if scanner is not None and automaton.may_match(data, known) and scanner.scan_hits(data):
            return True, frozenset(missed)
        # (one whose literals are not all in the text finds nothing either: the passes need not look for them again)
        missed.append(id(automaton))
    return False, frozenset(missed)


def _scan_with_regions(
    data: bytes, spans: list[tuple[int, int]], indented: bool
) -> tuple[bool, frozenset[int]]:
    """``candidate_scan`` of a text with base64 regions (``spans``): each automaton asked as ``_RegionSplit`` says,
    which finds a hit wherever the automaton's scan of the whole text would (``base64_regions``), without the large
    alternations reading the regions (on a CA bundle they built DFA states on every fresh line: 4.7 MB/s)."""
    gaps, last = [], 0
    for start, end in spans:
        gaps.append((last, start))
        last = end
    gaps.append((last, len(data)))
    gaps = [(start, end) for start, end in gaps if end > start]
    splits = _region_splits(indented)
    missed: list[int] = []
    known: dict[Literal, bool] = {}
    for automaton in _ANY_CANDIDATE:
        if automaton.may_match(data, known) and splits[id(automaton)].hits(automaton, data, gaps):
            return True, frozenset(missed)
        missed.append(id(automaton))
    return False, frozenset(missed)
