"""Reads of many calls in one round trip (``CallStore.states``, ``CallStore.find_many``): what the agent asks
after every completion of a multi-call turn, answered in the order asked, unknown and malformed ids included."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from tests.approvals.conftest import proposal
from tests.approvals.test_store import CONV, awaiting


async def test_states_of_many_calls_in_the_order_asked(store: CallStore, policy: ApprovalPolicy) -> None:
    first, second = await awaiting(store, policy), await awaiting(store, policy)
    await store.deny(second, "U_APP", [], policy)
    assert await store.states([second, "not an id", first, "0-unknown"]) == [
        CallState.denied, None, CallState.awaiting_approval, None]
    assert await store.states([]) == []
    assert await store.states(["not an id"]) == [None]


async def test_find_many_gives_the_records_find_gives(store: CallStore, policy: ApprovalPolicy, redis: Redis) -> None:
    (one, two) = await store.propose(CONV, [proposal(), proposal(argv=["status", "--host", "web-1"])], policy,
                                     "U_REQ")
    await store.approve(two.id, "U_APP", [], policy)
    found = await store.find_many([two.id, "0-unknown", one.id, "not an id"])
    assert found == [await store.find(two.id), None, await store.find(one.id), None]
    assert found[0] is not None and found[0].state is CallState.approved and found[0].argv[-1] == "web-1"
    assert await store.find_many([]) == []
    # a record whose hash was removed (retention) is gone, also when its body is left
    await redis.delete(store.keys.call(one.id))
    assert await store.find_many([one.id]) == [None]
