"""Narrower scans for long text without a blank: the large alternations' branches that need one are left out.

A long run of base64 and punctuation with no blank (``base64 :@._-`` in ``bench_sanitize.py``, a minified blob, tokens
glued together) is what the passes' two largest scans (the token pass's alternation, ~20k instructions, and the context
pass's, ~37k) build DFA states on for every text they have not seen: a DFA state is the set of the alternation's threads
alive at a byte, and threads of branches that can never match such text (an echoed command's prompt, ``user@host:``
then anything up to a line's end; an aligned name's blank columns) still live there, multiplying the states the others
make. A fresh process cleaned 64 KiB of it at 14-16 MB/s. Here each of those scans has a twin without the branches no
string of ``ALPHABET`` (ASCII without space and tab) can match (``narrow_alphabet.satisfiable``), used for text of
``MIN_BYTES`` or more made of that alphabet only (``finders_for``, ``candidate_scanner``).

Same output by construction: a branch that matches somewhere in such a text matches a string of its bytes, so a
branch left out matches nowhere in it, and the alternation without it hits where the whole one does, with the same
span (leftmost-first: at the leftmost start, the first branch that matches there, which is never one left out). The
twin replaces the scan alone: its finder (the anchored match at each hit), its ``searched`` and its proven spans are the
whole automaton's own objects, so every candidate, memo entry and verdict is what the whole automaton gives.

Built once per process, on the first such text: which branches are left out is read at import (~27 ms of parsing,
nothing kept but the branches' patterns), the two twins are compiled when first needed (~20-30 ms and ~2 MiB, paid by
that first text), so a process that never sees such text (most runners) holds nothing more; text of base64 and line
breaks only is asked with ``narrow_alphabet``'s smaller automata first, and needs the twins only where those hit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from bot.sanitize.automata import (
    CONTEXT_PASS,
    TOKEN_PASS,
    Automaton,
    DetectorPass,
    _groups,
    _ungrouped,
    compile_automaton,
)
from bot.sanitize.narrow_alphabet import satisfiable

# Every ASCII byte but the two blanks: a text of these holds no candidate of a branch that needs a space or a tab.
ALPHABET = bytes(byte for byte in range(128) if byte not in (9, 32))
# Shorter text is cleaned by the whole automata: the states it can build are few, and the twins' compilation is then
# not paid for an output of a few words.
MIN_BYTES = 4 << 10


def blankless(data: bytes) -> bool:
    """Whether ``data`` is ``MIN_BYTES`` or more of ``ALPHABET`` only (ordinary output answers at its first blank)."""
    return len(data) >= MIN_BYTES and b" " not in data and b"\t" not in data and data.isascii()


def _kept_branches(pass_: DetectorPass) -> tuple[tuple[str, ...] | None, ...]:
    """By automaton of ``pass_``: the branches of its scan a string of ``ALPHABET`` can match, when some are not and
    the automaton has a scan of its own (``search``; without one its scan is its finder, which stays whole); None
    where it stays whole, () where no branch can match (then it finds nothing in such text)."""
    kept: list[tuple[str, ...] | None] = []
    for automaton, (group, _) in zip(pass_.finders, _groups(pass_.detectors), strict=True):
        if automaton.search is None:
            kept.append(None)
            continue
        branches = [d.search or d.finder or d.pattern for d in group]
        matching = tuple(branch for branch in branches if satisfiable(branch, ALPHABET))
        kept.append(matching if len(matching) < len(branches) else None)
    return tuple(kept)


_KEPT = {id(TOKEN_PASS): _kept_branches(TOKEN_PASS), id(CONTEXT_PASS): _kept_branches(CONTEXT_PASS)}


@dataclass(frozen=True)
class _Twins:
    """A pass's automata for text without blanks, built once: ``finders`` (each one's twin, or itself, in the same
    position), ``empty`` (the ids in ``finders`` of those that find nothing in such text) and ``renamed`` (each whole
    automaton's id -> the id of what stands in its place)."""

    finders: tuple[Automaton, ...]
    empty: frozenset[int]
    renamed: dict[int, int]


@functools.cache
def _twins(pass_id: int) -> _Twins:
    """The pass's ``_Twins`` (compiled on first use: a process that never cleans such text never compiles them)."""
    whole = TOKEN_PASS.finders if pass_id == id(TOKEN_PASS) else CONTEXT_PASS.finders
    finders: list[Automaton] = []
    for automaton, kept in zip(whole, _KEPT[pass_id], strict=True):
        finders.append(automaton if not kept else Automaton(
            automaton.finder, automaton.literals,
            compile_automaton("|".join(f"(?:{_ungrouped(branch)})" for branch in kept)),
            automaton.searched, automaton.plain_spans, automaton.quoted_name))
    return _Twins(tuple(finders), frozenset(id(f) for f, kept in zip(finders, _KEPT[pass_id], strict=True)
                                            if kept == ()),
                  {id(w): id(f) for w, f in zip(whole, finders, strict=True)})


@functools.cache
def _scanners() -> dict[int, Automaton | None]:
    """``candidate_scanner``'s map, built once."""
    scanners: dict[int, Automaton | None] = {}
    for pass_ in (TOKEN_PASS, CONTEXT_PASS):
        twins = _twins(id(pass_))
        for twin, whole in zip(twins.finders, pass_.finders, strict=True):
            if id(twin) in twins.empty:
                scanners[id(whole)] = None
            elif twin is not whole:
                scanners[id(whole)] = twin
    return scanners


def finders_for(
    pass_: DetectorPass, data: bytes, skip: frozenset[int]
) -> tuple[tuple[Automaton, ...], frozenset[int]]:
    """The automata ``run_pass`` searches ``data`` with, and the ids of those it need not search (``skip``, the ids of
    ``pass_.finders`` that found nothing in it, said of the automata returned): ``pass_.finders`` and ``skip``, or for
    text without blanks (``blankless``) each one's twin in its place (same positions: the pass's indices hold)."""
    if not blankless(data):
        return pass_.finders, skip
    twins = _twins(id(pass_))
    if not skip:
        return twins.finders, twins.empty
    renamed = twins.renamed  # (``skip`` names both passes' automata: only this pass's are kept)
    return twins.finders, twins.empty.union(renamed[whole] for whole in skip if whole in renamed)


def candidate_scanner(data: bytes) -> dict[int, Automaton | None]:
    """For ``any_candidate.candidate_scan``: by id of a pass automaton, what scans ``data`` in its place (its twin, or
    None when it finds nothing there); empty for text with blanks (each scans itself)."""
    return _scanners() if blankless(data) else {}
