"""An include or exclude rule as the configuration writes it (a pydantic model of the settings), apart from
``selection.py``'s rules themselves: a runner builds its rules from an already validated configuration and
imports no pydantic (README, runner RSS)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.selection import Rule


class RuleSpec(BaseModel):
    """An include or exclude rule as written in configuration (application-wide or per Slack channel)."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] = Field(default_factory=list, description="regexes searched in the unprefixed tool name")
    tags: list[str] = Field(default_factory=list, description='exact tags; "" matches a tool with no tags')

    def build(self, label: str) -> Rule:
        return Rule.build(self.tools, self.tags, label)
