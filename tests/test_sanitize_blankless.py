"""Long text without a blank is searched with narrower scans (``blankless``): the same hits as the whole automata,
hence the same candidates, the same redactions."""

from __future__ import annotations

import random

from bot.sanitize import sanitize_output
from bot.sanitize.any_candidate import _ANY_CANDIDATE, candidate_scan
from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS, DetectorPass, Leftmost
from bot.sanitize.blankless import MIN_BYTES, _twins, blankless, candidate_scanner, finders_for

_RUN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/:@._-"
_PUNCTUATION = "=\"'{}[](),;#$%&!?*<>|~^`\\\n"
# Candidates text without a blank can hold: tokens, an assignment in a URL, JSON, an environment line, a DSN, an AWS
# secret key after "aws", a URL's password; and look-alikes that are rejected.
_PLANTED = ["ghp_" + "a1B2" * 9, "xoxb-1234567890-abcdefghijKLMN", "AKIAIOSFODNN7EXAMPLE", "sk-" + "Zx9q7Lm2" * 5,
            '{"password":"Zx9q7Lm2Pw8Kd3Vb"}', "DB_PASSWORD=Zx9q7Lm2Pw8Kd3Vb\n", "?token=Zx9q7Lm2Pw8Kd3Vb&x=1",
            "postgres://admin:Sup3rS3cret@db:5432/x", "user:Zx9q7Lm2Pw@tcp(db:3306)/app",
            "aws:wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12:", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "token_type=refresh", "password=", "secretName:x", "AccountKey=" + "Q" * 40 + ";",
            "Private-MAC:0123456789abcdef0123\n", "$2y$10$" + "a" * 53, "SUAP" + "Q" * 54]


def _text(rng: random.Random, planted: int) -> bytes:
    alphabet = _RUN + rng.choice(["", _PUNCTUATION, "=\n", '"{}:,'])
    parts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(200, 1400))) for _ in range(8)]
    for _ in range(planted):
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(_PLANTED))
    return "".join(parts).encode()[: rng.randint(MIN_BYTES, 3 * MIN_BYTES)].ljust(MIN_BYTES, b"x")


def _hits(finders: tuple, data: bytes, skip: frozenset[int]) -> list[tuple[int, int, int, bool]]:
    leftmost, hits, pos = Leftmost(finders, data, skip=skip), [], 0
    while (hit := leftmost.find(pos))[0] >= 0:
        hits.append((*hit, leftmost.source, leftmost.ambiguous))
        pos = hit[0] + 1
    return hits


def test_blankless_is_long_ascii_text_without_a_space_or_a_tab() -> None:
    assert blankless(b"QUJD:@._-" * MIN_BYTES) and blankless(b"a=b\n" * MIN_BYTES)
    assert not blankless(b"QUJD" * (MIN_BYTES // 8))  # too short to pay for the narrower scans
    assert not blankless(b"QUJD" * MIN_BYTES + b" x") and not blankless(b"QUJD" * MIN_BYTES + b"\tx")
    assert not blankless("QUJDé".encode() * MIN_BYTES)  # non-ASCII: its bytes are no string of the alphabet's


def test_the_passes_alternations_have_twins_that_replace_their_scan_alone() -> None:
    """The passes' alternations get a twin without their branches that need a blank (an echoed command's prompt,
    aligned columns), a smaller scan; the rest of a twin is the whole automaton's own (finder, searched, proven
    spans, literals), so every candidate and memo entry is the one the whole automaton gives."""
    for pass_ in (TOKEN_PASS, CONTEXT_PASS):
        twins = _twins(id(pass_))
        assert twins.finders[0] is not pass_.finders[0] and id(twins.finders[0]) not in twins.empty
        for twin, whole in zip(twins.finders, pass_.finders, strict=True):
            if twin is whole:
                continue
            assert twin.search.programsize < whole.search.programsize
            assert twin.finder is whole.finder and twin.searched is whole.searched
            assert twin.plain_spans is whole.plain_spans and twin.literals == whole.literals


def test_the_narrower_scans_hit_where_the_whole_automata_hit() -> None:
    """Every pass's search loop meets the same hits (start, end, the automaton that found it, and whether two did)
    with the twins as with the whole automata, and ``candidate_scan`` says the same."""
    rng = random.Random(23)
    found = 0
    for round_ in range(160):
        data = _text(rng, round_ % 4)
        assert blankless(data)
        for pass_ in (TOKEN_PASS, CONTEXT_PASS):
            expected = _hits(pass_.finders, data, frozenset())
            finders, skip = finders_for(pass_, data, frozenset())
            assert _hits(finders, data, skip) == expected, data
            found += len(expected)
        scanners = candidate_scanner(data)
        whole = any(automaton.may_match(data) and automaton.scan_hits(data) for automaton in _ANY_CANDIDATE)
        assert candidate_scan(data)[0] == whole and scanners, data
    assert found > 100  # (the planted candidates were met)


def test_what_the_candidate_scan_found_nothing_of_is_not_searched_again() -> None:
    """The ids ``candidate_scan`` names as missed are the whole automata's: ``finders_for`` says them of the twins."""
    data = b"QUJD:@._-" * MIN_BYTES
    has, missed = candidate_scan(data)
    assert not has and missed
    pass_: DetectorPass
    for pass_ in (TOKEN_PASS, CONTEXT_PASS):
        finders, skip = finders_for(pass_, data, missed)
        assert finders[0] is not pass_.finders[0] and id(finders[0]) in skip
        assert finders_for(pass_, data.replace(b"@", b" "), missed) == (pass_.finders, missed)


def test_a_secret_in_a_long_blankless_run_is_redacted_and_the_rest_kept() -> None:
    rng = random.Random(5)
    run = "".join(rng.choice(_RUN) for _ in range(3 * MIN_BYTES))
    for secret, shown in (("ghp_" + "a1B2" * 9, "[REDACTED:github_token]"),
                          ('"password":"Zx9q7Lm2Pw8Kd3Vb"', '"password":"[REDACTED:password]"'),
                          ("postgres://admin:Sup3rS3cret@db:5432/x", "postgres://admin:[REDACTED:url_password]@db:5432/x")):
        text = run[:MIN_BYTES] + "\n" + secret + "\n" + run[MIN_BYTES:]
        assert blankless(text.encode())
        cleaned = sanitize_output(text.encode(), output_limit=1 << 30).text
        assert cleaned == run[:MIN_BYTES] + "\n" + shown + "\n" + run[MIN_BYTES:]
