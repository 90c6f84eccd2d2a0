"""One leak case: output as a tool prints it, and the secrets in it that must not survive sanitizing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Leak:
    family: str
    text: str
    secrets: tuple[str, ...]
