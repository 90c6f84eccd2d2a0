"""A loopback TCP proxy in front of a real Redis that holds back the first command(s) carrying a marker.

``hold="reply"``: the command reaches Redis at once and runs; its reply is relayed only ``delay`` seconds later
(a bot process starved of CPU, a slow network back). ``hold="request"``: the command itself reaches Redis only
``delay`` seconds later, even when the client gave up and closed the connection meanwhile (a command sitting in a
stalled Redis's socket buffer runs when Redis wakes up)."""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Literal, Self


class DelayingProxy:
    def __init__(self, host: str, port: int, marker: bytes, *, delay: float,
                 hold: Literal["reply", "request"] = "reply", times: int = 1) -> None:
        self.upstream = (host, port)
        self.marker = marker.upper()
        self.delay = delay
        self.hold = hold
        self.times = times
        self.held = 0  # commands held back so far
        self.forwarded_late = 0  # held requests that reached Redis
        self.port = 0
        self._server: asyncio.Server | None = None
        self._sessions: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._sessions):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        up_r, up_w = await asyncio.open_connection(*self.upstream)
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

        sending, receiving = asyncio.create_task(to_redis()), asyncio.create_task(to_client())
        try:
            with contextlib.suppress(Exception):
                await asyncio.wait([sending, receiving], return_when=asyncio.FIRST_COMPLETED)
            if sending.done():
                await asyncio.sleep(0.3)  # what was forwarded last is run by Redis before it sees the close
        finally:
            for part in (sending, receiving):
                part.cancel()
            for writer in (client_w, up_w):
                writer.close()
            self._sessions.discard(task)
