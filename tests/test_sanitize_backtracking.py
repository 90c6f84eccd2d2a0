"""No value shape check backtracks exponentially: Python's ``re`` judges every candidate RE2 finds, so one
pattern with nested repetition let a 49-byte line stop the sanitizer for good (found by the #11 review's
differential fuzzing: ``Bearer`` and a run of lowercase letters ending in a non-letter)."""

from __future__ import annotations

import random
import re
import subprocess
import sys

from bot.sanitize import redact
from bot.sanitize.shapes import _CAMEL_WORDS, generated

# The pattern as it was: a reference for which strings are camel-case words (fine on short strings).
_NESTED_CAMEL_WORDS = re.compile(r"(?:[A-Z]?[a-z]+)+")

HOSTILE = [
    "Authorization: Bearer " + "w" * 400 + "/X\n",
    "token: Xw" + "w" * 400 + "-\n",
    "Bearer " + "w" * 40 + "pass/settings.X_PASSWORD.get\n",
]


def test_hostile_values_finish_in_a_child_process() -> None:
    """Run where a hang can be stopped: the old pattern needs 2**400 steps for the first line (the 60 s are a
    guard against hanging the suite, not a speed target: the child takes milliseconds)."""
    program = (
        "import sys\nfrom bot.sanitize import redact\n"
        f"for text in {HOSTILE!r}:\n    redact(text)\nprint('done')\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "done", result.stderr


def test_possessive_camel_words_accept_what_the_nested_pattern_accepted() -> None:
    rng = random.Random(11)
    for _ in range(20_000):
        value = "".join(rng.choice("aAbZz/._-1") for _ in range(rng.randint(0, 12)))
        assert (_CAMEL_WORDS.fullmatch(value) is None) == (_NESTED_CAMEL_WORDS.fullmatch(value) is None), value


def test_verdicts_on_the_hostile_shapes() -> None:
    assert generated("w" * 400 + "/X")  # no camel-case words: what the nested pattern said too, only now it answers
    assert generated("Xk9mQ2vB7nP4wLr8")
    assert not generated("CorrectHorseBatteryStaple")
    text, _ = redact("Authorization: Bearer Xk9mQ2vB7nP4wLr8\n")
    assert "Xk9mQ2vB7nP4wLr8" not in text
