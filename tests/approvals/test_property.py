"""Property: random interleavings of approve / deny / cancel / expire / claim / finish / crash never run a
call twice and never run a call that was not approved."""

from __future__ import annotations

import asyncio
import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from bot.approvals.errors import ApprovalError
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from tests.approvals.conftest import proposal

OPS = st.lists(
    st.tuples(
        st.sampled_from(["approve", "approve2", "deny", "cancel", "expire", "claim", "finish", "crash"]),
        st.integers(0, 2),
        st.sampled_from(["r1", "r2"]),
    ),
    max_size=25,
)


async def scenario(url: str, ops: list[tuple[str, int, str]]) -> None:
    redis = Redis.from_url(url)
    await redis.flushall()
    clock = [1000.0]
    store = CallStore(redis, clock=lambda: clock[0], heartbeat_ttl=1000)
    policy = ApprovalPolicy(two_person_tags=["two"], expire_after_seconds=50)
    records = await store.propose("c", [proposal(), proposal(tags=["two"]), proposal()], policy, "U")
    ids = [r.id for r in records]
    runs: dict[str, int] = {i: 0 for i in ids}
    ever_approved: set[str] = set()
    for op, index, runner in ops:
        call_id = ids[index]
        clock[0] += 7
        with contextlib.suppress(ApprovalError, ValueError):
            if op in ("approve", "approve2"):
                rec = await store.approve(call_id, "UA" if op == "approve" else "UB", [], policy)
                if rec.state is CallState.approved:
                    ever_approved.add(call_id)
            elif op == "deny":
                await store.deny(call_id, "UA", [], policy)
            elif op == "cancel":
                await store.cancel(call_id, "U", "stop")
            elif op == "expire":
                await store.expire_due()
            elif op == "claim":
                if await store.claim(call_id, runner) is not None:
                    runs[call_id] += 1
            elif op == "finish":
                await store.finish(call_id, runner, {"status": "finished"})
            elif op == "crash":
                await redis.delete(store.keys.heartbeat(call_id))
                await store.interrupt_stale()
    for call_id in ids:
        rec = await store.get(call_id)
        assert runs[call_id] <= 1
        if runs[call_id]:
            assert call_id in ever_approved
            assert rec.state in (CallState.running, CallState.finished, CallState.interrupted)
            assert len(rec.approvals) >= rec.approvals_needed
        stream = await redis.xrange(store.keys.run_stream(0))
        stream_entries = [e for e in stream if e[1][b"call_id"] == call_id.encode()]
        assert len(stream_entries) == (1 if call_id in ever_approved else 0)
    await redis.aclose()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_never_runs_twice_or_undecided(redis_server, ops):  # type: ignore[no-untyped-def]
    asyncio.run(scenario(redis_server.url, ops))
