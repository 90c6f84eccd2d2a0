"""Stopping the slack front end when its own stop is cut short: the real ``SlackFrontEnd.run_http`` with its
intake worker, real Redis, the loopback Web API."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import aiohttp
from redis.asyncio import Redis

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.cancelling import cancel_and_wait
from bot.slack.settings import SlackSettings
from bot.tools.catalog import Catalog
from tests.slack.conftest import Harness, free_port, make_front, wait_for
from tests.support.fake_slack import FakeSlack, SlackCall


async def test_a_front_end_cancelled_while_its_intake_worker_drains_does_not_leave_the_worker_running(
    slack: FakeSlack, redis: Redis, store: CallStore, policy: ApprovalPolicy, catalog: Catalog,
    settings: SlackSettings,
) -> None:
    """SIGTERM: the intake worker is given up to 15 s to finish the request it is handling; serve cancels the
    front end when its own grace is over. The worker must then be stopped with it, not left working on its own
    while the process closes its clients (before: the cancellation left the 15 s wait and nobody stopped it)."""
    entered, release = threading.Event(), threading.Event()

    def stalls(call: SlackCall) -> dict[str, object]:  # Slack slow to answer the "asked" post
        if "asked:" in str(call.params.get("text")):
            entered.set()
            release.wait(30)
        return slack._api_chat_postMessage(call.params)

    slack.on("chat.postMessage", stalls)
    front = make_front(slack, redis, store, policy, catalog, settings)
    stop = asyncio.Event()
    port = free_port()
    server = asyncio.create_task(front.run_http(stop, host="127.0.0.1", port=port))
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{port}/slack/events"

            async def up() -> bool:
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(url) as resp:
                        return resp.status == 405
                return False

            await wait_for(up)
            assert (await Harness(front, slack, url, session, store, redis).command("why is db-3 slow?"))[0] == 200
            assert await asyncio.to_thread(entered.wait, 10)
        stop.set()
        await asyncio.sleep(0.3)  # the worker is in its grace, handling the request
        workers = [t for t in asyncio.all_tasks() if "IntakeWorker.run" in repr(t.get_coro())]
        assert workers and not any(t.done() for t in workers)
        server.cancel()  # serve's grace is over
        done, _ = await asyncio.wait({server}, timeout=10)
        assert done and server.cancelled()
        assert all(t.done() for t in workers), "the intake worker runs on after its front end was cancelled"
        assert all(t.done() for t in front.intake_worker._tasks.values())
    finally:
        release.set()
        await cancel_and_wait([t for t in asyncio.all_tasks() if "IntakeWorker" in repr(t.get_coro())] + [server])
