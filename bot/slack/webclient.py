"""The Web API client the slack role uses: slack_sdk's ``AsyncWebClient`` (its typed methods build every request
exactly as Slack documents it), with a lean transport under them.

slack_sdk's own transport costs about twice the CPU of the HTTP request it makes: per call it builds retry
request/response objects, formats debug log lines even when nothing logs them (its logger's level is NOTSET, so
``level <= DEBUG`` holds), copies headers and arguments several times and opens a new aiohttp session unless it
is given one. The poster makes two Web API calls per completion, so that overhead bounded how many results one
replica could post. ``CountingWebClient.api_call`` sends the requests that carry a JSON body or only URL
parameters itself, through one kept-open aiohttp session, with the same wire format (URL, method, headers,
body) and the same answers (an ``AsyncSlackResponse``, ``SlackApiError`` on ``ok: false`` or a non-200 status).
Retries stay slack_sdk's: a failed attempt (an HTTP status other than 200, or a connection error) is offered to
the client's ``retry_handlers``, so a 429 waits ``Retry-After`` (``bot/slack/ratelimit.py`` pauses the whole
method) and a dropped keep-alive connection is retried, as before. Forms and file uploads go through slack_sdk.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.request import HttpRequest as RetryHttpRequest
from slack_sdk.http_retry.response import HttpResponse as RetryHttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.metrics import SLACK_API_ERRORS
from bot.slack.ratelimit import MethodPacer

JSON_CONTENT = "application/json;charset=utf-8"
FORM_CONTENT = "application/x-www-form-urlencoded"
MAX_ATTEMPTS = 100  # slack_sdk's own safety bound on retries of one call


class CountingWebClient(AsyncWebClient):
    """Paces every Web API call per method (``bot/slack/ratelimit.py``), keeps its connections open between
    calls, sends JSON and URL-parameter requests through the lean transport above, and counts every failed call
    (after the retries) in the Slack-errors metric.

    ``team_url`` is the workspace's URL from auth.test (``verify_auth`` sets it): with it, permalinks are built
    in the format Slack documents instead of asked for (``bot/slack/client.py: permalink``)."""

    def __init__(self, *args: Any, pacer: MethodPacer | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pacer = pacer or MethodPacer()
        self.team_url = ""
        self._urls: dict[str, str] = {}

    def _session(self) -> aiohttp.ClientSession:
        """The kept-open session, made on first use inside the event loop that uses it (closed by
        ``close_client``)."""
        if self.session is None or self.session.closed:
            self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self.session

    async def api_call(
        self, api_method: str, *, http_verb: str = "POST", files: dict[str, Any] | None = None,
        data: Any = None, params: dict[str, Any] | None = None, json: dict[str, Any] | None = None,
        headers: dict[str, Any] | None = None, auth: Any = None,
    ) -> AsyncSlackResponse:  # fmt: skip
        session = self._session()
        lean = files is None and data is None and headers is None and auth is None and \
            not (json is not None and (params is not None or http_verb != "POST"))
        try:
            async with self.pacer.slot(api_method):
                if lean:
                    return await self._lean_call(session, api_method, http_verb, params, json)
                return await super().api_call(api_method, http_verb=http_verb, files=files, data=data,
                                              params=params, json=json, headers=headers, auth=auth)
        except Exception:
            SLACK_API_ERRORS.labels(api_method).inc()
            raise

    def _url(self, api_method: str) -> str:
        url = self._urls.get(api_method)
        if url is None:  # joined as slack_sdk joins them (base_url ends in /api/)
            url = self._urls[api_method] = urljoin(self.base_url, api_method.lstrip("/"))
        return url

    async def _lean_call(self, session: aiohttp.ClientSession, api_method: str, http_verb: str,
                         params: dict[str, Any] | None, body: dict[str, Any] | None) -> AsyncSlackResponse:
        url, token = self._url(api_method), self.token
        if body is not None:
            body = {**self.default_params, **body}
            token = body.pop("token", None) or token
        if params is not None:
            params = {k: _param(v) for k, v in {**self.default_params, **params}.items() if v is not None}
            token = params.pop("token", None) or token
        headers: dict[str, Any] = {**self.headers, "Content-Type": JSON_CONTENT if body is not None else FORM_CONTENT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = None if body is None else json.dumps(body).encode()
        state: RetryState | None = None
        ssl = True if self.ssl is None else self.ssl
        for _ in range(MAX_ATTEMPTS):
            try:
                async with session.request(http_verb, url, params=params, data=payload, headers=headers, ssl=ssl,
                                           proxy=self.proxy) as res:  # fmt: skip
                    status, reply_headers = res.status, res.headers
                    reply = await _read(res)
            except Exception as exc:
                state = state or RetryState()
                if not await self._retry(state, http_verb, url, headers, params, error=exc):
                    raise
                continue
            if status != 200:  # slack_sdk's handlers retry on a status (429, 5xx) or an error, never on a 200
                state = state or RetryState()
                answer = RetryHttpResponse(status_code=status, headers=dict(reply_headers),
                                           body=reply if isinstance(reply, dict) else None)  # fmt: skip
                if await self._retry(state, http_verb, url, headers, params, response=answer):
                    continue
            args = {"headers": headers, "params": params, "json": body}
            return AsyncSlackResponse(client=self, http_verb=http_verb, api_url=url, req_args=args, data=reply,
                                      headers=dict(reply_headers), status_code=status).validate()  # fmt: skip
        raise SlackApiError(f"{api_method}: gave up after {MAX_ATTEMPTS} attempts", None)

    async def _retry(self, state: RetryState, http_verb: str, url: str, headers: dict[str, Any],
                     params: dict[str, Any] | None, *, response: RetryHttpResponse | None = None,
                     error: Exception | None = None) -> bool:  # fmt: skip
        """Offer a failed attempt to the retry handlers, as slack_sdk does: True when one of them waited and
        asks for another attempt."""
        request = RetryHttpRequest(method=http_verb, url=url, headers=headers, body_params=params)
        state.next_attempt_requested = False
        for handler in self.retry_handlers or []:
            if await handler.can_retry_async(state=state, request=request, response=response, error=error):
                await handler.prepare_for_next_attempt_async(state=state, request=request, response=response,
                                                             error=error)  # fmt: skip
                return bool(state.next_attempt_requested)
        return False


def _param(value: Any) -> Any:
    """URL parameters as slack_sdk sends them: booleans as "1"/"0"."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return value


async def _read(res: aiohttp.ClientResponse) -> Any:
    """The answer's body as slack_sdk reads it: JSON as a dict, text/plain as text, anything else as ``{}`` (a
    page that is not the API); a body that claims JSON and is not is a ``SlackApiError``."""
    if res.content_type == "text/plain":
        return await res.text()
    if res.content_type != "application/json":
        await res.read()
        return {}
    raw = await res.read()
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        raise SlackApiError(f"Received a response in a non-JSON format: {raw[:100]!r}", res) from None
