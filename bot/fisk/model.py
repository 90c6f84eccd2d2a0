"""Pydantic models of fisk's ``ApplicationModel`` as printed by ``--fisk-introspect``.

Unknown fields are tolerated (``extra="allow"``) because newer fisk versions add fields, for example a
precomputed JSON schema per command; we keep them so they can be used when present.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class FlagModel(_Model):
    name: str
    help: str = ""
    short: int | None = None
    default: list[str] = Field(default_factory=list)
    envar: str | None = None
    place_holder: str | None = None
    required: bool = False
    hidden: bool = False
    boolean: bool = False
    negatable: bool = False
    cumulative: bool = False
    completions: list[str] = Field(default_factory=list)

    @property
    def defaults_to_true(self) -> bool:
        """Mirrors Go's strconv.ParseBool on each default value."""
        return any(d in ("1", "t", "T", "TRUE", "true", "True") for d in self.default)


class ArgModel(_Model):
    name: str
    help: str = ""
    default: list[str] = Field(default_factory=list)
    envar: str | None = None
    place_holder: str | None = None
    required: bool = False
    hidden: bool = False
    cumulative: bool = False
    completions: list[str] = Field(default_factory=list)


class CmdModel(_Model):
    name: str
    aliases: list[str] = Field(default_factory=list)
    help: str = ""
    help_long: str = ""
    hidden: bool = False
    default: bool = False
    tags: list[str] = Field(default_factory=list)
    flags: list[FlagModel] = Field(default_factory=list)
    args: list[ArgModel] = Field(default_factory=list)
    commands: list[CmdModel] = Field(default_factory=list)

    def precomputed_schema(self) -> dict[str, Any] | None:
        """The JSON schema a newer fisk precomputes per command (``restricted_schema``: the one meant for
        models, built while fisk still knew the value types), if present; other spellings as fallbacks."""
        extra = self.model_extra or {}
        for key in ("restricted_schema", "json_schema", "input_schema", "schema"):
            value = extra.get(key)
            if isinstance(value, dict) and value.get("type") == "object":
                return value
        return None


class ApplicationModel(_Model):
    name: str
    help: str = ""
    version: str = ""
    author: str = ""
    cheats: dict[str, str] = Field(default_factory=dict)
    cheat_tags: list[str] = Field(default_factory=list)
    llm_extra_info: str = ""
    commands: list[CmdModel] = Field(default_factory=list)
    flags: list[FlagModel] = Field(default_factory=list)
    args: list[ArgModel] = Field(default_factory=list)

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
