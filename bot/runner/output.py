"""Bounded capture of a child's combined output: the first and last bytes, and an exact byte count.

A tool may write gigabytes (``journalctl`` without ``-n``); the runner must not. Only a head and a tail are
kept, each a little larger than the final cap, so that sanitizing (which removes escape sequences and
redacts secrets) still has enough text to fill the cap and the cut at the gap never lands inside what is
finally shown.
"""

from __future__ import annotations

from bot.sanitize.cap import Captured

# Extra bytes kept beyond the cap at each end, so sanitizing can't leave the shown part short or cut mid-way.
CAPTURE_MARGIN = 4096


class OutputCapture:
    """Keep the first ``head_limit`` and the last ``tail_limit`` bytes of a stream; count all bytes.

    Memory stays below ``head_limit + 2 * tail_limit`` plus one chunk: the tail is trimmed only once it has
    grown to twice its limit, so trimming costs amortized O(1) per byte instead of a copy per chunk.
    """

    def __init__(self, head_limit: int, tail_limit: int) -> None:
        self._head_limit = max(0, head_limit)
        self._tail_limit = max(0, tail_limit)
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    @classmethod
    def for_output_limit(cls, output_limit: int) -> OutputCapture:
        """A capture sized for a final cap of ``output_limit`` bytes (head and tail each cap + margin)."""
        return cls(output_limit + CAPTURE_MARGIN, output_limit + CAPTURE_MARGIN)

    @property
    def total_bytes(self) -> int:
        return self._total

    def feed(self, data: bytes) -> None:
        """Account for one chunk read from the pipe."""
        self._total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            if len(data) <= room:
                return
            data = data[room:]
        if self._tail_limit == 0:
            return
        if len(data) >= self._tail_limit:
            self._tail[:] = data[-self._tail_limit :]
            return
        self._tail += data
        if len(self._tail) > 2 * self._tail_limit:
            del self._tail[: len(self._tail) - self._tail_limit]

    def captured(self) -> Captured:
        """A snapshot of what is kept (the tail trimmed to its limit)."""
        tail = bytes(self._tail[-self._tail_limit :]) if self._tail_limit else b""
        return Captured(head=bytes(self._head), tail=tail, total_bytes=self._total)
