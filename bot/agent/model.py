"""One Messages API request through the official SDK, returning the body as JSON plus raw tool inputs.

``messages.with_raw_response.create`` keeps the SDK's retries (429, 529, 5xx, connection errors, honouring
``retry-after``), timeouts and error classes, while giving us the response bytes: the message content is
stored as received (server tool blocks unchanged) and tool inputs keep their number literals
(see ``rawjson.py``). Errors that survive the retries become :class:`ModelUnavailable` with a message fit to
show a user; the caller ends the turn and keeps the conversation for a retry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anthropic

from bot.agent.rawjson import raw_tool_inputs
from bot.agent.settings import AgentSettings
from bot.metrics import MODEL_REQUESTS, MODEL_TOKENS


class ModelUnavailable(Exception):
    """The API could not answer after the SDK's retries. The message is a sentence fit to show a user;
    ``retryable`` says whether sending the message again may help (an outage) or not (a refused key)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class ModelAccessError(RuntimeError):
    """The start-up check failed: the message names the URL, the HTTP status (if any) and what to fix."""


@dataclass(frozen=True)
class ModelResponse:
    message: dict[str, Any]
    tool_inputs: dict[str, str] = field(default_factory=dict)

    @property
    def content(self) -> list[dict[str, Any]]:
        return list(self.message.get("content") or [])

    @property
    def stop_reason(self) -> str | None:
        return self.message.get("stop_reason")

    @property
    def tokens(self) -> int:
        """Tokens this request consumed: input (incl. cache reads and writes) plus output."""
        usage = self.message.get("usage") or {}
        return sum(int(usage.get(k) or 0) for k in (
            "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def make_client(settings: AgentSettings, *, api_key: str | None = None, base_url: str | None = None
                ) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=api_key, base_url=base_url, timeout=settings.request_timeout, max_retries=settings.max_retries
    )


class ModelClient:
    def __init__(self, client: anthropic.AsyncAnthropic, settings: AgentSettings) -> None:
        self.client = client
        self.settings = settings

    async def create(
        self, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelResponse:
        params: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": self.settings.max_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            params["tools"] = tools
        try:
            raw = await self.client.messages.with_raw_response.create(**params)
            body = await raw.read()
        except anthropic.APIStatusError as exc:
            MODEL_REQUESTS.labels("error").inc()
            raise ModelUnavailable(_status_text(exc), retryable=_retryable(exc.status_code)) from exc
        except anthropic.APITimeoutError as exc:
            MODEL_REQUESTS.labels("error").inc()
            raise ModelUnavailable("the model API did not answer in time") from exc
        except anthropic.APIConnectionError as exc:
            MODEL_REQUESTS.labels("error").inc()
            raise ModelUnavailable("the model API could not be reached") from exc
        try:
            message = json.loads(body)
            inputs = raw_tool_inputs(body)
        except ValueError as exc:
            MODEL_REQUESTS.labels("error").inc()
            raise ModelUnavailable("the model API sent a response that is not valid JSON") from exc
        if not isinstance(message, dict) or message.get("type") != "message":
            MODEL_REQUESTS.labels("error").inc()
            raise ModelUnavailable("the model API sent an unexpected response")
        MODEL_REQUESTS.labels("ok").inc()
        _count_tokens(message.get("usage") or {})
        return ModelResponse(message, inputs)


def _count_tokens(usage: dict[str, Any]) -> None:
    for kind, key in (("input", "input_tokens"), ("output", "output_tokens"),
                      ("cache_read", "cache_read_input_tokens"), ("cache_write", "cache_creation_input_tokens")):
        MODEL_TOKENS.labels(kind).inc(int(usage.get(key) or 0))


def api_message(exc: anthropic.APIStatusError) -> str:
    """The API's own error sentence (``error.message`` of the JSON body), never the body's Python repr."""
    message = getattr(exc, "api_message", None)
    body = exc.body
    if not message and isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else None
    text = str(message or "").strip().rstrip(".")
    return text or f"HTTP {exc.status_code}"


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _status_text(exc: anthropic.APIStatusError) -> str:
    status = exc.status_code
    if status == 429:
        return "the model API is rate limiting us (HTTP 429)"
    if status == 529:
        return "the model API is overloaded (HTTP 529)"
    if status >= 500:
        return f"the model API failed (HTTP {status})"
    if status in (401, 403):
        return (f"the model API refused the bot's credentials (HTTP {status}: {api_message(exc)}); an operator needs"
                " to fix ANTHROPIC_API_KEY")
    return f"the model API refused the request (HTTP {status}: {api_message(exc)})"


async def check_access(client: anthropic.AsyncAnthropic, timeout: float = 10.0) -> None:
    """One cheap authenticated request at start (list one model), so a wrong key or base URL stops start-up
    with a sentence naming the URL and the status instead of surprising the first user."""
    base = str(client.base_url).rstrip("/")
    url = f"{base}/v1/models"
    try:
        await client.with_options(max_retries=1, timeout=timeout).models.list(limit=1)
    except anthropic.APIStatusError as exc:
        status = exc.status_code
        if status in (401, 403):
            fix = "check ANTHROPIC_API_KEY"
        elif status == 404:
            fix = "ANTHROPIC_BASE_URL must be the API root (like https://api.anthropic.com), without /v1"
        else:
            fix = "check ANTHROPIC_BASE_URL and the API's status"
        raise ModelAccessError(
            f"the Anthropic API refused the start-up check: GET {url} answered HTTP {status} "
            f"({api_message(exc)}); {fix}"
        ) from None
    except anthropic.APITimeoutError:
        raise ModelAccessError(
            f"cannot reach the Anthropic API: GET {url} did not answer within {timeout:g}s; check ANTHROPIC_BASE_URL"
            " and the network"
        ) from None
    except anthropic.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        raise ModelAccessError(
            f"cannot reach the Anthropic API at {base} ({type(cause).__name__}: {cause}); check ANTHROPIC_BASE_URL"
            " and the network"
        ) from None
