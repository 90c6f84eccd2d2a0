"""A claim retried with its own nonce (its first attempt ran in Redis, the reply was lost) gets the record back as
its claim, once; anything else that finds the call running is refused as before: another runner, another nonce
(a new handling of the entry, a take-over), no nonce, a nonce of a call that has ended or was given back."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.store_runs import new_claim_nonce
from tests.approvals.test_store import transitions
from tests.approvals.test_worker import approved_calls


async def test_a_retry_with_its_own_nonce_gets_the_claim_back_once_audited(store: CallStore, redis: Redis) -> None:
    [call_id] = await approved_calls(store, 1)
    nonce = new_claim_nonce()
    first = await store.claim(call_id, "r1", nonce=nonce)
    again = await store.claim(call_id, "r1", nonce=nonce)  # as if the first reply had been lost
    assert first is not None and again is not None
    assert again.state is CallState.running and again.runner == "r1" and again.started_at == first.started_at
    assert await transitions(redis, call_id) == [
        ("proposed", "awaiting_approval", "U_REQ"), ("awaiting_approval", "approved", "U_APP"),
        ("approved", "running", "runner:r1"),
    ]  # one approved -> running entry, not two


async def test_another_runner_nonce_or_no_nonce_is_still_refused(store: CallStore, redis: Redis) -> None:
    [call_id] = await approved_calls(store, 1)
    nonce = new_claim_nonce()
    assert await store.claim(call_id, "r1", nonce=nonce) is not None
    assert await store.claim(call_id, "r2", nonce=nonce) is None  # the same nonce from a second runner
    assert await store.claim(call_id, "r1", nonce=new_claim_nonce()) is None  # a take-over of the entry
    assert await store.claim(call_id, "r1") is None
    assert await store.claim(call_id, "r1", nonce=nonce[:-1]) is None
    assert await store.claim(call_id, "r1", nonce=f"{nonce} approved") is None  # the stored form, forged
    assert await store.claim(call_id, "r1", nonce="approved") is None
    assert len([t for t in await transitions(redis, call_id) if t[1] == "running"]) == 1


async def test_a_claim_without_nonce_is_not_recognised_either(store: CallStore) -> None:
    [call_id] = await approved_calls(store, 1)
    assert await store.claim(call_id, "r1") is not None
    assert await store.claim(call_id, "r1") is None
    assert await store.claim(call_id, "r1", nonce="") is None


async def test_the_nonce_is_gone_once_the_call_ended_and_a_replay_is_refused(store: CallStore, redis: Redis) -> None:
    finished, interrupted = await approved_calls(store, 2)
    nonces = {finished: new_claim_nonce(), interrupted: new_claim_nonce()}
    for call_id, nonce in nonces.items():
        assert await store.claim(call_id, "r1", nonce=nonce) is not None
        assert await redis.hget(store.keys.call(call_id), "claim") is not None
    await store.finish(finished, "r1", {"status": "finished", "exit_code": 0, "output": "ok"})
    await store.mark_interrupted(interrupted, "heartbeat stopped")
    for call_id, nonce in nonces.items():
        assert await redis.hget(store.keys.call(call_id), "claim") is None  # no byte kept after the call ended
        assert await store.claim(call_id, "r1", nonce=nonce) is None
    assert (await store.get(finished)).state is CallState.finished
    assert (await store.get(interrupted)).state is CallState.interrupted


async def test_a_claim_given_back_forgets_its_nonce(store: CallStore, redis: Redis) -> None:
    """A claim no replica confirmed is given back (RELEASE): the call is approved again without the nonce, and the
    same handling's next claim is a fresh approved -> running, audited as such."""
    [call_id] = await approved_calls(store, 1)
    nonce = new_claim_nonce()
    assert await store.claim(call_id, "r1", nonce=nonce) is not None
    keys = [store.keys.call(call_id), store.keys.heartbeat(call_id)]
    common = store._common(store.keys.shard_of_call(call_id), store._clock())
    await store._release(keys=keys, args=[*common, call_id, "r1", "approved", "given back"])
    assert await redis.hget(store.keys.call(call_id), "claim") is None
    assert (await store.get(call_id)).state is CallState.approved
    assert await store.claim(call_id, "r2", nonce=nonce) is not None  # an approved call: any claim, as before
    assert await store.claim(call_id, "r1", nonce=nonce) is None
    assert [t[1:] for t in await transitions(redis, call_id)][-3:] == [
        ("running", "runner:r1"), ("approved", "runner:r1"), ("running", "runner:r2"),
    ]


async def test_a_recognised_retry_answers_the_state_claimed_from(store: CallStore) -> None:
    """The retry answers the state its claim came from (what a give-back returns the call to)."""
    [call_id] = await approved_calls(store, 1, ApprovalPolicy())
    nonce = new_claim_nonce()
    common = store._common(store.keys.shard_of_call(call_id), store._clock())
    keys = [store.keys.call(call_id), store.keys.heartbeat(call_id)]
    args = [*common, call_id, "r1", 1000, nonce]
    assert (await store._claim(keys=keys, args=args))[2] in (b"approved", "approved")
    reply = await store._claim(keys=keys, args=args)
    assert reply[0] in (b"ok", "ok") and reply[2] in (b"approved", "approved")
