"""Real parts the benches share: a Redis server, ``serve --role`` processes, a compiled tool, percentiles.

The tool (``build_tool``) is a small C program, so a bench times the bot and not an interpreter starting: for
``--fisk-introspect`` it prints the opsctl fixture (so the catalog is built by real introspection); otherwise it
copies the file named by ``$BENCH_PAYLOAD``, or else ``./payload`` in its working directory, to stdout when it
exists (fixed-size realistic output), or
prints ``started <CLOCK_MONOTONIC seconds>`` -- the moment the child was running, comparable with the bench's own
``time.monotonic()`` across processes on the same machine.
"""

from __future__ import annotations

import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bot.approvals.decision_keys import ensure_key_pair, load_private_key  # noqa: E402
from bot.approvals.decisions import DecisionSigner  # noqa: E402
from bot.approvals.records import Proposal  # noqa: E402
from bot.fisk.introspect import introspect_with_digest  # noqa: E402
from tests.support.redis_server import free_port, redis_server_binary  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "fisk" / "opsctl.introspect.json"
#: the opsctl tool every bench calls: no required arguments, argv = [binary, "auth", "user", "list"]
TOOL = "auth_user_list"

TOOL_SOURCE = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (argc == 2 && strcmp(argv[1], "--fisk-introspect") == 0) {
        execl("/bin/cat", "cat", FIXTURE, (char *)0);
        return 127;
    }
    const char *path = getenv("BENCH_PAYLOAD");
    int fd = open(path != NULL ? path : "payload", O_RDONLY);
    if (fd < 0) {
        printf("started %lld.%09ld\n", (long long)now.tv_sec, now.tv_nsec);
        return 0;
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        if (write(1, buf, (size_t)n) != n) return 1;
    }
    return 0;
}
"""


def build_tool(directory: Path, name: str = "opsctl") -> Path:
    """Compile the bench tool into ``directory``; a clear error when no C compiler is installed."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("the benches need a C compiler (cc) to build their tool: apt-get install gcc")
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{name}.c"
    source.write_text(TOOL_SOURCE)
    binary = directory / name
    subprocess.run([compiler, "-O2", f'-DFIXTURE="{FIXTURE}"', "-o", str(binary), str(source)], check=True)
    return binary


APPROVER = "UAPPROVER"


def write_config(work: Path, binary: Path, name: str = "config.yaml", max_concurrency: int = 4,
                 **sections: object) -> Path:
    """A configuration for ``serve --role`` processes: the bench tool, one approver, a decision key pair (the
    runners verify every approval with its public key; ``signer`` signs as the slack role would), and a state
    directory of this run's own: a runner loads the executed decisions of the last ``decisions.valid_seconds``
    from it at start, and the tree's ``.state`` would carry earlier runs' calls into this one's figures."""
    private, public = ensure_key_pair(work / "keys")
    config = work / name
    config.write_text(json.dumps({
        "applications": [{"binary": str(binary), "max_concurrency": max_concurrency}],
        "approval": {"approvers": {"users": [APPROVER]}},
        "decisions": {"signing_key_file": str(private), "public_key_files": [str(public)]},
        "shutdown_grace_seconds": 5,
        "log_level": "WARNING",
        **sections,
        "redis": {"state_dir": str(work / "state"), **cast(dict[str, object], sections.get("redis", {}))},
    }))
    return config


def signer(work: Path) -> DecisionSigner:
    """Signs approvals with the key ``write_config`` made, as the slack role does."""
    private, _ = ensure_key_pair(work / "keys")
    return DecisionSigner(load_private_key(private))


def tool_proposal(binary: Path) -> Proposal:
    """The bench's call as the agent proposes it: with the digest of the binary and of its introspection."""
    _, digest, model_hash = introspect_with_digest(str(binary))
    return Proposal(tool=TOOL, app="opsctl", arguments="{}", argv=[str(binary), "auth", "user", "list"],
                    binary_digest=digest, model_hash=model_hash)


def started_at(output: str) -> float:
    """The child's own start time from the tool's ``started <seconds>`` line."""
    for line in output.splitlines():
        if line.startswith("started "):
            return float(line.split()[1])
    raise ValueError(f"no start stamp in tool output {output[:200]!r}")


def realistic_output(size: int) -> bytes:
    """Log lines like a real ``service logs`` answer (timestamps, levels, ids, an ANSI colour), ``size`` bytes."""
    lines = []
    total = i = 0
    while total < size:
        level = "\x1b[33mWARN\x1b[0m" if i % 20 == 19 else "INFO"
        line = (f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z {level} web-{i % 7} GET /api/v1/items/{i} "
                f"status=200 latency={i % 97}ms bytes={i * 13 % 5000} request_id=req-{i:08x}\n")
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines).encode()[:size]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered))) - 1))]


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


async def count_stream_entries(client: Any, stream: str, position: Any, n: int, timeout: float, what: str,
                                counts: Callable[[dict[bytes, bytes]], bool] = lambda fields: True) -> None:
    """Read ``stream`` after ``position`` until ``n`` entries that ``counts`` accepts have arrived (``client`` is a
    redis.asyncio client); TimeoutError naming ``what`` if they do not within ``timeout`` seconds."""
    seen = 0
    deadline = time.monotonic() + timeout
    while seen < n:
        reply: Any = await client.xread({stream: position}, count=1000, block=2000)
        if not reply:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {seen} of {n} {what} within {timeout:.0f} s")
            continue
        entries = reply[0][1]
        position = entries[-1][0]
        seen += sum(1 for _, fields in entries if counts(fields))


class RedisProcess:
    """redis-server on a loopback port, AOF with the default everysec fsync (what a production Redis runs)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [redis_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(directory),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.client = redis.Redis.from_url(self.url, decode_responses=True)
        wait_until(self._ping, 10, "redis-server")

    def _ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.ConnectionError:
            return False

    def used_memory(self) -> int:
        return int(self.client.info("memory")["used_memory"])

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


class Role:
    """One ``serve --role`` process (as tests/ops/test_serve_roles.py starts them)."""

    def __init__(self, role: str, name: str, config: Path, env: dict[str, str], logs: Path, tree: Path = ROOT) -> None:
        self.role, self.name = role, name
        self.health_port = free_port()
        self.log_path = logs / f"{name}.log"
        logs.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "wb")  # noqa: SIM115 -- the child keeps it
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "--config", str(config), "--role", role,
             "--health-host", "127.0.0.1", "--health-port", str(self.health_port)],
            env=env, cwd=tree, stdout=log, stderr=subprocess.STDOUT,  # `-m bot.cli` runs the tree it starts in
        )
        log.close()

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}; see {self.log_path}")
        try:
            with urlopen(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    def rss_kib(self) -> int | None:
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
