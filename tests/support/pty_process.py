"""Drive a real process through a pseudo-terminal: send lines, wait for text on the screen."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Sequence

# what a terminal interprets instead of showing: CSI (colours, cursor moves, erase), OSC, two-byte escapes
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


class PtyProcess:
    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str | None = None, *,
                 columns: int = 120, rows: int = 40) -> None:
        self.master, slave = pty.openpty()
        self.columns = columns
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        # The size is the terminal's, learnt from the terminal: LINES/COLUMNS inherited from elsewhere
        # (pytest-xdist workers export 24x80) would override it for rich.
        env = {name: value for name, value in env.items() if name not in ("LINES", "COLUMNS")}
        self.process = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                        start_new_session=True)
        os.close(slave)
        self.raw = ""  # everything the process wrote, escape sequences included
        self.screen = ""  # the same without escape sequences: the text a person reads

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
                self.raw += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
                self.screen = ANSI.sub("", self.raw)

    def interrupt(self) -> None:
        """What Ctrl-C does in a terminal: SIGINT to the foreground process group."""
        os.killpg(self.process.pid, signal.SIGINT)

    def rendered(self) -> list[str]:
        """The lines a person sees on the terminal now (escape sequences applied by a real VT emulator:
        erased lines are gone, overwritten lines show the new text), history included."""
        import pyte

        screen = pyte.Screen(self.columns, 5000)
        stream = pyte.Stream(screen)
        stream.feed(self.raw.replace("\n", "\r\n"))
        return [line.rstrip() for line in screen.display][: screen.cursor.y + 1]

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
