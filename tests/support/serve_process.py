"""``fisk-chatops serve --role ...`` as a real child process, for tests that run several of them on one Redis."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from tests.support.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition",
               interval: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy (returned), or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)


class ServeProcess:
    """One ``serve --role ROLE`` process with its own health port; its output goes to ``logs/<name>.log``."""

    def __init__(self, role: str, name: str, config: Path, env: dict[str, str], logs: Path) -> None:
        self.role, self.name = role, name
        self.health_port = free_port()
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / f"{name}.log"
        with open(self.log_path, "wb") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "serve", "--config", str(config), "--role", role,
                 "--health-host", "127.0.0.1", "--health-port", str(self.health_port)],
                env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            )

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
        try:
            with urlopen(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM (the role drains), SIGKILL if it does not end in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
