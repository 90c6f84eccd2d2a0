"""A loopback TCP proxy in front of a real Redis that holds back the first command(s) carrying a marker.

``hold="reply"``: the command reaches Redis at once and runs; its reply is relayed only ``delay`` seconds later
(a bot process starved of CPU, a slow network back). ``hold="request"``: the command itself reaches Redis only
``delay`` seconds later, even when the client gave up and closed the connection meanwhile (a command sitting in a
stalled Redis's socket buffer runs when Redis wakes up)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal

from tests.support.redis_proxy import RedisProxy


class DelayingProxy(RedisProxy):
    close_grace = 0.3  # what was forwarded last is run by Redis before it sees the close

    def __init__(self, host: str, port: int, marker: bytes, *, delay: float,
                 hold: Literal["reply", "request"] = "reply", times: int = 1) -> None:
        super().__init__(host, port, marker)
        self.delay = delay
        self.hold = hold
        self.times = times
        self.held = 0  # commands held back so far
        self.forwarded_late = 0  # held requests that reached Redis

    def _pumps(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, up_r: asyncio.StreamReader,
               up_w: asyncio.StreamWriter) -> tuple[Coroutine[Any, Any, None], Coroutine[Any, Any, None]]:
        late_reply = asyncio.Event()

        async def to_redis() -> None:
            while data := await client_r.read(65536):
                if self.held < self.times and self.marker in data.upper():
                    self.held += 1
                    if self.hold == "request":
                        await asyncio.sleep(self.delay)
                        self.forwarded_late += 1
                    else:
                        late_reply.set()
                up_w.write(data)
                await up_w.drain()

        async def to_client() -> None:
            while data := await up_r.read(65536):
                if late_reply.is_set():
                    late_reply.clear()
                    await asyncio.sleep(self.delay)
                client_w.write(data)
                await client_w.drain()

        return to_redis(), to_client()
