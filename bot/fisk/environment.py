"""The child environment for every process the bot starts (introspection and tool calls).

DESIGN.md invariant 4: a child must never inherit a credential of the bot. Whole prefixes are removed rather
than a list of known names because the Slack and Anthropic SDKs keep adding credential variables
(``ANTHROPIC_WORK_SECRET``, ``ANTHROPIC_FOUNDRY_API_KEY``, ...) and a new one must not leak by default.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

# Every variable starting with one of these belongs to the bot, never to a tool.
CREDENTIAL_PREFIXES = ("SLACK_", "ANTHROPIC_", "FISK_CHATOPS_", "REDIS")
# Credentials under other names that the SDKs we use read.
CREDENTIAL_NAMES = frozenset({"AWS_BEARER_TOKEN_BEDROCK", "REDISCLI_AUTH", "SLACKBOT_TOKEN"})


def is_credential_name(name: str, sensitive: Iterable[str] = ()) -> bool:
    """True when ``name`` is one of the bot's credentials or an operator-named sensitive variable."""
    upper = name.upper()
    return upper.startswith(CREDENTIAL_PREFIXES) or upper in CREDENTIAL_NAMES or name in set(sensitive)


@dataclass(frozen=True)
class ScrubbedEnvironment:
    """The environment a child gets, and the secret values removed from it (for output redaction)."""

    env: dict[str, str]
    removed_values: dict[str, str] = field(default_factory=dict)


def scrub_environment(
    base: Mapping[str, str] | None = None,
    sensitive_env_vars: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> ScrubbedEnvironment:
    """Copy ``base`` (default: this process's environment) without credentials, add ``extra`` and LLMFORMAT=1.

    ``extra`` is the operator's per-application environment; it is added after scrubbing because the operator
    chose it for the tool deliberately. LLMFORMAT=1 is set last so it cannot be overridden: fisk programs use
    it to format output for a model.
    """
    source = os.environ if base is None else base
    sensitive = set(sensitive_env_vars)
    env: dict[str, str] = {}
    removed: dict[str, str] = {}
    for name, value in source.items():
        if is_credential_name(name, sensitive):
            removed[name] = value
        else:
            env[name] = value
    env.update(extra or {})
    env["LLMFORMAT"] = "1"
    return ScrubbedEnvironment(env=env, removed_values=removed)
