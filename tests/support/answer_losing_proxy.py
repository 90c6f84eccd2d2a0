"""A loopback TCP proxy in front of a real Redis that loses the first answer carrying a marker.

Commands go through untouched; the first reply from Redis that holds the marker (a call id inside a blocking
move's answer) is not relayed and the client's connection is closed instead: Redis did the move, the client never
heard of it (a network cut, a client killed between Redis's write and its own read)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from tests.support.redis_proxy import RedisProxy


class AnswerLosingProxy(RedisProxy):
    def __init__(self, host: str, port: int, marker: bytes) -> None:
        super().__init__(host, port, marker)
        self.lost = 0

    def _pumps(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, up_r: asyncio.StreamReader,
               up_w: asyncio.StreamWriter) -> tuple[Coroutine[Any, Any, None], Coroutine[Any, Any, None]]:
        async def to_redis() -> None:
            while data := await client_r.read(65536):
                up_w.write(data)
                await up_w.drain()

        async def to_client() -> None:
            while data := await up_r.read(65536):
                if self.lost == 0 and self.marker in data.upper():
                    self.lost = 1
                    return  # the connection ends here: the answer is gone
                client_w.write(data)
                await client_w.drain()

        return to_redis(), to_client()
