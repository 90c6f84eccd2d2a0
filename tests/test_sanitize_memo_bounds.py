"""The sanitizer's process-wide memos hold short keys only: a command line's argument has no bound of its own.

``shapes.trivial`` is remembered (an output's candidate asks it two or three times), and a card's command line
asks it of each argument; the card and the runner's judgement of an argv (``judge_argv``) remember whole command
lines. 300 cards, each with a different 64 KiB argument, must not leave megabytes behind.
"""

from __future__ import annotations

import gc
import random
import tracemalloc

from bot.sanitize import display_command_line
from bot.sanitize.secret_argv import judge_argv


def test_long_arguments_shown_on_cards_are_not_kept_alive_by_a_memo() -> None:
    rng = random.Random(4)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    display_command_line(["tool", "--password=warm-up-value-1"])  # the memos' own structures, before measuring
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            value = "".join(rng.choices(alphabet, k=64 << 10))
            shown, _ = display_command_line(["tool", "--password=" + value, value])
            assert "--password=[REDACTED:password" in shown
            assert judge_argv(["vault", "kv", "get", "-field=password", value]) is not None
            del value, shown
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2 << 20, f"{kept} bytes kept after 300 cards"
