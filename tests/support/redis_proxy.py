"""A loopback TCP proxy in front of a real Redis, the common part of the proxies that misbehave on purpose.

Each client connection gets its own upstream connection and two pumps, one each way, that a subclass writes
(``_pumps``) to hold back or lose what carries ``marker``. The connection ends when either pump does; when the
client's side ended first, ``close_grace`` gives Redis time to run what was forwarded last before it sees the
close."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self


class RedisProxy:
    close_grace = 0.0

    def __init__(self, host: str, port: int, marker: bytes) -> None:
        self.upstream = (host, port)
        self.marker = marker.upper()
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

    def _pumps(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, up_r: asyncio.StreamReader,
               up_w: asyncio.StreamWriter) -> tuple[Coroutine[Any, Any, None], Coroutine[Any, Any, None]]:
        """The (client -> Redis, Redis -> client) pumps of one connection."""
        raise NotImplementedError

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        up_r, up_w = await asyncio.open_connection(*self.upstream)
        to_redis, to_client = self._pumps(client_r, client_w, up_r, up_w)
        sending, receiving = asyncio.create_task(to_redis), asyncio.create_task(to_client)
        try:
            with contextlib.suppress(Exception):
                await asyncio.wait([sending, receiving], return_when=asyncio.FIRST_COMPLETED)
            if sending.done() and self.close_grace:
                await asyncio.sleep(self.close_grace)
        finally:
            for part in (sending, receiving):
                part.cancel()
            for writer in (client_w, up_w):
                writer.close()
            self._sessions.discard(task)
