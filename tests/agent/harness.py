"""Builders shared by the agent tests and by the agent subprocess they kill (``agent_process.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.agent import bus
from bot.agent.loop import Agent
from bot.agent.model import ModelClient, make_client
from bot.agent.settings import AgentSettings
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.config import config_for_binary
from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
from bot.tools.catalog import Catalog
from bot.tools.selection import Rule
from bot.wiring import load_catalog
from tests.support import decision_keys

SMALL = Rule.build(tools=["^service_", "^auth_user_list$"])


def catalog_for(binary: Path, small: bool = True) -> Catalog:
    catalog = load_catalog(config_for_binary(str(binary)))
    return catalog.narrowed(SMALL, None) if small else catalog


def settings(**overrides: Any) -> AgentSettings:
    base: dict[str, Any] = {"model": "claude-test", "max_tokens": 1024, "system_prompt": "You are OPS-BOT.",
                            "max_retries": 2, "request_timeout": 10, "lock_ttl_seconds": 2,
                            "reclaim_after_seconds": 0.5}
    base.update(overrides)
    return AgentSettings(**base)


def build_agent(redis: Redis, base_url: str, catalog: Catalog, agent_settings: AgentSettings,
                policy: ApprovalPolicy | None = None) -> Agent:
    client = make_client(agent_settings, api_key="test-key", base_url=base_url)
    store = CallStore(redis, heartbeat_ttl=2.0, signer=decision_keys.signer())
    return Agent(redis, store, catalog, policy or ApprovalPolicy(), ModelClient(client, agent_settings),
                 agent_settings)


async def execute(record: CallRecord) -> dict[str, Any]:
    """The runner's executor: the argv as a real subprocess, scrubbed environment, sanitized output."""
    scrubbed = scrub_environment()
    result = await run_argv(record.argv, env=scrubbed.env, cwd=None, timeout=20,
                            secret_values=scrubbed.removed_values.values())
    return result.as_json()


async def outbox(redis: Redis, conversation: str | None = None) -> list[bus.BusEvent]:
    raw: Any = await redis.xrange(bus.OUTBOX, "-", "+")
    events = [bus.BusEvent.from_fields(i, f) for i, f in raw]
    return [e for e in events if conversation is None or e.conversation == conversation]


def replies(events: list[bus.BusEvent]) -> list[str]:
    return [e.data["text"] for e in events if e.kind == "reply"]


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    last = request["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
