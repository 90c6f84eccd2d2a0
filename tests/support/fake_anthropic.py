"""A scripted Anthropic Messages API on 127.0.0.1, for the real ``anthropic`` SDK.

Usage::

    with FakeAnthropic() as fake:
        fake.script(
            tool_use_reply([("toolu_1", "opsctl_status", '{"host": "db-3", "limit": 12.50}')]),
            text_reply("db-3 is fine"),
        )
        client = anthropic.AsyncAnthropic(api_key="test", base_url=fake.base_url, max_retries=2)
        ...
        assert fake.requests[0].json["tools"][0]["name"] == "opsctl_status"

Every POST /v1/messages takes the next scripted reply (a :class:`Reply`, a plain dict used as the message
body, or a callable ``(request_json) -> Reply | dict`` evaluated at request time). An unscripted request gets
a 500 with ``x-should-retry: false`` and a message naming the request, and is recorded in ``.unscripted``,
so a test fails loudly instead of the SDK silently retrying.

Streaming (``"stream": true``) is answered as server-sent events built from the same scripted reply.

``GET /v1/models`` (the models list, the bot's start-up check) is answered by the fake itself, in the real
wire format, without taking a scripted reply; other GET paths get the API's 404 ``not_found_error``. With
``api_key=...`` every request whose key (``x-api-key`` or bearer token) differs gets the API's 401
``authentication_error``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.loopback import LoopbackServer

DEFAULT_MODEL = "claude-fake-1"
_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):06d}"


@dataclass
class Reply:
    """One scripted HTTP answer. ``payload`` is JSON; ``raw`` maps placeholder strings inside it to raw JSON
    text substituted verbatim (so a tool input can carry ``12.50`` exactly as written)."""

    status: int = 200
    payload: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeout tests)

    def render(self, request_json: dict[str, Any] | None) -> bytes:
        payload = dict(self.payload)
        if payload.get("type") == "message" and payload.get("model") is None:
            model = (request_json or {}).get("model")
            payload["model"] = model if isinstance(model, str) else DEFAULT_MODEL
        text = json.dumps(payload)
        for placeholder, raw in self.raw.items():
            text = text.replace(json.dumps(placeholder), raw)
        return text.encode()

    @property
    def is_message(self) -> bool:
        return self.status == 200 and self.payload.get("type") == "message"


Responder = Callable[[dict[str, Any]], "Reply | dict[str, Any]"]


# -- content blocks ------------------------------------------------------------------------------------------


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": None}


def tool_use_block(id: str | None, name: str, input: dict[str, Any] | str) -> dict[str, Any]:
    """A ``tool_use`` block. ``input`` may be raw JSON object text, sent verbatim (see :class:`Reply`)."""
    return {"type": "tool_use", "id": id or _next_id("toolu"), "name": name, "input": input}


def server_tool_use_block(query: str, id: str | None = None, name: str = "tool_search_tool_bm25") -> dict[str, Any]:
    return {
        "type": "server_tool_use",
        "id": id or _next_id("srvtoolu"),
        "name": name,
        "input": {"query": query},
    }


def tool_search_result_block(tool_use_id: str, tool_names: Iterable[str]) -> dict[str, Any]:
    return {
        "type": "tool_search_tool_result",
        "tool_use_id": tool_use_id,
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": n} for n in tool_names],
        },
    }


def tool_search_error_block(tool_use_id: str, error_code: str = "unavailable") -> dict[str, Any]:
    return {
        "type": "tool_search_tool_result",
        "tool_use_id": tool_use_id,
        "content": {"type": "tool_search_tool_result_error", "error_code": error_code, "error_message": None},
    }


# -- whole replies -------------------------------------------------------------------------------------------


def message_reply(
    content: Sequence[dict[str, Any]],
    stop_reason: str | None = "end_turn",
    *,
    model: str | None = None,
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    stop_sequence: str | None = None,
    id: str | None = None,
    delay: float = 0.0,
) -> Reply:
    """A 200 POST /v1/messages body. ``model=None`` echoes the request's model. Tool inputs given as strings
    are substituted as raw JSON text."""
    blocks: list[dict[str, Any]] = []
    raw: dict[str, str] = {}
    for block in content:
        block = dict(block)
        if block.get("type") == "tool_use" and isinstance(block.get("input"), str):
            text = block["input"]
            if not isinstance(json.loads(text), dict):
                raise ValueError(f"tool_use input must be a JSON object, got {text!r}")
            placeholder = f"@@raw-input-{len(raw)}-{block['id']}@@"
            raw[placeholder] = text
            block["input"] = placeholder
        blocks.append(block)
    payload = {
        "id": id or _next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
        },
    }
    return Reply(200, payload, {"content-type": "application/json"}, raw, delay)


def text_reply(text: str, stop_reason: str = "end_turn", **kw: Any) -> Reply:
    """``stop_reason``: end_turn, max_tokens, refusal, model_context_window_exceeded, stop_sequence..."""
    return message_reply([text_block(text)], stop_reason, **kw)


ToolCall = tuple[str | None, str, "dict[str, Any] | str"]


def tool_use_reply(calls: Iterable[ToolCall], text: str | None = None, **kw: Any) -> Reply:
    """``calls``: ``(id, name, input)``, input a dict or raw JSON object text. ``text`` comes first, as Claude
    does."""
    blocks = [text_block(text)] if text else []
    blocks += [tool_use_block(i, n, inp) for i, n, inp in calls]
    return message_reply(blocks, "tool_use", **kw)


def server_tool_search_reply(
    query: str,
    tool_names: Iterable[str],
    *,
    then_calls: Iterable[ToolCall] = (),
    text: str | None = None,
    server_tool_id: str | None = None,
    stop_reason: str | None = None,
    **kw: Any,
) -> Reply:
    """A turn where the server ran tool search: ``server_tool_use`` + ``tool_search_tool_result`` blocks,
    then optional text and ``tool_use`` of the discovered tools. stop_reason defaults to tool_use when
    ``then_calls`` is given, else end_turn."""
    srv = server_tool_use_block(query, server_tool_id)
    blocks = [srv, tool_search_result_block(srv["id"], tool_names)]
    if text:
        blocks.append(text_block(text))
    calls = list(then_calls)
    blocks += [tool_use_block(i, n, inp) for i, n, inp in calls]
    if stop_reason is None:
        stop_reason = "tool_use" if calls else "end_turn"
    return message_reply(blocks, stop_reason, **kw)


def pause_turn_reply(blocks: Sequence[dict[str, Any]] | None = None, *, query: str | None = None, **kw: Any) -> Reply:
    """stop_reason pause_turn. Default content: a ``server_tool_use`` (tool search for ``query``) without its
    result yet, which is what a paused long-running server tool turn looks like; or pass ``blocks``."""
    if blocks is None:
        blocks = [server_tool_use_block(query or "search")]
    return message_reply(blocks, "pause_turn", **kw)


ERROR_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_reply(
    status: int,
    type: str | None = None,
    message: str = "scripted error",
    headers: dict[str, str] | None = None,
) -> Reply:
    """Anthropic's error body. The default headers make the SDK retry after 1 ms (``retry-after-ms`` wins over
    ``retry-after``; a ``retry-after`` of 0 alone falls back to the SDK's 0.5 s+ exponential backoff)."""
    if headers is None:
        headers = {"retry-after": "0", "retry-after-ms": "1"}
    payload = {
        "type": "error",
        "error": {"type": type or ERROR_STATUS.get(status, "api_error"), "message": message},
        "request_id": _next_id("req"),
    }
    return Reply(status, payload, {"content-type": "application/json", **headers})


# -- the server ----------------------------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    json: Any
    body: bytes


class FakeAnthropic(LoopbackServer):
    thread_name = "fake-anthropic"

    def __init__(self, *, api_key: str | None = None, models: Sequence[str] = (DEFAULT_MODEL,)) -> None:
        super().__init__()
        self.api_key = api_key
        self.models = list(models)
        self._queue: deque[Reply | dict[str, Any] | Responder] = deque()
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.unscripted: list[RecordedRequest] = []

    # scripting
    def script(self, *responses: Reply | dict[str, Any] | Responder) -> None:
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of POST /v1/messages, in order."""
        return [r.json for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    def _answer(self, request: RecordedRequest) -> Reply:
        if self.api_key is not None and self.api_key not in _credentials(request.headers):
            with self._lock:
                self.requests.append(request)
            return error_reply(401, "authentication_error", "invalid x-api-key", headers={})
        if request.method == "GET":
            with self._lock:
                self.requests.append(request)
            if request.path.split("?")[0] == "/v1/models":
                return Reply(200, _models_page(self.models, request.path), {"content-type": "application/json"})
            return error_reply(404, "not_found_error", "Not found", headers={})
        return self._next(request)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            item = self._queue.popleft() if self._queue else None
            if item is None:
                self.unscripted.append(request)
        if item is None:
            summary = _summarize(request)
            reply = error_reply(
                500,
                "api_error",
                f"FakeAnthropic: unscripted request #{len(self.requests)} {request.method} {request.path}: {summary}",
                headers={"x-should-retry": "false"},
            )
            return reply
        if callable(item):
            item = item(request.json if isinstance(request.json, dict) else {})
        if isinstance(item, dict):
            item = Reply(200, item, {"content-type": "application/json"})
        return item


def _credentials(headers: dict[str, str]) -> set[str]:
    """The key a request carries: ``x-api-key``, or ``Authorization: Bearer`` (what the SDK sends)."""
    found = {headers.get("x-api-key") or ""}
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    if scheme.lower() == "bearer":
        found.add(token)
    return found - {""}


def _models_page(models: Sequence[str], path: str) -> dict[str, Any]:
    """The models list as the API sends it: newest first, ``limit`` (default 20) per page."""
    query = dict(parse_qsl(urlsplit(path).query))
    limit = int(query.get("limit") or 20)
    data = [{"type": "model", "id": m, "display_name": m.replace("-", " ").title(),
             "created_at": "2026-01-01T00:00:00Z"} for m in models[:limit]]
    return {"data": data, "has_more": len(models) > limit, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}


def _summarize(request: RecordedRequest) -> str:
    body = request.json if isinstance(request.json, dict) else {}
    messages = body.get("messages") or []
    last = messages[-1] if messages else None
    return f"model={body.get('model')!r}, {len(messages)} messages, last={json.dumps(last)[:300]}"


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, parsed, body
        )
        reply = self.owner._answer(request)
        if reply.delay:
            time.sleep(reply.delay)
        if isinstance(parsed, dict) and parsed.get("stream") and reply.is_message:
            self._send_stream(reply, parsed)
            return
        data = reply.render(parsed if isinstance(parsed, dict) else None)
        self.send_response(reply.status)
        headers = {"content-type": "application/json", "request-id": _next_id("req"), **reply.headers}
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, reply: Reply, request_json: dict[str, Any]) -> None:
        message = dict(reply.payload)
        if message.get("model") is None:
            model = request_json.get("model")
            message["model"] = model if isinstance(model, str) else DEFAULT_MODEL
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for event, data in _stream_events(message, reply.raw):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    do_POST = _handle
    do_GET = _handle


def _stream_events(message: dict[str, Any], raw: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            first = dict(block, text="")
            delta: dict[str, Any] | None = {"type": "text_delta", "text": block["text"]}
        elif kind in ("tool_use", "server_tool_use"):
            first = dict(block, input={})
            inp = block["input"]
            partial = raw[inp] if isinstance(inp, str) and inp in raw else json.dumps(inp)
            delta = {"type": "input_json_delta", "partial_json": partial}
        else:
            first, delta = block, None
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": first}))
        if delta is not None:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


FakeAnthropic.handler = _Handler
