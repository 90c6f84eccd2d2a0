"""The JSON schema a model sees for one command's arguments.

fisk's introspection carries no value types, does not tell an enum from a completion hint, nor a key=value
map flag from a list flag (see the fixtures' README). The schema is therefore chosen so that it never makes a
valid command impossible to express:

* boolean flags (counters included) are booleans, because the conversion only accepts booleans for them;
* other scalar flags and arguments are strings: numbers are also accepted by the conversion (and kept
  verbatim), but a string always works, whatever the real type is;
* cumulative flags and arguments are arrays of strings; map flags take ``key=value`` items, which the real
  CLI parses exactly like the object form;
* completions are offered as choices in the description and as ``examples``, never as ``enum``, because a
  hint list (``service logs --level``) must not forbid other values;
* hidden and framework flags are left out, defaults are mentioned in the description.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from bot.fisk.arguments import visible_args, visible_flags
from bot.fisk.model import ArgModel, CmdModel, FlagModel


def _describe(item: FlagModel | ArgModel) -> str:
    text = item.help.strip()
    parts = [text if text.endswith((".", "!", "?", ":")) else f"{text}."] if text else []
    if isinstance(item, FlagModel) and item.boolean and item.cumulative:
        parts.append("Counter: true adds it once.")
    if item.completions:
        parts.append("Choices: " + ", ".join(item.completions) + ".")
    if item.default:
        parts.append("Default: " + ", ".join(item.default) + ".")
    if isinstance(item, FlagModel) and item.cumulative and not item.boolean:
        parts.append("May be repeated; for key=value flags give items as key=value.")
    return " ".join(parts)


def _property(item: FlagModel | ArgModel) -> dict[str, Any]:
    prop: dict[str, Any]
    if isinstance(item, FlagModel) and item.boolean:
        prop = {"type": "boolean"}
    elif item.cumulative:
        prop = {"type": "array", "items": {"type": "string"}}
    else:
        prop = {"type": "string"}
    description = _describe(item)
    if description:
        prop["description"] = description
    if item.completions:
        prop["examples"] = list(item.completions)
    return prop


def derive_input_schema(command: CmdModel, global_flags: Sequence[FlagModel] = ()) -> dict[str, Any]:
    """The input schema for one command, plus allowlisted global flags that do not collide with its names."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    precomputed = command.precomputed_schema()
    if precomputed is not None:
        properties = copy.deepcopy(precomputed.get("properties", {}))
        required = list(precomputed.get("required", []))
        # A newer fisk's schema is trusted for types, never for exposing hidden parameters.
        hidden = {f.name for f in command.flags if f.hidden} | {a.name for a in command.args if a.hidden}
        properties = {k: v for k, v in properties.items() if k not in hidden}
        required = [r for r in required if r in properties]
    else:
        for flag in visible_flags(command):
            properties[flag.name] = _property(flag)
            if flag.required:
                required.append(flag.name)
        for arg in visible_args(command):
            properties[arg.name] = _property(arg)
            if arg.required:
                required.append(arg.name)
    for flag in global_flags:
        if flag.name not in properties:
            properties[flag.name] = _property(flag)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def describe_command(command: CmdModel) -> str:
    """Short help, plus the long help when it adds something, then ``Tags: ...`` so tag searches find it."""
    short, long = command.help.strip(), command.help_long.strip()
    if long and short and (short in long or long in short):
        text = long if len(long) >= len(short) else short
    else:
        text = "\n\n".join(p for p in (short, long) if p)
    if command.tags:
        text = f"{text}\n\nTags: {', '.join(command.tags)}" if text else f"Tags: {', '.join(command.tags)}"
    return text
