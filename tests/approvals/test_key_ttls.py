"""Nothing a call or a thread writes outlives its retention (DESIGN: nothing grows without bound): after every
kind of transition -- a hand-over's approval (two moves of one call in one script), a two-person approval, an
auto-approved hand-over in a batch, a batch whose first call is rejected and second waits (the thread's hash of
open calls made after the script tried to give it its TTL), deny, expiry, cancel, finish -- every key of a call
and of a thread has a TTL, and the only keys without one are the shard's shared, trimmed structures. The approve
script remembers which keys it gave their TTL in a run (5a6ba70); this is what that must never lose. Real Redis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.tools.selection import DENY_TAG
from tests.approvals.conftest import proposal
from tests.support import decision_keys

# the shard's shared structures: streams trimmed by MINID, indexes emptied as calls end, hand-over lists drained
SHARED = {"audit", "completions", "progress", "run", "awaiting", "running", "handoffs", "parked", "confirm"}


async def test_every_key_of_a_call_or_a_thread_expires(redis: Redis) -> None:
    store = CallStore(redis, key_prefix="ttlcheck", signer=decision_keys.signer(), retention_seconds=3600)
    two = ApprovalPolicy(two_person_tags=["rw"])
    auto = ApprovalPolicy(auto_approve={"tools": ["_status$"]})
    await store.park(0, "r1", 60, 30, 20, token="tok1")
    (handed,) = await store.propose("C1/1.1", [proposal()], two, "U_REQ")
    assert (await store.approve(handed.id, "U1", [], two)).state is CallState.running  # approved, then handed over
    (pair,) = await store.propose("C1/1.1", [proposal(tags=["rw"])], two, "U_REQ")
    await store.approve(pair.id, "U1", [], two)
    assert (await store.approve(pair.id, "U2", [], two)).state is CallState.approved
    await store.park(0, "r2", 60, 30, 20, token="tok2")
    batch = await store.propose("C2/2.2", [proposal(), proposal(argv=["status", "--host", "x"])], auto, "U_REQ")
    assert [r.state for r in batch] == [CallState.running, CallState.auto_approved]
    (denied,) = await store.propose("C4/4.4", [proposal()], two, "U_REQ")
    await store.deny(denied.id, "U1", [], two)
    (lapsing,) = await store.propose("C5/5.5", [proposal()], two, "U_REQ")
    await store.expire_due(datetime.now(UTC) + timedelta(days=2))
    assert (await store.get(lapsing.id)).state is CallState.expired
    rejected_first = await store.propose("C3/3.3", [proposal(tags=[DENY_TAG]), proposal()], two, "U_REQ")
    assert [r.state for r in rejected_first] == [CallState.rejected, CallState.awaiting_approval]
    assert (await store.request_cancel(handed.id, "U1", [], two)).state is CallState.cancelled
    assert await store.claim(pair.id, "r3", nonce="n1") is not None
    await store.finish(pair.id, "r3", {"status": "finished", "exit_code": 0, "output": "ok"})

    keys = sorted(k.decode() for k in await redis.keys("ttlcheck:*"))
    per_call_or_thread = [k for k in keys if any(part in k for part in (":call:", ":body:", ":conv:"))]
    assert any(":conv:C3/3.3:calls" in k for k in per_call_or_thread)  # made after the rejected call's keep
    no_ttl = [k for k in per_call_or_thread if await redis.ttl(k) < 0]
    assert no_ttl == []
    for key in keys:
        if key not in per_call_or_thread and await redis.ttl(key) < 0:
            name = key.split("}:", 1)[1]
            assert name.split(":")[0] in SHARED | {"handoff"}, key
