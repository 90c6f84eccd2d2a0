"""The Tool contract: everything above this package sees tools only through it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.fisk.model import CmdModel, FlagModel


@dataclass(frozen=True)
class AppSettings:
    """Per-application execution settings the runner needs (a projection of the configuration)."""

    binary: str
    timeout_seconds: float = 60.0
    working_dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    max_concurrency: int = 4


@dataclass(frozen=True)
class Tool:
    """One runnable fisk command offered to the model.

    ``name`` is what the model addresses (alias-prefixed); ``local_name`` is the unprefixed command path joined
    with ``_`` that include/exclude rules match.
    """

    name: str
    local_name: str
    app: str
    command_path: tuple[str, ...]
    command: CmdModel
    description: str
    input_schema: dict[str, Any]
    settings: AppSettings
    global_flags: tuple[FlagModel, ...] = ()

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(self.command.tags)

    @property
    def needs_confirmation(self) -> bool:
        return "ai:confirm" in self.command.tags

    @property
    def no_defer(self) -> bool:
        return "ai:no_defer" in self.command.tags
