"""How a tool's process starts (``bot/runner/spawn.py``): posix_spawn by default, Popen for working_dir/run_as;
either way the child gets only stdin (/dev/null), the output pipe and the sealed binary, in a new session, with
SIGPIPE and SIGXFSZ at their defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
from bot.runner.binary import seal_copy
from bot.runner.spawn import start

ROOT = Path(__file__).resolve().parents[1]

# A fresh interpreter: the descriptor this process was "started with" (63, inheritable) must not reach the tool.
STRAY_DESCRIPTOR = """
import asyncio, os, sys
os.dup2(os.open(os.devnull, os.O_RDONLY), 63, inheritable=True)
from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
cwd = sys.argv[1] or None
result = asyncio.run(run_argv(["/bin/ls", "/proc/self/fd"], env=scrub_environment().env, cwd=cwd, timeout=10))
print(result.output.split())
"""


@pytest.mark.parametrize("cwd", ["", "/"], ids=["posix_spawn", "popen_with_cwd"])
def test_the_tool_inherits_no_descriptor_of_the_runner(cwd: str) -> None:
    done = subprocess.run([sys.executable, "-c", STRAY_DESCRIPTOR, cwd], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['0', '1', '2', '3']"  # 3: the directory ls is listing


@pytest.mark.parametrize("cwd", [None, "/"], ids=["posix_spawn", "popen_with_cwd"])
async def test_child_signals_session_and_sealed_binary(cwd: str | None) -> None:
    snapshot = seal_copy("/bin/grep")
    try:
        result = await run_argv(["/bin/grep", "-E", "^(SigIgn|SigBlk):", "/proc/self/status"],
                                env=scrub_environment().env, cwd=cwd, timeout=10, executable_fd=snapshot.fd)
    finally:
        os.close(snapshot.fd)
    assert result.status == "finished" and result.exit_code == 0, result
    masks = dict(line.split(":\t") for line in result.output.splitlines())
    ignored = int(masks["SigIgn"], 16)
    assert not ignored & (1 << 12) and not ignored & (1 << 24), masks  # SIGPIPE (13), SIGXFSZ (25) at default
    assert int(masks["SigBlk"], 16) == 0


async def test_a_missing_program_is_named_by_its_configured_path(tmp_path: Path) -> None:
    result = await run_argv([str(tmp_path / "gone"), "x"], env=scrub_environment().env, cwd=None, timeout=10)
    assert result.status == "failed_to_start"
    assert result.error == f"the program {tmp_path / 'gone'} was not found"


def test_a_child_reaped_elsewhere_does_not_hang_its_watcher() -> None:
    child = start(["/bin/true"], env={}, cwd=None, executable_fd=None, run_as=None)
    os.waitpid(child.pid, 0)  # someone else collected it (as with SIGCHLD ignored): the status is gone
    assert child.poll() == 0 and child.wait() == 0
    assert child.stdout is not None
    child.stdout.close()
