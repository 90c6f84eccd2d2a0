"""The slack role's pool of blocking-read connections has one connection for every blocking read loop it runs.

A loop without a connection of its own waits for one until ``pool_timeout_seconds`` and fails, again and again:
its stream is never read while the others block (on a Redis Cluster with 3 shards, the poster's progress reads
and the timeline recorder's audit reads starved this way, and the acknowledgement of Slack requests with them)."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.incidents.recorder import TimelineRecorder
from bot.incidents.store import IncidentStore
from bot.roles import reader_loops
from bot.slack import SlackFrontEnd, SlackSettings
from bot.slack.client import close_client
from bot.tools.catalog import Catalog
from tests.slack.conftest import BOT_TOKEN, SECRET
from tests.support.fake_slack import FakeSlack


@pytest.mark.parametrize("shards", [1, 3])
async def test_every_blocking_read_loop_of_the_slack_role_has_a_reader_connection(
    shards: int, slack: FakeSlack, redis: Redis, policy: ApprovalPolicy, catalog: Catalog, settings: SlackSettings,
) -> None:
    store = CallStore(redis, shards=shards)
    front = SlackFrontEnd(settings, redis=redis, store=store, policy=policy, catalog=catalog, bot_token=BOT_TOKEN,
                          signing_secret=SECRET, api_url=slack.api_url)
    try:
        recorder = TimelineRecorder(redis, IncidentStore(redis), store)
        intake = 1  # the intake worker's one stream
        loops = len(front.poster.streams()) + intake + len(recorder.streams())
        assert reader_loops({"slack"}, shards) == loops
    finally:
        await close_client(front.deps.client)
