"""A claim whose reply is lost (Redis ran the claim script, the runner never heard back), through the handler that
awaits its claim itself: the retried claim carries the same nonce as the lost one (one per handling of the run
entry), finds the call running for this runner with that nonce and gets the record back as its claim. So the call
runs exactly once and finishes, with one approved -> running audit entry (before the nonce it never ran and the
sweeper marked it interrupted, "outcome unknown, not re-run")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.approvals.test_worker import FAST, approved_calls
from tests.support.reply_dropping_proxy import ReplyDroppingProxy


async def test_a_claim_whose_reply_is_lost_runs_once_and_finishes(redis_url: str, tmp_path: Path) -> None:
    direct = Redis.from_url(redis_url)
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    marker = tmp_path / "marker"
    assert await CallStore(direct).claim("0-none", "w-other") is None  # the claim script is loaded: Redis runs it
    async with ReplyDroppingProxy(host, int(port), b"W-LOST-REPLY") as proxy:
        proxied = Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0")
        store = CallStore(proxied)  # claims, beats and results go through the proxy; reads and acks do not
        worker = RunnerWorker(direct, store, marker_executor(marker), runner_id="w-lost-reply", reader=direct,
                              **{**FAST, "sweep": True})  # type: ignore[arg-type]
        async with running(worker):
            [call_id] = await approved_calls(CallStore(direct), 1)
            await wait_until(lambda: all_terminal(store, [call_id]), timeout=20)
            await asyncio.sleep(FAST["reclaim_after"] * 3)  # a take-over or a sweep would act meanwhile
        await proxied.aclose()
    assert proxy.dropped == 1
    keys = CallStore(direct).keys
    record = await CallStore(direct).get(call_id)
    assert executions(marker) == [call_id]
    assert record.state is CallState.finished, (record.state, record.result)
    trail = [(e.from_state, e.to_state, e.actor) for e in await read_audit(direct, call_id=call_id)]
    assert trail[-2:] == [
        ("approved", "running", "runner:w-lost-reply"), ("running", "finished", "runner:w-lost-reply"),
    ]
    assert [t for t in trail if t[1] == "running"] == [trail[-2]]
    assert await direct.hget(keys.call(call_id), "claim") is None
    assert await direct.xlen(keys.run_stream(0)) == 0  # the entry was acknowledged (and deleted) with the result
    await direct.aclose()
