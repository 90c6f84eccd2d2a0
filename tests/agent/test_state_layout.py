"""How a conversation's state and its handled inbox events are kept in Redis: a proposed call's tool_use id is
not stored twice (the call id is made from it), handled event ids are fields of a small hash, and what a
previous version stored (state with the id, a set of seen events) still loads and still deduplicates."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from bot.agent.state import ConversationStore, ConvState, PendingCall, QueuedMessage

CONV = "slack:C0STATE:1700000000.000100"
TOOL_USE = "toolu_01AbCdEfGhIjKlMnOpQrStUv"


async def test_a_proposed_call_is_stored_without_its_tool_use_id_and_loads_with_it(redis: Redis) -> None:
    store = ConversationStore(redis, retention_seconds=60)
    token = await store.acquire(CONV, 5)
    assert token is not None
    state = ConvState(pending=[PendingCall(tool_use_id=TOOL_USE, call_id=f"s3-{TOOL_USE}"),
                               PendingCall(tool_use_id="toolu_local", local_result="unknown tool")])
    assert await store.save(CONV, token, [], state)
    stored = json.loads(await redis.get(store.key(CONV, "state")))
    assert stored["pending"][0] == {"call_id": f"s3-{TOOL_USE}"}
    assert stored["pending"][1]["tool_use_id"] == "toolu_local"  # not proposed: nothing to derive it from
    assert (await store.load(CONV))[1] == state


async def test_a_call_id_not_made_from_the_tool_use_id_keeps_both(redis: Redis) -> None:
    pending = PendingCall(tool_use_id=TOOL_USE, call_id="s3-other")
    assert json.loads(pending.model_dump_json())["tool_use_id"] == TOOL_USE
    assert PendingCall.model_validate_json(pending.model_dump_json()) == pending


async def test_state_stored_by_a_previous_version_loads(redis: Redis) -> None:
    store = ConversationStore(redis, retention_seconds=60)
    await redis.set(store.key(CONV, "state"), json.dumps(
        {"pending": [{"tool_use_id": TOOL_USE, "call_id": f"s0-{TOOL_USE}"}], "tokens_used": 7}))
    _, state = await store.load(CONV)
    assert state.pending[0].tool_use_id == TOOL_USE and state.pending[0].call_id == f"s0-{TOOL_USE}"


async def test_handled_events_are_a_small_hash_and_a_redelivery_is_not_queued_twice(redis: Redis) -> None:
    store = ConversationStore(redis, retention_seconds=60)
    message = QueuedMessage(id="1700000000000-0", user="U1", text="hi")
    assert await store.enqueue(CONV, message)
    assert not await store.enqueue(CONV, message)
    assert await store.seen(CONV, message.id)
    assert await redis.type(store.key(CONV, "handled")) == b"hash"
    assert await redis.object("encoding", store.key(CONV, "handled")) in (b"ziplist", b"listpack")
    assert 0 < await redis.ttl(store.key(CONV, "handled")) <= 60
    await store.mark_seen(CONV, "1700000000001-0")
    assert await store.seen(CONV, "1700000000001-0") and not await store.seen(CONV, "1700000000002-0")


async def test_events_in_a_previous_versions_seen_set_stay_handled(redis: Redis) -> None:
    store = ConversationStore(redis, retention_seconds=60)
    await redis.sadd(store.key(CONV, "seen"), "1700000000000-0")
    assert await store.seen(CONV, "1700000000000-0")
    assert not await store.enqueue(CONV, QueuedMessage(id="1700000000000-0", user="U1", text="hi"))
    assert await redis.zcard(store.key(CONV, "queue")) == 0
    assert await store.enqueue(CONV, QueuedMessage(id="1700000000003-0", user="U1", text="new"))
