"""A claim whose reply is lost (Redis ran the claim script, the runner never heard back), through the handler that
now awaits its claim itself (review of the claim-in-handler change): the retried claim finds the call running and
is refused, so the call never runs at all, let alone twice, and it does not stay running unseen: its heartbeat
lapses and the sweeper marks it interrupted ("outcome unknown, not re-run"; the human asks again). A claim the
runner could recognise as its own on the retry (a nonce per claim) would let it run once instead: not done."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.records import CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.approvals.helpers import all_terminal, executions, marker_executor, running, wait_until
from tests.approvals.test_worker import FAST, approved_calls
from tests.support.reply_dropping_proxy import ReplyDroppingProxy


async def test_a_claim_whose_reply_is_lost_never_runs_and_ends_interrupted(redis_url: str, tmp_path: Path) -> None:
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
        await proxied.aclose()
    assert proxy.dropped == 1
    record = await CallStore(direct).get(call_id)
    assert executions(marker) == []
    assert record.state is CallState.interrupted, record.state
    trail = [(e.from_state, e.to_state, e.actor) for e in await read_audit(direct, call_id=call_id)]
    assert trail[-2:] == [("approved", "running", "runner:w-lost-reply"), ("running", "interrupted", "sweeper")]
    await direct.aclose()
