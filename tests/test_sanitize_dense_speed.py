"""The shortcuts ``densespeed`` (issue #11) took on the paths of text with a different secret on every line, each held
to the slower reading it replaced: the same answers, on generated inputs and on the edges the shortcut reasons about.
(The speed itself is measured by ``bench/bench_sanitize.py``, not here.)"""

from __future__ import annotations

import random

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.cheap_rejection import arrow_ahead
from bot.sanitize.secret_names import _WORD_SPLIT, name_kind, name_words

PW = "Xk9mQ2vL7pRt4wZ8"


def _pattern_words(name: str) -> list[str]:
    """``name_words`` as it was: the pattern's split, every word lower-cased."""
    return [word.lower() for word in _WORD_SPLIT.split(name.strip("\"'-")) if word]


def _searched_arrow(data: bytes, after: int) -> bool:
    """``arrow_ahead`` as it was: the first "->" in the 300 bytes after ``after``, no line's end before it."""
    arrow = data.find(b"->", after, after + 300)
    return arrow >= 0 and data.find(b"\n", after, arrow) < 0


@pytest.mark.parametrize(
    "name",
    ["db_password", "ilaohb.py", "361", "a__b", "-x-", "x.y-z_w", "", "_", "paakdlApiKey", "API_KEY", "key2B",
     "pass word", "pass\tword", "pass\u00a0word", "\u00e9t\u00e9_token", "'db-secret'", "\"token\"", "sig\x0bx"],
)
def test_name_words_are_the_patterns_words(name: str) -> None:
    assert name_words(name) == _pattern_words(name)


def test_name_words_are_the_patterns_words_on_generated_names() -> None:
    rng = random.Random(11)
    alphabet = "abcXYZ019_.-'\" \t\n\x0b\x0c\r\u00a0\u2003\u00e9\u00c9"
    for _ in range(20_000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16)))
        assert name_words(name) == _pattern_words(name), name


def test_the_split_names_keep_their_verdicts() -> None:
    assert name_kind("db_password") == ("password", True)
    assert name_kind("ilaohb.py") is None  # a file's name before grep's ":1:"
    assert name_kind("next-page.token") is None
    assert name_kind("client_secret") == ("secret", False)


def test_arrow_ahead_is_the_searched_arrow_on_generated_texts() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        size = rng.randrange(0, 700)
        alphabet = b"->\nab " if rng.random() < 0.5 else b"-aaaaaaaaa>\n"
        data = bytes(rng.choice(alphabet) for _ in range(size))
        after = rng.randrange(0, size + 3)
        assert arrow_ahead(data, after) == _searched_arrow(data, after), (data, after)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'x = "a" -> "b"', True),
        (b'x = "a"\n -> "b"', False),  # the arrow is on the next line
        (b"x = a" + b" " * 297 + b"->", False),  # "->" ends past the 300 bytes
        (b"x = a" + b" " * 296 + b"->", True),  # ... and just within them
        (b"x = a\n", False),
    ],
)
def test_arrow_ahead_edges(data: bytes, expected: bool) -> None:
    assert arrow_ahead(data, 3) is expected
    assert _searched_arrow(data, 3) is expected


def test_box_hints_on_every_line_with_no_rule_stay_and_a_table_after_them_is_read() -> None:
    rows = "".join(f"\u2502 password \u2502 x{i} \u2502\n" for i in range(50))
    table = ("\u2502 id \u2502 password \u2502\n\u251c\u2500\u2500\u253c\u2500\u2500\u2524\n"
             f"\u2502 1 \u2502 {PW} \u2502\n\u2514\u2500\u2500\u2534\u2500\u2500\u2518\n")
    text = sanitize_output((rows + table).encode()).text
    assert text.startswith(rows)
    assert PW not in text and "\u2502 1 \u2502 [REDACTED:table_secret] \u2502" in text


def test_a_box_rule_after_many_blanks_is_still_the_rule() -> None:
    table = ("\u2502 id \u2502 password \u2502\n" + " " * 80 + "\u251c\u2500\u2500\u253c\u2500\u2500\u2524\n"
             f"\u2502 1 \u2502 {PW} \u2502\n")
    text = sanitize_output(table.encode()).text
    assert PW not in text


def test_echoed_commands_on_every_other_line_each_withhold_their_own_lines() -> None:
    # the head that ends one command's withheld lines is the next command's (``echoed.withheld_lines``)
    text = (f"$ echo $DB_PASSWORD\n{PW}\n$ echo hello\nhello\n$ echo $API_TOKEN\n{PW}x\nmore\n"
            "$ ls\nREADME.md\n")
    shown = sanitize_output(text.encode()).text
    assert PW not in shown
    assert "$ echo hello\nhello\n" in shown and "$ ls\nREADME.md\n" in shown
    assert shown.count("$ echo") == 3
