"""Click -> child started through the real processes (not a test): ``python bench/bench_click.py``.

Real parts: one redis-server (AOF everysec), one ``fisk-chatops serve --role slack`` (HTTP mode, its Web API
client on the loopback fake Slack served from this process), one ``serve --role runner`` whose catalog comes from
introspecting the compiled bench tool (``bench/support.py``). For each sample this process proposes a call
(``CallStore``, as the agent does), records its card on the call (as the poster does), then sends the signed
``block_actions`` request Slack sends when a human clicks Approve, one click at a time: the next click is sent once
the slack role has posted the previous result (as a person's clicks come seconds apart). Measured from just
before the click is sent: the click answered (HTTP 200), the child started (the tool's own ``CLOCK_MONOTONIC``
stamp), the result stored in Redis (this process woken by the completion event). Medians and p99, and the CPU
each process used per click (``bench/cpu.py``: the whole call, the result's posting included).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
import redis  # noqa: E402

from bench.bench_approvals import POLICY, Bench  # noqa: E402
from bench.cpu import CpuMeter  # noqa: E402
from bench.profile import start_profilers, stop_profilers  # noqa: E402
from bench.support import (  # noqa: E402
    APPROVER,
    RedisProcess,
    Role,
    build_tool,
    median_ms,
    pct,
    started_at,
    wait_until,
    write_config,
)
from tests.support.fake_slack import FakeSlack, sign_slack_request  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

SECRET = "bench-signing-secret"
CHANNEL = "C0BENCH"


def click_body(call_id: str, argv_hash: str, card_ts: str, thread_ts: str, response_url: str) -> str:
    payload = {
        "type": "block_actions", "user": {"id": APPROVER}, "team": {"id": "T1"}, "api_app_id": "A1",
        "channel": {"id": CHANNEL}, "container": {"type": "message", "message_ts": card_ts, "channel_id": CHANNEL},
        "message": {"ts": card_ts, "thread_ts": thread_ts},
        "actions": [{"action_id": "fisk_approve", "block_id": "b", "type": "button",
                     "value": json.dumps({"call": call_id, "argv": argv_hash}), "action_ts": str(time.time())}],
        "response_url": response_url, "trigger_id": "2",
    }
    return urlencode({"payload": json.dumps(payload)})


async def sample(bench: Bench, session: aiohttp.ClientSession, url: str, slack: FakeSlack,
                 n: int) -> tuple[float, float, float]:
    thread_ts = f"1700000000.{n:06d}"
    (record,) = await bench.store.propose(f"slack:{CHANNEL}:{thread_ts}", [bench.proposal], POLICY, "UREQ")
    card_ts = f"1700000001.{n:06d}"
    await bench.store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=card_ts)
    body = click_body(record.id, record.argv_hash, card_ts, thread_ts, slack.response_url(f"c{n}"))
    position = await bench.last_completion()
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}
    t0 = time.monotonic()
    async with session.post(url, data=body.encode(), headers=headers) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"click answered HTTP {resp.status}")
    answered = time.monotonic()
    while True:
        reply: Any = await bench.redis.xread({bench.completions: position}, block=5000)
        if not reply:
            raise TimeoutError(f"call {record.id} did not finish within 5 s")
        entries = reply[0][1]
        position = entries[-1][0]
        if any(fields[b"call_id"].decode() == record.id for _, fields in entries):
            break
    finished = time.monotonic()
    done = await bench.store.get(record.id)
    assert done.state == "finished" and done.result is not None, done
    await posted(bench, position)
    return answered - t0, started_at(done.result["output"]) - t0, finished - t0


async def posted(bench: Bench, completion: Any) -> None:
    """Wait (untimed) until the slack role has posted the call's result and updated its card: its poster has
    read the completion entry and acknowledged it, which it does last. A person clicks a card seconds after the
    previous result; without this the next click would land while the previous one is still being posted, and
    the figures would measure that overlap."""
    want = tuple(int(p) for p in completion.decode().split("-"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        (group,) = [g for g in await bench.redis.xinfo_groups(bench.completions) if g["name"] == b"slack"]
        delivered = tuple(int(p) for p in group["last-delivered-id"].decode().split("-"))
        if delivered >= want and not group["pending"]:
            return
        await asyncio.sleep(0.001)
    raise TimeoutError("the slack role did not post a result within 10 s")


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as slack:
        work = Path(tmp)
        binary = build_tool(work / "bin")
        server = RedisProcess(work / "redis")
        port = free_port()
        config = write_config(work, binary, slack={"mode": "http", "http_host": "127.0.0.1", "http_port": port,
                                                    "usergroup_cache_seconds": 0})
        env = {**os.environ, "REDIS_URL": server.url, "SLACK_BOT_TOKEN": "xoxb-bench",
               "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url}
        roles = [Role("slack", "slack", config, env, work / "logs"), Role("runner", "runner", config, env,
                                                                          work / "logs")]
        bench = Bench(work, server.url, binary)
        try:
            for role in roles:
                wait_until(role.ready, 90, f"{role.name} ready", 0.2)
            url = f"http://127.0.0.1:{port}/slack/events"
            async with aiohttp.ClientSession() as session:
                for n in range(20):  # warm up
                    await sample(bench, session, url, slack, n)
                answered, started, finished = [], [], []
                profilers = start_profilers({"serve --role slack": (roles[0].process.pid, args.profile_slack)}
                                            if args.profile_slack else {})
                meter = CpuMeter({r.role: r.process.pid for r in roles}, redis.Redis.from_url(server.url))
                calls_before = len(slack.calls)
                meter.start()
                for n in range(20, 20 + args.samples):
                    a, s, f = await sample(bench, session, url, slack, n)
                    answered.append(a)
                    started.append(s)
                    finished.append(f)
                cpu = meter.stop()
                web_api = Counter(c.method for c in slack.calls[calls_before:])
                stop_profilers(profilers)
            print(f"signed Approve click through serve --role slack + serve --role runner, {args.samples} clicks, "
                  "one at a time:")
            for label, values in (("click -> answered (HTTP 200)", answered), ("click -> child started", started),
                                  ("click -> result in Redis", finished)):
                print(f"  {label:<30} median {median_ms(values):6.2f} ms, p99 {pct(values, 99) * 1e3:6.2f} ms")
            print("  CPU per click (whole call; what contention on a loaded machine does not inflate): "
                  + ", ".join(f"{name} {1000 * seconds / args.samples:.2f} ms" for name, seconds in cpu.items()))
            print(f"  Redis commands per click {meter.commands / args.samples:.1f}; Slack Web API calls per click: "
                  + ", ".join(f"{method} {count / args.samples:.2f}" for method, count in web_api.most_common()))
            for role in roles:
                print(f"RSS of serve --role {role.role}: {(role.rss_kib() or 0) / 1024:.1f} MiB")
        finally:
            for role in roles:
                role.stop()
            await bench.redis.aclose()
            server.stop()
    print("(Redis: AOF everysec; the fake Slack answers on loopback)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--profile-slack", metavar="FILE",
                        help="record the slack role with py-spy during the measured clicks (collapsed stacks)")
    asyncio.run(main(parser.parse_args()))
