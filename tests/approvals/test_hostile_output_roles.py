"""Issue #11, "Checked by": a hostile-output run under two runners finishes ``finished`` with Slack and health
answering throughout -- with every part real.

Two ``fisk-chatops serve --role runner`` processes and one ``serve --role slack`` (HTTP mode, talking to the
loopback fake Slack Web API) share a real Redis. Two calls of a real tool are proposed into a Slack thread; the
slack role posts their cards and a signed Approve click approves each. The tool prints 30 MiB built to be
expensive to sanitize (``tests/support/hostile_output.py``: the issue's ``"token" * 28000``, every trigger word
repeated without whitespace, long base64 runs, lines dense with candidates, planted secrets) under a 12 MiB output
cap, so each runner sanitizes 24 MiB: about a second of CPU on an idle machine.

Meanwhile, from threads of this test, one request at a time every 50 ms: each runner's and the slack role's
``/healthz`` and ``/metrics``, and signed ``/fisk help`` slash commands to the slack role (answered inside the
ack). The *sanitizing window* of a call runs from the moment its tool finished writing (the tool notes
``time.monotonic()``, one clock for all processes) until the call is seen ``finished``. The test requires:

* every answer, from the clicks until both results are posted, a 200 within 2 s (health) or 3 s (Slack acks,
  Slack's own deadline);
* inside each call's sanitizing window, from the runner that ran it and from the slack role (each endpoint, and
  the acks): at least ``MIN_ANSWERS`` answers (a test that polled nothing cannot pass), and no silence longer
  than a third of the window. Sanitizing is most of the window (the rest is reaping the tool and storing the
  result), so a runner that sanitized on its event loop is silent for most of it, however fast or loaded the
  machine: with the sanitizer called on the loop (tried once, not kept) the runner answered nothing for 3.77 s
  of a 3.96 s window and its held-back ``/healthz`` took 4.1 s;
* each call ``finished`` exactly once (audit trail) by one of the two runners, its heartbeat never more than
  ``HEARTBEAT_SLACK`` seconds late while it ran (its TTL, read from Redis, never fell below what that allows);
* one card and one result post per call in the fake Slack thread, the full output attached once per call, and
  the output, stored and attached, byte for byte what a runner's sanitizer gives for those bytes (computed in a
  fresh process with the runner's environment: ``hostile_output.sanitize_twice`` says why fresh), with none of
  the planted secrets in anything posted.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from redis.asyncio import Redis

from bot.agent import bus
from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState, Proposal
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.fisk.digest import file_digest
from tests.support import decision_keys
from tests.support.fake_slack import FakeSlack, sign_slack_request
from tests.support.fisk_app import make_fisk_app_doing
from tests.support.hostile_output import PLANTED
from tests.support.probes import Prober, http_get, http_post
from tests.support.redis_server import free_port
from tests.support.serve_process import ROOT, ServeProcess, wait_until
from tests.support.waiting import wait_for

CAP = 12 << 20  # execution.output_limit_bytes: head and tail of 12 MiB each are kept and sanitized
WRITTEN = 5 * CAP // 2  # more than head and tail: the middle is omitted, as with any flood
SECRET = "hostile-signing-secret"
CHANNEL = "C0HOSTILE"
THREAD_TS = "1700000000.000001"
CONVERSATION = f"slack:{CHANNEL}:{THREAD_TS}"
APPROVER = "UAPPROVER"
SERVICES = ("hostile-a", "hostile-b")
HEALTH_BOUND = 2.0  # seconds: each health answer. A loaded 2-core machine gave 1.0-1.01 s answers (load 9); the loop
# stalled by sanitizing gave 3.07 s, and the silence share below catches a stall of any length inside each window
ACK_BOUND = 3.0  # seconds: Slack's own deadline for an ack
MIN_ANSWERS = 5  # per process and endpoint inside each sanitizing window (~20 when the loop is free)
SILENCE_SHARE = 1 / 3  # no endpoint may be silent for longer than this share of a sanitizing window
HEARTBEAT_SLACK = 1.5  # seconds a heartbeat may come late on a loaded machine
_RUNNER_DEFAULTS = inspect.signature(RunnerWorker).parameters  # what serve --role runner uses
HEARTBEAT_INTERVAL = float(_RUNNER_DEFAULTS["heartbeat_interval"].default)
STALE_AFTER = float(_RUNNER_DEFAULTS["stale_after"].default)


def tool_body(marks: Path) -> str:
    """What the tool does when run: print the hostile output, then note when all of it was written."""
    return (f"sys.path.insert(0, {str(ROOT)!r})\n"
            "import time\n"
            "from tests.support.hostile_output import write_hostile\n"
            f"write_hostile(sys.stdout.buffer, {WRITTEN})\n"
            "# the pipe holds 64 KiB: the runner has read all but that much once the write returned\n"
            f"with open({str(marks)!r}, 'a') as marks:\n"
            "    marks.write(f'{sys.argv[-1]} {time.monotonic()}\\n')\n")


@dataclass
class CallWatch:
    """Reads each call's state and heartbeat TTL from Redis every ``period`` seconds (a thread of its own)."""

    redis_url: str
    store: CallStore
    call_ids: list[str]
    period: float = 0.05
    samples: dict[str, list[tuple[float, str, int]]] = field(default_factory=dict)  # id -> (time, state, pttl ms)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.samples = {call_id: [] for call_id in self.call_ids}
        self._thread = threading.Thread(target=self._run, name="call-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        client = redis.Redis.from_url(self.redis_url, decode_responses=True)
        try:
            while not self._stop.is_set():
                for call_id in self.call_ids:
                    with client.pipeline(transaction=True) as both:  # one moment: a finish deletes the heartbeat
                        both.hget(self.store.keys.call(call_id), "state")
                        both.pttl(self.store.keys.heartbeat(call_id))
                        state, ttl = both.execute()
                    self.samples[call_id].append((time.monotonic(), str(state), int(ttl)))
                self._stop.wait(self.period)
        finally:
            client.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def first_seen(self, call_id: str, state: str) -> float | None:
        return next((t for t, s, _ in self.samples[call_id] if s == state), None)

    def running_ttls(self, call_id: str) -> list[int]:
        """The heartbeat TTLs read while the call was running (-2: no key)."""
        return [ttl for _, state, ttl in self.samples[call_id] if state == CallState.running.value]


@pytest.fixture
def stack(tmp_path: Path, redis_url: str, fixtures_dir: Path) -> Iterator[dict[str, Any]]:
    """The fake Slack, two runners and the slack role, all ready. The processes' logs are printed at teardown
    (pytest shows them when the test failed)."""
    marks = tmp_path / "written.log"
    tool = make_fisk_app_doing(tmp_path / "bin", fixtures_dir / "opsctl.introspect.json", "opsctl",
                               tool_body(marks))
    slack_port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        # one call at a time per runner: two calls on one runner (rare: each runner usually takes one) then run in
        # turn, so what its sanitizer remembered from the first is known (hostile_output.sanitize_twice)
        "applications": [{"binary": str(tool), "max_concurrency": 1}],
        "decisions": decision_keys.write_key_files(tmp_path / "keys"),
        "approval": {"approvers": {"users": [APPROVER]}},
        "execution": {"output_limit_bytes": CAP},
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": slack_port, "usergroup_cache_seconds": 0,
                  "working_reaction": ""},
        "shutdown_grace_seconds": 2,
    }))
    base = {k: v for k, v in os.environ.items()
            if not k.upper().startswith(("FISK_CHATOPS__", "SLACK_", "ANTHROPIC_"))}
    logs = tmp_path / "logs"
    with FakeSlack() as slack:
        runner_env = {**base, "REDIS_URL": redis_url}  # a runner holds no Slack or model credential
        slack_env = {**runner_env, "SLACK_BOT_TOKEN": "xoxb-hostile", "SLACK_SIGNING_SECRET": SECRET,
                     "SLACK_API_URL": slack.api_url}
        processes = [ServeProcess("runner", "runner-0", config, runner_env, logs),
                     ServeProcess("runner", "runner-1", config, runner_env, logs),
                     ServeProcess("slack", "slack", config, slack_env, logs)]
        try:
            for process in processes:
                wait_until(process.ready, 60, f"{process.name} ready", 0.1)
            yield {"slack": slack, "tool": tool, "marks": marks, "runners": processes[:2], "front": processes[2],
                   "events": f"http://127.0.0.1:{slack_port}/slack/events", "runner_env": runner_env}
        finally:
            for process in processes:
                process.stop()
            for process in processes:
                print(f"==== {process.name}\n{process.log_tail()}")


def signed(body: str) -> dict[str, str]:
    return {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}


def help_command(events_url: str, fake: FakeSlack) -> Callable[[int], tuple[int, str]]:
    """Asks ``/fisk help`` (answered inside the ack; every request unique, or the replay guard would refuse it)."""

    def ask(n: int) -> tuple[int, str]:
        body = urlencode({"command": "/fisk", "text": "help", "user_id": "UPROBE", "channel_id": CHANNEL,
                          "team_id": "T0FAKE", "response_url": fake.response_url(f"help-{n}"),
                          "trigger_id": f"probe-{n}-{time.monotonic_ns()}"})
        status, text = http_post(events_url, body.encode(), signed(body))
        return (status if "/fisk tools" in text else -status), text[:200]

    return ask


def card_of(slack: FakeSlack, call_id: str) -> dict[str, str] | None:
    """The call's approval card as posted: its ts and the Approve button's value."""
    for call in slack.calls_to("chat.postMessage"):
        if f'"card:{call_id}"' not in json.dumps(call.params.get("metadata")):
            continue
        blocks = call.params.get("blocks") or []
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
        value = next(e["value"] for b in blocks if b.get("type") == "actions" for e in b["elements"]
                     if e.get("action_id") == "fisk_approve")
        return {"ts": str(call.response["ts"]), "value": value}
    return None


def approve_click(events_url: str, slack: FakeSlack, card: dict[str, str]) -> int:
    payload = {
        "type": "block_actions", "user": {"id": APPROVER}, "team": {"id": "T0FAKE"}, "api_app_id": "AFAKE",
        "channel": {"id": CHANNEL}, "container": {"type": "message", "message_ts": card["ts"], "channel_id": CHANNEL},
        "message": {"ts": card["ts"], "thread_ts": THREAD_TS},
        "actions": [{"action_id": "fisk_approve", "block_id": "b", "type": "button", "value": card["value"],
                     "action_ts": str(time.time())}],
        "response_url": slack.response_url(f"click-{card['ts']}"), "trigger_id": f"click-{time.monotonic_ns()}",
    }  # fmt: skip
    body = urlencode({"payload": json.dumps(payload)})
    return http_post(events_url, body.encode(), signed(body))[0]


def tool_finished_writing(marks: Path) -> dict[str, float]:
    """service -> the tool's ``time.monotonic()`` once all its output was written."""
    lines = marks.read_text().split("\n") if marks.exists() else []
    return {service: float(at) for service, at in (line.split() for line in lines if line)}


def health_probers(processes: list[ServeProcess]) -> dict[str, Prober]:
    """``/healthz`` (the loop answers) and ``/metrics`` (its collectors read Redis too) of each process."""
    def getter(url: str) -> Callable[[int], tuple[int, str]]:
        return lambda _n: http_get(url)

    return {f"{p.name}{path}": Prober(f"{p.name}{path}", getter(f"http://127.0.0.1:{p.health_port}{path}")).start()
            for p in processes for path in ("/healthz", "/metrics")}


def results_in_thread(slack: FakeSlack, call_id: str) -> list[dict[str, Any]]:
    """The result messages of ``call_id`` in the conversation's thread (the bot keys each post in its metadata)."""
    return [m for m in slack.thread(CHANNEL, THREAD_TS) if f'"result:{call_id}"' in json.dumps(m.get("metadata"))]


async def propose_with_cards(store: CallStore, redis: Redis, slack: FakeSlack, tool: Path
                             ) -> dict[str, dict[str, str]]:
    """What the agent does (propose the calls, tell the front ends), then the cards the slack role posts."""
    proposals = [Proposal(tool="service_status", app="opsctl", arguments=json.dumps({"service": service}),
                          argv=[str(tool), "service", "status", "--", service], binary_digest=file_digest(tool))
                 for service in SERVICES]
    ids = [r.id for r in await store.propose(CONVERSATION, proposals, ApprovalPolicy(), "UREQ")]
    await bus.publish_outbox(redis, "proposed", CONVERSATION, {"turn": "t-hostile", "call_ids": ids})
    return {call_id: await wait_for(functools.partial(card_of, slack, call_id), timeout=30) for call_id in ids}


def runner_sanitizer(env: dict[str, str], tmp_path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(text, counts) that a runner's sanitizer gives for the tool's output: its first time, and its second."""
    out = tmp_path / "expected"
    out.mkdir()
    subprocess.run([sys.executable, "-m", "tests.support.hostile_output", str(WRITTEN), str(CAP), str(out)],
                   env=env, cwd=ROOT, check=True, timeout=120)
    counts = json.loads((out / "counts.json").read_text())
    return [((out / f"{name}.txt").read_text(), counts[name]) for name in ("first", "second")]


async def test_hostile_output_under_two_runners_with_slack_and_health_answering(
    stack: dict[str, Any], redis_url: str, redis: Redis, tmp_path: Path
) -> None:
    slack: FakeSlack = stack["slack"]
    runners: list[ServeProcess] = stack["runners"]
    front: ServeProcess = stack["front"]
    store = CallStore(redis, signer=decision_keys.signer())  # the agent seals what it proposes with this key
    cards = await propose_with_cards(store, redis, slack, stack["tool"])
    ids = list(cards)

    probers = health_probers([*runners, front])
    probers["slack acks"] = Prober("slack acks", help_command(stack["events"], slack)).start()
    watch = CallWatch(redis_url, store, ids)
    try:
        for call_id in ids:
            assert approve_click(stack["events"], slack, cards[call_id]) == 200

        async def results_posted() -> bool:  # (a record holds 12 MiB of output: read one field)
            posted = [await redis.hget(store.keys.call(c), "meta:slack_result_ts") for c in ids]
            return all(posted) and len(slack.uploads) >= len(ids)

        await wait_for(results_posted, timeout=90)
    finally:
        for prober in probers.values():
            prober.stop()
        watch.stop()

    # -- every answer, from the clicks until both results were posted: a 200 within its bound
    for name, prober in probers.items():
        bound = ACK_BOUND if name == "slack acks" else HEALTH_BOUND
        late = [a for a in prober.answers if a.status != 200 or a.seconds >= bound]
        assert not late, (name, late[:5])

    # -- inside each call's sanitizing window: the runner that sanitized, and the slack role, kept answering
    written = tool_finished_writing(stack["marks"])
    runner_of = {f"runner-{os.uname().nodename}-{p.process.pid}": p for p in runners}  # bot.roles.instance_name
    for call_id in ids:
        record = await store.get(call_id)
        start, end = written[record.argv[-1]], watch.first_seen(call_id, CallState.finished.value)
        assert end is not None and end > start, (call_id, start, end)
        runner = runner_of[str(record.runner)]
        watched = {name: p for name, p in probers.items() if name.startswith((runner.name + "/", front.name))}
        assert len(watched) == 5, sorted(watched)  # the runner's two endpoints, the slack role's two, the acks
        counts = {name: len(p.within(start, end)) for name, p in watched.items()}
        silences = {name: round(p.longest_silence(start, end), 2) for name, p in watched.items()}
        window = f"sanitizing window {end - start:.2f}s"
        assert min(counts.values()) >= MIN_ANSWERS, (call_id, window, counts, silences)
        assert max(silences.values()) < (end - start) * SILENCE_SHARE, (call_id, window, counts, silences)

    # -- each call finished exactly once, by one of the two runners, its heartbeat kept coming while it ran
    for call_id in ids:
        record = await store.get(call_id)
        assert record.state is CallState.finished and str(record.runner) in runner_of, (call_id, record.state)
        trail = [(e.from_state, e.to_state) for e in await read_audit(redis, call_id=call_id)]
        assert trail == [("proposed", "awaiting_approval"), ("awaiting_approval", "approved"),
                         ("approved", "running"), ("running", "finished")], trail
        ttls = watch.running_ttls(call_id)
        assert len(ttls) >= MIN_ANSWERS, ttls  # it was watched while it ran
        assert min(ttls) >= (STALE_AFTER - HEARTBEAT_INTERVAL - HEARTBEAT_SLACK) * 1000, (call_id, min(ttls))

    # -- the output: what the sanitizer gives for these bytes, stored, and posted once per call in the thread
    expected = runner_sanitizer(stack["runner_env"], tmp_path)
    assert not [secret for secret in PLANTED for text, _ in expected if secret in text]
    uploads = list(slack.uploads.values())
    assert len(uploads) == len(ids)  # the full output is attached as a snippet, once per call
    records = {call_id: await store.get(call_id) for call_id in ids}
    for call_id, record in records.items():
        # a runner's first call gets what a fresh sanitizer gives, its second what that sanitizer gives next time
        earlier = [other for other in records.values() if other.runner == record.runner
                   and written[other.argv[-1]] < written[record.argv[-1]]]
        text, counts = expected[len(earlier)]
        assert counts["truncated"] and counts["redactions"] >= len(PLANTED)
        result = record.result or {}
        assert (result["exit_code"], result["total_bytes"], result["redactions"]) == (0, WRITTEN, counts["redactions"])
        assert result["output"] == text
        assert text.encode() in uploads  # byte for byte
        (post,) = results_in_thread(slack, call_id)
        assert f"{counts['redactions']} secret(s) redacted" in json.dumps(post["blocks"])
        cards_posted = [c for c in slack.calls_to("chat.postMessage") if c.params.get("metadata")
                        and f'"card:{call_id}"' in json.dumps(c.params["metadata"])]
        assert len(cards_posted) == 1
    shown = json.dumps([c.params for c in slack.calls if c.method.startswith("chat.")])
    assert not [secret for secret in PLANTED if secret in shown]
