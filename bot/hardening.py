"""Process hardening for the roles that start tools: a tool runs as our uid, so it must not read our secrets.

* ``make_non_dumpable``: ``prctl(PR_SET_DUMPABLE, 0)``. The kernel then refuses ptrace and makes
  ``/proc/<pid>/{environ,mem,maps,...}`` owned by root, so a same-uid process (a tool we started) can read
  neither our environment nor our memory. Root (or CAP_SYS_PTRACE) still can: that is what ``runner.run_as``
  is for (tools under another uid).
* ``wipe_initial_environment``: ``/proc/<pid>/environ`` shows the environment block the process was started
  with, which ``del os.environ[...]`` does not touch; the values of the credential variables are overwritten
  with NUL bytes in place. Python's ``os.environ`` (a separate copy) keeps working for the libraries that read
  it at start-up.
* ``drop_credentials``: remove the credential variables from ``os.environ`` once nothing needs them (a runner
  after it connected); children never got them anyway (``scrub_environment``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
from collections.abc import Callable

log = logging.getLogger(__name__)

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def make_non_dumpable() -> bool:
    """True when the process is now non-dumpable (False where prctl is unavailable, e.g. not Linux)."""
    try:
        libc = _libc()
        if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return False
        return int(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def is_dumpable() -> bool:
    return int(_libc().prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) != 0


def _environment_block() -> tuple[int, int] | None:
    """Start and end address of the initial environment block (``/proc/self/stat`` fields 50 and 51)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    # fields[0] is field 3 (state); env_start and env_end are fields 50 and 51
    if len(fields) < 49:
        return None
    return int(fields[47]), int(fields[48])


def wipe_initial_environment(is_secret: Callable[[str], bool]) -> list[str]:
    """Overwrite the values of secret variables in the initial environment block; returns their names."""
    bounds = _environment_block()
    if bounds is None or bounds[1] <= bounds[0]:
        return []
    start, end = bounds
    block = ctypes.string_at(start, end - start)
    wiped, offset = [], 0
    for entry in block.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and value and is_secret(name.decode(errors="replace")):
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            wiped.append(name.decode(errors="replace"))
        offset += len(entry) + 1
    return wiped


def drop_credentials(is_secret: Callable[[str], bool]) -> list[str]:
    """Remove secret variables from ``os.environ`` (and so from libc's environment); returns their names."""
    names = [name for name in os.environ if is_secret(name)]
    for name in names:
        del os.environ[name]
    return names


def harden(is_secret: Callable[[str], bool]) -> None:
    """What every serving process does first: non-dumpable, and no secret left in its initial environment."""
    dumpable_off = make_non_dumpable()
    wiped = wipe_initial_environment(is_secret)
    log.info("process hardening: non-dumpable=%s, %d credential value(s) wiped from the initial environment",
             dumpable_off, len(wiped))
