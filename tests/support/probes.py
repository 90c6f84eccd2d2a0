"""Keep asking a process something while a test does its work, and keep every answer with its times.

A prober is a thread that sends one request, waits for its answer, pauses ``period`` and sends the next: one at a
time, so a process whose event loop is stalled holds the next request back, and the answers inside a stretch of
time show whether the process answered during it (counts, not timings). Times are ``time.monotonic()``, which on
Linux is one clock for every process (a tool can write its own and the test compares).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.error import HTTPError
from urllib.request import Request, urlopen


@dataclass(frozen=True)
class Answer:
    sent: float
    answered: float
    status: int  # the HTTP status, 0 when no answer came (connection refused, timeout)
    detail: str = ""

    @property
    def seconds(self) -> float:
        return self.answered - self.sent


@dataclass
class Prober:
    """Calls ``ask(n)`` (returns an HTTP status and a detail) every ``period`` seconds until ``stop``."""

    name: str
    ask: Callable[[int], tuple[int, str]]
    period: float = 0.05
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Prober:
        self._thread = threading.Thread(target=self._run, name=f"probe-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            sent = time.monotonic()
            try:
                status, detail = self.ask(n)
            except OSError as exc:  # refused, reset, timed out: no answer
                status, detail = 0, f"{type(exc).__name__}: {exc}"
            self.answers.append(Answer(sent, time.monotonic(), status, detail))
            n += 1
            self._stop.wait(self.period)

    def within(self, start: float, end: float) -> list[Answer]:
        """The answers to requests sent at or after ``start`` and answered by ``end``."""
        return [a for a in self.answers if a.sent >= start and a.answered <= end]

    def longest_silence(self, start: float, end: float) -> float:
        """The longest stretch of ``start``..``end`` in which no answer arrived (its ends count as arrivals).

        A process that answers keeps this near ``period``; one whose loop is busy for a while is silent for that
        while (its prober's one request waits), whatever the speed of the machine."""
        arrivals = [start, *sorted(a.answered for a in self.answers if start <= a.answered <= end), end]
        return max(later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False))


def http_get(url: str, timeout: float = 10.0) -> tuple[int, str]:
    try:
        with urlopen(url, timeout=timeout) as resp:
            return int(resp.status), resp.read().decode(errors="replace")[:200]
    except HTTPError as exc:
        return int(exc.code), exc.reason


def http_post(url: str, body: bytes, headers: dict[str, str], timeout: float = 10.0) -> tuple[int, str]:
    try:
        with urlopen(Request(url, data=body, headers=headers), timeout=timeout) as resp:
            return int(resp.status), resp.read(4000).decode(errors="replace")
    except HTTPError as exc:
        return int(exc.code), exc.reason
