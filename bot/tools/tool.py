"""The Tool contract: everything above this package sees tools only through it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.fisk.arguments import (
    ArgumentsError,
    args_from_json,
    global_flag_tokens,
    missing_required,
    parameter_roster,
    parse_arguments,
)
from bot.fisk.model import CmdModel, FlagModel


@dataclass(frozen=True)
class AppSettings:
    """Per-application execution settings the runner needs (a projection of the configuration)."""

    binary: str
    timeout_seconds: float = 60.0
    working_dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    max_concurrency: int = 4
    binary_digest: str = ""  # sha256 of the bytes that were introspected (what a decision is signed over)
    model_hash: str = ""  # sha256 of the introspection JSON the tools were built from


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

    @property
    def roster(self) -> str:
        """Required and optional parameters, for error messages a model can correct itself from."""
        return parameter_roster(self.command, self.global_flags)

    def render_argv(self, arguments: str | bytes | Mapping[str, Any] | None) -> list[str]:
        """The full argument vector: binary, command path, allowlisted global flags, then the command's own.

        This is the only way model arguments become argv (DESIGN.md invariant 3). Errors carry the parameter
        roster so the model can correct the call in one turn.
        """
        try:
            values = parse_arguments(arguments)
            global_names = {f.name for f in self.global_flags}
            own = {k: v for k, v in values.items() if k not in global_names}
            shared = {k: v for k, v in values.items() if k in global_names}
            tail = args_from_json(self.command, own)
            missing = missing_required(self.command, own)
            if missing:
                raise ArgumentsError("missing_required", f"missing required {', '.join(missing)}")
            head = global_flag_tokens(self.global_flags, shared)
        except ArgumentsError as exc:
            raise ArgumentsError(exc.kind, f"{self.name}: {exc.message} ({self.roster})") from None
        return [self.settings.binary, *self.command_path, *head, *tail]
