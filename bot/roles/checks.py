"""Start-up checks that fail fast with a sentence naming what to fix: missing credentials of every role in one
message, and one authenticated request to the model API before the agent takes work."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from bot.config_secrets import Secrets
from bot.config_view import AnyConfig, full_config
from bot.roles.core import Core, StartupError

if TYPE_CHECKING:  # anthropic is imported by the agent role only
    from anthropic import AsyncAnthropic


def model_credential_problems(secrets: Secrets, who: str = "the agent role") -> list[str]:
    if not secrets.anthropic_api_key and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        return [f"ANTHROPIC_API_KEY is not set: {who} needs an Anthropic API key"]
    return []


def require_model_credentials(secrets: Secrets, who: str = "the agent role") -> None:
    """Fail at start, not at the first conversation, when no Anthropic credential is set."""
    if problems := model_credential_problems(secrets, who):
        raise StartupError(problems[0])


def check_credentials(config: AnyConfig, roles: set[str], secrets: Secrets) -> None:
    """Every missing credential of ``roles`` (and Slack's missing approvers) in one message, before anything
    starts: a newcomer fixes them all in one round, not one per attempt."""
    problems = model_credential_problems(secrets) if "agent" in roles else []
    if "slack" in roles:
        from bot.slack.app import slack_policy
        from bot.slack.client import SlackStartupError, api_url_problem, token_problems

        whole = full_config(config, "the slack role")
        try:
            slack_policy(whole.approval)  # refuse before Redis or Slack are touched: one line naming the setting
        except SlackStartupError as exc:
            problems.append(str(exc))
        problems += token_problems(whole.slack.mode, secrets.slack_bot_token, secrets.slack_app_token,
                                   secrets.slack_signing_secret)
        problems += filter(None, [api_url_problem(whole.slack, secrets.slack_api_url)])
    if problems:
        raise StartupError("; ".join(problems) + " (see the README's Quick start)")


async def check_model_access(core: Core) -> AsyncAnthropic:
    """One cheap authenticated request, so a wrong key or base URL stops start-up instead of reaching a user.

    Returns the client it checked, open, for the agent to use: one client, so one connection pool and one TLS
    context with the system's CA certificates (~0.5-2 MiB each, bench/bench_rss.py), not a second."""
    from bot.agent.model import ModelAccessError, check_access, make_client

    client = make_client(full_config(core.config, "the agent role").agent, api_key=core.secrets.anthropic_api_key)
    try:
        await check_access(client)
    except ModelAccessError as exc:
        await client.close()
        raise StartupError(str(exc)) from None
    except BaseException:
        await client.close()
        raise
    return client
