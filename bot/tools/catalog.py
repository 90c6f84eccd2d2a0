"""The catalog: every selected tool of every configured application, looked up by the name the model uses."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bot.fisk.model import FRAMEWORK_COMMANDS, ApplicationModel, CmdModel, FlagModel, is_framework_flag
from bot.fisk.schema import derive_input_schema, describe_command
from bot.tools.selection import Rule, is_denied, select_tools
from bot.tools.tool import AppSettings, Tool

log = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class CatalogError(ValueError):
    """A configuration that cannot produce a tool list (duplicate names, unknown global flags, ...)."""


@dataclass(frozen=True)
class AppSpec:
    """What the catalog needs of one configured application (a projection of ApplicationConfig)."""

    settings: AppSettings
    alias: str | None = None
    include: Rule = field(default_factory=Rule)
    exclude: Rule = field(default_factory=Rule)
    global_flags: tuple[str, ...] = ()


def runnable_commands(
    commands: Sequence[CmdModel], prefix: tuple[str, ...] = (), top: bool = True
) -> Iterator[tuple[tuple[str, ...], CmdModel]]:
    """The seed's walk: leaves only; hidden commands skipped with their subtree; groups recursed into."""
    for command in commands:
        if command.hidden or (top and command.name in FRAMEWORK_COMMANDS):
            continue
        path = (*prefix, command.name)
        if command.commands:
            yield from runnable_commands(command.commands, path, top=False)
        else:
            yield path, command


def _allowed_global_flags(app: ApplicationModel, names: Iterable[str], label: str) -> list[FlagModel]:
    by_name = {f.name: f for f in app.flags if not is_framework_flag(f.name, app_level=True)}
    chosen = []
    for name in names:
        flag = by_name.get(name)
        if flag is None:
            raise CatalogError(f"{label}: global_flags: {name!r} is not a global flag of {app.name}")
        if flag.hidden:
            raise CatalogError(f"{label}: global_flags: {name!r} is hidden in {app.name} and cannot be offered")
        chosen.append(flag)
    return chosen


def application_tools(app: ApplicationModel, spec: AppSpec, label: str = "application") -> list[Tool]:
    """Every runnable command of one application as a Tool (before selection)."""
    globals_ = _allowed_global_flags(app, spec.global_flags, label)
    tools = []
    for path, command in runnable_commands(app.commands):
        local = "_".join(path)
        name = f"{spec.alias}_{local}" if spec.alias else local
        if not TOOL_NAME.match(name):
            log.warning("skipping command %r of %s: tool name %r is not a valid tool name", " ".join(path),
                        app.name, name)
            continue
        own = {f.name for f in command.flags} | {a.name for a in command.args}
        flags = tuple(f for f in globals_ if f.name not in own)
        tools.append(
            Tool(
                name=name,
                local_name=local,
                app=app.name,
                command_path=path,
                command=command,
                description=describe_command(command) or " ".join(path),
                input_schema=derive_input_schema(command, flags),
                settings=spec.settings,
                global_flags=flags,
            )
        )
    return tools


class Catalog:
    """The currently selected tools, by name. A name not in here is never executed (invariant 2)."""

    def __init__(self, tools: Sequence[Tool], denied: Iterable[str] = (), apps: Iterable[ApplicationModel] = ()):
        self._tools = {t.name: t for t in tools}
        self.denied = frozenset(denied)
        self.apps = {a.name: a for a in apps}

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def narrowed(self, include: Rule | None, exclude: Rule | None) -> Catalog:
        """A sub-catalog (e.g. per Slack channel): further include/exclude on top of the global selection."""
        return Catalog(select_tools(list(self), include, exclude), self.denied, self.apps.values())


@dataclass(frozen=True)
class LoadedApplication:
    """An application model with the provenance of its bytes: the binary's digest, the JSON's hash."""

    model: ApplicationModel
    binary_digest: str
    model_hash: str


def build_catalog(
    specs: Sequence[AppSpec], load: Callable[[AppSettings], ApplicationModel | LoadedApplication]
) -> Catalog:
    """Introspect each application with ``load`` and select its tools; duplicate final names are an error."""
    selected: dict[str, Tool] = {}
    denied: set[str] = set()
    apps = []
    for index, original in enumerate(specs):
        loaded = load(original.settings)
        spec = original
        if isinstance(loaded, LoadedApplication):
            settings = dataclasses.replace(
                original.settings, binary_digest=loaded.binary_digest, model_hash=loaded.model_hash
            )
            spec = dataclasses.replace(original, settings=settings)
            loaded = loaded.model
        app = loaded
        apps.append(app)
        label = f"applications[{index}] ({spec.settings.binary})"
        tools = application_tools(app, spec, label)
        denied.update(t.name for t in tools if is_denied(t))
        for tool in select_tools(tools, spec.include, spec.exclude):
            if tool.name in selected:
                other = selected[tool.name]
                raise CatalogError(
                    f"{label}: tool name {tool.name!r} is also a tool of {other.app} ({other.settings.binary}); "
                    "give one of the applications an alias"
                )
            selected[tool.name] = tool
    return Catalog(list(selected.values()), denied, apps)
