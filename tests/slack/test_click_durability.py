"""A click whose approval no Redis replica acknowledged: the clicker is told so and asked to confirm, and the
confirmation neither fails as a double click nor approves or enqueues twice (real Sentinel deployment: primary +
replica + 3 sentinels, the replica stopped with SIGSTOP while the click is handled)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.redis_durable import DurabilitySettings
from bot.slack.cards import UNCONFIRMED_WORDS
from tests.scaling.test_durability import paused
from tests.slack.conftest import Harness, wait_for
from tests.slack.test_approvals import card_for, card_text
from tests.slack.test_standing import _enable
from tests.support import decision_keys
from tests.support.redis_topologies import RedisSentinelServers
from tests.support.topology_clients import open_on


@pytest.fixture
async def redis(redis_sentinel: RedisSentinelServers, tmp_path: Path) -> AsyncIterator[Redis]:
    handle = await open_on("sentinel", redis_sentinel, tmp_path)
    yield handle.client
    await handle.close()


@pytest.fixture
def store(redis: Redis) -> CallStore:
    return CallStore(redis, signer=decision_keys.signer(), durability=DurabilitySettings(timeout_ms=200))


async def test_unconfirmed_approval_asks_the_clicker_to_confirm_and_the_confirmation_runs_nothing_twice(
    harness: Harness, poster, redis_sentinel: RedisSentinelServers
) -> None:
    record = await card_for(harness, poster)
    replica = next(n for n in redis_sentinel.data_nodes if n is not redis_sentinel.current_primary())
    with paused(replica):
        await harness.click(record, "fisk_approve", "UAPPROVER")
        (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert note.params["user"] == "UAPPROVER"
    assert "no Redis replica confirmed it within 200 ms" in note.params["text"]
    blocks = json.loads(note.params["blocks"]) if isinstance(note.params["blocks"], str) else note.params["blocks"]
    (button,) = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert button["action_id"] == "fisk_confirm_approval"
    assert json.loads(button["value"])["call"] == record.id
    assert (await harness.store.get(record.id)).state == CallState.approved  # on the primary all the same
    # the card tells the truth too: approved, but on the primary only
    await wait_for(lambda: UNCONFIRMED_WORDS in card_text(harness, record))
    assert "Approved by <@UAPPROVER>" in card_text(harness, record)
    assert record.id in harness.front.deps.unconfirmed.watched  # put back to awaiting if a failover loses it

    # the note is an ephemeral message (its own ts, not the card's): its button still counts for this call
    await harness.click(record, "fisk_confirm_approval", "UAPPROVER", value=button["value"], card_ts="1800.000009")
    notes = await wait_for(lambda: _at_least(harness.slack.calls_to("chat.postEphemeral"), 2))
    assert "already approved" in notes[1].params["text"] and "confirmed" in notes[1].params["text"]
    assert len(await harness.redis.xrange(harness.store.keys.run_stream(0))) == 1
    assert [a.user for a in (await harness.store.get(record.id)).approvals] == ["UAPPROVER"]
    with replica.client(redis_sentinel.password) as client:
        assert client.hget(harness.store.keys.call(record.id), "state") == b"approved"
    # confirmed: the card says plainly "Approved by", and nobody watches it any more
    text = card_text(harness, record)
    assert UNCONFIRMED_WORDS not in text and "Approved by <@UAPPROVER>" in text
    assert record.id not in harness.front.deps.unconfirmed.watched


async def test_an_unconfirmed_approve_tool_here_says_no_standing_approval_was_made(
    harness: Harness, poster, redis_sentinel: RedisSentinelServers
) -> None:
    _enable(harness)
    record = await card_for(harness, poster, ["opsctl", "status", "web"])
    replica = next(n for n in redis_sentinel.data_nodes if n is not redis_sentinel.current_primary())
    with paused(replica):
        await harness.click(record, "fisk_grant_tool", "UAPPROVER")
        (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "no Redis replica confirmed it" in note.params["text"]
    assert "standing approval for this thread was not made" in note.params["text"]
    assert await harness.store.grants.active(record.conversation) == []
    assert (await harness.store.get(record.id)).state == CallState.approved


async def test_the_confirm_button_is_bound_to_the_calls_own_channel(harness: Harness, poster) -> None:
    record = await card_for(harness, poster)
    foreign = replace(record, meta={**record.meta, "slack_channel": "C0OTHER"})
    await harness.click(foreign, "fisk_confirm_approval", "UAPPROVER")
    (note,) = await wait_for(lambda: harness.slack.calls_to("chat.postEphemeral"))
    assert "does not belong" in note.params["text"]
    assert (await harness.store.get(record.id)).state == CallState.awaiting_approval


def _at_least(items: list, count: int) -> list | None:  # type: ignore[type-arg]
    return items if len(items) >= count else None


async def test_an_unconfirmed_denial_tells_the_denier_it_could_be_undone_by_a_failover(
    harness: Harness, poster, redis_sentinel: RedisSentinelServers
) -> None:
    record = await card_for(harness, poster)
    await harness.click(record, "fisk_deny", "UAPPROVER")  # opens the reason dialog
    (opened,) = await wait_for(lambda: harness.slack.calls_to("views.open"))
    replica = next(n for n in redis_sentinel.data_nodes if n is not redis_sentinel.current_primary())
    with paused(replica):
        await harness.submit_view(opened.response["view"], "UAPPROVER", {})
        notes = await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                        if "denial is recorded" in c.params["text"]])
    assert notes[0].params["user"] == "UAPPROVER"
    assert "no Redis replica confirmed it within 200 ms" in notes[0].params["text"]
    assert (await harness.store.get(record.id)).state == CallState.denied  # on the primary all the same
    await wait_for(lambda: "Denied by <@UAPPROVER>" in card_text(harness, record))
