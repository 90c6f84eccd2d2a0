"""Redis bytes per pending call, full public path (not a test): ``python bench/bench_redis_memory.py``.

Real processes: one redis-server, ``serve --role slack`` (bolt over HTTP, its Web API client talking to the
loopback fake Slack) and ``serve --role agent`` (the anthropic SDK talking to a loopback fake Messages API), no
runner: nothing is approved, every call stays pending as in a burst waiting for humans. ``--conversations``
signed ``/fisk`` commands go to the slack role; the model answers each with a short preface and
``--calls-per-conversation`` tool_use blocks (realistic 30-character tool_use ids and JSON arguments); the agent
proposes the calls, the slack role posts one approval card per call and records it on the call. Once every
card is posted, every key in Redis is sized with ``MEMORY USAGE`` (all samples) and put in one part:

* call record (the hash ``{s<n>}:call:<id>`` and its body ``{s<n>}:body:<id>``),
* approval indexes and conversation sets (awaiting / running sorted sets, a thread's hash of open calls),
* approval streams (run, audit, progress, completions),
* agent conversation (transcript, state, seen set, queue, lock of a thread),
* bus streams (inbox and outbox, measured after the roles' trim pass that drops what every group acknowledged),
* the thread's timeline (``bot/incidents/recorder.py``, kept for ``incidents.retention_seconds``),
* slack role (thread state, event dedupe, ...) and anything else.

Prints bytes per call for each part, for the call's path (the first five parts: what issue #13 counts) and for
everything (the same keys measured before the burst are subtracted: a warm-up conversation ran first), the
growth of Redis ``used_memory`` per call, and the call record's encoding.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import Request, urlopen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench.support import RedisProcess, Role, build_tool, wait_until, write_config  # noqa: E402
from bot.agent.bus import INBOX, OUTBOX  # noqa: E402
from bot.approvals.keys import Keys  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_use_reply  # noqa: E402
from tests.support.fake_slack import FakeSlack, SlackCall, sign_slack_request  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

SECRET = "bench-signing-secret"
CHANNEL = "C0BENCH0001"
KEYS = Keys()
PARTS = ["call record", "indexes + conversation sets", "approval streams", "agent conversation",
         "bus streams (inbox, outbox)", "thread timeline", "slack role and other"]
#: the parts issue #13 counts as the call's path (the timeline and the slack role's own keys are printed apart)
PATH = PARTS[:5]


def tool_calls(n: int, count: int) -> list[tuple[str, str, dict[str, Any]]]:
    """What a model asks for when a web tier throws 502s: logs, status, a query (ids shaped like real ones)."""
    service = f"web-{n % 17}"
    menu: list[tuple[str, dict[str, Any]]] = [
        ("service_logs", {"service": service, "since": "15m", "lines": "200", "grep": ["502", "upstream"],
                          "level": "warn"}),
        ("service_status", {"service": service, "all": True}),
        ("db_query", {"database": "orders", "format": "table",
                      "sql": "SELECT status, count(*) FROM requests WHERE at > now() - interval '15 minutes'"
                             " GROUP BY status"}),
    ]
    return [(f"toolu_01{n:07d}{k:02d}AbCdEfGhIjKlMnO", *menu[k % len(menu)]) for k in range(count)]


class Model(FakeAnthropic):
    """Answers a thread's first request with a preface and its tool calls (the follow-up never comes here)."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls = calls

    def _next(self, request: RecordedRequest) -> Reply:
        body = request.json if isinstance(request.json, dict) else {}
        messages = body.get("messages") or []
        found = re.search(r"thread (\d+)", json.dumps(messages[0])) if messages else None
        if found is None:
            return text_reply("I do not know this thread.")
        return tool_use_reply(tool_calls(int(found.group(1)), self.calls),
                              text="Let me look at the web tier's recent logs, its instances and the request counts.")


class Cards:
    """Counts approval cards as the fake Slack accepts them."""

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.posted: set[str] = set()
        self.lock = threading.Lock()
        slack.on("chat.postMessage", self._on_post)

    def _on_post(self, call: SlackCall) -> dict[str, Any]:
        reply = self.slack._api_chat_postMessage(call.params)
        blocks = call.params.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        for block in blocks:
            for element in block.get("elements", []) if block.get("type") == "actions" else []:
                if element.get("action_id") == "fisk_approve":
                    with self.lock:
                        self.posted.add(json.loads(element["value"])["call"])
        return reply


def start_thread(events_url: str, slack: FakeSlack, n: int) -> int:
    """A signed /fisk from a user of its own (the agent's per-user rate limit stays out of the way)."""
    form = {"command": "/fisk", "text": f"thread {n}: the web tier is throwing 502s since 10:40, find out why",
            "user_id": f"U{n:07d}", "channel_id": CHANNEL, "team_id": "T1",
            "response_url": slack.response_url(f"cmd{n}"), "trigger_id": str(n)}
    body = urlencode(form)
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}
    with urlopen(Request(events_url, data=body.encode(), headers=headers), timeout=30) as resp:
        return int(resp.status)


def part_of(key: str) -> str:
    """Which part of the path a key belongs to (by the key layout of bot/approvals/keys.py and bot/agent/)."""
    if re.match(r"fc:\{s\d+\}:(call|body):", key):
        return "call record"
    if re.match(r"fc:\{s\d+\}:(awaiting|running|conv:)", key):
        return "indexes + conversation sets"
    if re.match(r"fc:\{s\d+\}:(run|audit|progress|completions)$", key):
        return "approval streams"
    if key.startswith("fc:{conv:"):
        return "agent conversation"
    if key.startswith(("fc:{agent}:", "fc:{outbox}:")):
        return "bus streams (inbox, outbox)"
    if key.startswith(("fc:{inc}:tlog:", "fc:{inc}:tl:")):
        return "thread timeline"
    return "slack role and other"


def shape(key: str) -> str:
    """A key's name with its ids blanked, so ``--detail`` can sum keys of one kind."""
    key = re.sub(r"\{conv:[^}]*\}", "{conv:*}", key)
    return re.sub(r"[0-9][0-9A-Za-z_.-]*", "*", key)


def measure(client: redis.Redis, detail: Counter[str] | None = None) -> Counter[str]:
    sizes: Counter[str] = Counter()
    for key in client.scan_iter(count=1000):
        size = int(client.memory_usage(key, samples=0) or 0)
        sizes[part_of(key)] += size
        if detail is not None:
            detail[shape(key)] += size
    return sizes


def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        binary = build_tool(work / "bin")
        server = RedisProcess(work / "redis")
        slack_port = free_port()
        config = write_config(
            work, binary,
            agent={"user_rate_limit_per_minute": 100000, "max_retries": 2},
            slack={"mode": "http", "http_host": "127.0.0.1", "http_port": slack_port, "usergroup_cache_seconds": 0,
                   "rate_limit": {"per_user": 0, "per_channel": 0}},
        )
        roles: list[Role] = []
        try:
            with FakeSlack() as slack, Model(args.calls_per_conversation) as model:
                env = {**os.environ, "REDIS_URL": server.url, "SLACK_BOT_TOKEN": "xoxb-bench",
                       "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url,
                       "ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": model.base_url}
                roles = [Role(r, r, config, env, work / "logs") for r in ("slack", "agent")]
                for role in roles:
                    wait_until(role.ready, 90, f"{role.name} ready", 0.2)
                cards = Cards(slack)
                events_url = f"http://127.0.0.1:{slack_port}/slack/events"
                per = args.calls_per_conversation
                start_thread(events_url, slack, 0)  # warm-up: scripts loaded, groups and shared keys created
                wait_until(lambda: len(cards.posted) >= per, 60, "the warm-up cards")
                time.sleep(1.0)
                before, mem_before = measure(server.client), server.used_memory()
                numbers = range(1, args.conversations + 1)
                with ThreadPoolExecutor(max_workers=16) as pool:
                    statuses = Counter(pool.map(lambda n: start_thread(events_url, slack, n), numbers))
                if set(statuses) != {200}:
                    raise SystemExit(f"/fisk answered {statuses}")
                total_calls = per * (args.conversations + 1)
                try:
                    wait_until(lambda: len(cards.posted) >= total_calls, args.timeout, f"{total_calls} cards", 0.2)
                except TimeoutError:
                    for role in roles:
                        print(f"--- {role.name} log (tail)", role.log_path.read_text()[-3000:], sep="\n")
                    raise SystemExit(f"only {len(cards.posted)} of {total_calls} cards were posted;"
                                     f" {len(model.requests)} model requests; Slack calls"
                                     f" {Counter(c.method for c in slack.calls)}") from None
                time.sleep(2.0)  # the card's ts is recorded on the call right after chat.postMessage returns
                bus_streams = (INBOX, OUTBOX)
                try:  # each role drops what every group acknowledged on the bus every 30 s (roles.trim_bus_streams)
                    wait_until(lambda: sum(server.client.xlen(s) for s in bus_streams) < args.conversations // 10,
                               45, "the bus trim pass", 0.5)
                except TimeoutError:
                    print("bus streams not trimmed within 45 s:", {s: server.client.xlen(s) for s in bus_streams})
                kinds: Counter[str] = Counter()
                after, mem_after = measure(server.client, kinds), server.used_memory()
                calls = per * args.conversations
                pending = sum(1 for c in cards.posted
                              if server.client.hget(KEYS.call(c), "state") == "awaiting_approval")
                sample = next(iter(sorted(cards.posted)))
                fields = server.client.hlen(KEYS.call(sample))
                encoding = server.client.object("encoding", KEYS.call(sample))
                version = server.client.info("server")["redis_version"]
                print(f"{calls} pending calls ({pending} awaiting approval in Redis {version}), {per} per thread,"
                      " through serve --role slack + agent:")
                for part in PARTS:
                    print(f"  {part:30s} {(after[part] - before[part]) / calls:7,.0f} B per call")
                path = sum(after[p] - before[p] for p in PATH)
                total = sum(after.values()) - sum(before.values())
                print(f"  {'call path (the first five)':30s} {path / calls:7,.0f} B per call")
                print(f"  {'total (MEMORY USAGE)':30s} {total / calls:7,.0f} B per call")
                print(f"  {'Redis used_memory growth':30s} {(mem_after - mem_before) / calls:7,.0f} B per call")
                print(f"  call record: {fields} hash fields, encoding {encoding}")
                if args.detail:
                    print("bytes per call by kind of key (warm-up included):")
                    for kind, size in kinds.most_common(25):
                        print(f"  {size / calls:7,.0f}  {kind}")
        finally:
            for role in roles:
                role.stop()
            server.stop()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--calls-per-conversation", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--detail", action="store_true", help="also print bytes per call by kind of key")
    sys.exit(main(parser.parse_args()))
