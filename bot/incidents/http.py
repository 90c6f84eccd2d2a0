"""The intake's HTTP side: aiohttp routes that hand the raw body and headers to ``Intake``.

``add_routes`` mounts the two endpoints on any aiohttp application; ``IntakeServer`` serves them on their own
listener (``incidents.http_host``/``http_port``). The intake has its own port on purpose: it works whatever
the Slack connection mode (Socket Mode has no HTTP server at all), and the port exposed to Alertmanager and
PagerDuty serves nothing but these two paths.
"""

from __future__ import annotations

import json

from aiohttp import web

from bot.incidents.intake import Answer, Intake

ALERTMANAGER_PATH = "/alerts/alertmanager"
PAGERDUTY_PATH = "/alerts/pagerduty"


def _response(answer: Answer) -> web.Response:
    return web.Response(status=answer.status, text=json.dumps(answer.body), content_type="application/json")


def add_routes(app: web.Application, intake: Intake) -> None:
    async def alertmanager(request: web.Request) -> web.Response:
        return _response(await intake.alertmanager(await _body(request, intake), dict(request.headers)))

    async def pagerduty(request: web.Request) -> web.Response:
        return _response(await intake.pagerduty(await _body(request, intake), dict(request.headers)))

    app.router.add_post(ALERTMANAGER_PATH, alertmanager)
    app.router.add_post(PAGERDUTY_PATH, pagerduty)


async def _body(request: web.Request, intake: Intake) -> bytes:
    limit = intake.settings.max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        return b"\0" * (limit + 1)  # refused as too large by the intake, without reading it
    data = await request.content.read(limit + 1)
    return data


class IntakeServer:
    """The intake on its own port until ``stop``; ``port=0`` picks a free one (tests)."""

    def __init__(self, intake: Intake, host: str, port: int) -> None:
        self.intake = intake
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> int:
        app = web.Application(client_max_size=self.intake.settings.max_body_bytes + 1)
        add_routes(app, self.intake)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
