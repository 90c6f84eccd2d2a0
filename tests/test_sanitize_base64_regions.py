"""A text with long base64 regions (a CA bundle) is asked for candidates region by region (``base64_regions``,
``any_candidate._scan_with_regions``): every automaton must hit exactly where its scan of the whole text hits, and
the output must be what the whole scan gives."""

from __future__ import annotations

import itertools
import random

import pytest

from bench.compare_sanitize import _PLANTS
from bot.sanitize import sanitize_output
from bot.sanitize.any_candidate import _ANY_CANDIDATE, _region_splits, candidate_scan
from bot.sanitize.base64_regions import MIN_REGION, crosses_edge, regions
from tests.corpora.accept3_long import certificate_bundle

_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@pytest.mark.parametrize(("pattern", "expected"), [
    ("-\nb", True), ("b\n", True), ("a\nb", True), (r"x\s*y", True), ("[^x]{0,9}b", True),
    (r"-\s{0,4}[A-Za-z]{20}", True), (r"[^\s]+\s+:", True), ("\nb", True), ("(?s:x.y)", True), ("[", True),
    ("(?<=a)b", True), (r"=\s{0,4}[A-Za-z]{20}", False), (":\nb", False), ("x\nb", True),
    ("ghp_[a-z]{3}\n", False), (r"(?:[^A-Za-z0-9_-])?ghp_[A-Za-z0-9]{30}", False), (r"x[ \t]*y", False),
    ("a+", False), (r"\n[ \t]{1,4}b", False), ("x.y", False), (r"key:\n-", False), ("(?i:k)ey=", False),
])
def test_crosses_edge_says_no_only_where_no_match_can_cross_a_region_edge(pattern: str, expected: bool) -> None:
    assert crosses_edge(pattern) is expected
    assert crosses_edge(pattern, indented=True) or not expected  # (an indented region's edges: more may cross)


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"-\n[ \t]{1,4}b", True), (" b", True), ("x-\n  b", True), ("a\n", True), (r"x[ \t]*y", False),
    (r"\n[ \t]{1,4}b", True), ("x:\n  b", False), ("x: |-\n  b", True),
    ("x = b", False), ("(?:[^A-Za-z0-9_-])?ghp_[A-Za-z0-9]{30}", False), ("a+", False),
])
def test_an_indented_regions_edge_is_crossed_after_a_break_and_spaces(pattern: str, expected: bool) -> None:
    assert crosses_edge(pattern, indented=True) is expected


def _brute_force_crosses(pattern: str, strings: list[str], indented: bool) -> bool:
    """Whether ``pattern`` matches one of ``strings`` with a region's edge inside the match: the region being a
    line's base64 bytes after the line's break (or the string's start) and, when ``indented``, its spaces."""
    import re

    compiled = re.compile(pattern)
    for text in strings:
        for start in range(len(text) + 1):
            for end in range(start, len(text) + 1):
                piece = text[start:end]
                if compiled.fullmatch(piece) is None:
                    continue
                if any(_crosses(text, start, end, s, e) for s, e in _regions_of(text, indented)):
                    return True
    return False


def _regions_of(text: str, indented: bool) -> list[tuple[int, int]]:
    """Runs of base64 lines (after spaces, when ``indented``) that follow a line ending with "-" (a BEGIN line) and
    lines of nothing (or of spaces, when ``indented``) after it."""
    found: list[tuple[int, int]] = []
    armed, region, pos = False, None, 0
    for line in text.split("\n"):
        body = line.lstrip(" ") if indented else line
        if (armed or region is not None) and body and all(c in _BASE64 for c in body):
            start = pos + len(line) - len(body)
            region = (region[0] if region is not None else start, pos + len(line))
        else:
            if region is not None:
                found.append(region)
            region = None
            armed = (armed and not body and line == body or armed and indented and not body) or line.endswith("-")
        pos += len(line) + 1
    if region is not None:
        found.append(region)
    return found


def _crosses(text: str, start: int, end: int, region_start: int, region_end: int) -> bool:
    inside = start < region_end and end > region_start
    return inside and (start < region_start or end > region_end)


def test_crosses_edge_agrees_with_brute_force_on_short_patterns() -> None:
    """No pattern it calls safe matches across an edge of a region, on every string of a small alphabet."""
    alphabet = ["a", "\n", ":", " ", "-"]
    strings = ["".join(p) for n in range(1, 6) for p in itertools.product(alphabet, repeat=n)]
    patterns = ["a", "a+", ":a", "a:", "\na", "a\n", ":\na", "a\n:", r"\s*a", "a{2}\n", ":[^:]", "=[ \n]?a",
                "(?:a|:)\n", "a|:", ":\n:", r"\w\n", "[^a]a", "a[^a]", "(?:\n:)+a", ":{1,3}", " a", ": a",
                "\n a", "\n {1,2}a", "a \n", " +a\n", ":[ \t]*a", "-\na", "-\n a", "[-:]\n a", "-\n\na:",
                "[^a]\n[ \n]*a+", "a-\n"]
    for indented in (False, True):
        for pattern in patterns:
            if _brute_force_crosses(pattern, strings, indented):
                assert crosses_edge(pattern, indented), (pattern, indented)


def test_regions_are_the_pem_bodies_base64_lines() -> None:
    body = "\n".join(["QUJD" * 16] * 12)
    text = f"# CA\n-----BEGIN CERTIFICATE-----\n{body}\nQUJD==\n-----END CERTIFICATE-----\n".encode()
    ((start, end),), indented = regions(text)
    assert text[start:end] == body.encode() and end - start >= MIN_REGION and not indented
    assert regions(text.replace(b"\n", b"\r\n")) == ([], False)  # a line holds "\r": no base64 line
    assert regions(text.replace(b"-----BEGIN", b"-----BEG1N")) == ([], False)
    short = "\n".join(["QUJD" * 16] * 2)
    assert regions(f"-----BEGIN X-----\n{short}\n-----END X-----\n".encode()) == ([], False)
    pgp = f"-----BEGIN PGP MESSAGE-----\nVersion: 1\n\n{body}\n-----END PGP MESSAGE-----\n".encode()
    assert regions(pgp) == ([], False)  # (its armour header's ":" comes first: no region is looked for after)


def test_an_indented_pem_bodys_region_starts_after_its_first_lines_indentation() -> None:
    """``kubectl get cm kube-root-ca.crt -o yaml``: the body's lines are indented; the region holds their spaces
    (not the first line's), and ends before a line that is not base64 after spaces."""
    lines = ["    " + "QUJD" * 16] * 12
    text = ("data:\n  ca.crt: |\n    -----BEGIN CERTIFICATE-----\n" + "\n".join(lines)
            + "\n    QUJD==\n    -----END CERTIFICATE-----\n").encode()
    ((start, end),), indented = regions(text)
    assert indented and text[start:end] == "\n".join(lines).encode()[4:]
    gapped = ("    -----BEGIN CERTIFICATE-----\n" + "\n".join(lines[:9]) + "\n    \n" + "\n".join(lines[9:])
              + "\n    -----END CERTIFICATE-----\n").encode()
    ((start, end),), _ = regions(gapped)  # (a line of spaces ends the region)
    assert gapped[start:end] == "\n".join(lines[:9]).encode()[4:]


def _bundle_with(plant: str, spot: int, rng: random.Random, indent: str = "") -> bytes:
    blocks = []
    for number in range(3):
        lines = ["".join(rng.choice(_BASE64) for _ in range(64)) for _ in range(12)]
        before, begin, end, after = "# Root CA", "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----", ""
        if number == 1:
            if spot == 0:
                before = plant
            elif spot == 1:
                begin += plant
            elif spot == 2:
                lines.insert(rng.choice((0, len(lines), 5)), plant)
            elif spot == 3:
                where = rng.choice((0, 5, 11))
                lines[where] = plant + lines[where]
            elif spot == 4:
                lines[rng.choice((0, 5, 11))] += plant
            elif spot == 5:
                end = plant + end
            else:
                after = plant
        blocks.append("\n".join(indent + line for line in (before, begin, *lines, end, after)))
    return "\n".join(blocks).encode()


def test_each_automaton_hits_where_its_whole_scan_hits_with_a_candidate_at_every_edge() -> None:
    """One plant (a token of base64 bytes, a name whose value may start on the body's first line, padding...) at
    each place of a bundle's middle block, the bundle indented or not: every automaton's region split says what its
    whole scan says, and the candidate scan's answer and missed automata are the whole scan's."""
    rng = random.Random(7)
    checked = 0
    for plant, spot, indent in itertools.product(_PLANTS, range(7), ("", "    ")):
        text = _bundle_with(plant.replace("\\r", "\r"), spot, rng, indent)
        spans, indented = regions(text)
        if not spans:
            continue
        splits = _region_splits(indented)
        gaps, last = [], 0
        for start, end in spans:
            gaps.append((last, start))
            last = end
        gaps.append((last, len(text)))
        for automaton in _ANY_CANDIDATE:
            if automaton.may_match(text):
                whole = automaton.scan_hits(text)
                assert splits[id(automaton)].hits(automaton, text, gaps) == whole, (plant, spot)
        missed, found = [], False
        for automaton in _ANY_CANDIDATE:
            if automaton.may_match(text) and automaton.scan_hits(text):
                found = True
                break
            missed.append(id(automaton))
        assert candidate_scan(text) == (found, frozenset(missed)), (plant, spot)
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("secret", ["AKIAIOSFODNN7EXAMPLE", "DB_PASSWORD=hunter2x"])
def test_a_secret_in_a_ca_bundle_is_redacted(secret: str) -> None:
    bundle = certificate_bundle(16 << 10, 3)
    assert regions(bundle.encode())[0]
    lines = bundle.split("\n")
    lines.insert(20, secret)
    text = "\n".join(lines)
    cleaned = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert "[REDACTED:" in cleaned and "AKIAIOSFODNN7EXAMPLE" not in cleaned and "hunter2x" not in cleaned
    assert sanitize_output(bundle.encode(), output_limit=1 << 30).text == bundle  # public certificates stay
