"""``SlackFrontEnd``: the bolt ``AsyncApp`` (Socket Mode, or HTTP on an aiohttp server) plus the poster.

Every request that asks for work is first recorded in Redis (``intake.py``, a middleware that runs before bolt's
ack); the listeners only acknowledge (Slack wants an answer within 3 seconds), and ``IntakeWorker`` does the
work from the recorded entry, calling the plain functions of ``interactions.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from aiohttp import web
from redis.asyncio import Redis
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger import get_bolt_logger
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.response import BoltResponse

from bot.approvals.errors import PolicyError
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.store import CallStore
from bot.cancelling import cancel_and_wait
from bot.listen import start_site
from bot.sanitize.redact import Redactor
from bot.slack import client as api
from bot.slack.access import RateLimiter
from bot.slack.cards import (
    APPROVE_ACTION,
    CANCEL_ACTION,
    CONFIRM_APPROVAL_ACTION,
    DENY_ACTION,
    GRANT_COMMAND_ACTION,
    GRANT_MINUTES_ACTION,
    GRANT_TOOL_ACTION,
    REVOKE_ACTION,
)
from bot.slack.deny import DENY_REASON_VIEW
from bot.slack.intake import COMMAND_ANSWER, Intake, admit
from bot.slack.intake import REPLAY_WINDOW_SECONDS as REPLAY_WINDOW_SECONDS
from bot.slack.intake import SIGNATURE_MAX_SKEW_SECONDS as SIGNATURE_MAX_SKEW_SECONDS
from bot.slack.intake_worker import IntakeWorker
from bot.slack.interactions import SlackDeps
from bot.slack.poster import Poster
from bot.slack.settings import SlackSettings
from bot.tools.catalog import Catalog

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

log = logging.getLogger(__name__)


#: every button and menu of the bot's messages; any other action id is not ours (bolt answers 404)
CLICK_ACTIONS = re.compile("^(?:" + "|".join(re.escape(a) for a in (
    APPROVE_ACTION, CONFIRM_APPROVAL_ACTION, DENY_ACTION, CANCEL_ACTION, GRANT_TOOL_ACTION, GRANT_COMMAND_ACTION,
    GRANT_MINUTES_ACTION, REVOKE_ACTION)) + ")$")


class _TokenSkippedFilter(logging.Filter):
    """bolt warns "As you gave `client` as well, `token` will be unused." whenever SLACK_BOT_TOKEN is in the
    environment and a client is passed (it reads the variable itself). We pass our client on purpose (base URL,
    retry handlers, metrics) and it holds that same token: the warning is noise in every slack process."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


get_bolt_logger(AsyncApp).addFilter(_TokenSkippedFilter())



def slack_policy(policy: ApprovalPolicy) -> ApprovalPolicy:
    """The approval policy as Slack applies it (anyone may click a card there): an empty approver list refuses
    to start unless ``approval.anyone_may_approve: true`` is written; self-approval is forbidden by default."""
    try:
        return policy.for_shared_workspace()
    except PolicyError as exc:
        raise api.SlackStartupError(f"Slack mode refuses to start: {exc}") from None


class SlackFrontEnd:
    def __init__(
        self,
        settings: SlackSettings,
        *,
        redis: Redis,
        store: CallStore,
        policy: ApprovalPolicy,
        catalog: Catalog,
        bot_token: str | None,
        app_token: str | None = None,
        signing_secret: str | None = None,
        api_url: str | None = None,
        reader: Redis | None = None,
        acker: Redis | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        policy = slack_policy(policy)
        api.check_tokens(settings.mode, bot_token, app_token, signing_secret)
        self.settings = settings
        self.app_token = app_token
        self.signing_secret = signing_secret
        self.client = api.make_client(str(bot_token), api.api_base_url(settings, api_url))
        self.deps = SlackDeps(redis, self.client, settings, store, policy, catalog)
        if redactor is not None:
            self.deps.redactor = redactor
        self.poster = Poster(self.deps, reader=reader)
        # what is written before Slack is answered goes through connections background work cannot take
        self.intake = Intake(acker or redis, settings)
        self.deps.limiter = RateLimiter(acker or redis, settings)
        self.intake_worker = IntakeWorker(self.deps, self.intake, reader=reader)
        self._app: AsyncApp | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._web: web.Application | None = None
        self._http_runner: web.AppRunner | None = None
        self.http_port: int | None = None  # the bound port once ``listen_http`` ran (useful with port 0)

    async def start(self) -> dict[str, Any]:
        """auth.test: fails with a clear SlackStartupError when the token is wrong; learns the bot's user id."""
        info = await api.verify_auth(self.client)
        self.deps.bot_user_id = str(info.get("user_id") or "")
        return info

    # ---------------------------------------------------------------- the bolt app

    def build_app(self) -> AsyncApp:
        if self._app is not None:
            return self._app
        app = AsyncApp(
            client=self.client,
            signing_secret=self.signing_secret or "",
            request_verification_enabled=self.settings.mode == "http",
            name="fisk-chatops",
            # Our listeners only acknowledge (the work was recorded by the middleware), so run them before the
            # response: otherwise bolt runs them in a task and polls for the ack every 10 ms, which added 10 ms
            # to every answer Slack gets (and held the HTTP request that long).
            process_before_response=True,
        )
        deps, command = self.deps, self.settings.command

        # Registered first and as ONE listener: bolt tries listeners in registration order and builds the
        # arguments of every matcher it tries, so a click (the hot path under a burst) used to be tried against
        # the command, the events and seven other action listeners first.
        @app.action(CLICK_ACTIONS)
        async def on_click(ack: Any) -> None:
            await ack()

        @app.middleware
        async def record_first(req: Any, resp: BoltResponse, next: Any) -> BoltResponse | None:
            # bolt checked signature and age already; record the request before anything acknowledges it
            if not deps.bot_user_id and req.context.get("bot_user_id"):
                deps.bot_user_id = str(req.context["bot_user_id"])
            signature = (req.headers.get("x-slack-signature") or [""])[0]
            refused = await admit(deps, self.intake, req.body, signature, req.context)
            return refused if refused is not None else await next()

        # The work of a recorded request is done by the intake worker: these only acknowledge.
        @app.command(command)
        async def on_command(ack: Any, context: Any) -> None:
            answer = context.get(COMMAND_ANSWER)  # decided once, before the ack, by ``admit``
            await ack(text=answer, response_type="ephemeral") if answer else await ack()

        @app.event("app_mention")
        async def on_mention() -> None:
            pass

        @app.event("message")
        async def on_message() -> None:
            pass

        @app.view(DENY_REASON_VIEW)
        async def on_deny_reason(ack: Any) -> None:
            await ack()  # closes the modal; the recorded submission denies the call

        @app.error
        async def on_error(error: Exception, body: dict[str, Any]) -> None:
            log.error("slack: listener failed on a %s request: %s", body.get("type"), error, exc_info=error)

        self._app = app
        return app

    def http_app(self) -> web.Application:
        """The slack role's aiohttp application: Slack posts every request to ``settings.http_path``.

        One HTTP stack per process: other HTTP endpoints of the slack role (alert webhooks, ...) add their routes
        here before ``listen_http``/``run`` starts serving it (aiohttp freezes the router then)."""
        if self._web is None:
            self._web = web.Application()
            self._web.router.add_post(self.settings.http_path, self._slack_request)
        return self._web

    async def _slack_request(self, request: web.Request) -> web.Response:
        # bolt's own aiohttp adapter: the same conversion its AsyncSlackAppServer does
        response = await self.build_app().async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(response)

    # ---------------------------------------------------------------- running

    @contextlib.asynccontextmanager
    async def _intake_running(self, stop_event: asyncio.Event) -> AsyncIterator[None]:
        """The intake worker runs while requests are received: it does the work of what they recorded.

        It is stopped through its own event, not by cancelling: redis-py can swallow a cancellation that lands
        while a connection is being set up, and the worker must stop even then."""
        own_stop = asyncio.Event()
        relay = asyncio.create_task(_relay(stop_event, own_stop))
        task = asyncio.create_task(self.intake_worker.run(own_stop))
        try:
            yield
        finally:
            own_stop.set()
            try:
                await cancel_and_wait([relay])
                await asyncio.wait({task}, timeout=15)
            finally:  # not left running on its own after the front end has gone, even when that was cancelled
                if not task.done():
                    await cancel_and_wait([task])

    async def run_socket_mode(self, stop_event: asyncio.Event) -> None:
        await self.start()
        async with self._intake_running(stop_event):
            await self._socket_mode(stop_event)

    async def _socket_mode(self, stop_event: asyncio.Event) -> None:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        handler = AsyncSocketModeHandler(self.build_app(), self.app_token, web_client=self.client)
        try:
            # slack_sdk's connect() retries for ever, so a refused app token would never surface there: ask for
            # the first WebSocket URL here, where a refusal stops start-up, and let connect() use it
            handler.client.wss_uri = await handler.client.issue_new_wss_url()
            # connect() also retries for ever when the WebSocket cannot be reached: race it with the stop signal
            # so SIGTERM still drains the process during a Slack outage
            connecting = asyncio.create_task(handler.connect_async())
            stopping = asyncio.create_task(stop_event.wait())
            await asyncio.wait({connecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            await cancel_and_wait([stopping])
            if not connecting.done():
                await cancel_and_wait([connecting])  # a lost cancellation must not leave it reconnecting
                await handler.close_async()
                return
            connecting.result()
        except Exception as exc:
            await handler.close_async()
            raise api.SlackStartupError(
                f"Socket Mode connection failed ({exc}); check SLACK_APP_TOKEN (xapp-, connections:write) and that "
                "Socket Mode is enabled for the app"
            ) from None
        self._socket = handler
        try:
            await stop_event.wait()
        finally:
            self._socket = None
            await handler.close_async()

    async def connected(self) -> bool:
        """Socket Mode: whether the WebSocket to Slack is open now (slack_sdk's ``is_connected``: not closed,
        not stale, pings answered). False before ``run_socket_mode`` has connected and after it stopped."""
        handler = self._socket
        return handler is not None and bool(await handler.client.is_connected())

    async def listen_http(self, *, host: str | None = None, port: int | None = None) -> int:
        """Bind the HTTP port and start serving ``http_app()``; returns the bound port.

        A port that cannot be bound (in use, privileged) is a ``ListenError`` naming the address and the fix."""
        if self._http_runner is not None:
            return int(self.http_port or 0)
        host = host or self.settings.http_host
        port = self.settings.http_port if port is None else port
        runner, self.http_port = await start_site(
            self.http_app(), host, port, purpose="Slack HTTP requests", fix="set slack.http_port to a free port"
        )
        self._http_runner = runner
        return self.http_port

    async def run_http(self, stop_event: asyncio.Event, *, host: str | None = None, port: int | None = None) -> None:
        """Serve ``http_app()`` until ``stop_event`` is set (binding the port first unless already bound)."""
        await self.start()
        await self.listen_http(host=host, port=port)
        try:
            async with self._intake_running(stop_event):
                await stop_event.wait()
        finally:
            runner, self._http_runner = self._http_runner, None
            if runner is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(runner.cleanup(), 10)

    async def run(self, stop_event: asyncio.Event) -> None:
        """Run the configured connection mode and the poster together."""
        connection = self.run_socket_mode if self.settings.mode == "socket" else self.run_http
        try:
            await asyncio.gather(connection(stop_event), self.run_poster(stop_event))
        finally:
            await api.close_client(self.client)

    async def run_poster(self, stop_event: asyncio.Event) -> None:
        await self.poster.run(stop_event)


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()
