"""Process roles: what ``fisk-chatops serve`` runs, in one process or one role per process.

Every role talks to the others only through Redis, so ``--role slack|agent|runner`` processes can run on
different machines and scale on their own. Start-up fails fast and clearly (bad configuration, unreachable
Redis, wrong Slack tokens); SIGTERM drains: stop taking new work, let running calls finish within
``shutdown_grace_seconds``, record any call cut off as ``interrupted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from bot.approvals.decisions import DecisionKeyError, DecisionSigner, DecisionVerifier, signer_and_verifier
from bot.approvals.events import CompletionConsumer
from bot.approvals.execution import execute_decided_call
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.config import Config, ConfigError, Secrets, durability_settings, redis_topology
from bot.fisk.environment import is_credential_name
from bot.hardening import drop_credentials, harden
from bot.health import HealthServer
from bot.memory import return_free_heap
from bot.metrics import (
    APPROVAL_WAIT,
    CALLS_FINAL,
    OLDEST_PENDING,
    QUEUE_DEPTH,
    RUN_DURATION,
    STREAM_UNACKNOWLEDGED_AGE,
)
from bot.redis_connection import RedisHandle
from bot.redis_factory import open_redis
from bot.redis_pool import ACK_CONNECTIONS, ACK_TIMEOUT_SECONDS, ACKS, PoolSettings
from bot.runner.binary import BinarySnapshots
from bot.runner.call import ChildEnvironments
from bot.streams import entry_age_seconds, trim_acknowledged
from bot.tools.catalog import Catalog
from bot.wiring import CatalogSource, execution_limits, text_redactor

if TYPE_CHECKING:  # each role imports its own dependencies when it starts: a runner never loads anthropic or bolt
    from bot.agent.worker import AgentWorker
    from bot.incidents.service import OnCall
    from bot.slack.app import SlackFrontEnd

log = logging.getLogger(__name__)

ROLES = ("slack", "agent", "runner")


class StartupError(RuntimeError):
    """Something a role needs is missing; the message says what and how to provide it."""


def model_credential_problems(secrets: Secrets, who: str = "the agent role") -> list[str]:
    if not secrets.anthropic_api_key and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        return [f"ANTHROPIC_API_KEY is not set: {who} needs an Anthropic API key"]
    return []


def require_model_credentials(secrets: Secrets, who: str = "the agent role") -> None:
    """Fail at start, not at the first conversation, when no Anthropic credential is set."""
    if problems := model_credential_problems(secrets, who):
        raise StartupError(problems[0])


def check_credentials(config: Config, roles: set[str], secrets: Secrets) -> None:
    """Every missing credential of ``roles`` (and Slack's missing approvers) in one message, before anything
    starts: a newcomer fixes them all in one round, not one per attempt."""
    problems = model_credential_problems(secrets) if "agent" in roles else []
    if "slack" in roles:
        from bot.slack.app import slack_policy
        from bot.slack.client import SlackStartupError, api_url_problem, token_problems

        try:
            slack_policy(config.approval)  # refuse before Redis or Slack are touched: one line naming the setting
        except SlackStartupError as exc:
            problems.append(str(exc))
        problems += token_problems(config.slack.mode, secrets.slack_bot_token, secrets.slack_app_token,
                                   secrets.slack_signing_secret)
        problems += filter(None, [api_url_problem(config.slack, secrets.slack_api_url)])
    if problems:
        raise StartupError("; ".join(problems) + " (see the README's Quick start)")


async def check_model_access(core: Core) -> None:
    """One cheap authenticated request, so a wrong key or base URL stops start-up instead of reaching a user."""
    from bot.agent.model import ModelAccessError, check_access, make_client

    client = make_client(core.config.agent, api_key=core.secrets.anthropic_api_key)
    try:
        await check_access(client)
    except ModelAccessError as exc:
        raise StartupError(str(exc)) from None
    finally:
        await client.close()


def reader_loops(roles: set[str], shards: int) -> int:
    """How many blocking stream reads a process with ``roles`` runs at once: the size of its readers pool.

    slack: the poster (outbox + one per completions shard + one per progress shard), the intake, the incident
    timeline recorder (inbox, outbox, one per audit shard); agent: inbox + completions shards; runner: one per
    run-stream shard + the final-state metrics consumer (one read per completions shard, side by side: Cluster)."""
    per_role = {"slack": (1 + 2 * shards) + 1 + (2 + shards), "agent": 1 + shards, "runner": shards * 2}
    return sum(per_role[r] for r in roles if r in per_role)


def pool_settings(config: Config) -> PoolSettings:
    return PoolSettings(config.redis.max_connections, config.redis.pool_timeout_seconds)


def ack_pool(roles: set[str]) -> PoolSettings | None:
    """The slack role's reserved connections for what is written before Slack is answered (None otherwise)."""
    return PoolSettings(ACK_CONNECTIONS, ACK_TIMEOUT_SECONDS, ACKS) if "slack" in roles else None


def connection_bound(config: Config, roles: set[str]) -> int:
    """The most Redis connections a process with ``roles`` opens: commands + blocking readers + acks."""
    acks = ack_pool(roles)
    readers = reader_loops(roles, config.redis.shards)
    return config.redis.max_connections + readers + (acks.max_connections if acks else 0)


def instance_name(role: str) -> str:
    return f"{role}-{socket.gethostname()}-{os.getpid()}"


DECIDING_ROLES = frozenset({"slack", "agent"})


def decision_keys(config: Config, roles: set[str]) -> tuple[DecisionSigner | None, DecisionVerifier | None]:
    """The keys this process holds: the private key only where decisions are made (slack, agent), public keys
    where calls run. With nothing configured, a process running every role keeps a pair in its state dir."""
    keys = config.decisions
    single = roles == set(ROLES)
    memory = os.path.join(config.redis.state_dir, "decisions-executed") if "runner" in roles else None

    def load(memory: str | None) -> tuple[DecisionSigner | None, DecisionVerifier | None]:
        return signer_and_verifier(
            keys.signing_key_file if roles & DECIDING_ROLES else None,
            keys.public_key_files if "runner" in roles else [],
            valid_seconds=keys.valid_seconds,
            keep_in=os.path.join(config.redis.state_dir, "keys") if single and not keys.signing_key_file
            and not keys.public_key_files else None,
            memory=memory,
        )

    try:
        try:
            signer, verifier = load(memory)
        except OSError as exc:  # an unwritable state dir: the replay memory lasts as long as the process
            log.warning("decisions: cannot keep the replay memory in %s (%s); it will not survive a restart",
                        memory, exc.strerror)
            signer, verifier = load(None)
    except DecisionKeyError as exc:
        raise StartupError(f"decisions: {exc}") from None
    if roles & DECIDING_ROLES and signer is None:
        raise StartupError(
            "decisions.signing_key_file is not set: the slack and agent roles sign every approval with it"
            " (generate one with `fisk-chatops keygen DIR`)"
        )
    if "runner" in roles and verifier is None:
        raise StartupError(
            "decisions.public_key_files is not set: the runner role verifies every approval with them"
        )
    return signer, verifier


@dataclass
class Core:
    """What every role shares: configuration, secrets, Redis, the tool catalog and the call store."""

    config: Config
    secrets: Secrets
    redis: RedisHandle
    catalogs: CatalogSource
    store: CallStore
    verifier: DecisionVerifier | None = None

    @property
    def catalog(self) -> Catalog:
        """The current catalog (rebuilt when a binary changes, see ``CatalogSource``)."""
        return self.catalogs.catalog

    @classmethod
    async def open(cls, config: Config, roles: set[str], secrets: Secrets | None = None) -> Core:
        secrets = secrets or Secrets()
        url = secrets.redis_url or config.redis.url
        topology = redis_topology(config, secrets)
        if not url and topology.mode == "standalone" and roles != set(ROLES):
            raise ConfigError(
                "serve --role needs a shared Redis: set REDIS_URL (the embedded Redis is for single-process "
                "installs, where `fisk-chatops serve` runs every role)"
            )
        signer, verifier = decision_keys(config, roles)
        catalogs = await asyncio.to_thread(CatalogSource, config)
        handle = await open_redis(
            url, topology, state_dir=config.redis.state_dir, pool=pool_settings(config),
            readers=reader_loops(roles, config.redis.shards), acks=ack_pool(roles),
            client_name="fisk-chatops." + "-".join(sorted(roles)),
        )
        store = CallStore(handle.client, retention_seconds=config.redis.retention_seconds,
                          shards=config.redis.shards, signer=signer,
                          redact_patterns=config.execution.redact_patterns,
                          durability=durability_settings(config))
        return cls(config, secrets, handle, catalogs, store, verifier)

    async def close(self) -> None:
        await self.redis.close()


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
        return result.model_dump(mode="json")

    return execute


def runner_worker(core: Core) -> RunnerWorker:
    limits = {tool.app: tool.settings.max_concurrency for tool in core.catalog}
    return RunnerWorker(
        core.redis.client, core.store, make_executor(core), runner_id=instance_name("runner"),
        per_app_limits=limits, grace_period=core.config.shutdown_grace_seconds, reader=core.redis.reader,
    )


def agent_worker(core: Core, slack: Any = None) -> AgentWorker:
    from bot.agent.loop import Agent
    from bot.agent.model import ModelClient, make_client
    from bot.agent.worker import AgentWorker
    from bot.slack.settings import catalog_for_channel

    settings = core.config.agent
    client = make_client(settings, api_key=core.secrets.anthropic_api_key)

    def catalog_for(conversation: str, meta: Mapping[str, str]) -> Catalog:
        channel = meta.get("channel") or (conversation.split(":")[1] if conversation.startswith("slack:") else "")
        return catalog_for_channel(core.catalog, core.config.slack, channel) if channel else core.catalog

    agent = Agent(core.redis.client, core.store, core.catalog, core.config.approval, ModelClient(client, settings),
                  settings, catalog_for=catalog_for, sensitive_env_vars=core.config.sensitive_env_vars,
                  tool_search=core.config.tool_search, redactor=text_redactor(core.config))
    return AgentWorker(core.redis.client, agent, consumer=instance_name("agent"), reader=core.redis.reader)


def slack_front_end(core: Core) -> SlackFrontEnd:
    from bot.slack.app import SlackFrontEnd

    s = core.secrets
    return SlackFrontEnd(
        core.config.slack, redis=core.redis.client, store=core.store, policy=core.config.approval,
        catalog=core.catalog, bot_token=s.slack_bot_token, app_token=s.slack_app_token,
        signing_secret=s.slack_signing_secret, api_url=s.slack_api_url, reader=core.redis.reader,
        acker=core.redis.acker, redactor=text_redactor(core.config),
    )


def on_call_front_end(core: Core) -> OnCall:
    """Alert intake and timeline recorder: part of the slack role (they post through its poster)."""
    from bot.incidents.service import OnCall
    from bot.incidents.settings import IncidentSecrets

    return OnCall(core.redis.client, core.store, core.config.incidents, IncidentSecrets.from_env(),
                  consumer=instance_name("timeline"), reader=core.redis.reader,
                  redactor=text_redactor(core.config))


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


async def count_final_states(core: Core, stop_event: asyncio.Event) -> None:
    """Feed the calls-by-final-state and approval-wait metrics from the completions stream, once per call
    across replicas (consumer group ``metrics``). Events are handled a batch at a time: one read, one pipelined
    read of the decision times, one acknowledgement, instead of two round trips per call on the runner's loop."""

    def consumer() -> CompletionConsumer:
        return CompletionConsumer(core.redis.client, "metrics", instance_name("metrics"),
                                  shards=core.config.redis.shards, start_id="$", reader=core.redis.reader)

    completions = consumer()
    while not stop_event.is_set():
        try:
            events = await completions.read(count=200)
            waits = await core.store.human_decision_waits([e.call_id for e in events])
            for event, waited in zip(events, waits, strict=True):
                CALLS_FINAL.labels(str(event.state)).inc()
                if waited is not None:
                    APPROVAL_WAIT.observe(waited)
            await completions.ack(*events)
        except (RedisError, OSError) as exc:  # a Redis restart must not end the process over a metric
            log.warning("metrics: reading completions failed (%s); retrying", exc)
            completions = consumer()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop_event.wait(), 1.0)


async def trim_bus_streams(core: Core, stop_event: asyncio.Event, interval: float = 30.0) -> None:
    """Drop what every consumer group of the inbox and outbox has acknowledged (a pending call's turn costs
    nothing there once handled), never an entry a group has not, and publish each stream's unacknowledged age.
    A stream whose own reader (``bus.READERS``) has not created its group yet keeps up to its size cap."""
    from bot.agent.bus import INBOX, OUTBOX, READERS, STREAM_MAXLEN

    while not stop_event.is_set():
        for stream in (INBOX, OUTBOX):
            try:
                _, oldest = await trim_acknowledged(core.redis.client, stream, STREAM_MAXLEN, acknowledged_only=True,
                                                   readers=READERS[stream])
                STREAM_UNACKNOWLEDGED_AGE.labels(stream).set(entry_age_seconds(oldest, time.time()))
            except Exception:
                log.exception("trimming %s failed", stream)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_event.wait(), interval)


async def watch_binaries(core: Core, stop_event: asyncio.Event, interval: float = 2.0) -> None:
    """Re-introspect a binary that changed on disk, so new proposals use the upgraded tool (see CatalogSource)."""
    while not stop_event.is_set():
        try:
            await core.catalogs.refresh()
        except Exception:
            log.exception("checking the tool binaries for changes failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_event.wait(), interval)


def queue_collector(core: Core) -> Callable[[], Awaitable[None]]:
    async def collect() -> None:
        keys, client = core.store.keys, core.redis.client
        awaiting = running = 0
        oldest: float | None = None
        for shard in keys.all_shards():
            awaiting += int(await client.zcard(keys.awaiting(shard)))
            running += int(await client.zcard(keys.running(shard)))
            first = await client.zrange(keys.awaiting(shard), 0, 0, withscores=True)
            if first:  # scored by expiry: proposal time is expiry minus the approval window
                created = float(first[0][1]) - core.config.approval.expire_after_seconds
                oldest = created if oldest is None else min(oldest, created)
        QUEUE_DEPTH.labels("awaiting_approval").set(awaiting)
        QUEUE_DEPTH.labels("running").set(running)
        OLDEST_PENDING.set(max(0.0, time.time() - oldest) if oldest is not None else 0.0)

    return collect


def pool_collector(core: Core) -> Callable[[], Awaitable[None]]:
    async def collect() -> None:
        core.redis.collect_metrics()

    return collect


async def serve(config: Config, roles: set[str], *, health_host: str = "0.0.0.0", health_port: int = 8080,
                stop_event: asyncio.Event | None = None) -> None:
    """Run ``roles`` until SIGTERM/SIGINT (or ``stop_event``)."""
    stop = stop_event or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    secrets = Secrets()
    check_credentials(config, roles, secrets)
    harden(lambda name: is_credential_name(name, config.sensitive_env_vars))
    core = await Core.open(config, roles, secrets)
    health = HealthServer(health_host, health_port, collectors=[queue_collector(core), pool_collector(core)])

    async def redis_ready() -> tuple[bool, str]:
        # The slack role pings on its reserved acks connections: a burst that keeps the command pool busy must
        # not take the pod out of its Service, and what readiness promises is that requests can be recorded.
        await core.redis.acker.ping()
        return True, core.redis.target

    health.checks["redis"] = redis_ready
    tasks: list[asyncio.Task[None]] = []
    front: SlackFrontEnd | None = None
    try:
        if "agent" in roles:
            await check_model_access(core)
        front = slack_front_end(core) if "slack" in roles else None
        if front is not None:
            info = await front.start()
            log.info("slack connected as %s", info.get("user_id"))
            health.checks["slack"] = slack_readiness(front)
        oncall = on_call_front_end(core) if front is not None else None
        # Every port is bound before any role starts work, so a busy port stops start-up with one line.
        await health.start()
        if oncall is not None and config.incidents.enabled and config.incidents.listen == "own":
            await oncall.listen()
        if front is not None and front.settings.mode == "http":
            if oncall is not None and config.incidents.enabled and config.incidents.listen == "slack":
                oncall.mount(front.http_app())
            await front.listen_http()
        if front is not None:
            tasks.append(asyncio.create_task(front.run(stop)))
            tasks.append(asyncio.create_task(oncall.run(stop)))  # type: ignore[union-attr]
        if "agent" in roles:
            tasks.append(asyncio.create_task(agent_worker(core).run(stop)))
        if "runner" in roles:
            tasks.append(asyncio.create_task(runner_worker(core).run(stop)))
            tasks.append(asyncio.create_task(count_final_states(core, stop)))
        tasks.append(asyncio.create_task(watch_binaries(core, stop)))
        tasks.append(asyncio.create_task(trim_bus_streams(core, stop)))
        if not roles & DECIDING_ROLES:
            # A runner has connected and built its child environments: it needs no credential from the
            # environment any more (its Redis client keeps the URL it connected with).
            drop_credentials(lambda name: is_credential_name(name, config.sensitive_env_vars))
        return_free_heap()  # start-up's temporaries are freed: give their pages back before serving
        log.info("serving roles %s; health on port %s", ",".join(sorted(roles)), health.port)
        done, _ = await asyncio.wait([*tasks, asyncio.create_task(stop.wait())],
                                     return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task in tasks and task.exception() is not None:
                stop.set()
                raise task.exception()  # type: ignore[misc]
        stop.set()
        # Roles drain within the grace period; whatever still hangs after it (a connect retrying for ever) is
        # cancelled so SIGTERM always ends the process.
        await asyncio.wait(tasks, timeout=config.shutdown_grace_seconds + 5)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if front is not None:  # a start-up failure after auth.test (a busy port) never ran the front end
            from bot.slack.client import close_client

            await close_client(front.client)
        await health.stop()
        await core.close()
