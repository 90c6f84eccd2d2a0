"""Credentials and endpoints read from the environment only, apart from ``bot.config``'s pydantic models: every
role reads them, and a runner process imports no pydantic (README, runner RSS)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields


@dataclass(frozen=True, init=False)
class Secrets:
    """Credentials and endpoints read from the environment only: each field from the variable of its name in any
    case (``SLACK_BOT_TOKEN``); a keyword argument overrides the variable. Never in a configuration file, so that
    one can be committed and shared. Not a pydantic-settings ``BaseSettings``: its sources cost every process
    ~3.5 MiB of RSS."""

    slack_bot_token: str | None = None
    slack_app_token: str | None = None
    slack_signing_secret: str | None = None
    slack_api_url: str | None = None
    anthropic_api_key: str | None = None
    redis_url: str | None = None
    redis_password: str | None = None  # the data nodes' password when not in REDIS_URL (Sentinel: always here)
    redis_sentinel_password: str | None = None

    def __init__(self, **values: str | None) -> None:
        names = {spec.name for spec in fields(self)}
        unknown = set(values) - names
        if unknown:
            raise TypeError(f"Secrets has no {', '.join(sorted(unknown))}")
        environment = {name.lower(): value for name, value in os.environ.items()}
        for name in names:
            value = values[name] if name in values else environment.get(name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name}: expected a string, got {type(value).__name__}")
            object.__setattr__(self, name, value)
