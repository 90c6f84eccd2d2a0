"""One leak case: output as a tool prints it, and the secrets in it that must not survive sanitizing."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass


@dataclass(frozen=True)
class Leak:
    family: str
    text: str
    secrets: tuple[str, ...]


AL = string.ascii_letters + string.digits


class SeededCases:
    """A corpus module's values and cases: one seeded RNG per module, so every value is the same on every run (no
    real credential, nothing for a secret scanner to flag) and each module writes only its texts."""

    def __init__(self, seed: int, label: str) -> None:
        self.rng = random.Random(seed)
        self._label = label
        self.cases: list[Leak] = []

    def rs(self, n: int, alpha: str = AL) -> str:
        return "".join(self.rng.choice(alpha) for _ in range(n))

    def pw(self, n: int = 14) -> str:
        """A password with a few symbols inside (never first or last)."""
        return self.rs(2) + self.rs(n - 4, AL + "!#%^*-_.") + self.rs(2, string.digits)

    def case(self, family: str, text: str, *secrets: str) -> None:
        self.cases.append(Leak(f"{self._label}: {family}", text, secrets))
