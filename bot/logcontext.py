"""Ids that every log line of the current task carries (conversation, call, tool), via contextvars.

A tiny module with no imports of the bot, so every package can set the context without breaking the package
order; ``bot.logs.JsonFormatter`` reads it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from types import MappingProxyType

_EMPTY: Mapping[str, str] = MappingProxyType({})
_CONTEXT: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("fisk_chatops_log_context", default=_EMPTY)


def current() -> Mapping[str, str]:
    return _CONTEXT.get()


@contextlib.contextmanager
def log_context(**ids: str | None) -> Iterator[None]:
    """Add ``ids`` (None values skipped) to every log line emitted inside the block, in this task only."""
    added = {k: str(v) for k, v in ids.items() if v is not None}
    token = _CONTEXT.set(MappingProxyType({**_CONTEXT.get(), **added}))
    try:
        yield
    finally:
        _CONTEXT.reset(token)
