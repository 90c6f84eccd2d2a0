"""Watching a child's descriptors (its output pipe, its pidfd) from the event loop, cheaply.

Every call registers two descriptors and removes them again. Through ``loop.add_reader`` each registration costs
about 5 us of Python (the selector's key objects, a handle, transport checks) beside the ``epoll_ctl`` itself,
20 us a call in all, and the part after the spawn holds the CPU while the child waits to run. So a loop gets one
epoll instance of its own (``ChildWatch``), registered with the loop once: a child's descriptors go straight
into it (one ``epoll_ctl`` each), and when it has events the loop calls ``ChildWatch`` to hand them out.

Where there is no epoll (not Linux), descriptors go to ``loop.add_reader`` as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import weakref
from collections.abc import Callable

Callback = Callable[[], None]


class ChildWatch:
    """An epoll instance registered with one event loop; ``watch``/``unwatch`` descriptors on it (level-triggered,
    readable). A callback runs on the loop, like a reader's."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._epoll = select.epoll()  # close-on-exec, so no child inherits it
        self._callbacks: dict[int, Callback] = {}
        loop.add_reader(self._epoll.fileno(), self._dispatch)
        # the loop's selector holds _dispatch, and so this object, until the loop closes; the epoll then closes too
        weakref.finalize(loop, self._epoll.close)

    def watch(self, fd: int, callback: Callback) -> None:
        self._epoll.register(fd, select.EPOLLIN)
        self._callbacks[fd] = callback

    def unwatch(self, fd: int) -> None:
        """Stop watching ``fd`` (before it is closed: a closed descriptor's number may be reused at once)."""
        if self._callbacks.pop(fd, None) is not None:
            with contextlib.suppress(OSError):  # already closed elsewhere: the kernel dropped it with the file
                self._epoll.unregister(fd)

    def _dispatch(self) -> None:
        for fd, _ in self._epoll.poll(0):
            callback = self._callbacks.get(fd)  # gone when an earlier callback of this batch unwatched it
            if callback is None:
                continue
            try:
                callback()
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:  # noqa: BLE001
                # reported as a loop reader's would be, and the batch goes on: epoll hands back a level-triggered
                # batch in the same order each pass, so a descriptor whose callback keeps failing, first in the
                # batch, would otherwise starve every other child's pipe and exit (each of those calls hung)
                asyncio.get_running_loop().call_exception_handler(
                    {"message": f"child watch callback for descriptor {fd} failed", "exception": exc})


class LoopReaders:
    """The same interface on ``loop.add_reader`` (systems without epoll)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def watch(self, fd: int, callback: Callback) -> None:
        self._loop.add_reader(fd, callback)

    def unwatch(self, fd: int) -> None:
        self._loop.remove_reader(fd)


_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ChildWatch | LoopReaders] = weakref.WeakKeyDictionary()


def child_watch(loop: asyncio.AbstractEventLoop) -> ChildWatch | LoopReaders:
    """The loop's watch, made on first use."""
    watch = _watches.get(loop)
    if watch is None:
        watch = ChildWatch(loop) if hasattr(select, "epoll") else LoopReaders(loop)
        _watches[loop] = watch
    return watch
