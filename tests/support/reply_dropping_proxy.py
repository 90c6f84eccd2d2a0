"""A loopback TCP proxy in front of a real Redis that loses the reply to the first command carrying a marker.

It forwards that command, lets Redis run it, then closes the client's connection without relaying the answer: the
"Redis did it but we never heard back" case (a network cut, Redis killed between the write and the reply)."""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Self


class ReplyDroppingProxy:
    def __init__(self, host: str, port: int, marker: bytes) -> None:
        self.upstream = (host, port)
        self.marker = marker
        self.dropped = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(*self.upstream)
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

        tasks = [asyncio.create_task(to_redis()), asyncio.create_task(to_client())]
        with contextlib.suppress(Exception):
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for writer in (client_w, up_w):
            writer.close()
