"""The console stops its line reader until it has ended (bot/console.py), even when the reader's wait lost its
first cancellation (Python 3.11's ``asyncio.wait_for`` does, CPython gh-86296). Before, one ``cancel()`` and no
wait left the reader running after the console had returned and closed its Redis clients. The real console and
its roles on a real Redis; the line source is the queue ``Console.run`` takes (what stdin feeds)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from bot.config import Secrets, parse_config
from bot.console import Console
from bot.console_view import ConsoleView
from bot.roles import Core


class LosesOneCancellation(asyncio.Queue[str | None]):
    """A line source whose wait swallows the first cancellation, as a lost cancellation looks from outside."""

    swallowed = 0

    async def get(self) -> str | None:
        while True:
            try:
                return await super().get()
            except asyncio.CancelledError:
                if self.swallowed:
                    raise
                self.swallowed += 1


def _readers() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if "Console._input" in repr(t.get_coro()) and not t.done()]


async def test_the_console_returns_only_once_its_reader_has_ended(
        tmp_path: Path, opsctl: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    config = parse_config({"applications": [{"binary": str(opsctl)}], "shutdown_grace_seconds": 1})
    core = await Core.open(config, {"slack", "agent", "runner"}, Secrets())
    lines = LosesOneCancellation()
    try:
        console = Console(core, view=ConsoleView(io.StringIO(), terminal=False), user="tester")
        running = asyncio.create_task(console.run(lines))
        await asyncio.sleep(0.3)
        assert len(_readers()) == 1  # waiting for a line
        console.stop.set()  # SIGTERM
        await asyncio.wait_for(running, 20)
        assert lines.swallowed == 1  # the first cancellation was lost indeed
        assert _readers() == [], "the console returned with its line reader still running"
    finally:
        lines.put_nowait(None)  # ends a reader left behind (the old code), so the loop closes cleanly
        await asyncio.sleep(0.05)
        await core.close()
