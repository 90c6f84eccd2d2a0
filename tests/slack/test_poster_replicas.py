"""Two slack replicas' posters on one Redis: a reply never overtakes a result the other replica is posting, and
each result is posted once whichever of them gets to it. (The whole pair as processes: tests/scaling/
test_slack_replicas.py.)"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.slack import SlackFrontEnd, SlackSettings
from bot.slack.client import close_client
from bot.tools.catalog import Catalog
from tests.slack.conftest import CHANNEL, Harness, make_front
from tests.support.fake_slack import FakeSlack, SlackCall

CONV = f"slack:{CHANNEL}:1700.000001"


def key_of(call: SlackCall) -> str:
    metadata = call.params.get("metadata") or {}
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    return str((metadata.get("event_payload") or {}).get("key") or "")


def posted_keys(slack: FakeSlack) -> list[str]:
    """The bot's posts in the order Slack accepted them (their ts), by metadata key."""
    posts = [c for c in slack.calls_to("chat.postMessage") if c.status == 200 and c.response.get("ok")]
    return [key_of(c) for c in sorted(posts, key=lambda c: float(c.response["ts"]))]


def slow_results(slack: FakeSlack, seconds: float) -> None:
    def post(call: SlackCall) -> dict[str, Any]:
        if key_of(call).startswith("result:"):
            time.sleep(seconds)  # this request's own server thread: nothing else waits
        return slack._api_chat_postMessage(call.params)

    slack.on("chat.postMessage", post)


@pytest.fixture
async def other(slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
                settings: SlackSettings) -> AsyncIterator[SlackFrontEnd]:
    """A second slack replica on the same Redis and Slack (the ``harness`` front is the first)."""
    front = make_front(slack, redis, store, policy, catalog, settings.model_copy(update={"consumer": "replica-b"}))
    yield front
    await close_client(front.deps.client)


async def finished_with_card(harness: Harness) -> CallRecord:
    record = await harness.propose(CONV, ["opsctl", "status"])
    await harness.front.poster.post_card(record.id)
    await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=record.argv_hash)
    assert await harness.store.claim(record.id, "runner-1")
    return await harness.store.finish(record.id, "runner-1", {"status": "finished", "exit_code": 0, "output": "ok\n",
                                                               "duration_seconds": 0.1, "total_bytes": 3})


async def test_a_reply_waits_for_the_result_the_other_replica_is_posting(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    record = await finished_with_card(harness)
    slow_results(slack, 0.5)
    # replica A takes the completion and is still waiting for Slack to accept the result...
    posting = asyncio.create_task(harness.front.poster.handle_completion(record.id, owner="a:completions:1-0"))
    await asyncio.sleep(0.15)
    # ...when replica B takes the agent's answer, written from that result
    await other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0"))
    await posting
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]


async def test_a_reply_posts_a_result_nobody_has_taken_yet_and_the_completion_does_not_post_it_again(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    record = await finished_with_card(harness)
    await other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0"))
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]
    await harness.front.poster.handle_completion(record.id, owner="a:completions:1-0")  # read late, on A
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]
    card = slack.message(CHANNEL, (await store.get(record.id)).meta["slack_ts"])
    assert "Finished" in json.dumps(card["blocks"])


async def test_both_replicas_taking_one_result_at_once_post_it_once(
    harness: Harness, other: SlackFrontEnd, slack: FakeSlack, store: CallStore) -> None:
    record = await finished_with_card(harness)
    slow_results(slack, 0.3)
    await asyncio.gather(
        harness.front.poster.handle_completion(record.id, owner="a:completions:1-0"),
        other.poster.handle(bus.BusEvent("reply", CONV, {"text": "all done"}, id="2-0")),
    )
    assert posted_keys(slack) == [f"card:{record.id}", f"result:{record.id}", "reply:2-0"]
