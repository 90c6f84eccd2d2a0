"""Drive a real process through a pseudo-terminal: send lines, wait for text on the screen."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time
from collections.abc import Sequence


class PtyProcess:
    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str | None = None) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                        start_new_session=True)
        os.close(slave)
        self.screen = ""

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def expect(self, text: str, timeout: float = 30.0, after: int = 0) -> int:
        """Wait until ``text`` appears on the screen after position ``after``; return the position after it."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.screen.find(text, after)
            if found >= 0:
                return found + len(text)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {text!r}; screen:\n{self.screen[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], min(remaining, 0.2))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"process exited waiting for {text!r}; screen:\n{self.screen[-3000:]}")
                self.screen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")

    def close(self) -> int:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        os.close(self.master)
        return int(self.process.returncode)
