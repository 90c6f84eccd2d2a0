"""The pass's parser chosen by the candidate's first byte: only the branches that can start with that byte.

Python's ``re`` tries an alternation's branches in order and enters each one (a branch that opens a group is
entered even when its first character cannot match), so a candidate of the 37th branch (an environment line)
paid for the 36 before it: about a third of its parse. A branch whose match must start with a character other
than the candidate's first byte cannot match there, so leaving it out keeps the parse: the same first branch
that matches, in the same order, with the same groups (``parser_rewrites.first_characters`` gives a superset of
each branch's first characters, and a branch that may match the empty string is kept for every byte).

Built lazily: compiling an alternation costs milliseconds, and a process meets few first bytes (a newline, a
blank, a quote...), so each byte's parser is compiled when a candidate first starts with it, once per set of
branches, and kept for the process.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.parser_rewrites import first_characters

Parse = Callable[[bytes, int], "re.Match[bytes] | None"]


class FirstByteParsers:
    """``parsers[byte]``: the ``match`` of the alternation of the branches that can start with ``byte``."""

    def __init__(self, parts: list[str], compile_: Callable[[str], re.Pattern[bytes]]) -> None:
        self._parts, self._compile = parts, compile_
        self._by_branches: dict[tuple[int, ...], Parse] = {}
        self._starts: list[tuple[frozenset[int], bool]] | None = None
        self.parsers: list[Parse] = [self._first_use(byte) for byte in range(256)]

    def alone(self, branches: tuple[int, ...]) -> Parse:
        """``match`` of these branches alone, in their order (same group names): for a candidate that only their
        own automaton found (``candidates.run_pass``). Compiled on first use and kept, as the others."""
        parse = self._by_branches.get(branches)
        if parse is None:
            parse = self._by_branches[branches] = self._compile("|".join(self._parts[i] for i in branches)).match
        return parse

    def _first_use(self, byte: int) -> Parse:
        def build(data: bytes, pos: int) -> re.Match[bytes] | None:
            parse = self.parsers[byte] = self._parser_for(byte)
            return parse(data, pos)
        return build

    def _parser_for(self, byte: int) -> Parse:
        if self._starts is None:
            self._starts = [first_characters(part) for part in self._parts]
        branches = tuple(i for i, (first, empty) in enumerate(self._starts) if empty or byte in first)
        parse = self._by_branches.get(branches)
        if parse is None:
            # a byte no branch can start with: an alternation that never matches (the parser as a whole would not)
            alternation = "|".join(self._parts[i] for i in branches) if branches else "(?!)"
            parse = self._by_branches[branches] = self._compile(alternation).match
        return parse
