"""shapes.trivial asks each pattern only where its first character can start it (a speed change of the #11
work): it must say what asking every pattern says. Found by the #11 review: "\\d" in a str pattern is any
decimal digit, so a small number in Arabic-Indic digits ("password: ١٢٣٤٥") was trivial before the change and
became a redaction after it."""

from __future__ import annotations

import random

from bot.sanitize import redact
from bot.sanitize.shapes import _NUMBERISH, _PLACEHOLDER, _PLACEHOLDER_WORDS, _TRIVIAL_VALUES, trivial


def _every_pattern(value: str) -> bool:
    """trivial as written before it skipped patterns: every check, in order."""
    bare = value.strip().strip("\"'").strip()
    if len(bare) < 3 or bare.lower() in _TRIVIAL_VALUES or _NUMBERISH.fullmatch(bare):
        return True
    if bare.lower() in _PLACEHOLDER_WORDS:
        return True
    return bool(_PLACEHOLDER.match(bare)) or len(set(bare)) == 1


def test_trivial_says_what_every_pattern_says() -> None:
    rng = random.Random(11)
    alphabet = "0123456789+-.%smhdwy[](){}<>$%_AZaz \"'١٢٣۴५"
    for _ in range(100_000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
        assert trivial(value) == _every_pattern(value), value


def test_a_small_number_in_other_digits_stays_visible() -> None:
    for text in ("password: ١٢٣٤٥\n", "DB_PASSWORD=١٢٣\n", "secret=٤٥٦٧ms\n"):
        assert redact(text) == (text, 0)
