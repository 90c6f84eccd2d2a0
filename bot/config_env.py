"""Every configuration key from the environment (12-factor): ``FISK_CHATOPS__SLACK__MODE=http``.

The prefix ``FISK_CHATOPS__`` is followed by the key's path with ``__`` between levels, any case
(``FISK_CHATOPS__AGENT__MAX_TOKENS=2048``, ``FISK_CHATOPS__TOOL_SEARCH=false``). Lists and mappings take JSON
(``FISK_CHATOPS__APPLICATIONS='[{"binary": "/opt/fisk/bin/opsctl"}]'``); a mapping whose keys are case-sensitive
(``slack.channels`` keyed by channel id) must be given whole as JSON, since variable names are read
case-insensitively. pydantic-settings reads the variables (imported only when one is set); the values override
the YAML file key by key and are then validated with it, so an error names the variable and a mistyped key gets
a did-you-mean like in the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from bot.config_keys import unknown_key_hint

ENV_PREFIX = "FISK_CHATOPS__"
DELIMITER = "__"


def environment_overrides(model: type[BaseModel]) -> dict[str, Any]:
    """The keys of ``model`` set in the environment, as a nested dict of raw values (JSON decoded)."""
    unknown = sorted(
        name for name in os.environ
        if name.upper().startswith(ENV_PREFIX)
        and name[len(ENV_PREFIX):].split(DELIMITER)[0].lower() not in _settable(model)
    )  # fmt: skip
    if unknown:
        name = unknown[0]
        hint = unknown_key_hint(model, (name[len(ENV_PREFIX):].split(DELIMITER)[0].lower(),))
        raise ValueError(f"environment {name}: unknown key" + (f"; {hint}" if hint else ""))
    if not any(name.upper().startswith(ENV_PREFIX) for name in os.environ):
        return {}  # nothing to read: pydantic-settings (~3.5 MiB of RSS) stays unimported
    from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict, SettingsError

    class FromEnvironment(BaseSettings, model):  # type: ignore[misc, valid-type]
        model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter=DELIMITER, extra="forbid")

    try:
        return dict(EnvSettingsSource(FromEnvironment)())
    except SettingsError as exc:  # a list or mapping whose JSON does not parse
        field = re.search(r'field "([^"]+)"', str(exc))
        name = ENV_PREFIX + (field.group(1).upper() if field else "...")
        cause = f" ({exc.__cause__})" if exc.__cause__ else ""
        raise ValueError(f"environment {name}: not valid JSON{cause}; lists and mappings are given as JSON, like "
                         f"{ENV_PREFIX}APPLICATIONS='[{{\"binary\": \"/opt/fisk/bin/opsctl\"}}]'") from None


def _settable(model: type[BaseModel]) -> set[str]:
    return {name for name, field in model.model_fields.items() if not field.exclude}


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` laid on top, mapping by mapping (a list or a value is replaced whole)."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def variable_for(loc: Sequence[str | int], overrides: Mapping[str, Any]) -> str | None:
    """The variable that set the value at ``loc`` (an error location), or None when it came from the file."""
    path: list[str] = []
    current: Any = overrides
    for part in loc:
        if not isinstance(current, Mapping) or str(part) not in current:
            break
        path.append(str(part))
        current = current[str(part)]
        if not isinstance(current, Mapping):
            break
    names = {name.upper(): name for name in os.environ}
    for end in range(len(path), 0, -1):  # the longest path a variable names (a JSON value covers the rest)
        name = names.get(ENV_PREFIX + DELIMITER.join(p.upper() for p in path[:end]))
        if name is not None:
            return name
    return None
