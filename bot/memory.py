"""Give heap pages freed by the process back to the operating system: once after start-up, then periodically.

Start-up (imports, pydantic schemas, the sanitizer's automata, the catalog's introspection) allocates and frees
megabytes of temporaries, and so does work: cleaning a call's output builds and drops copies of it, in the
executor's threads. glibc keeps freed pages in its heaps (the main one and a thread's arena), so they would stay
in the process's RSS for its whole life. ``malloc_trim(0)`` returns them: about 4 MiB on a runner after start,
about 9 MiB after it cleaned varied output (bench/bench_rss.py), in 1-2 ms. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable

#: How often a serving process gives freed heap back (``trim_periodically``): a pass costs 1-2 ms of one thread.
TRIM_INTERVAL_SECONDS = 30.0


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


def trim_heap() -> bool:
    """Ask glibc to release free pages of every heap arena; True when it released any."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def return_free_heap() -> bool:
    """Collect garbage, then ask glibc to release free heap pages; True when it released any."""
    gc.collect()
    return trim_heap()


async def trim_periodically(stop: asyncio.Event, interval: float = TRIM_INTERVAL_SECONDS) -> None:
    """Until ``stop``: every ``interval`` seconds, give the pages freed by the work since back (no full garbage
    collection here: that would pause the event loop for every object the process holds)."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
        if not stop.is_set():
            trim_heap()
