"""What one whole call costs each process, Redis included (not a test): ``python bench/bench_call_cost.py``.

Real parts: one redis-server (AOF, everysec), ``serve --role slack`` (HTTP mode, Web API on the loopback fake
Slack), ``serve --role agent`` (Messages API on the loopback fake model), ``serve --role runner`` (the compiled
bench tool), all started from this process. Each call is a whole conversation, as Slack and a person drive it:
a signed ``/fisk`` request -> the request posted, the thread opened, the agent's turn -> the model proposes one
call -> its card -> a signed Approve click -> the runner runs it -> its result posted -> the agent resumes -> the
model's answer posted.

N conversations are started at once (``--in-flight`` requests at a time), each card is clicked as soon as the
call has it, and the run ends when the N-th answer is posted. Printed: calls per second end to end, and the CPU
seconds each process and Redis used per call (``bench/cpu.py``), less what they use idle (blocking reads that
time out, the sweeper, metrics: measured first, for ``--idle-seconds``, and subtracted for the run's duration).
Each role runs one asyncio loop, so 1000 / (its CPU ms per call) is the most calls per second one process of it
can take on one core; Redis likewise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
import redis  # noqa: E402
from redis.asyncio import Redis  # noqa: E402
from redis.asyncio.cluster import RedisCluster  # noqa: E402

from bench.cpu import CpuMeter  # noqa: E402
from bench.support import APPROVER, TOOL, RedisProcess, Role, build_tool, wait_until, write_config  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_use_reply  # noqa: E402
from tests.support.fake_slack import FakeSlack, SlackCall, sign_slack_request  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402
from tests.support.redis_topologies import RedisClusterServers  # noqa: E402

SECRET = "bench-signing-secret"
CHANNEL = "C0COST"
TAG = re.compile(r"cost (c\d{6})")


class Model(FakeAnthropic):
    """First request of a conversation: one tool_use of the bench tool; after its result: the answer."""

    def _next(self, request: RecordedRequest) -> Reply:
        messages = (request.json or {}).get("messages") or []
        found = TAG.search(json.dumps(messages[:1]))
        cid = found.group(1) if found else "unknown"
        content = messages[-1].get("content") if messages else None
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            return text_reply(f"answer {cid}: the users are listed.")
        return tool_use_reply([(f"toolu_{cid}", TOOL, {})], text="Listing the users.")


class Watch:
    """The fake Slack's posts: cards to click (queued), answers counted."""

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.lock = threading.Lock()
        self.cards: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self.answers: set[str] = set()
        self.loop = asyncio.get_running_loop()
        slack.on("chat.postMessage", self._post)

    def _post(self, call: SlackCall) -> dict[str, Any]:
        reply = self.slack._api_chat_postMessage(call.params)
        blocks = call.params.get("blocks") or []
        button = next((e for b in blocks if isinstance(b, dict) and b.get("type") == "actions"
                       for e in b.get("elements", []) if e.get("action_id") == "fisk_approve"), None)
        if button is not None:
            card = {"value": button["value"], "ts": reply["ts"], "thread_ts": str(call.params.get("thread_ts"))}
            self.loop.call_soon_threadsafe(self.cards.put_nowait, card)
        elif found := re.search(r"answer (c\d{6})", str(call.params.get("text") or "")):
            with self.lock:
                self.answers.add(found.group(1))
        return reply


def signed(body: str) -> dict[str, str]:
    return {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}


class Driver:
    def __init__(self, session: aiohttp.ClientSession, url: str, slack: FakeSlack, store: CallStore,
                 in_flight: int) -> None:
        self.session, self.url, self.slack, self.store = session, url, slack, store
        self.slots = asyncio.Semaphore(in_flight)
        self.seq = 0
        self.failures: list[str] = []
        self.refused = 0  # 503 answers (sent again)

    async def post(self, body: str) -> None:
        """Send like Slack; a request the bot could not record in time (a 503, or a command's "could not start")
        is sent again a second later, as Slack retries an event and a person clicks again (``refused``)."""
        for _ in range(5):
            async with self.slots, self.session.post(self.url, data=body.encode(), headers=signed(body)) as resp:
                text = await resp.text()
                if resp.status == 200 and "could not start" not in text:  # a command's ephemeral refusal
                    return
                if resp.status not in (200, 503):
                    self.failures.append(f"HTTP {resp.status}: {text}")
                    return
            self.refused += 1
            await asyncio.sleep(1.0)
        self.failures.append("HTTP 503 five times")

    async def command(self) -> str:
        self.seq += 1
        cid = f"c{self.seq:06d}"
        form = {"command": "/fisk", "text": f"cost {cid}: list the users", "user_id": f"U{self.seq:08d}",
                "channel_id": CHANNEL, "team_id": "T1", "response_url": self.slack.response_url(cid),
                "trigger_id": cid}
        await self.post(urlencode(form))
        return cid

    async def click(self, card: dict[str, str]) -> None:
        call_id = json.loads(card["value"])["call"]
        deadline = time.monotonic() + 30
        # a person clicks a card Slack shows; the bot takes the click once it has recorded which message is the
        # card (right after chat.postMessage returns). Polled gently: these reads count in Redis's CPU too.
        while True:
            await asyncio.sleep(0.05)
            if (await self.store.get(call_id)).meta.get("slack_ts") == card["ts"]:
                break
            if time.monotonic() > deadline:
                self.failures.append(f"card of {call_id} never recorded")
                return
        payload = {
            "type": "block_actions", "user": {"id": APPROVER}, "team": {"id": "T1"}, "api_app_id": "A1",
            "channel": {"id": CHANNEL},
            "container": {"type": "message", "message_ts": card["ts"], "channel_id": CHANNEL},
            "message": {"ts": card["ts"], "thread_ts": card["thread_ts"]},
            "actions": [{"action_id": "fisk_approve", "block_id": "b", "type": "button", "value": card["value"],
                         "action_ts": str(time.time())}],
            "response_url": self.slack.response_url("click"), "trigger_id": f"t{time.monotonic_ns()}",
        }  # fmt: skip
        await self.post(urlencode({"payload": json.dumps(payload)}))


async def conversations(driver: Driver, watch: Watch, n: int, timeout: float) -> float:
    """Start ``n`` conversations, click every card as it comes, return the seconds until the n-th answer."""
    target = len(watch.answers) + n
    t0 = time.monotonic()
    clickers: set[asyncio.Task[None]] = set()

    async def click_cards() -> None:
        while True:
            card = await watch.cards.get()
            task = asyncio.create_task(driver.click(card))
            clickers.add(task)
            task.add_done_callback(clickers.discard)

    clicking = asyncio.create_task(click_cards())
    try:
        await asyncio.gather(*(driver.command() for _ in range(n)))
        while len(watch.answers) < target:
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"{len(watch.answers) - target + n} of {n} answers in {timeout:.0f} s; "
                                   f"failures: {driver.failures[:5]}")
            await asyncio.sleep(0.02)
        return time.monotonic() - t0
    finally:
        clicking.cancel()
        await asyncio.gather(clicking, *clickers, return_exceptions=True)


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as slack, Model() as model:
        work = Path(tmp)
        binary = build_tool(work / "bin")
        cluster: RedisClusterServers | None = None
        if args.cluster:  # 3 primaries + 3 replicas; approve, claim and finish wait for a replica (auto)
            cluster = RedisClusterServers(work / "cluster")
            cluster.start()
            url, shards = cluster.url, 3
            servers = [node.client() for node in cluster.nodes]
            store_redis: Any = RedisCluster.from_url(url)
        else:
            server = RedisProcess(work / "redis")
            url, shards = server.url, 1
            servers = [redis.Redis.from_url(url)]
            store_redis = Redis.from_url(url)
        port = free_port()
        config = write_config(
            work, binary, max_concurrency=16,
            slack={"mode": "http", "http_host": "127.0.0.1", "http_port": port, "usergroup_cache_seconds": 60,
                   "working_reaction": "", "rate_limit": {"per_user": 0, "per_channel": 0}},
            agent={"user_rate_limit_per_minute": 1000},
            redis={"mode": "cluster" if cluster else "standalone", "shards": shards},
        )
        env = {**os.environ, "REDIS_URL": url, "SLACK_BOT_TOKEN": "xoxb-bench", "SLACK_SIGNING_SECRET": SECRET,
               "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": model.base_url}
        roles = [Role(name, name, config, env, work / "logs") for name in ("slack", "agent", "runner")]
        watch = Watch(slack)
        try:
            for role in roles:
                wait_until(role.ready, 90, f"{role.name} ready", 0.2)
            meter = CpuMeter({role.name: role.process.pid for role in roles}, servers)
            async with aiohttp.ClientSession() as session:
                driver = Driver(session, f"http://127.0.0.1:{port}/slack/events", slack,
                                CallStore(store_redis, shards=shards), args.in_flight)
                await conversations(driver, watch, 30, 120)  # warm up
                print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; one process per role; Redis "
                      + ("Cluster, 3 primaries + 3 replicas (CPU of all six summed)" if cluster else "standalone"))
                meter.start()
                await asyncio.sleep(args.idle_seconds)
                idle = {k: v / args.idle_seconds for k, v in meter.stop().items()}  # CPU seconds per second
                print("  idle (nothing to do) CPU ms per second: " + ", ".join(f"{k} {v * 1000:.1f}"
                                                                           for k, v in idle.items()))
                rows = []
                for _ in range(args.rounds):
                    meter.start()
                    web_api = len(slack.calls)
                    seconds = await conversations(driver, watch, args.calls, args.timeout)
                    used = meter.stop()
                    web_api = len(slack.calls) - web_api
                    busy = {k: max(0.0, v - idle[k] * seconds) for k, v in used.items()}  # what the calls added
                    rows.append((args.calls / seconds, {k: v * 1000 / args.calls for k, v in busy.items()}))
                    per_call = ", ".join(f"{k} {v:.2f}" for k, v in rows[-1][1].items())
                    print(f"  {args.calls} calls end to end: {rows[-1][0]:.1f} calls/s; CPU ms per call (idle work "
                          f"subtracted): {per_call}; per call: {meter.commands / args.calls:.0f} Redis commands, "
                          f"{web_api / args.calls:.1f} Slack Web API calls")
            if driver.failures or driver.refused:
                print(f"requests answered 503 and sent again: {driver.refused}; failures: {driver.failures[:10]}")
            names = list(rows[0][1])
            medians = {k: sorted(r[1][k] for r in rows)[len(rows) // 2] for k in names}
            print("median CPU ms per call, and the ceiling that puts on one process (one core, 1000 / ms):")
            for name in names:
                print(f"  {name:7s} {medians[name]:6.2f} ms -> {1000 / medians[name]:6.0f} calls/s")
        except BaseException:
            for role in roles:  # the processes are where the story is
                print(f"==== {role.name} (last lines of {role.log_path})")
                print("\n".join(role.log_path.read_text(errors="replace").splitlines()[-15:]))
            raise
        finally:
            for role in roles:
                role.stop()
            for client in servers:
                client.close()
            await store_redis.aclose()
            if cluster is not None:
                cluster.stop()
            else:
                server.stop()
    print(f"({args.calls} calls per round, {args.rounds} rounds, {args.in_flight} requests in flight; each call is "
          "a conversation: request, card, click, run, result, answer)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="conversations (one call each) per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-flight", type=int, default=20, help="HTTP requests in flight at once")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a round may take")
    parser.add_argument("--cluster", action="store_true", help="a Redis Cluster of 3 primaries + 3 replicas")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="how long the idle work is measured")
    asyncio.run(main(parser.parse_args()))
