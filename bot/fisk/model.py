"""fisk's ``ApplicationModel`` as printed by ``--fisk-introspect``, read into frozen dataclasses.

Unknown fields are tolerated because newer fisk versions add fields, for example a precomputed JSON schema per
command; they are kept (``extra``) so they can be used when present. Known fields must have their JSON type
(a string, a boolean, an integer, a list of strings or of the nested models; null only where Go may leave a value
out): anything else is a ``FiskModelError`` naming where. Plain dataclasses, not pydantic models: a runner
re-renders every call's argv from these and imports no pydantic (README, runner RSS).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

# fisk's own framework flags and commands; they never become tool parameters or tools.
FRAMEWORK_FLAG_PREFIXES = ("help", "completion")
FRAMEWORK_FLAGS = frozenset(
    {"help", "help-long", "help-man", "completion-bash", "completion-script-bash", "completion-script-zsh",
     "fisk-introspect"}
)
FRAMEWORK_COMMANDS = frozenset({"help", "cheat"})


def is_framework_flag(name: str, app_level: bool = False) -> bool:
    """True for fisk's built-in flags.

    At application level that is help*, completion*, fisk-introspect and version. A command's own flag named
    ``version`` (``deploy --version``) is the command's, so below the top only the exact framework names count.
    """
    if app_level:
        return name in FRAMEWORK_FLAGS or name == "version" or name.startswith(FRAMEWORK_FLAG_PREFIXES)
    return name in FRAMEWORK_FLAGS


class FiskModelError(ValueError):
    """Introspection JSON whose known fields do not have their types; ``where`` is the dotted path."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise FiskModelError(where, f"expected a string, got {type(value).__name__}")
    return value


def _optional_text(value: Any, where: str) -> str | None:
    return None if value is None else _text(value, where)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise FiskModelError(where, f"expected a boolean, got {type(value).__name__}")
    return value


def _optional_int(value: Any, where: str) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise FiskModelError(where, f"expected an integer, got {type(value).__name__}")
    return value


def _texts(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        raise FiskModelError(where, f"expected a list, got {type(value).__name__}")
    return [_text(item, f"{where}.{i}") for i, item in enumerate(value)]


def _text_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise FiskModelError(where, f"expected a mapping, got {type(value).__name__}")
    return {key: _text(item, f"{where}.{key}") for key, item in value.items()}


_M = TypeVar("_M", bound="_Model")


def _models(kind: type[_M], value: Any, where: str) -> list[_M]:
    if not isinstance(value, list):
        raise FiskModelError(where, f"expected a list, got {type(value).__name__}")
    return [kind.from_data(item, f"{where}.{i}") for i, item in enumerate(value)]


@dataclass(frozen=True, kw_only=True)
class _Model:
    """A model read from JSON: each known field by its reader, the unknown ones kept in ``extra``."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    #: field name -> reader (value, where) of the JSON value, set below each class
    _READERS: ClassVar[dict[str, Callable[[Any, str], Any]]] = {}

    @classmethod
    def from_data(cls: type[_M], data: Any, where: str = "") -> _M:
        if not isinstance(data, Mapping):
            raise FiskModelError(where or "<root>", f"expected an object, got {type(data).__name__}")
        readers = cls._READERS
        known: dict[str, Any] = {}
        for spec in fields(cls):
            if spec.name == "extra":
                continue
            path = f"{where}.{spec.name}" if where else spec.name
            if spec.name in data:
                known[spec.name] = readers[spec.name](data[spec.name], path)
            elif spec.default is MISSING and spec.default_factory is MISSING:
                raise FiskModelError(path, "field required")
        extra = {key: value for key, value in data.items() if key not in known}
        return cls(**known, extra=extra)


@dataclass(frozen=True, kw_only=True)
class FlagModel(_Model):
    name: str
    help: str = ""
    short: int | None = None
    default: list[str] = field(default_factory=list)
    envar: str | None = None
    place_holder: str | None = None
    required: bool = False
    hidden: bool = False
    boolean: bool = False
    negatable: bool = False
    cumulative: bool = False
    completions: list[str] = field(default_factory=list)

    @property
    def defaults_to_true(self) -> bool:
        """Mirrors Go's strconv.ParseBool on each default value."""
        return any(d in ("1", "t", "T", "TRUE", "true", "True") for d in self.default)


@dataclass(frozen=True, kw_only=True)
class ArgModel(_Model):
    name: str
    help: str = ""
    default: list[str] = field(default_factory=list)
    envar: str | None = None
    place_holder: str | None = None
    required: bool = False
    hidden: bool = False
    cumulative: bool = False
    completions: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CmdModel(_Model):
    name: str
    aliases: list[str] = field(default_factory=list)
    help: str = ""
    help_long: str = ""
    hidden: bool = False
    default: bool = False
    tags: list[str] = field(default_factory=list)
    flags: list[FlagModel] = field(default_factory=list)
    args: list[ArgModel] = field(default_factory=list)
    commands: list[CmdModel] = field(default_factory=list)

    def precomputed_schema(self) -> dict[str, Any] | None:
        """The JSON schema a newer fisk precomputes per command (``restricted_schema``: the one meant for
        models, built while fisk still knew the value types), if present; other spellings as fallbacks."""
        for key in ("restricted_schema", "json_schema", "input_schema", "schema"):
            value = self.extra.get(key)
            if isinstance(value, dict) and value.get("type") == "object":
                return value
        return None


@dataclass(frozen=True, kw_only=True)
class ApplicationModel(_Model):
    name: str
    help: str = ""
    version: str = ""
    author: str = ""
    cheats: dict[str, str] = field(default_factory=dict)
    cheat_tags: list[str] = field(default_factory=list)
    llm_extra_info: str = ""
    commands: list[CmdModel] = field(default_factory=list)
    flags: list[FlagModel] = field(default_factory=list)
    args: list[ArgModel] = field(default_factory=list)

    def find_command(self, path: str | list[str]) -> CmdModel | None:
        """The command at a space-separated path of names (not aliases)."""
        words = path.split() if isinstance(path, str) else path
        level, found = self.commands, None
        for word in words:
            found = next((c for c in level if c.name == word), None)
            if found is None:
                return None
            level = found.commands
        return found


_COMMON: dict[str, Callable[[Any, str], Any]] = {
    "name": _text, "help": _text, "default": _texts, "envar": _optional_text, "place_holder": _optional_text,
    "required": _flag, "hidden": _flag, "cumulative": _flag, "completions": _texts,
}
FlagModel._READERS = {**_COMMON, "short": _optional_int, "boolean": _flag, "negatable": _flag}
ArgModel._READERS = _COMMON
CmdModel._READERS = {
    "name": _text, "aliases": _texts, "help": _text, "help_long": _text, "hidden": _flag, "default": _flag,
    "tags": _texts, "flags": lambda v, w: _models(FlagModel, v, w), "args": lambda v, w: _models(ArgModel, v, w),
    "commands": lambda v, w: _models(CmdModel, v, w),
}
ApplicationModel._READERS = {
    "name": _text, "help": _text, "version": _text, "author": _text, "cheats": _text_map, "cheat_tags": _texts,
    "llm_extra_info": _text, "commands": lambda v, w: _models(CmdModel, v, w),
    "flags": lambda v, w: _models(FlagModel, v, w), "args": lambda v, w: _models(ArgModel, v, w),
}
