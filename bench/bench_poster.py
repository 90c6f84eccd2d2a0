"""How fast one slack replica posts results (not a test): ``python bench/bench_poster.py``.

Real parts: one redis-server (AOF everysec), one ``fisk-chatops serve --role slack`` process (HTTP mode) whose Web
API client talks to the loopback fake Slack (``tests/support/fake_slack.py``, served from this process on its
own threads). The slack role is stopped (SIGSTOP) while this process drives ``--calls`` calls in ``--threads``
Slack threads through the public lifecycle (propose, card recorded on the call, approve, claim, finish), so the
completions wait in Redis; then the role is continued (SIGCONT) and timed until every result message is in the
fake Slack. For each completion the role reads the record, updates the card (chat.update) and posts the
result (chat.postMessage). Prints completions posted per second and whether every thread got its results in
the order its calls finished.

The fake Slack has no rate limits: this measures the bot's own ceiling, not what Slack would allow.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redis.asyncio import Redis  # noqa: E402

from bench.cpu import CpuMeter  # noqa: E402
from bench.support import (  # noqa: E402
    APPROVER,
    RedisProcess,
    Role,
    build_tool,
    signer,
    tool_proposal,
    wait_until,
    write_config,
)
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.records import Proposal  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from tests.support.fake_slack import FakeSlack, SlackCall  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

CHANNEL = "C0BENCH"
POLICY = ApprovalPolicy.model_validate({"approvers": {"users": [APPROVER]}})


async def drive(store: CallStore, proposal: Proposal, calls: int, threads: int, tag: str) -> dict[str, list[str]]:
    """``calls`` finished calls spread over ``threads`` Slack threads; returns each thread's calls in the order
    they finished."""
    order: dict[str, list[str]] = defaultdict(list)
    per_thread = max(1, calls // threads)
    records = []
    for t in range(threads):
        conversation = f"slack:{CHANNEL}:1700{tag}{t:06d}.000100"
        records += await store.propose(conversation, [proposal] * per_thread, POLICY, "UREQ")
    for i, record in enumerate(records):
        await store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=f"1600000000.{i:06d}")
        await store.approve(record.id, APPROVER, [], POLICY)
    for record in records:
        await store.claim(record.id, "bench")
        await store.finish(record.id, "bench", {"status": "finished", "exit_code": 0, "output": f"{record.id}\n"})
        order[record.conversation.rsplit(":", 1)[1]].append(record.id)
    return order


class ResultLog:
    """Records each result post as the fake Slack answers it (cheap to poll, unlike scanning every call)."""

    def __init__(self, slack: FakeSlack) -> None:
        self.posts: list[tuple[str, str]] = []  # (thread_ts, call id) in arrival order
        default = slack._api_chat_postMessage

        def answer(call: SlackCall) -> dict[str, Any]:
            key = ((call.params.get("metadata") or {}).get("event_payload") or {}).get("key", "")
            reply = default(call.params)
            if key.startswith("result:"):
                self.posts.append((str(call.params.get("thread_ts")), key[len("result:"):]))
            return reply

        slack.on("chat.postMessage", answer)

    def by_thread(self) -> dict[str, list[str]]:
        posted: dict[str, list[str]] = defaultdict(list)
        for thread, call_id in list(self.posts):
            posted[thread].append(call_id)
        return posted


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as slack:
        work = Path(tmp)
        binary = build_tool(work / "bin")
        server = RedisProcess(work / "redis")
        config = write_config(work, binary, slack={"mode": "http", "http_host": "127.0.0.1", "http_port": free_port(),
                                                    **args.slack})
        proposal = tool_proposal(binary)
        env = {**os.environ, "REDIS_URL": server.url, "SLACK_BOT_TOKEN": "xoxb-bench",
               "SLACK_SIGNING_SECRET": "bench-secret", "SLACK_API_URL": slack.api_url}
        role = Role("slack", "slack", config, env, work / "logs")
        redis = Redis.from_url(server.url)
        store = CallStore(redis, signer=signer(work))
        try:
            wait_until(role.ready, 90, "slack role ready", 0.2)
            results = ResultLog(slack)
            meter = CpuMeter({"slack": role.process.pid}, [])
            rates: list[float] = []
            costs: list[float] = []
            for round_, calls in enumerate([50, *[args.calls] * args.rounds]):  # the first round warms up
                before = len(results.posts)
                os.kill(role.process.pid, signal.SIGSTOP)
                try:
                    order = await drive(store, proposal, calls, min(args.threads, calls), f"{round_:02d}")
                finally:
                    meter.start()
                    t0 = time.monotonic()
                    os.kill(role.process.pid, signal.SIGCONT)
                total = sum(len(v) for v in order.values())
                wait_until(lambda n=before + total: len(results.posts) >= n, 300, "every result posted", 0.005)
                elapsed = time.monotonic() - t0
                cpu = meter.stop()["slack"]
                posted = results.by_thread()
                in_order = all(posted.get(ts) == ids for ts, ids in order.items())
                if round_ == 0:
                    continue
                rates.append(total / elapsed)
                costs.append(1000 * cpu / total)
                print(f"round {round_}: {total} completions in {len(order)} threads posted in {elapsed:.2f} s: "
                      f"{total / elapsed:.0f} completions/s; per-thread order kept: {'yes' if in_order else 'NO'}; "
                      f"slack role CPU {1000 * cpu / total:.2f} ms per completion (its process got "
                      f"{100 * cpu / elapsed:.0f}% of a core)")
            rates.sort()
            costs.sort()
            print(f"median over {len(rates)} rounds: {rates[len(rates) // 2]:.0f} completions/s per slack replica "
                  f"(settings: {args.slack or 'defaults'}); CPU {costs[len(costs) // 2]:.2f} ms per completion, "
                  f"so at most {1000 / costs[len(costs) // 2]:.0f}/s on one free core")
            print(f"RSS of the slack role after the runs: {(role.rss_kib() or 0) / 1024:.1f} MiB")
        finally:
            role.stop()
            await redis.aclose()
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="completions per round")
    parser.add_argument("--threads", type=int, default=100, help="Slack threads they are spread over")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slack", type=json.loads, default={}, help='extra slack settings as JSON')
    asyncio.run(run(parser.parse_args()))
