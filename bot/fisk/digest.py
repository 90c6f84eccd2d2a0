"""Content digests of tool binaries: what a decision is signed over and what the runner re-checks."""

from __future__ import annotations

import hashlib
import os

_CHUNK = 1 << 20


def fd_digest(fd: int) -> str:
    """sha256 (hex) of everything readable from ``fd`` from its start (pread: the offset is left alone)."""
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, _CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of a file's bytes; raises OSError when it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return fd_digest(fd)
    finally:
        os.close(fd)


def identity(stat: os.stat_result) -> tuple[int, int, int, int, int]:
    """What changes whenever a file's bytes may have changed: a replaced file has another inode, and any write
    moves ``ctime``, which (unlike ``mtime``) no unprivileged user can set back."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def path_identity(path: str | os.PathLike[str]) -> tuple[int, int, int, int, int] | None:
    try:
        return identity(os.stat(path))
    except OSError:
        return None


def short(digest: str) -> str:
    """The form shown on cards: enough to notice a change, short enough to read."""
    return digest[:12] if digest else "unknown"
