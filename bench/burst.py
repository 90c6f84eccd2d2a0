"""The burst of issue #19 (``python bench/bench_load.py --burst``): many signed ``/fisk`` requests at once against a
Redis command pool deliberately smaller than the number in flight, first one combined ``serve`` process, then
split ``--role slack|agent|runner`` processes.

Each request asks for one tool call (the compiled bench tool's ``auth_user_list``, auto-approved by policy as
``impact:ro``), so intake, agent, runner and poster all work under the burst. Real Redis, real processes, the
loopback fake Slack and Messages API. Figures per topology: how Slack's requests were answered (200 with an empty
body = acknowledged; the ephemeral "could not start"; 5xx), acknowledgement latency, time until every
acknowledged request has its answer in its own thread, the most Redis connections each process held at once
(``CLIENT LIST``, sampled every 20 ms, against the bound the configuration implies) and the pool wait timeouts
each process counted (``/metrics``). Exit status 1 if an acknowledged request was not answered, a 5xx was seen
or a bound was exceeded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import urlopen

import aiohttp
import redis

from bench.support import TOOL, RedisProcess, Role, build_tool, pct, wait_until, write_config
from bot.config import parse_config
from bot.roles import connection_bound
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_use_reply
from tests.support.fake_slack import FakeSlack, sign_slack_request
from tests.support.redis_server import free_port

SECRET = "bench-burst-secret"
CHANNEL = "C0BURST"
TAG = re.compile(r"burst (b\d{5})")
TOPOLOGIES = {"combined": ["all"], "split": ["slack", "agent", "runner"]}


class Model(FakeAnthropic):
    """Each request's first model turn asks for the bench tool; the second answers with the request's tag."""

    def _next(self, request: RecordedRequest) -> Reply:
        messages = (request.json or {}).get("messages") or []
        found = TAG.search(json.dumps(messages[:1]))
        if found is None:
            return text_reply("no tag")
        last = messages[-1].get("content")
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return text_reply(f"answer {found.group(1)}")
        return tool_use_reply([(f"toolu_{found.group(1)}", TOOL, {})])


def sample_connections(client: redis.Redis, stop: threading.Event, peak: Counter[str]) -> None:
    while not stop.is_set():
        now = Counter(str(c.get("name")) for c in client.client_list() if str(c.get("name", "")).startswith("fisk"))
        for name, count in now.items():
            peak[name] = max(peak[name], count)
        time.sleep(0.02)


async def send(url: str, slack: FakeSlack, requests: int, in_flight: int) -> list[tuple[int, str, float]]:
    slots = asyncio.Semaphore(in_flight)
    connector = aiohttp.TCPConnector(limit=in_flight)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:

        async def one(n: int) -> tuple[int, str, float]:
            body = urlencode({"command": "/fisk", "text": f"burst b{n:05d}: who can log in?", "user_id": f"U{n:05d}",
                              "channel_id": CHANNEL, "team_id": "T1", "response_url": slack.response_url(f"b{n}"),
                              "trigger_id": str(n)})
            async with slots:
                started = time.monotonic()
                headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}
                try:
                    async with session.post(url, data=body.encode(), headers=headers) as resp:
                        return resp.status, await resp.text(), time.monotonic() - started
                except (aiohttp.ClientError, TimeoutError) as exc:
                    return 0, repr(exc), time.monotonic() - started

        return await asyncio.gather(*(one(n) for n in range(requests)))


def unanswered(slack: FakeSlack, tags: set[str]) -> set[str]:
    threads: dict[str, str] = {}
    replies: dict[str, list[str]] = {}
    for (channel, ts), message in list(slack.messages.items()):
        if channel != CHANNEL:
            continue
        text = json.dumps(message)
        if message.get("thread_ts") and message.get("thread_ts") != ts:
            replies.setdefault(str(message["thread_ts"]), []).append(text)
        elif (found := TAG.search(text)) and "asked:" in text:
            threads[found.group(1)] = ts
    return {t for t in tags if not any(f"answer {t}" in r for r in replies.get(threads.get(t, ""), []))}


def pool_timeouts(role: Role) -> float:
    with urlopen(f"http://127.0.0.1:{role.health_port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("fisk_chatops_redis_pool_timeouts_total{"))


def run_topology(name: str, args: argparse.Namespace, work: Path, tool: Path) -> tuple[dict[str, str], bool]:
    """One burst against one topology; (figures, ok)."""
    store = RedisProcess(work / f"redis-{name}")
    port = free_port()
    settings: dict[str, Any] = {
        "redis": {"max_connections": args.burst_pool, "pool_timeout_seconds": 10},
        "approval": {"approvers": {"users": ["UAPPROVER"]}, "auto_approve": {"tags": ["impact:ro"]}},
        "agent": {"user_rate_limit_per_minute": 100000},
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": port,
                  "rate_limit": {"per_user": 0, "per_channel": 0}},
    }
    config = write_config(work, tool, f"burst-{name}.yaml", max_concurrency=16, **settings)
    roles: list[Role] = []
    figures: dict[str, str] = {}
    try:
        with FakeSlack() as slack, Model() as model:
            env = {**os.environ, "REDIS_URL": store.url, "SLACK_BOT_TOKEN": "xoxb-bench",
                   "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "bench-key",
                   "ANTHROPIC_BASE_URL": model.base_url}
            for role in TOPOLOGIES[name]:
                roles.append(Role(role, f"{name}-{role}", config, env, work / "logs"))
            for role in roles:
                wait_until(role.ready, 90, f"{role.name} ready", 0.2)
            peak: Counter[str] = Counter()
            stop = threading.Event()
            sampler = threading.Thread(target=sample_connections, args=(store.client, stop, peak), daemon=True)
            sampler.start()
            started = time.monotonic()
            url = f"http://127.0.0.1:{port}/slack/events"
            replies = asyncio.run(send(url, slack, args.burst, args.burst_in_flight))
            acked_in = time.monotonic() - started
            acked = {f"b{n:05d}" for n, (status, body, _) in enumerate(replies) if status == 200 and not body}
            with contextlib.suppress(TimeoutError):  # what is missing then is counted below
                wait_until(lambda: not unanswered(slack, acked), args.timeout, "every request answered", 0.5)
            answered_in = time.monotonic() - started
            stop.set()
            sampler.join()
            missing = unanswered(slack, acked)
            timeouts = sum(pool_timeouts(role) for role in roles)
    finally:
        for role in roles:
            role.stop()
        store.stop()
    statuses = Counter(status for status, _, _ in replies)
    refused = sum(1 for status, body, _ in replies if status == 200 and body)
    latencies = [latency for _, _, latency in replies]
    parsed = parse_config(json.loads(config.read_text()))
    bounds = {process_name(role): connection_bound(parsed, role_set(role)) for role in TOPOLOGIES[name]}
    over = {n: (peak[n], b) for n, b in bounds.items() if peak[n] > b}
    figures["requests / in flight / command pool"] = f"{args.burst} / {args.burst_in_flight} / {args.burst_pool}"
    errors = sum(c for s, c in statuses.items() if s >= 500)
    figures["answers to Slack"] = (f"{len(acked)} acknowledged, {refused} 'could not start', {errors} 5xx, "
                                   f"{statuses.get(0, 0)} failed")
    figures["ack latency"] = (f"median {pct(latencies, 50) * 1000:.0f} ms, p99 {pct(latencies, 99) * 1000:.0f} ms, "
                              f"max {max(latencies) * 1000:.0f} ms; all sent in {acked_in:.1f} s")
    figures["acknowledged and answered in their thread"] = (f"{len(acked) - len(missing)} of {len(acked)} "
                                                            f"in {answered_in:.1f} s")
    figures["peak connections (bound)"] = ", ".join(f"{n.removeprefix('fisk-chatops.')} {peak[n]} ({b})"
                                                    for n, b in bounds.items())
    figures["pool wait timeouts"] = f"{timeouts:.0f}"
    ok = not missing and not any(s >= 500 for s in statuses) and not over
    return figures, ok


def role_set(role: str) -> set[str]:
    return {"slack", "agent", "runner"} if role == "all" else {role}


def process_name(role: str) -> str:
    """The name a process's Redis connections carry in CLIENT LIST (``fisk-chatops.<roles>``)."""
    return "fisk-chatops." + "-".join(sorted(role_set(role)))


def run_burst(args: argparse.Namespace, work: Path) -> int:
    tool = build_tool(work / "bin")
    failed = False
    for name in TOPOLOGIES:
        figures, ok = run_topology(name, args, work, tool)
        failed |= not ok
        print(f"\nburst, {name} ({' + '.join(TOPOLOGIES[name])}){'' if ok else '  -- FAILED'}")
        width = max(len(k) for k in figures)
        for key, value in figures.items():
            print(f"  {key:<{width}}  {value}")
    return 1 if failed else 0
