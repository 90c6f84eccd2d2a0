"""Text made of base64 and line breaks only is asked for candidates with the branches that can match there
(``narrow_alphabet``, ``any_candidate._NARROW_CANDIDATE``): it must find every candidate the passes' automata find,
and redact what they redact."""

from __future__ import annotations

import base64
import random

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.any_candidate import _ANY_CANDIDATE, _NARROW_CANDIDATE, candidate_scan
from bot.sanitize.narrow_alphabet import ALPHABETS, alphabet_of, satisfiable

_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@pytest.mark.parametrize(("pattern", "expected"), [
    ("abc", True), ("a b", False), ("(?i:A)", True), ("[^A-Za-z0-9+/\n\r]", False), ("[^A-Za-z0-9+/\r]", True),
    ("x[ \t]{0,4}y", True), ("x[ \t]{1,4}y", False), ("(?:a|:)b", True), ("(?:-|:)b", False), (r"\s", True),
    (r"[^\S\n\r]", False), (r"\W", True), (r"a\b=", False), ("(?m:^)a", True), ("=", False), ("x*=?y", True),
    ("[\u2100-\u2200]", False), ("(?i:[\u2100-\u2200])", True), ("(?i:\u212a)", True), ("(?i:[^a-z])", True),
    ("(?P<v>a{3,})", True), ("(?P<v>:{3,})", False), ("(?<=:)a", True), (r"(a)\1", True), ("[", True),
])
def test_satisfiable_says_no_only_where_no_string_of_the_alphabet_matches(pattern: str, expected: bool) -> None:
    assert satisfiable(pattern, ALPHABETS[0]) is expected
    assert satisfiable("=", ALPHABETS[1])


def test_alphabet_of_names_the_narrowest_alphabet_that_holds_the_text() -> None:
    assert alphabet_of(b"QUJD\r\nREVG\n") == 0 and alphabet_of(b"QUJD\nREVG==\n") == 1
    assert alphabet_of(b"") == alphabet_of(b"QUJD REVG") == alphabet_of(b"QUJD" * 100 + b":") == -1


def test_the_narrow_automata_are_the_small_ones() -> None:
    """What makes base64 fast: the passes' large alternations (tens of thousands of instructions, whose DFA built
    states on every fresh line of base64) are not among them."""
    largest = max(automaton.finder.programsize for automaton in _ANY_CANDIDATE)
    for narrowed in _NARROW_CANDIDATE:
        assert narrowed and max(automaton.finder.programsize for automaton in narrowed) < largest // 5


def _full_scan(data: bytes) -> bool:
    return any(automaton.may_match(data) and automaton.scan_hits(data) for automaton in _ANY_CANDIDATE)


# Candidates a text of base64 and line breaks can hold: tokens with no separator, an AWS secret key after "aws" on
# the line before, a bearer token after a line break, an Azure storage key's "==", an assignment of "=".
_PLANTED = ["AKIAIOSFODNN7EXAMPLE", "SK" + "0123456789abcdef" * 2, "dapi" + "0123456789abcdef" * 2,
            "AIza" + "A" * 35, "aws\n" + "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12", "Bearer\n" + "Zx9q7Lm2Pw8Kd3Vb",
            "authorization\nbasic", "Q" * 86 + "==", "password=Zx9q7Lm2Pw8", "DB_PASSWORD=hunter2x",
            "ATATT3" + "a1" * 20, "GR1348941" + "b" * 24]


def test_every_candidate_of_the_passes_automata_is_found_in_base64_text() -> None:
    rng = random.Random(11)
    for round_ in range(600):
        lines = ["".join(rng.choice(_BASE64) for _ in range(rng.randint(0, 70))) for _ in range(rng.randint(1, 6))]
        if round_ % 2:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(_PLANTED))
        if round_ % 3 == 0:
            lines[-1] += "=" * rng.randint(1, 2)
        text = rng.choice(["\n", "\r\n", "+", "/", ""]).join(lines).encode()
        if alphabet_of(text) < 0:
            continue
        assert candidate_scan(text)[0] == _full_scan(text), text


_AZURE_STORAGE_KEY = "OLTmUuRNp/I3DZ4mDicTZVCko6bQf1wMMy+LEiQIP9IrkC+JEegYGPjJnV1dmDGVdQTZDpRd4uj1TueBzHX2Ng=="


@pytest.mark.parametrize("secret", ["AKIAIOSFODNN7EXAMPLE", _AZURE_STORAGE_KEY, "password=Zx9q7Lm2Pw8"])
def test_a_secret_in_base64_lines_is_redacted(secret: str) -> None:
    body = base64.b64encode(random.Random(3).randbytes(3000)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    lines.insert(20, secret)
    text = "\n".join(lines) + "\n"
    assert alphabet_of(text.encode()) >= 0
    cleaned = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert secret not in cleaned and "[REDACTED:" in cleaned
    assert cleaned.replace(cleaned.splitlines()[20] + "\n", "") == text.replace(secret + "\n", "")
