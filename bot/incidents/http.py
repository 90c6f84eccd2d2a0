"""The intake's HTTP side: aiohttp routes that hand the raw body and headers to ``Intake``.

``add_routes`` mounts the two endpoints on an aiohttp application: the intake's own listener
(``incidents.listen: own``, the default: it works whatever the Slack connection mode, Socket Mode having no
HTTP server at all, and the port exposed to Alertmanager and PagerDuty serves nothing but these two paths) or
the Slack HTTP server (``listen: slack``).
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
    # one read returns what has arrived so far (a chunked body comes in pieces): read to the end, or one byte
    # past the limit so the intake refuses it as too large
    data = bytearray()
    while len(data) <= limit:
        piece = await request.content.read(limit + 1 - len(data))
        if not piece:
            break
        data += piece
    return bytes(data)
