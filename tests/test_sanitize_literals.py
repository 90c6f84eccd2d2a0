"""``literals.containment`` says what ``literal in text`` says (issue #11: a gate before whole-text searches), for
literals whose rarest byte is asked first and for texts that hold that byte without the literal."""

from __future__ import annotations

import random

from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS
from bot.sanitize.literals import containment, literal_containment, literal_strings


def test_containment_answers_as_the_in_operator_on_random_and_near_miss_texts() -> None:
    literals = sorted({choice for pass_ in (TOKEN_PASS, CONTEXT_PASS) for a in pass_.finders for lit in a.literals
                       for choice in literal_strings(lit)})
    literals += [b"-----BEGIN", b"Secret", b"\xc2\xa0", b"a"]
    rng = random.Random(11)
    for literal in literals:
        contains = containment(literal)
        pieces = [literal, literal[:-1], literal[1:], bytes(reversed(literal)), b" ", b"-", b"\n", b"x" * 7]
        for _ in range(60):
            text = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            assert contains(text) == (literal in text), (literal, text)
        assert not contains(b"") and contains(literal) and contains(b"-" * 500 + literal + b" " * 500)
        assert not contains(b"\x00" * 500 + literal[:-1] + b"\x00" * 500)


def test_a_choice_of_literals_is_in_a_text_holding_any_one_of_them() -> None:
    contains = literal_containment((b"zure.", b"usgovcloudapi"))
    assert contains(b"https://kv.vault.azure.net/") and contains(b"https://kv.vault.usgovcloudapi.net/")
    assert not contains(b"https://kv.vault.example.net/ azure usgov") and not contains(b"")
    assert literal_strings(b"zure.") == (b"zure.",) and literal_containment(b"zure.")(b"azure.cn")
