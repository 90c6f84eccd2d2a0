"""A terminal front end over the same core as Slack (agent, approval queue, runner), like Errbot's text backend.

It runs every role in this process against the embedded Redis (or ``REDIS_URL``). The approval card becomes a
prompt showing the exact command line; results and answers print in the terminal. The approver is the local
user (``console:<login>``), so the approval policy applies exactly as in Slack.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import shlex
import sys
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

from bot.agent import bus
from bot.approvals.errors import ApprovalError
from bot.approvals.events import CompletionConsumer
from bot.approvals.records import CallRecord
from bot.config import Config, Secrets
from bot.fisk.environment import is_credential_name
from bot.hardening import harden
from bot.roles import Core, agent_worker, check_model_access, instance_name, require_model_credentials, runner_worker

HELP = "Type a request. Approve or deny each proposed command with y/n. 'stop' cancels pending calls; /quit exits."
OUTPUT_LINES = 60


def render_card(record: CallRecord) -> str:
    """The console's approval card: the exact command line, why approval is needed, and when it expires."""
    return (
        f"\n┌ approval needed: {record.tool} ({record.trigger})\n"
        f"│ $ {shlex.join(record.argv)}\n"
        f"└ expires {record.expires_at:%H:%M:%S} UTC. Approve? [y/N] "
    )


def render_result(record: CallRecord) -> str:
    result: dict[str, Any] = record.result or {}
    state = str(record.state)
    if state in ("denied", "expired", "rejected"):
        return f"\n[{record.tool}] {state}" + (f": {record.decision.reason}" if record.decision and
                                               record.decision.reason else "")
    head = f"\n[{record.tool}] {state}"
    if result.get("exit_code") is not None:
        head += f", exit code {result['exit_code']}"
    if result.get("duration_seconds") is not None:
        head += f", {float(result['duration_seconds']):.2f}s"
    if result.get("error"):
        head += f": {result['error']}"
    lines = str(result.get("output", "")).splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = [*lines[: OUTPUT_LINES // 2], f"… {len(lines) - OUTPUT_LINES} lines …", *lines[-OUTPUT_LINES // 2:]]
    return "\n".join([head, *("  " + line for line in lines)])


class Console:
    """One terminal conversation. ``read_line`` blocks for a line (None at end of input)."""

    def __init__(self, core: Core, *, read_line: Callable[[], str | None] | None = None,
                 out: TextIO | None = None, user: str | None = None) -> None:
        self.core = core
        self.read_line = read_line or _stdin_line
        self.out = out or sys.stdout
        self.user = f"console:{user or getpass.getuser()}"
        self.conversation = f"console:{uuid.uuid4().hex[:12]}"
        self.awaiting: deque[CallRecord] = deque()
        self.seen_calls: set[str] = set()
        self.turn_done = asyncio.Event()
        self.turn_done.set()

    def say(self, text: str, end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    async def run(self, stop: asyncio.Event) -> None:
        self.say(HELP)
        tasks = [
            asyncio.create_task(agent_worker(self.core).run(stop)),
            asyncio.create_task(runner_worker(self.core).run(stop)),
            asyncio.create_task(self._outbox(stop)),
            asyncio.create_task(self._completions(stop)),
        ]
        reader = asyncio.create_task(self._input(stop))
        try:
            done, _ = await asyncio.wait([reader, *tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not reader and not task.cancelled() and task.exception() is not None:
                    self.say(f"\nerror: {task.exception()}")  # a dead background task must not go unnoticed
        finally:
            stop.set()
            reader.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _input(self, stop: asyncio.Event) -> None:
        self.say("you> ", end="")
        while not stop.is_set():
            line = await asyncio.to_thread(self.read_line)
            if line is None:
                await self._finish_turn(stop)
                return
            if line.strip() in ("/quit", "/exit"):
                return
            text = line.strip()
            if self.awaiting:
                await self._decide(self.awaiting.popleft(), text)
            elif text.lower() == "stop":
                await bus.submit_stop(self.core.redis.client, self.conversation, self.user)
            elif text:
                self.turn_done.clear()
                await bus.submit_user_message(self.core.redis.client, self.conversation, self.user, text)
            if self.awaiting:
                self.say(render_card(self.awaiting[0]), end="")

    async def _finish_turn(self, stop: asyncio.Event, timeout: float = 300.0) -> None:
        """End of input (``echo question | fisk-chatops console``): wait for the answer, unless the turn needs
        an approval nobody is left to give."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not (self.turn_done.is_set() or self.awaiting or stop.is_set()):
            if asyncio.get_running_loop().time() > deadline:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.turn_done.wait(), 0.2)
        if self.awaiting:
            self.say("\n(end of input: the approval prompt above was left unanswered; the call stays pending)")

    async def _decide(self, record: CallRecord, answer: str) -> None:
        store, policy = self.core.store, self.core.config.approval
        try:
            if answer.lower() in ("y", "yes"):
                await store.approve(record.id, self.user, [], policy, argv_hash=record.argv_hash)
                self.say(f"approved {record.tool}")
            else:
                await store.deny(record.id, self.user, [], policy, reason="denied at the console")
                self.say(f"denied {record.tool}")
        except ApprovalError as exc:
            self.say(f"not recorded: {exc}")

    async def _outbox(self, stop: asyncio.Event) -> None:
        redis, group = self.core.redis.client, instance_name("console")
        await bus.ensure_group(redis, bus.OUTBOX, group)
        while not stop.is_set():
            for event in await bus.read_group(self.core.redis.reader, bus.OUTBOX, group, "console"):
                if event.conversation == self.conversation:
                    await self._show(event)
                await bus.ack(redis, bus.OUTBOX, group, event)

    async def _show(self, event: bus.BusEvent) -> None:
        if event.kind == "reply":
            self.say(f"\nbot> {event.data.get('text', '')}")
        elif event.kind == "proposed":
            for call_id in event.data.get("call_ids", []):
                if call_id in self.seen_calls:
                    continue
                self.seen_calls.add(call_id)
                record = await self.core.store.get(call_id)
                if str(record.state) == "awaiting_approval":
                    first = not self.awaiting
                    self.awaiting.append(record)
                    if first:
                        self.say(render_card(record), end="")
                elif str(record.state) == "auto_approved":
                    self.say(f"\nrunning {record.tool} (auto-approved: {record.trigger}): $ {shlex.join(record.argv)}")
        elif event.kind == "idle" and event.data.get("state") == "done":
            self.turn_done.set()
            if not self.awaiting:
                self.say("you> ", end="")

    async def _completions(self, stop: asyncio.Event) -> None:
        consumer = CompletionConsumer(self.core.redis.client, instance_name("console"), "console",
                                      shards=self.core.config.redis.shards, start_id="$",
                                      reader=self.core.redis.reader)
        async for event in consumer.events(stop):
            if event.conversation != self.conversation:
                continue
            record = await self.core.store.get(event.call_id)
            # An expired or cancelled call is no longer waiting for an answer here.
            self.awaiting = deque(r for r in self.awaiting if r.id != record.id)
            self.say(render_result(record))


def _stdin_line() -> str | None:
    line = sys.stdin.readline()
    return line if line else None


async def run_console(config: Config) -> None:
    secrets = Secrets()
    require_model_credentials(secrets, "the console")
    harden(lambda name: is_credential_name(name, config.sensitive_env_vars))  # the console runs tools too
    core = await Core.open(config, {"slack", "agent", "runner"}, secrets)
    try:
        await check_model_access(core)
        await Console(core).run(asyncio.Event())
    finally:
        await core.close()
