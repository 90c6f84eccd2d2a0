"""Commands sent without a task per send.

redis-py wraps every send in ``asyncio.wait_for`` when the connection has a ``socket_timeout`` (redis-py 8 sets 5 s
by default, and the timeout is what bounds a read from a Redis that stopped answering). On Python 3.11
``wait_for`` starts a Task for the send, so the command reaches the socket only on the loop's next pass, after
whatever else is ready (a runner's ``prepare`` callback, meant to overlap a claim's flight, ran before the claim
was even sent), and the Task, its timer and their bookkeeping cost about 35 us of CPU per command: sequential GETs
against a local Redis took 78-84 us of CPU each with the wrapper, 41-50 us without (`python
bench/bench_redis_send.py`).

A send that cannot block is written directly: the connection is up, no health check is due (that PING reads a
reply, which keeps its timeout), and the command fits under the transport's high-water mark, so ``drain`` returns at
once and a timeout could never fire. Anything else goes through redis-py unchanged, and every read keeps its
timeout. The direct write is redis-py's own send with the timeout set aside for that call, so its error handling
(disconnect, ``ConnectionError``) is the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

_CLASSES: dict[type, type] = {}


class _DirectSend:
    """Mixed in before a redis-py asyncio connection class (``direct_send``)."""

    socket_timeout: float | None
    health_check_interval: float
    next_health_check: float

    async def send_packed_command(self, command: bytes | str | Iterable[bytes], check_health: bool = True) -> None:
        writer: Any = getattr(self, "_writer", None)
        parent: Any = super()
        if (not self.socket_timeout or writer is None or not getattr(self, "is_connected", False)
                or (check_health and self.health_check_interval
                    and asyncio.get_running_loop().time() > self.next_health_check)):
            return await parent.send_packed_command(command, check_health)
        if isinstance(command, str):
            chunks = [command.encode()]
        elif isinstance(command, bytes):
            chunks = [command]
        else:
            chunks = list(command)  # possibly a generator: read once
        transport = writer.transport
        if transport.get_write_buffer_size() + sum(map(len, chunks)) > transport.get_write_buffer_limits()[1]:
            return await parent.send_packed_command(chunks, False)  # drain may wait: keep the timeout
        timeout, self.socket_timeout = self.socket_timeout, None
        try:
            await parent.send_packed_command(chunks, False)
        finally:
            self.socket_timeout = timeout


def direct_send(connection_class: type) -> type:
    """``connection_class`` with sends that cannot block written without ``wait_for`` (the same class, made once)."""
    if issubclass(connection_class, _DirectSend):
        return connection_class
    made = _CLASSES.get(connection_class)
    if made is None:
        made = type(f"DirectSend{connection_class.__name__}", (_DirectSend, connection_class), {})
        _CLASSES[connection_class] = made
    return made
