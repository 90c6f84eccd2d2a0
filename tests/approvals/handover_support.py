"""What the hand-over tests share: quick worker timings, a conversation's calls proposed, and a call's audit trail
by actor (who moved it), so each test file states only its scenario."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from tests.approvals.conftest import proposal

CONV = "C1/1.0"
FAST = {"heartbeat_interval": 0.1, "stale_after": 0.6, "reclaim_after": 0.3, "recovery_interval": 0.1,
        "block_seconds": 0.1}


async def proposed(store: CallStore, n: int) -> list[str]:
    return [r.id for r in await store.propose(CONV, [proposal() for _ in range(n)], ApprovalPolicy(), "U_REQ")]


async def trail(redis: Redis, call_id: str) -> list[tuple[str, str, str]]:
    """Each audit entry of the call as (from, to, actor)."""
    return [(e.from_state, e.to_state, e.actor) for e in await read_audit(redis, call_id=call_id, limit=50)]
