"""py-spy sampling of a bench's role processes (``pip install py-spy``), as collapsed stacks (not a test).

A bench attaches a profiler to a role's pid just before its measured phase and stops it right after, so the
profile holds the measured work only (not imports, warm-up or shut-down). Read a file with any flame-graph
tool, or sum it by frame: each line is ``frame;frame;... count``.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


def py_spy() -> str:
    """py-spy from PATH, else the one installed beside this interpreter (a venv's bin, not on PATH)."""
    return shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")


class Profiler:
    """One ``py-spy record`` of one process; ``stop`` writes the collapsed stacks to ``output``."""

    def __init__(self, pid: int, output: str, label: str, rate: int = 1000) -> None:
        self.output, self.label = output, label
        self.process = subprocess.Popen([py_spy(), "record", "--pid", str(pid), "--rate", str(rate),
                                         "--nonblocking", "--gil", "--format", "raw", "--output", output],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(30)
        print(f"py-spy profile of {self.label} (collapsed stacks): {self.output}")


def start_profilers(targets: dict[str, tuple[int, str]]) -> list[Profiler]:
    """One profiler per ``label -> (pid, output)``; returns once py-spy has had time to attach."""
    profilers = [Profiler(pid, output, label) for label, (pid, output) in targets.items()]
    if profilers:
        time.sleep(1.0)
    return profilers


def stop_profilers(profilers: list[Profiler]) -> None:
    for profiler in profilers:
        profiler.stop()
