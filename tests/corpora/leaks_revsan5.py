"""Leaks ``revsan5``'s review found (issue #11): a secret's name then its value as tab-separated cells at a line's
start with more cells after them (``az keyvault secret list --query '[].[name,value,attributes.enabled]' -o tsv``,
a TSV export with a header): the mid-line tab cells needed other text before the name, and the two-column line
needed the value last. Values come from a seeded RNG at import (no real credential)."""

from __future__ import annotations

import random
import string

from tests.corpora.leak_case import Leak

R = random.Random(5_2026_1202)
AL = string.ascii_letters + string.digits


def rs(n: int) -> str:
    return "".join(R.choice(AL) for _ in range(n))


CASES: list[Leak] = []


def case(family: str, text: str, *secrets: str) -> None:
    CASES.append(Leak(f"revsan5: {family}", text, secrets))


t1, t2, t3, t4 = rs(16), rs(24), rs(20), rs(32)
case("az -o tsv name, value, enabled", f"DB_PASSWORD\t{t1}\ttrue\nAPI_TOKEN\t{t2}\ttrue\n", t1, t2)
case("TSV export with a header", f"KEY\tVALUE\tSOURCE\nDB_PASSWORD\t{t3}\tvault\nLOG_LEVEL\tinfo\tdefault\n", t3)
case("tab cells at a line's start, indented", f"  stripe_secret_key \t {t4}\t# rotated 2026-11\n", t4)

REVSAN5_LEAKS: tuple[Leak, ...] = tuple(CASES)
