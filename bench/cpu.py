"""CPU time of the processes a bench runs, so a figure can say which process a call costs the most (not a test).

A role process runs one asyncio loop, so its CPU seconds per call bound what it can sustain on one core; Redis
is single-threaded too, so its CPU per call bounds the whole deployment on one primary (or one shard).
"""

from __future__ import annotations

import os
from pathlib import Path

import redis

TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of ``pid`` so far (``/proc/<pid>/stat`` utime + stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of the file, counted after "(comm)"


def redis_cpu_seconds(client: redis.Redis) -> float:
    """The Redis server's own user + system CPU seconds (``INFO cpu``; main thread and background work)."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def redis_commands(client: redis.Redis) -> int:
    """Commands the Redis server has processed so far (``INFO stats``; a script counts once, plus its calls)."""
    return int(client.info("stats")["total_commands_processed"])


class CpuMeter:
    """CPU seconds each named process (and Redis: every server given, summed) used between ``start`` and
    ``stop``."""

    def __init__(self, pids: dict[str, int], client: redis.Redis | list[redis.Redis]) -> None:
        self.pids = pids
        self.clients = client if isinstance(client, list) else [client]
        self._start: dict[str, float] = {}
        self.used: dict[str, float] = {}
        self.commands = 0  # Redis commands between start and stop (the meter's own INFO calls are a few)

    def _now(self) -> dict[str, float]:
        now = {name: process_cpu_seconds(pid) for name, pid in self.pids.items()}
        now["redis"] = sum(redis_cpu_seconds(client) for client in self.clients)
        return now

    def start(self) -> None:
        self._commands = sum(redis_commands(client) for client in self.clients)
        self._start = self._now()

    def stop(self) -> dict[str, float]:
        end = self._now()
        self.commands = sum(redis_commands(client) for client in self.clients) - self._commands
        self.used = {name: end[name] - self._start[name] for name in end}
        return self.used
