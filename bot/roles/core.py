"""What every role of a process shares: configuration, secrets, Redis, the catalog and the call store (``Core``),
the decision keys each role holds, and the size of its Redis pools."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass

from bot.approvals.decision_keys import signer_and_verifier
from bot.approvals.decisions import DecisionKeyError, DecisionSigner, DecisionVerifier
from bot.approvals.store import CallStore
from bot.config_secrets import Secrets
from bot.config_view import AnyConfig, ConfigError, durability_settings, redis_topology
from bot.redis_connection import RedisHandle
from bot.redis_factory import open_redis
from bot.redis_pool import ACK_CONNECTIONS, ACK_TIMEOUT_SECONDS, ACKS, PoolSettings
from bot.tools.catalog import Catalog
from bot.wiring import CatalogSource

log = logging.getLogger(__name__)

ROLES = ("slack", "agent", "runner")


class StartupError(RuntimeError):
    """Something a role needs is missing; the message says what and how to provide it."""


def reader_loops(roles: set[str], shards: int) -> int:
    """How many blocking stream reads a process with ``roles`` runs at once: the size of its readers pool.

    slack: the poster (outbox + one per completions shard + one per progress shard), the intake, the incident
    timeline recorder (inbox, outbox, one per audit shard); agent: inbox + completions shards; runner: one per
    run-stream shard, one wait for hand-overs per shard, and the final-state metrics consumer (one read per completions
    shard, side by side: Cluster)."""
    per_role = {"slack": (1 + 2 * shards) + 1 + (2 + shards), "agent": 1 + shards, "runner": shards * 3}
    return sum(per_role[r] for r in roles if r in per_role)


def pool_settings(config: AnyConfig) -> PoolSettings:
    return PoolSettings(config.redis.max_connections, config.redis.pool_timeout_seconds)


def ack_pool(roles: set[str]) -> PoolSettings | None:
    """The slack role's reserved connections for what is written before Slack is answered (None otherwise)."""
    return PoolSettings(ACK_CONNECTIONS, ACK_TIMEOUT_SECONDS, ACKS) if "slack" in roles else None


def connection_bound(config: AnyConfig, roles: set[str]) -> int:
    """The most Redis connections a process with ``roles`` opens: commands + blocking readers + acks."""
    acks = ack_pool(roles)
    readers = reader_loops(roles, config.redis.shards)
    return config.redis.max_connections + readers + (acks.max_connections if acks else 0)


def instance_name(role: str) -> str:
    return f"{role}-{socket.gethostname()}-{os.getpid()}"


DECIDING_ROLES = frozenset({"slack", "agent"})


def decision_keys(config: AnyConfig, roles: set[str]) -> tuple[DecisionSigner | None, DecisionVerifier | None]:
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

    config: AnyConfig
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
    async def open(cls, config: AnyConfig, roles: set[str], secrets: Secrets | None = None) -> Core:
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

