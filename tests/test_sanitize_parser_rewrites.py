"""The candidate parser's rewrites (``parser_rewrites``) and its parsers by first byte (``parser_dispatch``): every
match and every group span as the detectors' own patterns give them, and no rewrite where the checks cannot show
that (issue #11, envspeed)."""

from __future__ import annotations

import dataclasses
import random
import re

from bench.compare_sanitize import generated_lines
from bot.sanitize import sanitize_output
from bot.sanitize.assignment_screen import _hinted, _plain_word
from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS
from bot.sanitize.context_detectors import CONTEXT, PARSER_CHARACTER_RUNS
from bot.sanitize.context_patterns import _NAME
from bot.sanitize.detectors import TOKENS
from bot.sanitize.parser_rewrites import first_characters, guard_names, lazy_names, possessive_blanks, rewrite
from tests.corpora.leaks import LEAKS


def _plain_parser(detectors: tuple) -> re.Pattern[bytes]:  # type: ignore[type-arg]
    """The pass's parser as it was built before the rewrites: the detectors' patterns as written."""
    parts = []
    for index, detector in enumerate(detectors):
        inner = re.sub(r"\(\?P<(\w+)>", lambda m, i=index: f"(?P<b{i}_{m.group(1)}>", detector.pattern)  # type: ignore[misc]
        for run, as_utf8 in PARSER_CHARACTER_RUNS:
            inner = inner.replace(run, as_utf8)
        parts.append(f"(?:{inner})")
    return re.compile(re.sub(r"(?<![\\(:m])\$", r"\\Z", "|".join(parts)).encode())


def _texts() -> list[bytes]:
    rng = random.Random(3)
    lines = generated_lines(3000)
    texts = [leak.text.encode() for leak in LEAKS]
    texts += ["\n".join(lines[i : i + 40]).encode() for i in range(0, len(lines), 40)]
    # names longer than the bounded pattern takes, words late in a name, runs of name characters, separators
    values = ("a;b", "hunter2", "", '"q"', "x")
    for _ in range(300):
        name = "".join(rng.choice("aZ_.-9") for _ in range(rng.randrange(0, 60))) + rng.choice(
            ("PASSWORD", "token", "_KEY", "apiKey", "auth", "AUTH_1", "secret", "x")) + "".join(
            rng.choice("aZ_.-9") for _ in range(rng.randrange(0, 50)))
        texts.append(f"\n{rng.choice(('', '+', '- ', '> '))}{name}{rng.choice(('=', ' = ', ': ', '=x', ' :'))}"
                     f"{rng.choice(values)}\n".encode())
    return texts


def _same(a: re.Match[bytes] | None, b: re.Match[bytes] | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.span() == b.span() and a.lastgroup == b.lastgroup and all(
        a.span(name) == b.span(name) for name in a.re.groupindex)


def test_the_rewritten_parsers_match_as_the_detectors_patterns_do_at_every_start() -> None:
    for pass_, detectors in ((CONTEXT_PASS, CONTEXT), (TOKEN_PASS, TOKENS)):
        plain = _plain_parser(detectors)
        assert plain.pattern != pass_.parser.pattern or pass_ is TOKEN_PASS  # the context pass is rewritten
        matched = 0
        for text in _texts():
            for start in range(len(text)):
                ours, theirs = pass_.parser.match(text, start), plain.match(text, start)
                assert _same(ours, theirs), (text, start)
                # the parser of the branches that can start with this byte (parser_dispatch), as the run uses it
                assert _same(pass_.parsers[text[start]](text, start), theirs), (text, start)
                matched += ours is not None
        assert matched > (1000 if pass_ is CONTEXT_PASS else 100)


def test_the_parser_of_every_first_byte_matches_as_the_plain_parser_does() -> None:
    # A candidate may start with any byte: the AWS key's "(?:^|[^A-Z0-9])" starts one at a lower-case letter
    # ("idxAKIA..."), which a case-closed reading of the negated class left out of the branch's first characters.
    samples = [leak.text.encode() for leak in LEAKS] + [b"AKIAIOSFODNN7EXAMPL2 ", b"ghp_" + b"a1B2" * 9 + b" "]
    for pass_, detectors in ((CONTEXT_PASS, CONTEXT), (TOKEN_PASS, TOKENS)):
        plain = _plain_parser(detectors)
        for byte in range(256):
            for sample in samples:
                text = bytes([byte]) + sample
                assert _same(pass_.parsers[byte](text, 0), plain.match(text, 0)), text


def test_a_key_glued_to_a_lower_case_letter_is_redacted() -> None:
    done = sanitize_output(b"idxAKIAIOSFODNN7EXAMPL2 done", output_limit=1 << 20)
    assert b"AKIAIOSFODNN7EXAMPL2" not in done.text.encode() and done.redactions == 1


def test_a_name_whose_end_is_not_forced_keeps_its_greedy_lead() -> None:
    # "value" after the name may start with a name character ("name: DB_PASSWORDvalue: x"): left alone
    env_value = next(d for d in CONTEXT if d.check == "env_pair").pattern
    assert lazy_names(env_value, _NAME) == env_value
    assert lazy_names(f"(?P<name>{_NAME})x", _NAME) == f"(?P<name>{_NAME})x"  # a name character follows
    assert lazy_names(f"(?P<name>{_NAME})=?", _NAME) == f"(?P<name>{_NAME})=?"  # the match may end there
    assert lazy_names(f"(?:(?P<name>{_NAME}))+=", _NAME) == f"(?:(?P<name>{_NAME}))+="  # a repeated group
    assert "{0,40}?" in lazy_names(f"(?P<name>{_NAME})=", _NAME)
    assert "{0,40}?" in lazy_names(f"(?P<name>\"?{_NAME}\"?|'{_NAME}')[ \\t]{{0,4}}:", _NAME)


def test_the_name_guard_only_where_what_follows_cannot_start_a_name() -> None:
    guarded = guard_names(f"\\n(?P<name>{_NAME})(?P<sep>=[ \\t]|:)v", _NAME)
    assert guarded.startswith("\\n(?=[A-Za-z0-9_.-]{1,") and guarded.endswith(f"(?P<name>{_NAME})(?P<sep>=[ \\t]|:)v")
    column = guard_names(f"\\n(?P<name>{_NAME})[ \\t]{{5,64}}(?P<sep>=|:)v", _NAME)  # an aligned column's blanks
    assert column.startswith("\\n(?=[A-Za-z0-9_.-]{1,") and "+[ \\t]{5,64})(?P<name>" in column
    for separator in ("x|=", "=?", "-"):  # may start with a name character, or match nothing
        pattern = f"\\n(?P<name>{_NAME})(?P<sep>{separator})v"
        assert guard_names(pattern, _NAME) == pattern
    line = b"\nDB_PASSWORD=a1\nDB_PASSWORD= a1\n"
    pattern = f"\\n(?P<name>{_NAME})(?P<sep>=[ \\t])(?P<v>\\w+)"
    ours, theirs = re.compile(rewrite(pattern, _NAME).encode()), re.compile(pattern.encode())
    assert [_same(ours.match(line, i), theirs.match(line, i)) for i in range(len(line))] == [True] * len(line)
    assert ours.match(line, 15) is not None and ours.match(line, 0) is None


def test_first_characters_is_a_superset_and_knows_empty_matches() -> None:
    assert first_characters("[ \\t]{1,4}=|:") == (frozenset(b" \t:"), False)
    assert first_characters("(?i:ab)") == (frozenset(b"aA"), False)
    assert first_characters("x?") == (frozenset(b"xX"), True)
    characters, empty = first_characters("[^a]")
    assert ord("b") in characters and ord("\n") in characters and not empty
    assert ord("a") in first_characters("[^A-Z0-9]")[0]  # case-sensitive unless a flag says otherwise
    # non-ASCII: its first UTF-8 byte, as the parser reads the encoded pattern (a no-break space's is 0xc2)
    assert first_characters("é") == (frozenset({0xC3}), False)
    assert first_characters("(?:[ \\t]|\u00a0){5,}") == (frozenset(b" \t\xc2"), False)


def test_an_automatons_literals_are_found_as_the_in_operator_finds_them() -> None:
    # may_match searches a literal of several bytes with RE2 (Latin-1: bytes, whatever the encoding) instead of
    # ``in``; both must agree, next to invalid UTF-8 and multi-byte characters too.
    rng = random.Random(1)
    for literal in (b"://", b"==", b"@", b"\xc3("):
        automaton = dataclasses.replace(CONTEXT_PASS.finders[0], literals=(literal, b"@"))
        for _ in range(3000):
            data = bytes(rng.choice(b":/=@(a\xc3\xa9\xff\n") for _ in range(rng.randrange(0, 12)))
            assert automaton.may_match(data) == (literal in data and b"@" in data), (literal, data)


def test_a_plain_word_is_never_hinted_as_code() -> None:
    # The scan's dismissal takes a value of letters and digits in one case for no expression of code without the
    # hint's searches (assignment_screen._plain_word): it must never say so of a value the hint finds.
    rng = random.Random(2)
    words = [b"str", b"STR", b"Str", b"Int", b"byte", b"a1f3", b"ABC9", b"aBc", b"1234", b"x.y", b"\xc3\xa9a"]
    alphabet = b"aAbZz09_.$:\xc3\xa9sStTrRiIn"
    words += [bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 8))) for _ in range(20000)]
    plain = [word for word in words if _plain_word(word)]
    assert not [word for word in plain if _hinted(word)]
    assert b"a1f3" in plain and b"ABC9" in plain and b"str" not in plain and b"aBc" not in plain and len(plain) > 1000


def test_a_run_of_blanks_is_possessive_only_where_what_follows_cannot_start_with_a_blank() -> None:
    assert possessive_blanks("x[ \\t]{5,64}(?P<sep>=|:)") == "x[ \\t]{5,64}+(?P<sep>=|:)"
    assert possessive_blanks("x[ \\t]{0,4}(?P<v>[^\\s]+)") == "x[ \\t]{0,4}+(?P<v>[^\\s]+)"
    for unchanged in ("x[ \\t]{1,4}[ =]", "x[ \\t]{1,4}=?", "x[ \\t]{1,4}", "(?:x[ \\t]{1,4})=", "x[ \\t]{1,4}?=",
                      "x[ \\t]{1,4}+=", "[^[ \\t]{1,4}]="):  # may start with a blank, match nothing, end a group
        assert possessive_blanks(unchanged) == unchanged, unchanged


def test_a_name_once_at_its_runs_end_is_atomic_and_still_matches_as_written() -> None:
    assert "(?>(?:[A-Za-z0-9_.-]{0,40}?" in lazy_names(f"(?P<name>{_NAME})=", _NAME)
    # Aligned columns of every width about the bounds, names whose word is late or whose run is longer than the
    # bounded name takes, separators and values the line-value branch refuses after its name and blanks.
    texts = []
    for blanks in (1, 4, 5, 40, 63, 64, 65, 70):
        for name in ("password", "db_password", "a" * 39 + "token" + "b" * 41, "x" * 45 + "secret", "auth", "authx",
                     "token" + "b" * 30 + "pass" + "c" * 20):  # the first split ends before the run does
            for tail in (": a1\n", "= a;\n", ':= "db-credentials"\n', "?= x\n", ":\n", "= &a x\n", " =a,\n"):
                texts.append(f"\n  + {name}{' ' * blanks}{tail}".encode())
    for pass_, detectors in ((CONTEXT_PASS, CONTEXT),):
        plain = _plain_parser(detectors)
        for text in texts:
            for start in (0, 1):
                assert _same(pass_.parser.match(text, start), plain.match(text, start)), text
                assert _same(pass_.parsers[text[start]](text, start), plain.match(text, start)), text
