"""A card's command line is redacted once while the card is open: the displays are remembered by size (every
pending card of a burst is rendered again when clicked), within a bound on the characters they hold."""

from __future__ import annotations

import gc
import random
import tracemalloc

import pytest

from bot.sanitize import argv as argv_module
from bot.sanitize import display_command_line
from bot.sanitize.argv import DISPLAY_CHARS_KEPT, DisplayMemo


def _argv(n: int) -> list[str]:
    return ["opsctl", "db", "query", f"--database=tok-c{n:05d}-k2", f"--password=Sx9-{n:07d}-pQ7zLw4"]


def test_the_command_lines_of_a_burst_of_open_cards_are_redacted_once() -> None:
    """600 cards posted, then each clicked: the click's render finds the display the post made (the same
    object), where a 256-entry memo redacted each of them again."""
    first = {n: display_command_line(_argv(n)) for n in range(600)}
    for n in range(600):
        again = display_command_line(_argv(n))
        assert again == first[n]
        assert again[0] is first[n][0], f"card {n} was redacted again"
    assert "--password=[REDACTED:" in first[7][0] and "Sx9-0000007" not in first[7][0]


def test_a_remembered_display_is_the_display() -> None:
    for n in (1, 2):
        items = _argv(n) + ["x\u200by", "--token", "ghp_" + "a1B2" * 9]
        assert display_command_line(items) == argv_module._display_command_line(tuple(items), ())
        assert display_command_line(items, ["Sx9-[0-9]+"]) == argv_module._display_command_line(
            tuple(items), ("Sx9-[0-9]+",))


def test_the_memo_keeps_the_most_recently_shown_within_its_characters_and_entries() -> None:
    made: list[tuple[str, ...]] = []

    def make(items: tuple[str, ...], patterns: tuple[str, ...]) -> tuple[str, bool]:
        made.append(items)
        return " ".join(items), False

    memo = DisplayMemo(chars=10_000, entries=8)
    for n in range(20):
        memo.get(((f"{n:04d}" + "a" * 496,), ()), make)  # 1,000 characters with its display
        assert memo.held_chars() <= 10_000 and len(memo) <= 8
        memo.get((("0000" + "a" * 496,), ()), make)  # the first one, shown again each time: kept
    assert made.count(("0000" + "a" * 496,)) == 1
    memo.get((("0005" + "a" * 496,), ()), make)  # long forgotten: made again
    assert made.count(("0005" + "a" * 496,)) == 2
    small = DisplayMemo(chars=1_000_000, entries=3)
    for n in range(10):
        small.get(((str(n),), ()), make)
    assert len(small) == 3


def test_long_command_lines_kept_by_the_memo_hold_at_most_its_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Command lines just under the length a memo keeps: the memo holds its character bound, not 16 KiB times
    the number of cards (the process's memo, given a bound of 200,000 characters to keep the test short)."""
    memo = DisplayMemo(chars=200_000)
    monkeypatch.setattr(argv_module, "_DISPLAYS", memo)
    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    display_command_line(["warm", "--password=up"])
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(40):  # 40 x 30,000 characters with their displays
            shown, _ = display_command_line(["tool", "--name", "".join(rng.choices(alphabet, k=15_000))])
            del shown
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert 0 < memo.held_chars() <= 200_000 and len(memo) <= 7
    assert kept < 600_000, f"{kept} bytes kept"
    assert DISPLAY_CHARS_KEPT <= 4 << 20  # what the process keeps at most: ~4 MiB of ASCII
