"""Cancel tasks and wait until they have really ended, even when Python 3.11 swallowed the cancellation.

On Python 3.11 ``asyncio.wait_for`` loses a cancellation that arrives in the loop iteration where its inner
await has just finished (CPython gh-86296, fixed in 3.12 only). redis-py calls ``wait_for`` around every command
it sends when the client has a ``socket_timeout`` (redis-py 8 sets 5 s by default), so a stream consumer
cancelled while it sends XREADGROUP reads on as if nothing happened: measured, a third of the cancellations of
40 tasks sending commands back to back were lost, and most of those of 3 such tasks. One ``cancel()`` followed
by ``gather`` then waits for ever and the role never finishes its shutdown.

So a task still running ``again_after`` seconds after its cancellation (time a well-behaved task has to end,
including what it does on its way out, like a last flush of acknowledgements) is cancelled again, once every
two loop iterations: out of step with the send that swallowed the previous one, so it lands within a few rounds
(re-cancelling on a timer instead kept landing in the same phase of the loop and took tens of rounds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

#: how long a cancelled task may take to end (its own cleanup included) before it is cancelled again
AGAIN_AFTER_SECONDS = 1.0
_ROUNDS_BEFORE_A_PAUSE = 50  # a task that keeps losing cancellations must not make this spin the loop


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]], *, again_after: float = AGAIN_AFTER_SECONDS) -> None:
    """Cancel every task in ``tasks`` and return once all have ended (their exceptions retrieved and dropped).

    The caller being cancelled meanwhile does not cut this short: the tasks are still cancelled until they have
    ended, and the caller's cancellation is raised after that. Otherwise an owner cancelled while stopping its
    helpers (a shutdown cancelled in turn, a conversation's lock lost twice) would leave them running on their own:
    a model call or a Redis write nobody owns any more."""
    stopping = list(tasks)
    pending = {task for task in stopping if not task.done()}
    for task in pending:
        task.cancel()
    interrupted: BaseException | None = None
    clock = asyncio.get_running_loop().time
    deadline = clock() + again_after
    # their time to end on their own, all of it even when the caller is cancelled meanwhile: re-cancelling at once
    # would cut short what a task does on its way out (a last flush of acknowledgements)
    while pending and (left := deadline - clock()) > 0:
        try:
            await asyncio.wait(pending, timeout=left)
        except asyncio.CancelledError as exc:
            interrupted = interrupted or exc
        pending = {task for task in pending if not task.done()}
    rounds = 0
    while pending:
        for task in pending:
            task.cancel()
        try:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            rounds += 1
            if rounds % _ROUNDS_BEFORE_A_PAUSE == 0:
                await asyncio.sleep(0.01)
        except asyncio.CancelledError as exc:
            interrupted = interrupted or exc
        pending = {task for task in pending if not task.done()}
    for task in stopping:  # all ended: retrieve what they raised (not awaited: no await left to be cancelled in)
        if not task.cancelled():
            task.exception()
    if interrupted is not None:
        raise interrupted


__all__ = ["AGAIN_AFTER_SECONDS", "cancel_and_wait"]
