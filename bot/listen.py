"""Bind an aiohttp site, turning "address in use" and friends into one line that names the address and the fix.

Both HTTP servers of a process (health/metrics and the Slack HTTP endpoint) start through here, so a busy port
ends start-up with a sentence instead of a traceback, before any role has started work.
"""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a site starts: a process without an aiohttp server never loads aiohttp
    from aiohttp import web


class ListenError(RuntimeError):
    """A port could not be bound; the message says which, why and what to do."""


def listen_error(address: str, purpose: str, exc: OSError, fix: str) -> str:
    if exc.errno == errno.EADDRINUSE:
        why = "the address is already in use (another process listens there)"
    elif exc.errno == errno.EACCES:
        why = "permission denied (ports below 1024 need privileges)"
    elif exc.errno == errno.EADDRNOTAVAIL:
        why = "no network interface has that address"
    else:
        why = exc.strerror or str(exc)
    return f"cannot listen on {address} for {purpose}: {why}; {fix}"


async def start_site(
    app: web.Application, host: str, port: int, *, purpose: str, fix: str
) -> tuple[web.AppRunner, int]:
    """Serve ``app`` on ``host:port`` (0: any free port); returns the runner (``cleanup()`` stops it) and the
    bound port. Raises :class:`ListenError` and leaves nothing running when the port cannot be bound."""
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise ListenError(listen_error(shown, purpose, exc, fix)) from None
    sockets = getattr(site._server, "sockets", None) or []
    return runner, int(sockets[0].getsockname()[1]) if sockets else port
