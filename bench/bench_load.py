"""Load and soak figures for ``serve --role`` processes (not a test): ``python bench/bench_load.py``.

Everything is real except Slack and the model: one real Redis (started here), one ``slack`` process (bolt over
HTTP), one ``agent`` process and ``--runners`` runner processes (``python -m bot.cli serve --role ...``), a
loopback fake Slack Web API that records posts, and a loopback fake Messages API whose responder answers each
conversation's first request with ``--calls-per-conversation`` read-only opsctl tool_use blocks and the
follow-up with a short text. The tool is a small /bin/sh wrapper around the opsctl introspection fixture that
appends every execution to a file, so double runs are counted from what actually ran.

Load: ``--conversations`` signed ``/fisk`` commands are sent at once. Approval clicks (signed block_actions to
the slack role's ``/slack/events``, carrying each card's call id + argv hash + ts taken from the fake Slack's
recorded ``chat.postMessage`` blocks) are held until every card is posted, so Redis ``used_memory`` can be
read with all N calls pending; then every card is clicked as fast as ``--clickers`` threads go. Figures:
propose phase, approve burst throughput, approve-click -> finished in Redis (audit stream) and -> result
posted to Slack latency, Redis bytes per pending call.

Soak: for ``--soak-seconds`` a new conversation starts every ``1/--soak-rate`` s and its cards are clicked as
soon as they are posted; each bot process's VmRSS is sampled every ``--sample-seconds``.

Burst (``--burst N``, instead of load and soak): the load of issue #19, N signed ``/fisk`` requests with
``--burst-in-flight`` in flight against a command pool of ``--burst-pool`` connections, against one combined
process and against split roles (``bench/burst.py``).

At the end every call must be terminal, have exactly one approved->running audit entry (a hand-over given back
unstarted, running->approved, undoes one) and one execution;
otherwise the exit status is 1. Everything listens on 127.0.0.1; every wait has a deadline.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench.cpu import CpuMeter  # noqa: E402
from bench.profile import start_profilers, stop_profilers  # noqa: E402
from bench.support import RedisProcess, Role, pct, wait_until  # noqa: E402
from bot.approvals.decision_keys import ensure_key_pair  # noqa: E402
from bot.approvals.keys import Keys  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_use_reply  # noqa: E402
from tests.support.fake_slack import FakeSlack, SlackCall, sign_slack_request  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

SECRET = "bench-signing-secret"
CHANNEL = "C0BENCH"
APPROVER = "UAPPROVER"
FIXTURE = ROOT / "tests" / "fixtures" / "fisk" / "opsctl.introspect.json"
KEYS = Keys()
#: read-only opsctl tools and the argument that carries the bench's unique token
TOOLS = [("service_status", "service"), ("service_logs", "service"), ("db_query", "database")]
TOKEN = re.compile(r"tok-(c\d{5})-k(\d+)")
CLICK_ATTEMPTS = 5  # a click the slack role refused (503) is sent again, as a person clicks again
TERMINAL = {"denied", "expired", "finished", "timed_out", "failed_to_start", "interrupted", "rejected"}

WRAPPER = """#!/bin/sh
if [ "$1" = "--fisk-introspect" ]; then exec /bin/cat '{fixture}'; fi
printf '%s\\n' "$*" >> '{log}'
for a in "$@"; do printf '%s\\n' "$a"; done
"""


def cid_of(n: int) -> str:
    return f"c{n:05d}"


def tool_use_id(cid: str, k: int) -> str:
    return f"toolu_{cid}_k{k}"


def call_id_of(cid: str, k: int) -> str:
    return f"0-{tool_use_id(cid, k)}"  # shard 0 (redis.shards: 1) + the model's tool_use id


class Model(FakeAnthropic):
    """The scripted Messages API with one standing responder (nothing recorded: a soak makes many requests)."""

    def __init__(self, calls_per_conversation: int) -> None:
        super().__init__()
        self.calls = calls_per_conversation
        self.count = 0
        self.errors: list[str] = []

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.count += 1
        body = request.json if isinstance(request.json, dict) else {}
        messages = body.get("messages") or []
        found = re.search(r"bench (c\d{5})", json.dumps(messages[0])) if messages else None
        if found is None:
            self.errors.append(f"request without a bench conversation: {json.dumps(messages)[:200]}")
            return text_reply("I do not know this conversation.")
        cid = found.group(1)
        last = messages[-1]
        content = last.get("content")
        if last.get("role") == "user" and isinstance(content, list) and any(
                b.get("type") == "tool_result" for b in content):
            return text_reply(f"done {cid}: all {self.calls} checks came back.")
        calls = []
        for k in range(self.calls):
            tool, arg = TOOLS[k % len(TOOLS)]
            calls.append((tool_use_id(cid, k), tool, {arg: f"tok-{cid}-k{k}"}))
        return tool_use_reply(calls, text=f"Checking {cid}.")


# ---------------------------------------------------------------- what Slack sees


class SlackWatch:
    """Wraps the fake Slack's chat.postMessage: cards go to the click queue, result and answer times are kept."""

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.lock = threading.Lock()
        self.cards: dict[str, dict[str, Any]] = {}  # call id -> card
        self.card_posts: Counter[str] = Counter()
        self.results: dict[str, float] = {}  # call id -> time the result was posted
        self.result_posts: Counter[str] = Counter()
        self.answers: dict[str, float] = {}  # conversation cid -> time the final answer was posted
        self.answer_posts: Counter[str] = Counter()
        self.clicks: queue.Queue[dict[str, Any]] = queue.Queue()
        self.ephemerals: Counter[str] = Counter()  # what clickers were told (a refused click)
        slack.on("chat.postMessage", self._on_post)
        slack.on("chat.postEphemeral", self._on_ephemeral)

    def _on_ephemeral(self, call: SlackCall) -> dict[str, Any]:
        with self.lock:
            self.ephemerals[str(call.params.get("text") or "")[:80]] += 1
        return self.slack._api_chat_postEphemeral(call.params)

    def _on_post(self, call: SlackCall) -> dict[str, Any]:
        reply = self.slack._api_chat_postMessage(call.params)  # the default behaviour, then look at it
        now = time.time()
        blocks = call.params.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        text = str(call.params.get("text") or "")
        dumped = json.dumps(blocks)
        button = next((e for b in blocks if b.get("type") == "actions" for e in b.get("elements", [])
                       if e.get("action_id") == "fisk_approve"), None)
        with self.lock:
            if button is not None:
                value = json.loads(button["value"])
                card = {"call": value["call"], "argv": value["argv"], "ts": reply["ts"],
                        "thread_ts": call.params.get("thread_ts"), "posted": now}
                self.card_posts[card["call"]] += 1
                if card["call"] not in self.cards:
                    self.cards[card["call"]] = card
                    self.clicks.put(card)
            elif "exit code" in dumped and (found := TOKEN.search(dumped)):
                call_id = call_id_of(found.group(1), int(found.group(2)))
                self.result_posts[call_id] += 1
                self.results.setdefault(call_id, now)
            elif found := re.search(r"done (c\d{5})", text):
                self.answer_posts[found.group(1)] += 1
                self.answers.setdefault(found.group(1), now)
        return reply


class Clicker:
    """Threads that take cards from the queue and post signed Approve clicks; ``gate`` holds them."""

    def __init__(self, watch: SlackWatch, events_url: str, threads: int, client: redis.Redis) -> None:
        self.watch = watch
        self.client = client
        self.events_url = events_url
        self.gate = threading.Event()
        self.stop = threading.Event()
        self.clicked: dict[str, float] = {}
        self.failures: list[str] = []
        self.refused = 0  # clicks answered 503 (not recorded in time) and sent again
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True, name=f"clicker-{i}") for i in range(threads)]
        for t in self.threads:
            t.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                card = self.watch.clicks.get(timeout=0.2)
            except queue.Empty:
                continue
            while not self.gate.wait(0.2):
                if self.stop.is_set():
                    return
            # A person clicks a card Slack shows them; the bot accepts a click once it has recorded which message
            # is the card (meta:slack_ts, written right after chat.postMessage returns). Wait for that, briefly.
            key = KEYS.call(card["call"])
            try:
                wait_until(lambda k=key, ts=card["ts"]: self.client.hget(k, "meta:slack_ts") == ts, 10,
                           "the card to be recorded", 0.005)
            except TimeoutError as exc:
                self.failures.append(f"{card['call']}: {exc}")
                continue
            payload = {
                "type": "block_actions", "user": {"id": APPROVER}, "team": {"id": "T1"}, "api_app_id": "A1",
                "channel": {"id": CHANNEL},
                "container": {"type": "message", "message_ts": card["ts"], "channel_id": CHANNEL},
                "message": {"ts": card["ts"], "thread_ts": card["thread_ts"]},
                "actions": [{"action_id": "fisk_approve", "block_id": "b", "type": "button",
                             "value": json.dumps({"call": card["call"], "argv": card["argv"]}),
                             "action_ts": str(time.time())}],
                "response_url": self.watch.slack.response_url("click"), "trigger_id": "2",
            }
            started = time.time()  # the first attempt: a refused one counts in the click's latency
            for attempt in range(1, CLICK_ATTEMPTS + 1):
                try:
                    status = post_signed(self.events_url, urlencode({"payload": json.dumps(payload)}))
                except HTTPError as exc:  # 503: the slack role could not record the click in time; nothing started
                    status = exc.code
                    if exc.code == 503 and attempt < CLICK_ATTEMPTS:
                        with self.lock:
                            self.refused += 1
                        time.sleep(0.5)  # the person sees the click fail and clicks again
                        continue
                    self.failures.append(f"{card['call']}: HTTP {exc.code}")
                    status = 0
                except OSError as exc:
                    status, started = 0, 0.0
                    self.failures.append(f"{card['call']}: {exc}")
                break
            with self.lock:
                if status == 200:
                    self.clicked[card["call"]] = started
                elif status:
                    self.failures.append(f"{card['call']}: HTTP {status}")

    def close(self) -> None:
        self.stop.set()
        self.gate.set()
        for t in self.threads:
            t.join(5)


def post_signed(url: str, body: str) -> int:
    return post_signed_answer(url, body)[0]


def post_signed_answer(url: str, body: str) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}
    with urlopen(Request(url, data=body.encode(), headers=headers), timeout=30) as resp:
        return int(resp.status), resp.read()


def start_conversation(events_url: str, slack: FakeSlack, n: int) -> int:
    """A signed /fisk from a user of its own (the agent's per-user rate limit stays out of the way). A command
    that starts work is acknowledged with an empty 200; one answered with text (a rate-limit note, "could not
    start") started nothing, and the bench would wait for its cards in vain: it counts as a failure (-1)."""
    form = {"command": "/fisk", "text": f"bench {cid_of(n)}: is the web tier ok?", "user_id": f"U{n:07d}",
            "channel_id": CHANNEL, "team_id": "T1", "response_url": slack.response_url(f"cmd{n}"),
            "trigger_id": str(n)}
    status, answer = post_signed_answer(events_url, urlencode(form))
    if status == 200 and answer.strip():
        print(f"/fisk {cid_of(n)} was answered {answer[:200]!r}: nothing started", file=sys.stderr, flush=True)
        return -1
    return status


# ---------------------------------------------------------------- reading Redis


def finished_times(client: redis.Redis, stages: dict[str, dict[str, float]] | None = None
                   ) -> tuple[dict[str, float], Counter[str], dict[str, str]]:
    """From the audit stream: time each call reached a terminal state, approved->running count per call (less
    the hand-overs given back unstarted, running->approved), and each call's last state. ``stages``, if given, is
    filled with the time each call entered each state."""
    done: dict[str, float] = {}
    runs: Counter[str] = Counter()
    last: dict[str, str] = {}
    start = "-"
    while True:
        entries = client.xrange(KEYS.audit_stream(0), min=start, max="+", count=5000)
        for _entry_id, fields in entries:
            call, to = fields["call_id"], fields["to"]
            last[call] = to
            if stages is not None:  # the first approval; the last claim (a hand-over given back is claimed again)
                if to == "running":
                    stages.setdefault(to, {})[call] = float(fields["at"])
                else:
                    stages.setdefault(to, {}).setdefault(call, float(fields["at"]))
            if fields["from"] == "approved" and to == "running":
                runs[call] += 1
            elif fields["from"] == "running" and to == "approved":
                runs[call] -= 1  # a hand-over given back unstarted (no free slot): its claim is undone, nothing ran
            if to in TERMINAL:
                done.setdefault(call, float(fields["at"]))
        if len(entries) < 5000:
            return done, runs, last
        start = "(" + entries[-1][0]


def executions(path: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    if path.exists():
        for line in path.read_text().splitlines():
            found = TOKEN.search(line)
            counts[call_id_of(found.group(1), int(found.group(2))) if found else f"?{line}"] += 1
    return counts


def command_counts(before: dict[str, Any], after: dict[str, Any], n_calls: int) -> str:
    """Redis commands per call between two ``INFO commandstats`` (every process's, the bench's reads too), the
    most frequent first: what each call costs Redis and the clients in round trips."""
    counts = {name.removeprefix("cmdstat_"): int(stats["calls"]) - int((before.get(name) or {}).get("calls", 0))
              for name, stats in after.items()}
    total = sum(counts.values())
    top = sorted(((n, c) for n, c in counts.items() if c), key=lambda item: -item[1])[:12]
    return f"{total / n_calls:.1f}: " + ", ".join(f"{name} {count / n_calls:.2f}" for name, count in top)


def summary_ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (f"median {statistics.median(values) * 1000:7.1f} ms   p99 {pct(values, 99) * 1000:7.1f} ms   "
            f"max {max(values) * 1000:7.1f} ms   (n={len(values)})")


# ---------------------------------------------------------------- the bench


class Bench:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.logs = work / "logs"
        self.logs.mkdir()
        self.exec_log = work / "executions.log"
        self.next_n = 0
        self.phase_of: dict[str, str] = {}  # cid -> warmup / load / soak
        self.roles: list[Role] = []
        self.rows: list[tuple[str, str]] = []
        self.problems: list[str] = []

    def new_conversation(self, phase: str) -> int:
        n = self.next_n
        self.next_n += 1
        self.phase_of[cid_of(n)] = phase
        return n

    def calls_of(self, phase: str) -> list[str]:
        return [call_id_of(c, k) for c, p in self.phase_of.items() if p == phase
                for k in range(self.args.calls_per_conversation)]

    def check_roles(self) -> None:
        for role in self.roles:
            if role.process.poll() is not None:
                raise RuntimeError(f"{role.name} exited with {role.process.returncode}; see {role.log_path}")

    def run(self) -> int:
        a = self.args
        opsctl = self.work / "bin" / "opsctl"
        opsctl.parent.mkdir()
        opsctl.write_text(WRAPPER.format(fixture=FIXTURE, log=self.exec_log))
        opsctl.chmod(0o755)
        (self.work / "redis").mkdir()
        slack_port = free_port()
        config = self.work / "config.yaml"
        private, public = ensure_key_pair(self.work / "keys")  # slack/agent sign decisions, runners verify them
        config.write_text(json.dumps({
            "applications": [{"binary": str(opsctl), "max_concurrency": a.max_concurrency}],
            "approval": {"approvers": {"users": [APPROVER]}},
            "decisions": {"signing_key_file": str(private), "public_key_files": [str(public)]},
            "agent": {"reclaim_after_seconds": 5, "lock_ttl_seconds": 10, "user_rate_limit_per_minute": 100000,
                      "max_retries": 2},
            # the per-channel request limit (30 a minute by default) would refuse most of a burst of /fisk in one
            # channel: this bench measures the path, not the limiter (tests/slack cover that)
            "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": slack_port,
                      "reclaim_idle_seconds": 5, "usergroup_cache_seconds": 0,
                      "rate_limit": {"per_user": 0, "per_channel": 0}},
            "shutdown_grace_seconds": 5,
            "log_level": "WARNING",
            **({"redis": {"max_connections": a.redis_max_connections}} if a.redis_max_connections else {}),
        }))
        store = RedisProcess(self.work / "redis")
        try:
            with FakeSlack() as slack, Model(a.calls_per_conversation) as model:
                env = {**os.environ, "REDIS_URL": store.url, "SLACK_BOT_TOKEN": "xoxb-bench",
                       "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url,
                       "ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": model.base_url}
                names = ["slack", "agent", *(["runner"] * a.runners)]
                for i, role in enumerate(names):
                    name = role if role != "runner" else f"runner{i - 1}"
                    self.roles.append(Role(role, name, config, env, self.logs))
                for role in self.roles:
                    wait_until(role.ready, 90, f"{role.name} ready", 0.2)
                watch = SlackWatch(slack)
                events_url = f"http://127.0.0.1:{slack_port}/slack/events"
                clicker = Clicker(watch, events_url, a.clickers, store.client)
                try:
                    self.load(store, slack, model, watch, clicker, events_url)
                    if a.soak_seconds > 0:
                        self.soak(store, slack, watch, clicker, events_url)
                finally:
                    clicker.close()
                    for role in self.roles:
                        role.stop()
                self.verify(store, watch, model, clicker)
        finally:
            store.stop()
        self.print_table()
        return 1 if self.problems else 0

    # ------------------------------------------------------------ load

    def load(self, store: RedisProcess, slack: FakeSlack, model: Model, watch: SlackWatch, clicker: Clicker,
             events_url: str) -> None:
        a = self.args
        per = a.calls_per_conversation
        # warm-up: one conversation all the way, so imports, pools and scripts are loaded before measuring
        clicker.gate.set()
        n = self.new_conversation("warmup")
        start_conversation(events_url, slack, n)
        wait_until(lambda: cid_of(n) in watch.answers, 60, "the warm-up conversation")
        clicker.gate.clear()
        time.sleep(1.0)
        rss_before = {r.name: r.rss_kib() for r in self.roles}
        mem_before = store.used_memory()

        numbers = [self.new_conversation("load") for _ in range(a.conversations)]
        expected = self.calls_of("load")
        print(f"load: {a.conversations} conversations x {per} calls, {a.runners} runner(s), clicks held until every"
              " card is posted", flush=True)
        whole = CpuMeter({**{r.name: r.process.pid for r in self.roles}, "bench": os.getpid()}, store.client)
        profilers = start_profilers({f"serve --role {r.name}": (r.process.pid, output) for r in self.roles
                                     if (output := {"slack": a.profile_slack, "agent": a.profile_agent}.get(r.name))})
        whole.start()
        api_before = len(slack.calls)
        commands_before = store.client.info("commandstats")
        t0 = time.time()
        with ThreadPoolExecutor(max_workers=32) as pool:
            statuses = list(pool.map(lambda i: start_conversation(events_url, slack, i), numbers))
        t_sent = time.time()
        if any(s != 200 for s in statuses):
            self.problems.append(f"/fisk answered {Counter(statuses)}")
            raise RuntimeError(f"/fisk answered {Counter(statuses)} (-1: refused with a note); no cards to wait for")
        wait_until(lambda: all(c in watch.cards for c in expected) or self.check_roles(), a.timeout,
                   f"{len(expected)} approval cards")
        t_cards = max(watch.cards[c]["posted"] for c in expected)
        time.sleep(2.0)  # let trailing outbox events (prefaces, reactions) settle
        pending = sum(1 for c in expected if store.client.hget(KEYS.call(c), "state") == "awaiting_approval")
        mem_pending = store.used_memory()
        sample = expected[:: max(1, len(expected) // 50)]
        hash_bytes = statistics.mean(int(store.client.memory_usage(KEYS.call(c)) or 0) for c in sample)

        # this process too: the fake Slack, the fake model and the clickers share the 2 cores with the roles
        meter = CpuMeter({**{r.name: r.process.pid for r in self.roles}, "bench": os.getpid()}, store.client)
        ended_before = store.client.xlen(KEYS.completions_stream(0))  # one entry per call that ended
        meter.start()
        clicker.gate.set()
        wait_until(lambda: store.client.xlen(KEYS.completions_stream(0)) >= ended_before + len(expected)
                   or self.check_roles(), a.timeout, "every call finished", 0.02)
        cpu_to_finished = meter.stop()
        wait_until(lambda: (all(c in watch.results for c in expected)
                            and all(cid_of(i) in watch.answers for i in numbers)) or self.check_roles(),
                   a.timeout, "every result and answer in Slack", 0.2)
        cpu_whole = whole.stop()
        commands_after = store.client.info("commandstats")
        web_api = Counter(c.method for c in slack.calls[api_before:])
        stop_profilers(profilers)
        stages: dict[str, dict[str, float]] = {}
        done, _runs, _last = finished_times(store.client, stages)
        t_done = max(done.get(c, 0.0) for c in expected)
        t_answers = max(watch.answers[cid_of(i)] for i in numbers)
        first_click = min(clicker.clicked[c] for c in expected if c in clicker.clicked)
        last_click = max(clicker.clicked[c] for c in expected if c in clicker.clicked)
        to_finished = [done[c] - clicker.clicked[c] for c in expected if c in done and c in clicker.clicked]
        to_posted = [watch.results[c] - clicker.clicked[c] for c in expected
                     if c in watch.results and c in clicker.clicked]
        rss_after = {r.name: r.rss_kib() for r in self.roles}

        n_calls = len(expected)
        self.rows += [
            ("load: /fisk sent", f"{a.conversations} in {t_sent - t0:.2f}s"),
            ("load: propose phase", f"/fisk -> all {n_calls} cards posted in {t_cards - t0:.2f}s"
                                    f" ({n_calls / (t_cards - t0):.0f} cards/s)"),
            ("load: Redis per pending call", f"{(mem_pending - mem_before) / n_calls:,.0f} bytes of used_memory"
                                             f" ({pending} pending, {mem_before:,} -> {mem_pending:,});"
                                             f" call hash alone {hash_bytes:,.0f} bytes"),
            ("load: approve burst", f"{n_calls} clicks released at once: first click -> last finished"
                                    f" {t_done - first_click:.2f}s = {n_calls / (t_done - first_click):.1f} calls/s"),
            ("load: end to end", f"first /fisk -> last answer {t_answers - t0:.2f}s"
                                 f" = {n_calls / (t_answers - t0):.1f} calls/s (incl. the held clicks)"),
            ("load: clicks sent", f"first -> last click {last_click - first_click:.2f}s (the clickers send as the"
                                  " slack role acknowledges: a click is answered once recorded, before it is decided)"),
            ("load: click -> finished", summary_ms(to_finished)),
            *self.stage_rows(expected, clicker.clicked, stages, done),
            ("load: CPU per call, burst", "clicks released -> last call finished: " + ", ".join(
                f"{name} {1000 * seconds / n_calls:.2f} ms" for name, seconds in cpu_to_finished.items())
             + " (the slack role posts the earlier results meanwhile; one asyncio loop each: 1000/ms = calls/s"
               " on one free core)"),
            ("load: click -> result posted", summary_ms(to_posted)),
            ("load: CPU per call, all of it", "first /fisk -> last answer posted (every card, click, run, result and"
                                              " answer; the 2 s settle included): " + ", ".join(
                f"{name} {1000 * seconds / n_calls:.2f} ms" for name, seconds in cpu_whole.items())
             + f"; total {1000 * sum(cpu_whole.values()) / n_calls:.2f} ms"),
            ("load: Slack Web API calls per call", ", ".join(
                f"{method} {count / n_calls:.2f}" for method, count in web_api.most_common())),
            ("load: Redis commands per call", command_counts(commands_before, commands_after, n_calls)),
            ("load: RSS before -> after (MiB)", ", ".join(
                f"{k} {(rss_before[k] or 0) / 1024:.0f}->{(rss_after[k] or 0) / 1024:.0f}" for k in rss_before)),
        ]
        print(f"load done: {n_calls} calls in {t_answers - t0:.1f}s", flush=True)

    @staticmethod
    def stage_rows(expected: list[str], clicked: dict[str, float], stages: dict[str, dict[str, float]],
                   done: dict[str, float]) -> list[tuple[str, str]]:
        """Where click -> finished waits: the audit stream's time of each step (the click's own clock first),
        so a queue shows as the step whose latency grows through the burst."""
        steps = [("click", clicked), ("approved", stages.get("approved", {})), ("running", stages.get("running", {})),
                 ("finished", done)]
        rows = []
        for (name_a, at_a), (name_b, at_b) in zip(steps, steps[1:], strict=False):
            rows.append((f"load:   {name_a} -> {name_b}",
                         summary_ms([at_b[c] - at_a[c] for c in expected if c in at_a and c in at_b])))
        return rows

    # ------------------------------------------------------------ soak

    def soak(self, store: RedisProcess, slack: FakeSlack, watch: SlackWatch, clicker: Clicker, events_url: str) -> None:
        a = self.args
        clicker.gate.set()
        print(f"soak: {a.soak_seconds}s, one conversation every {1 / a.soak_rate:.2f}s, RSS every"
              f" {a.sample_seconds}s", flush=True)
        samples: dict[str, list[tuple[float, int]]] = {r.name: [] for r in self.roles}
        redis_mem: list[tuple[float, int]] = []
        t0 = time.monotonic()
        next_start, next_sample = t0, t0
        started: list[int] = []
        statuses: Counter[int] = Counter()
        with ThreadPoolExecutor(max_workers=4) as pool:
            while (now := time.monotonic()) < t0 + a.soak_seconds:
                self.check_roles()
                if now >= next_sample:
                    for role in self.roles:
                        rss = role.rss_kib()
                        if rss is not None:
                            samples[role.name].append((now - t0, rss))
                    redis_mem.append((now - t0, store.used_memory()))
                    next_sample += a.sample_seconds
                if now >= next_start:
                    n = self.new_conversation("soak")
                    started.append(n)
                    pool.submit(start_conversation, events_url, slack, n).add_done_callback(
                        lambda f: statuses.update([f.result() if f.exception() is None else 0]))
                    next_start += 1 / a.soak_rate
                time.sleep(max(0.0, min(next_start, next_sample) - time.monotonic()))
        expected = self.calls_of("soak")
        try:
            wait_until(lambda: all(cid_of(i) in watch.answers for i in started) or self.check_roles(), 120,
                       "the last soak conversations")
        except TimeoutError as exc:
            self.problems.append(f"soak: {exc}")
        done, _runs, _last = finished_times(store.client)
        to_finished = [done[c] - clicker.clicked[c] for c in expected if c in done and c in clicker.clicked]
        answered = sum(1 for i in started if cid_of(i) in watch.answers)
        if set(statuses) - {200}:
            self.problems.append(f"soak: /fisk answered {dict(statuses)}")
        self.rows += [
            ("soak: conversations", f"{len(started)} started, {answered} answered, {len(expected)} calls"),
            ("soak: click -> finished", summary_ms(to_finished)),
        ]
        window = min(60.0, a.soak_seconds / 4)
        for name, points in samples.items():
            if not points:
                continue
            values = [v for _, v in points]
            first = [v for t, v in points if t <= window] or values[:1]
            base = statistics.median(first)
            ratio = values[-1] / base
            verdict = "flat" if ratio <= 1.10 else "GROWING"
            self.rows.append((f"soak: RSS {name} (MiB)",
                              f"start {values[0] / 1024:.1f}  median {statistics.median(values) / 1024:.1f}  end"
                              f" {values[-1] / 1024:.1f}  max {max(values) / 1024:.1f}  end/first-{window:.0f}s-median"
                              f" {ratio:.3f} {verdict} ({len(values)} samples)"))
        if redis_mem:
            first_mib, last_mib = redis_mem[0][1] / 2**20, redis_mem[-1][1] / 2**20
            self.rows.append(("soak: Redis used_memory", f"{first_mib:.1f} -> {last_mib:.1f} MiB"
                              " (call records are kept for redis.retention_seconds)"))

    # ------------------------------------------------------------ checks

    def verify(self, store: RedisProcess, watch: SlackWatch, model: Model, clicker: Clicker) -> None:
        expected = [c for phase in ("warmup", "load", "soak") for c in self.calls_of(phase)]
        _done, runs, _last = finished_times(store.client)
        ran = executions(self.exec_log)
        states = Counter()
        not_terminal, twice_audit, twice_exec = [], [], []
        for call in expected:
            state = store.client.hget(KEYS.call(call), "state") or "missing"
            states[state] += 1
            if state not in TERMINAL:
                not_terminal.append(f"{call}={state}")
            if runs[call] != 1:
                twice_audit.append(f"{call}:{runs[call]}")
            if ran[call] != 1:
                twice_exec.append(f"{call}:{ran[call]}")
        strays = [k for k in ran if k not in set(expected)]
        dup_results = [c for c, n in watch.result_posts.items() if n > 1]
        dup_cards = [c for c, n in watch.card_posts.items() if n > 1]
        dup_answers = [c for c, n in watch.answer_posts.items() if n > 1]
        self.rows += [
            ("check: calls", f"{len(expected)} expected; states {dict(states)}"),
            ("check: approved->running", "exactly once for every call" if not twice_audit
             else f"NOT once: {twice_audit[:10]}"),
            ("check: executions", f"{sum(ran.values())} lines; exactly once for every call" if not twice_exec
             and not strays else f"NOT once: {twice_exec[:10]} strays {strays[:5]}"),
            ("check: Slack duplicates", f"cards {len(dup_cards)}, results {len(dup_results)},"
                                        f" answers {len(dup_answers)}"),
            ("check: model requests", f"{model.count} ({len(model.errors)} unexpected)"),
        ]
        if not_terminal:
            self.problems.append(f"{len(not_terminal)} call(s) not terminal: {not_terminal[:10]}")
        if twice_audit:
            self.problems.append(f"approved->running not exactly once: {twice_audit[:10]}")
        if twice_exec or strays:
            self.problems.append(f"executions not exactly once: {twice_exec[:10]} {strays[:5]}")
        if watch.ephemerals:
            self.rows.append(("check: refused clicks", f"{dict(watch.ephemerals)}"))
        if clicker.refused:
            self.rows.append(("check: clicks refused (503)", f"{clicker.refused}, each sent again as a person would;"
                              " a refused click starts nothing"))
        if clicker.failures:
            self.rows.append(("check: click failures", f"{len(clicker.failures)}: {clicker.failures[:3]}"))
        if model.errors:
            self.problems.append(f"model: {model.errors[:3]}")

    def print_table(self) -> None:
        width = max(len(k) for k, _ in self.rows) if self.rows else 10
        print()
        for key, value in self.rows:
            print(f"{key:<{width}}  {value}")
        for problem in self.problems:
            print(f"PROBLEM: {problem}")
        print("OK" if not self.problems else "FAILED")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--calls-per-conversation", type=int, default=3)
    parser.add_argument("--runners", type=int, default=2)
    parser.add_argument("--soak-seconds", type=float, default=600, help="0 skips the soak")
    parser.add_argument("--soak-rate", type=float, default=1.0, help="new conversations per second in the soak")
    parser.add_argument("--sample-seconds", type=float, default=5.0, help="RSS sampling period in the soak")
    parser.add_argument("--clickers", type=int, default=16, help="threads posting approve clicks")
    parser.add_argument("--max-concurrency", type=int, default=16, help="opsctl max_concurrency per runner")
    parser.add_argument("--timeout", type=float, default=600, help="deadline of each load phase wait")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, config)")
    parser.add_argument("--profile-slack", metavar="FILE",
                        help="py-spy of the slack role, first /fisk to last answer (collapsed stacks)")
    parser.add_argument("--profile-agent", metavar="FILE",
                        help="py-spy of the agent role, first /fisk to last answer (collapsed stacks)")
    parser.add_argument("--redis-max-connections", type=int, default=0,
                        help="redis.max_connections of every role (0: the configuration's default)")
    parser.add_argument("--burst", type=int, default=0, help="run the burst of N /fisk requests instead")
    parser.add_argument("--burst-in-flight", type=int, default=50, help="burst requests in flight at once")
    parser.add_argument("--burst-pool", type=int, default=4, help="redis.max_connections during the burst")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    if args.burst:
        from bench.burst import run_burst

        code = run_burst(args, work)
        if args.keep or code:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        return code
    bench = Bench(args, work)
    try:
        code = bench.run()
    except Exception as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        for log in sorted(bench.logs.glob("*.log")):
            tail = log.read_text(errors="replace")[-3000:]
            print(f"==== {log.name}\n{tail}", file=sys.stderr)
        code = 2
    finally:
        for role in bench.roles:
            with contextlib.suppress(Exception):
                role.stop()
    if args.keep or code:
        print(f"work directory: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
