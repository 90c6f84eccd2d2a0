"""What each role runs, built from the shared ``Core``. The agent's and the Slack front end's dependencies
(anthropic, slack-bolt) are imported inside their builders, so a runner process never loads them."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from bot.approvals import verify_key
from bot.approvals.execution import execute_decided_call
from bot.approvals.records import CallRecord
from bot.approvals.worker import RunnerWorker
from bot.config_view import full_config
from bot.metrics import RUN_DURATION
from bot.roles.core import Core, StartupError, instance_name
from bot.runner.binary import BinarySnapshots
from bot.runner.call import ChildEnvironments
from bot.tools.catalog import Catalog
from bot.wiring import execution_limits, text_redactor

if TYPE_CHECKING:  # each role imports its own dependencies when it starts: a runner never loads anthropic or bolt
    from anthropic import AsyncAnthropic

    from bot.agent.worker import AgentWorker
    from bot.incidents.service import OnCall
    from bot.slack.app import SlackFrontEnd

log = logging.getLogger(__name__)


def make_executor(core: Core) -> Callable[[CallRecord], Awaitable[dict[str, Any]]]:
    """The runner's executor: verify the decision, run against the current catalog, observe the duration."""
    limits = execution_limits(core.config)
    environments = ChildEnvironments(limits)
    verifier = core.verifier
    if verifier is None:
        raise StartupError("the runner role needs decision public keys (decisions.public_key_files)")
    binaries = BinarySnapshots()

    async def execute(record: CallRecord) -> dict[str, Any]:
        await core.catalogs.refresh()
        result = await execute_decided_call(record, core.catalog, limits, verifier, binaries, environments)
        RUN_DURATION.observe(result.duration_seconds)
        return result.as_json()

    return execute


def runner_worker(core: Core) -> RunnerWorker:
    limits = {tool.app: tool.settings.max_concurrency for tool in core.catalog}
    executor = make_executor(core)
    verifier = core.verifier
    if verifier is None:  # make_executor has refused already; this says so to the type checker too
        raise StartupError("the runner role needs decision public keys (decisions.public_key_files)")

    # chosen now, not on the first call's way: the known-answer self-test runs at start, and the operator reads
    # which library verifies (libcrypto, or cryptography's own OpenSSL and its 7.4 MiB: README, signed decisions)
    log.info("runner: decision signatures verified with %s", verify_key.backend())

    def verify_ahead(fields: dict[str, str]) -> None:
        verifier.verify_ahead(fields.get("decision", ""))

    return RunnerWorker(
        core.redis.client, core.store, executor, runner_id=instance_name("runner"),
        per_app_limits=limits, grace_period=core.config.shutdown_grace_seconds, reader=core.redis.reader,
        prepare=verify_ahead, handover=True,
    )


def agent_worker(core: Core, slack: Any = None, *, client: AsyncAnthropic | None = None) -> AgentWorker:
    """The agent's worker; ``client`` is the one ``check_model_access`` checked, else a new one."""
    from bot.agent.loop import Agent
    from bot.agent.model import ModelClient, make_client
    from bot.agent.worker import AgentWorker
    from bot.slack.settings import catalog_for_channel

    config = full_config(core.config, "the agent role")
    settings = config.agent
    if client is None:
        client = make_client(settings, api_key=core.secrets.anthropic_api_key)

    def catalog_for(conversation: str, meta: Mapping[str, str]) -> Catalog:
        channel = meta.get("channel") or (conversation.split(":")[1] if conversation.startswith("slack:") else "")
        return catalog_for_channel(core.catalog, config.slack, channel) if channel else core.catalog

    agent = Agent(core.redis.client, core.store, core.catalog, config.approval, ModelClient(client, settings),
                  settings, catalog_for=catalog_for, sensitive_env_vars=config.sensitive_env_vars,
                  tool_search=config.tool_search, redactor=text_redactor(config))
    return AgentWorker(core.redis.client, agent, consumer=instance_name("agent"), reader=core.redis.reader)


def slack_front_end(core: Core) -> SlackFrontEnd:
    from bot.slack.app import SlackFrontEnd

    s = core.secrets
    config = full_config(core.config, "the slack role")
    return SlackFrontEnd(
        config.slack, redis=core.redis.client, store=core.store, policy=config.approval,
        catalog=core.catalog, bot_token=s.slack_bot_token, app_token=s.slack_app_token,
        signing_secret=s.slack_signing_secret, api_url=s.slack_api_url, reader=core.redis.reader,
        acker=core.redis.acker, redactor=text_redactor(config),
    )


def on_call_front_end(core: Core) -> OnCall:
    """Alert intake and timeline recorder: part of the slack role (they post through its poster)."""
    from bot.incidents.service import OnCall
    from bot.incidents.settings import IncidentSecrets

    config = full_config(core.config, "the slack role")
    return OnCall(core.redis.client, core.store, config.incidents, IncidentSecrets.from_env(),
                  consumer=instance_name("timeline"), reader=core.redis.reader,
                  redactor=text_redactor(config))


def slack_readiness(front: SlackFrontEnd) -> Callable[[], Awaitable[tuple[bool, str]]]:
    """The slack role's readiness: auth.test answers and, in Socket Mode, the WebSocket to Slack is open."""

    async def ready() -> tuple[bool, str]:
        await front.start()
        if front.settings.mode != "socket":
            return True, "auth.test ok"
        if await front.connected():
            return True, "auth.test ok; Socket Mode connected"
        return False, "auth.test ok; Socket Mode not connected"

    return ready

