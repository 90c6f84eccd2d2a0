"""Start-up's freed heap goes back to the operating system (``bot/memory.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.memory import return_free_heap, trim_periodically


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_freed_heap_pages_are_returned() -> None:
    # many heap blocks (below the mmap threshold) touched, then nine in ten freed: the one kept in each ten
    # pins the heap, so glibc's own trimming of the heap's top releases nothing
    blocks = [bytearray(4000) for _ in range(20_000)]
    kept = blocks[::10]
    del blocks
    before = _rss_kib()
    assert return_free_heap() is True
    assert _rss_kib() < before - 30_000  # most of the ~70 MB freed came back
    assert len(kept) == 2_000


async def test_a_serving_process_gives_freed_heap_back_periodically() -> None:
    stop = asyncio.Event()
    trimmer = asyncio.create_task(trim_periodically(stop, interval=0.05))
    blocks = [bytearray(4000) for _ in range(20_000)]  # as cleaning output leaves its copies freed in the heap
    kept = blocks[::10]
    del blocks
    before = _rss_kib()
    await asyncio.sleep(0.5)
    assert _rss_kib() < before - 30_000
    stop.set()
    await asyncio.wait_for(trimmer, 1)  # and it ends with the process's stop event
    assert len(kept) == 2_000
