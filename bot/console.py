"""A terminal front end over the same core as Slack (agent, approval queue, runner), like Errbot's text backend.

It runs every role in this process against the embedded Redis (or ``REDIS_URL``). The approval card becomes a
prompt showing the exact command line; results and answers print in the terminal (``console_view.py`` draws
them). The approver is the local user (``console:<login>``), so the approval policy applies exactly as in Slack.

Ctrl-C cancels what the console is waiting for (the model, a command, an approval: the turn is stopped and its
pending calls cancelled) on the first press and quits cleanly on the second; SIGTERM quits cleanly. Input is read
by a daemon thread, so quitting never waits for a line the user has not typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import signal
import sys
import threading
import time
import uuid
from collections import deque
from typing import TYPE_CHECKING, TextIO

from rich.text import Text

from bot.agent import bus
from bot.approvals.errors import ApprovalError, NotDurable
from bot.approvals.events import CompletionConsumer
from bot.approvals.records import CallRecord
from bot.cancelling import cancel_and_wait
from bot.config import Config
from bot.config_secrets import Secrets
from bot.config_view import full_config
from bot.console_view import ConsoleView, card_text, command_line, result_text
from bot.fisk.environment import is_credential_name
from bot.hardening import harden
from bot.roles import Core, agent_worker, check_model_access, instance_name, require_model_credentials, runner_worker

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

HELP = ("Type a request; approve or deny each proposed command with y/n. 'stop' or Ctrl-C cancels the request"
        " (Ctrl-C twice quits); /quit exits.")
YOU = Text("you> ", style="bold cyan")


def read_lines(stream: TextIO, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str | None]) -> None:
    """Feed ``lines`` from ``stream`` on a daemon thread (None at end of input)."""

    def pump() -> None:
        for line in iter(stream.readline, ""):
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=pump, name="console-input", daemon=True).start()


class Console:
    """One terminal conversation."""

    def __init__(self, core: Core, *, view: ConsoleView | None = None, user: str | None = None,
                 model: AsyncAnthropic | None = None) -> None:
        self.core = core
        self.model = model  # the client the start-up check used, if any: the agent's (one TLS context, not two)
        self.view = view or ConsoleView()
        self.user = f"console:{user or getpass.getuser()}"
        self.conversation = f"console:{uuid.uuid4().hex[:12]}"
        self.awaiting: deque[CallRecord] = deque()
        self.seen_calls: set[str] = set()
        self.running: dict[str, tuple[str, float]] = {}  # call id -> (tool, started), for the spinner
        self.thinking_since: float | None = None  # the model is working on our turn since then
        self.turn_done = asyncio.Event()
        self.turn_done.set()
        self.interrupted = False  # Ctrl-C pressed once: the next press quits
        self.stop = asyncio.Event()
        # The operator's patterns, applied to every command line shown here as the Slack cards apply them.
        self.redact_patterns = tuple(core.config.execution.redact_patterns)

    async def run(self, lines: asyncio.Queue[str | None] | None = None) -> None:
        loop = asyncio.get_running_loop()
        if lines is None:
            lines = asyncio.Queue()
            read_lines(sys.stdin, loop, lines)
        for sig, handler in ((signal.SIGINT, self.interrupt), (signal.SIGTERM, self.stop.set)):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, handler)
        self.view.note(HELP)
        tasks = [
            asyncio.create_task(agent_worker(self.core, client=self.model).run(self.stop)),
            asyncio.create_task(runner_worker(self.core).run(self.stop)),
            asyncio.create_task(self._outbox()),
            asyncio.create_task(self._completions()),
        ]
        reader = asyncio.create_task(self._input(lines))
        stopping = asyncio.create_task(self.stop.wait())
        try:
            done, _ = await asyncio.wait([reader, stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task in tasks and not task.cancelled() and task.exception() is not None:
                    # a dead background task must not go unnoticed
                    self.view.note(f"error: {task.exception()}", "bold red")
        finally:
            self.stop.set()
            self.view.close()
            await cancel_and_wait([reader, stopping])
            await asyncio.gather(*tasks, return_exceptions=True)
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)

    # -------------------------------------------------------------- the user's side

    async def _input(self, lines: asyncio.Queue[str | None]) -> None:
        self.view.show_prompt(YOU)
        while not self.stop.is_set():
            line = await lines.get()
            self.view.close_prompt()
            if line is None:
                await self._finish_turn()
                return
            text = line.strip()
            if text in ("/quit", "/exit"):
                return
            self.interrupted = False
            if self.awaiting:
                await self._decide(self.awaiting.popleft(), text)
            elif text.lower() == "stop":
                await bus.submit_stop(self.core.redis.client, self.conversation, self.user)
            elif text:
                self.turn_done.clear()
                self.thinking_since = time.monotonic()
                await bus.submit_user_message(self.core.redis.client, self.conversation, self.user, text)
            self._settle()

    def interrupt(self) -> None:
        """Ctrl-C: the first press cancels the current wait, the second quits."""
        if self.interrupted:
            self.view.note("bye")
            self.stop.set()
            return
        self.interrupted = True
        if not self.turn_done.is_set() or self.awaiting:
            self.awaiting.clear()
            self.view.close_prompt()
            self.view.note("\nstopping: pending calls are cancelled (Ctrl-C again quits)", "yellow")
            asyncio.get_running_loop().create_task(
                bus.submit_stop(self.core.redis.client, self.conversation, self.user)
            )
        else:
            self.view.close_prompt()
            self.view.note("\n(Ctrl-C again quits; /quit too)", "yellow")
            self.view.show_prompt(YOU)

    async def _finish_turn(self, timeout: float = 300.0) -> None:
        """End of input (``echo question | fisk-chatops console``): wait for the answer, unless the turn needs
        an approval nobody is left to give."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not (self.turn_done.is_set() or self.awaiting or self.stop.is_set()):
            if asyncio.get_running_loop().time() > deadline:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.turn_done.wait(), 0.2)
        if self.awaiting:
            self.view.note("(end of input: the approval prompt above was left unanswered; the call stays pending)")

    async def _decide(self, record: CallRecord, answer: str) -> None:
        store, policy = self.core.store, full_config(self.core.config, "the console").approval
        try:
            if answer.lower() in ("y", "yes"):
                await store.approve(record.id, self.user, [], policy, argv_hash=record.argv_hash)
                self.running[record.id] = (record.tool, time.monotonic())
                self.view.note(f"approved {record.tool}", "green")
            else:
                await store.deny(record.id, self.user, [], policy, reason="denied at the console")
                self.view.note(f"denied {record.tool}", "red")
        except NotDurable as exc:  # on the primary; a failover before a replica has it could lose it
            self.view.note(f"recorded, but not confirmed by a Redis replica: {exc}", "red")
        except ApprovalError as exc:
            self.view.note(f"not recorded: {exc}", "red")

    # -------------------------------------------------------------- what is at the bottom of the screen

    def _settle(self) -> None:
        """Show what we wait for now: the next approval card, a spinner while the turn runs, or ``you>``."""
        if self.stop.is_set():
            return
        if self.awaiting:
            if self.view.prompt is None:
                self.view.show_prompt(card_text(self.awaiting[0], self.redact_patterns))
        elif not self.turn_done.is_set():
            self.view.close_prompt()
            self.view.spin(self._waiting_for)
        elif self.view.prompt is None:
            self.view.show_prompt(YOU)

    def _waiting_for(self) -> tuple[str, float] | None:
        if self.running:
            tool, since = next(iter(self.running.values()))
            return f"running {tool}", since
        if self.thinking_since is not None:
            return "thinking", self.thinking_since
        return None

    # -------------------------------------------------------------- the bot's side

    async def _outbox(self) -> None:
        redis, group = self.core.redis.client, instance_name("console")
        await bus.ensure_group(redis, bus.OUTBOX, group)
        while not self.stop.is_set():
            for event in await bus.read_group(self.core.redis.reader, bus.OUTBOX, group, "console"):
                if event.conversation == self.conversation:
                    await self._show(event)
                await bus.ack(redis, bus.OUTBOX, group, event)

    async def _show(self, event: bus.BusEvent) -> None:
        if event.kind == "reply":
            self.view.reply(str(event.data.get("text", "")), str(event.data.get("kind", "answer")))
        elif event.kind == "proposed":
            for call_id in event.data.get("call_ids", []):
                if call_id in self.seen_calls:
                    continue
                self.seen_calls.add(call_id)
                record = await self.core.store.get(call_id)
                if str(record.state) == "awaiting_approval":
                    self.awaiting.append(record)
                elif str(record.state) == "auto_approved":
                    self.running[record.id] = (record.tool, time.monotonic())
                    self.view.note(f"running {record.tool} (auto-approved: {record.trigger}): "
                                   f"$ {command_line(record.argv, self.redact_patterns)[0]}", "cyan")
        elif event.kind == "idle" and event.data.get("state") == "done":
            self.turn_done.set()
            self.thinking_since = None
            self.running.clear()
        self._settle()

    async def _completions(self) -> None:
        consumer = CompletionConsumer(self.core.redis.client, instance_name("console"), "console",
                                      shards=self.core.config.redis.shards, start_id="$",
                                      reader=self.core.redis.reader)
        async for event in consumer.events(self.stop):
            if event.conversation != self.conversation:
                continue
            record = await self.core.store.get(event.call_id)
            # An expired or cancelled call is no longer waiting for an answer here.
            if self.awaiting and self.awaiting[0].id == record.id:
                self.view.close_prompt()
            self.awaiting = deque(r for r in self.awaiting if r.id != record.id)
            if self.running.pop(record.id, None) is not None and self.thinking_since is not None:
                self.thinking_since = time.monotonic()  # the model reads the result now
            self.view.emit(result_text(record))
            self._settle()


async def run_console(config: Config) -> None:
    secrets = Secrets()
    require_model_credentials(secrets, "the console")
    harden(lambda name: is_credential_name(name, config.sensitive_env_vars))  # the console runs tools too
    core = await Core.open(config, {"slack", "agent", "runner"}, secrets)
    model = None
    try:
        model = await check_model_access(core)
        await Console(core, model=model).run()
    finally:
        if model is not None:
            await model.close()
        await core.close()
