"""Which tools the model may see: ai:deny first, unconditionally; then include; then exclude."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

DENY_TAG = "ai:deny"


class SelectionError(ValueError):
    """A rule that cannot be used, e.g. an invalid regular expression; the message names the rule."""


class Selectable(Protocol):
    @property
    def local_name(self) -> str: ...

    @property
    def tags(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Rule:
    """Tool-name regexes (searched, unanchored, like Go's MatchString) and exact tags ("" = no tags)."""

    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    label: str = "rule"
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def build(cls, tools: Iterable[str] = (), tags: Iterable[str] = (), label: str = "rule") -> Rule:
        compiled = []
        for pattern in tools:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise SelectionError(f"{label}: invalid tool regex {pattern!r}: {exc}") from None
        return cls(tuple(tools), tuple(tags), label, tuple(compiled))

    @property
    def empty(self) -> bool:
        return not self.tools and not self.tags

    def matches(self, tool: Selectable) -> bool:
        if any(p.search(tool.local_name) for p in self._compiled):
            return True
        tags = tool.tags
        return any((tag == "" and not tags) or tag in tags for tag in self.tags)


def is_denied(tool: Selectable) -> bool:
    return DENY_TAG in tool.tags


T = TypeVar("T", bound=Selectable)


def select_tools(tools: Sequence[T], include: Rule | None, exclude: Rule | None) -> list[T]:
    """The seed's LoadTools: deny always; include only if it names anything; exclude only if it does."""
    kept = [t for t in tools if not is_denied(t)]
    if include is not None and not include.empty:
        kept = [t for t in kept if include.matches(t)]
    if exclude is not None and not exclude.empty:
        kept = [t for t in kept if not exclude.matches(t)]
    return kept
