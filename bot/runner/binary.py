"""The bytes that run are the bytes whose digest was approved (DESIGN.md invariant 9).

Before a call runs, the runner copies the tool binary into a sealed ``memfd`` (an in-memory file that, once
sealed, nobody can write, grow or shrink), hashing the bytes as it copies them, and executes *that file*
through ``/proc/self/fd/N``. So there is no window between hashing and executing: whatever happens to the
file on disk afterwards, the process starts from the hashed bytes. The copy is kept per binary path and
reused while the path's identity (inode, size, mtime, ctime) is unchanged; any change makes a new copy and a
new digest, which then no longer matches the approved one.

What is not covered: for an interpreted tool (``#!`` script) the interpreter and the files it imports are not
part of the digest, and shared libraries of a dynamically linked binary are loaded from disk as usual. fisk
applications are Go binaries, usually static.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
from dataclasses import dataclass

from bot.fisk.digest import identity

_CHUNK = 1 << 20
_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


class BinaryUnavailable(OSError):
    """The binary cannot be read or copied (missing, unreadable, changing while being copied)."""


@dataclass(frozen=True)
class Snapshot:
    """A sealed copy of one binary, reachable through ``fd``."""

    path: str
    digest: str
    fd: int
    key: tuple[int, int, int, int, int]

    @property
    def exec_path(self) -> str:
        """What to pass as the executable (with ``fd`` in ``pass_fds``, the child sees the same number)."""
        return f"/proc/self/fd/{self.fd}"


def seal_copy(path: str) -> Snapshot:
    """Copy ``path`` into a sealed memfd, hashing what is copied."""
    try:
        source = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise BinaryUnavailable(exc.errno, f"{exc.strerror}: {path}") from None
    try:
        before = identity(os.fstat(source))
        sealed = os.memfd_create("fisk-tool", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        digest = hashlib.sha256()
        try:
            while chunk := os.read(source, _CHUNK):
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(sealed, view):]
            fcntl.fcntl(sealed, fcntl.F_ADD_SEALS, _SEALS)
            after = identity(os.fstat(source))
        except BaseException:
            os.close(sealed)
            raise
        if after != before:
            os.close(sealed)
            raise BinaryUnavailable(0, f"{path} changed while it was being read")
        return Snapshot(path, digest.hexdigest(), sealed, before)
    finally:
        os.close(source)


class BinarySnapshots:
    """Per-process cache of sealed copies, one per binary path (the newest version only)."""

    def __init__(self) -> None:
        self._by_path: dict[str, Snapshot] = {}
        self._lock = asyncio.Lock()

    async def open(self, path: str) -> Snapshot:
        """A sealed copy of ``path`` as it is now, on a descriptor the caller owns (close it after the spawn).

        A changed file gets a new copy; the previous one is closed here, calls already holding it keep theirs.
        """
        async with self._lock:
            try:
                # inline: a stat costs microseconds, a hop to a worker thread more (and far more on a loaded
                # host); the copy below reads the whole file and stays in a thread
                key = identity(os.stat(path))
            except OSError as exc:
                raise BinaryUnavailable(exc.errno, f"{exc.strerror}: {path}") from None
            known = self._by_path.get(path)
            if known is None or known.key != key:
                fresh = await asyncio.to_thread(seal_copy, path)
                self._by_path[path] = fresh
                if known is not None:
                    os.close(known.fd)
                known = fresh
            return Snapshot(known.path, known.digest, os.dup(known.fd), known.key)

    def close(self) -> None:
        for snapshot in self._by_path.values():
            os.close(snapshot.fd)
        self._by_path.clear()
