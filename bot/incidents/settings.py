"""``IncidentSettings``: the ``incidents:`` section of the configuration.

Credentials never live here: the Alertmanager bearer token or basic-auth pair and the PagerDuty webhook
secrets come from the environment (see ``IncidentSecrets``). An intake endpoint without its credential refuses
every delivery: accepting unauthenticated alerts must be impossible to configure by leaving something out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_BRIEF = (
    "Investigate this alert. Start with read-only diagnostics, say what you found and what you think the cause "
    "is, and propose a remediation only as a suggestion for the on-call engineer to approve."
)

#: Environment variables holding the intake credentials (FISK_CHATOPS_* is scrubbed from every tool's env).
ALERTMANAGER_TOKEN_ENV = "FISK_CHATOPS_ALERTMANAGER_TOKEN"
ALERTMANAGER_BASIC_ENV = "FISK_CHATOPS_ALERTMANAGER_BASIC_AUTH"  # "user:password"
PAGERDUTY_SECRETS_ENV = "FISK_CHATOPS_PAGERDUTY_SECRETS"  # comma-separated: several during a rotation


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Route(_Section):
    """Where matching alerts go. ``match``: every listed label must equal one of the given values (a string or
    a list); Alertmanager labels are the group's common labels, PagerDuty's are ``service``, ``service_id``,
    ``urgency``, ``priority`` and ``escalation_policy``. ``source`` narrows to one intake."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    channel: str = Field(pattern=r"^[CG][A-Z0-9]{2,}$", description="Slack channel id the thread opens in")
    source: Literal["any", "alertmanager", "pagerduty"] = "any"
    match: dict[str, str | list[str]] = Field(default_factory=dict)
    brief: str | None = Field(default=None, description="investigation brief for the agent; default: incidents.brief")
    rate_limit_per_minute: int | None = Field(default=None, gt=0)

    def matches(self, source: str, labels: Mapping[str, str]) -> bool:
        if self.source not in ("any", source):
            return False
        for name, wanted in self.match.items():
            allowed = [wanted] if isinstance(wanted, str) else wanted
            if labels.get(name) not in allowed:
                return False
        return True


class IncidentSettings(_Section):
    enabled: bool = False
    listen: Literal["own", "slack"] = Field(
        default="own", description="own: http_host/http_port; slack: on the Slack HTTP server (slack.mode http)")
    http_host: str = "0.0.0.0"
    http_port: int = Field(default=9095, ge=0, le=65535, description="the intake's own listener")
    routes: list[Route] = Field(default_factory=list, description="first match wins; no match: not accepted")
    brief: str = DEFAULT_BRIEF
    rate_limit_per_minute: int = Field(default=30, gt=0, description="deliveries per route per minute")
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    retention_seconds: int = Field(default=90 * 86400, gt=0, description="incident records and timelines")

    @field_validator("routes")
    @classmethod
    def _unique(cls, routes: list[Route]) -> list[Route]:
        names = [r.name for r in routes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"route names must be unique: {', '.join(dupes)}")
        return routes

    def route_for(self, source: str, labels: Mapping[str, str]) -> Route | None:
        return next((r for r in self.routes if r.matches(source, labels)), None)


@dataclass(frozen=True)
class IncidentSecrets:
    """The intake credentials, from the environment only."""

    alertmanager_token: str | None = None
    alertmanager_basic: tuple[str, str] | None = None
    pagerduty_secrets: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> IncidentSecrets:
        env = os.environ if env is None else env
        # a Secret written from a file often ends in a newline, which no header value can carry: strip it, or
        # every delivery would be refused
        basic = (env.get(ALERTMANAGER_BASIC_ENV) or "").strip()
        user, sep, password = basic.partition(":")
        secrets = tuple(s.strip() for s in re.split(r"[,\s]+", env.get(PAGERDUTY_SECRETS_ENV) or "") if s.strip())
        return cls(
            alertmanager_token=(env.get(ALERTMANAGER_TOKEN_ENV) or "").strip() or None,
            alertmanager_basic=(user, password) if sep and user and password else None,
            pagerduty_secrets=secrets,
        )
