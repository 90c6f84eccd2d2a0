"""A loopback server that plays Slack's Socket Mode WebSocket, for the real slack_sdk ``SocketModeClient``.

The client first calls the Web API ``apps.connections.open`` with the app-level token (``xapp-``); attach this
fake to :class:`~tests.support.fake_slack.FakeSlack` (``slack.socket_mode = fake``) and that call answers with
:meth:`FakeSocketMode.issue_url` (``ws://127.0.0.1:<port>/link/?ticket=<n>&app_id=AFAKE``; slack_sdk and aiohttp
take ``ws://`` as well as Slack's ``wss://``). On connect the server sends Slack's ``hello``; then the test pushes
envelopes (:meth:`send_envelope`) and the client acknowledges each with ``{"envelope_id": ...}``, plus a
``payload`` when it has one (a slash command's ephemeral answer), which is recorded in :attr:`acks`.

The aiohttp server runs on its own event loop in its own thread, so the test's loop (where the bot runs) and
the server never wait on each other. :meth:`drop` closes every connection as Slack does when it rotates a
connection; :meth:`refresh` sends the ``disconnect`` warning Slack sends before that; :meth:`hold` keeps new
WebSocket handshakes waiting until :meth:`release`, so a test can look at the client while it is, for certain,
between connections.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Self

from aiohttp import WSCloseCode, WSMsgType, web

APP_ID = "AFAKE"


@dataclass
class Ack:
    envelope_id: str
    message: dict[str, Any]  # what the client sent, parsed
    seconds: float  # from sending the envelope to receiving this ack

    @property
    def payload(self) -> Any:
        return self.message.get("payload")


class FakeSocketMode:
    def __init__(self) -> None:
        self.sent: dict[str, dict[str, Any]] = {}  # envelope_id -> envelope as sent
        self.acks: dict[str, Ack] = {}  # envelope_id -> the client's acknowledgement
        self.other_messages: list[Any] = []  # client text frames that were not acks (there should be none)
        self.tickets: list[str] = []  # issued by issue_url (one per apps.connections.open), in order
        self.connections: list[str] = []  # the ticket of every accepted WebSocket, in order
        self.waiting = 0  # handshakes currently held by hold()
        self._sent_at: dict[str, float] = {}
        self._sockets: list[web.WebSocketResponse] = []
        self._open = threading.Event()
        self._open.set()
        self._ticket_numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0

    # lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> Self:
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # reported to start()
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=serve, name="fake-socket-mode", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        self._open.set()
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _start_site(self) -> None:
        app = web.Application()
        app.router.add_get("/link/", self._link)
        app.router.add_get("/link", self._link)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._port)
        await site.start()
        self._port = int(self._runner.addresses[0][1])

    async def _shutdown(self) -> None:
        for ws in list(self._sockets):
            await ws.close(code=WSCloseCode.GOING_AWAY)
        if self._runner is not None:
            await self._runner.cleanup()

    # what apps.connections.open hands out --------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/link/"

    def issue_url(self) -> str:
        """A new connection URL with its own ticket, as ``apps.connections.open`` returns."""
        ticket = f"ticket-{next(self._ticket_numbers)}"
        with self._lock:
            self.tickets.append(ticket)
        return f"{self.url}?ticket={ticket}&app_id={APP_ID}"

    # scripting -------------------------------------------------------------------------------------------
    def send_envelope(self, type: str, payload: dict[str, Any], *, accepts_response_payload: bool | None = None,
                      retry_attempt: int = 0, retry_reason: str = "") -> str:
        """Send one envelope on the newest open connection; returns its ``envelope_id``."""
        envelope_id = str(uuid.uuid4())
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": type,
            "payload": payload,
            "accepts_response_payload": type == "slash_commands" if accepts_response_payload is None
            else accepts_response_payload,
        }
        if type == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = retry_reason
        self._call(self._send(envelope))
        return envelope_id

    def drop(self) -> None:
        """Close every open connection (a close frame, as Slack does when it rotates connections)."""
        self._call(self._close_all())

    def refresh(self, reason: str = "refresh_requested") -> None:
        """Send Slack's ``{"type": "disconnect"}`` warning on every open connection (the client should open a
        new connection and close this one itself)."""
        self._call(self._warn_all(reason))

    def hold(self) -> None:
        """From now on, keep WebSocket handshakes waiting (counted in :attr:`waiting`) until :meth:`release`."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    # inspection ------------------------------------------------------------------------------------------
    def open_connections(self) -> int:
        with self._lock:
            return sum(1 for ws in self._sockets if not ws.closed)

    async def wait_for_ack(self, envelope_id: str, timeout: float = 5.0) -> Ack:
        """Wait (without blocking the caller's event loop) until the client acknowledged ``envelope_id``."""
        deadline = time.monotonic() + timeout
        while envelope_id not in self.acks:
            if time.monotonic() > deadline:
                raise AssertionError(f"envelope {envelope_id} was not acknowledged within {timeout} s")
            await asyncio.sleep(0.01)
        return self.acks[envelope_id]

    # the server side -------------------------------------------------------------------------------------
    def _call(self, coro: Any) -> Any:
        if self._loop is None:
            coro.close()
            raise RuntimeError("FakeSocketMode is not started")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    async def _send(self, envelope: dict[str, Any]) -> None:
        with self._lock:
            sockets = [ws for ws in self._sockets if not ws.closed]
        if not sockets:
            raise AssertionError("no Socket Mode client is connected")
        with self._lock:
            self.sent[envelope["envelope_id"]] = envelope
            self._sent_at[envelope["envelope_id"]] = time.monotonic()
        await sockets[-1].send_str(json.dumps(envelope))

    async def _close_all(self) -> None:
        with self._lock:
            sockets = list(self._sockets)
        for ws in sockets:
            await ws.close(code=WSCloseCode.GOING_AWAY, message=b"fake drop")

    async def _warn_all(self, reason: str) -> None:
        with self._lock:
            sockets = [ws for ws in self._sockets if not ws.closed]
        for ws in sockets:
            await ws.send_str(json.dumps({"type": "disconnect", "reason": reason,
                                          "debug_info": {"host": "fake-socket-mode"}}))

    async def _link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        with self._lock:
            known = ticket in self.tickets
        if not known:
            return web.Response(status=401, text="unknown ticket")
        if not self._open.is_set():
            with self._lock:
                self.waiting += 1
            try:
                while not self._open.is_set():
                    await asyncio.sleep(0.01)
            finally:
                with self._lock:
                    self.waiting -= 1
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        with self._lock:
            self._sockets.append(ws)
            self.connections.append(ticket)
            count = sum(1 for s in self._sockets if not s.closed)
        await ws.send_str(json.dumps({
            "type": "hello", "num_connections": count,
            "debug_info": {"host": "fake-socket-mode", "build_number": 1, "approximate_connection_time": 18060},
            "connection_info": {"app_id": APP_ID},
        }))  # fmt: skip
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                received = time.monotonic()
                try:
                    data = json.loads(msg.data)
                except ValueError:
                    data = None
                eid = data.get("envelope_id") if isinstance(data, dict) else None
                with self._lock:
                    if eid in self.sent:
                        self.acks[eid] = Ack(eid, data, received - self._sent_at[eid])
                    else:
                        self.other_messages.append(data if data is not None else msg.data)
        finally:
            with self._lock:
                self._sockets.remove(ws)
        return ws
