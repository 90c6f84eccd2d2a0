"""One secret-bearing output and the values in it that must not survive; values are built from a seed so each
case holds its own, realistic-looking secret (and a fixed corpus never collides with another corpus)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
# a run this long of a secret that reaches the output counts as a leak (the checker: any 6+ characters)
LEAK_RUN = 6


def rnd(seed: str, n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters of ``alphabet`` derived from ``seed`` (deterministic, random-looking)."""
    out: list[str] = []
    block = 0
    while len(out) < n:
        digest = hashlib.sha256(f"accept4:{seed}:{block}".encode()).digest()
        out += [alphabet[b % len(alphabet)] for b in digest]
        block += 1
    return "".join(out[:n])


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    text: str
    secrets: tuple[str, ...]


def case(name: str, family: str, template: str, **values: str) -> Case:
    """``template`` with each ``<<key>>`` replaced by its value; every value is a secret of the case."""
    text = template
    for key, value in values.items():
        assert f"<<{key}>>" in text, (name, key)
        text = text.replace(f"<<{key}>>", value)
    assert "<<" not in text or ">>" not in text.split("<<", 1)[1][:40], name
    return Case(name, family, text, tuple(values.values()))
