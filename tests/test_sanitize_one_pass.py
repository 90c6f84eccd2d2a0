"""``automata.compile_automaton`` adds an alternative that never matches, so that RE2 keeps no one-pass tables (1 MiB
of a runner, README "A runner's RSS"): every detector's automaton must still find exactly the spans the bare pattern
finds, unanchored and anchored, on texts shorter than 17 bytes (where RE2 ran the one-pass matcher) and on texts
whose end cuts a match (where the suffix's reversed alternative is read)."""

from __future__ import annotations

import random

import pytest
import re2

from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS, _ungrouped, compile_automaton, re2_options
from tests.corpora.leaks import LEAKS

_PATTERNS = sorted({_ungrouped(pattern) for detector_pass in (TOKEN_PASS, CONTEXT_PASS)
                    for detector in detector_pass.detectors
                    for pattern in (detector.pattern, detector.finder, detector.search) if pattern})


def _texts() -> list[bytes]:
    """The leak corpus as one text, and 600 pieces of it: 300 of at most 16 bytes, 300 cut at a random end."""
    rng = random.Random(11)
    whole = [leak.text.encode() for leak in LEAKS]
    texts = [b"\n".join(whole)]
    for text in rng.sample(whole, 300):
        start = rng.randrange(len(text))
        texts.append(text[start : start + rng.randint(1, 16)])
        texts.append(text[: rng.randint(1, len(text))])
    return texts


_TEXTS = _texts()


def _spans(match: object, anchor: int, text: bytes) -> list[tuple[int, int]]:
    """Every match of an unanchored search, or the anchored match at every start of a short text and at each line's
    start of a longer one."""
    if anchor != re2._Anchor.UNANCHORED:
        starts = range(len(text) + 1) if len(text) <= 16 else [0] + [i + 1 for i, b in enumerate(text) if b == 10]
        return [match(anchor, text, start, len(text))[0] for start in starts]  # type: ignore[operator]
    spans, pos = [], 0
    while pos <= len(text):
        span = match(anchor, text, pos, len(text))[0]  # type: ignore[operator]
        spans.append(span)
        if span[0] < 0:
            break
        pos = max(span[1], span[0] + 1)
    return spans


def test_the_detector_patterns_are_many() -> None:
    assert len(_PATTERNS) > 100 and len(_TEXTS) == 601


@pytest.mark.parametrize("pattern", _PATTERNS, ids=range(len(_PATTERNS)))
def test_an_automaton_without_one_pass_tables_finds_the_same_spans(pattern: str) -> None:
    bare = re2.compile(pattern, re2_options())._regexp.Match
    built = compile_automaton(pattern)._regexp.Match
    for text in _TEXTS:
        for anchor in (re2._Anchor.UNANCHORED, re2._Anchor.ANCHOR_START):
            assert _spans(built, anchor, text) == _spans(bare, anchor, text), (text, anchor)
