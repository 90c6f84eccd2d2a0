"""Fixtures of the approvals tests: a redis.asyncio client on the session's real Redis, a store, a policy."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import Proposal
from bot.approvals.store import CallStore
from tests.support import decision_keys


@pytest.fixture
def store(redis: Redis) -> CallStore:
    return CallStore(redis, heartbeat_ttl=1.0, signer=decision_keys.signer())


@pytest.fixture
def policy() -> ApprovalPolicy:
    return ApprovalPolicy()


def proposal(tool: str = "opsctl_status", tags: list[str] | None = None, argv: list[str] | None = None) -> Proposal:
    return Proposal(
        tool=tool,
        app="opsctl",
        arguments='{"host": "db-3"}',
        argv=argv or ["status", "--host", "db-3"],
        tags=tags or [],
    )
