"""A loopback TCP proxy in front of a real Redis that loses the reply to the first command carrying a marker.

It forwards that command, lets Redis run it, then closes the client's connection without relaying the answer: the
"Redis did it but we never heard back" case (a network cut, Redis killed between the write and the reply)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from tests.support.redis_proxy import RedisProxy


class ReplyDroppingProxy(RedisProxy):
    def __init__(self, host: str, port: int, marker: bytes) -> None:
        super().__init__(host, port, marker)
        self.dropped = 0

    def _pumps(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, up_r: asyncio.StreamReader,
               up_w: asyncio.StreamWriter) -> tuple[Coroutine[Any, Any, None], Coroutine[Any, Any, None]]:
        cut = asyncio.Event()

        async def to_redis() -> None:
            while data := await client_r.read(65536):
                losing = self.dropped == 0 and self.marker in data.upper()
                if losing:
                    self.dropped = 1
                    cut.set()  # before Redis can answer: its reply is never relayed
                up_w.write(data)
                await up_w.drain()
                if losing:
                    await asyncio.sleep(0.2)  # Redis runs it
                    return

        async def to_client() -> None:
            while data := await up_r.read(65536):
                if cut.is_set():
                    return
                client_w.write(data)
                await client_w.drain()

        return to_redis(), to_client()
