"""A loopback server that plays the Slack Web API, for the real ``slack_sdk`` clients.

Usage::

    with FakeSlack() as slack:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.api_url)  # api_url ends in "/api/"
        await client.chat_postMessage(channel="C1", text="hi")
        assert slack.calls_to("chat.postMessage")[0].params["text"] == "hi"

slack_sdk joins ``base_url`` and the method with ``urljoin``, so the base URL must end with a slash.
Parameters arrive as a JSON body (chat.*, assistant.*), as a query string (auth.test, reactions.*,
files.*; GET for conversations.info and users.info) or as a form body; ``SlackCall.params`` merges them.

Socket Mode: set ``socket_mode`` to a started :class:`~tests.support.fake_socket_mode.FakeSocketMode` and
``apps.connections.open`` answers ``{"ok": true, "url": <a new ws:// URL of that fake>}``; like Slack, it takes
only an app-level token (``xapp-``), and only ``app_token`` when that is set.

Also served: the file upload URL handed out by files.getUploadURLExternal (``POST /upload/<file_id>``) and
response_url endpoints (``POST /response_url/<id>``, see :meth:`FakeSlack.response_url`).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.loopback import LoopbackServer

if TYPE_CHECKING:
    from tests.support.fake_socket_mode import FakeSocketMode

BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
TEAM_ID = "T0FAKE"
TEAM = "fake-team"


def sign_slack_request(signing_secret: str, body: bytes | str, timestamp: int | str | None = None) -> dict[str, str]:
    """The headers Slack adds to a request it sends us: ``v0=HMAC-SHA256(secret, "v0:<ts>:<body>")``."""
    if isinstance(body, str):
        body = body.encode()
    ts = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + ts.encode() + b":" + body
    digest = hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


@dataclass
class SlackCall:
    method: str  # the API method ("chat.postMessage"), or "upload" / "response_url" for those endpoints
    params: dict[str, Any]  # query string + form + JSON body, merged (form/query values are strings)
    headers: dict[str, str]  # lower-cased names
    http_method: str
    path: str
    body: bytes
    json: Any = None  # the JSON body, when there was one
    status: int = 200  # what the fake answered
    response: Any = None

    @property
    def token(self) -> str | None:
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        token = self.params.get("token")
        return token if isinstance(token, str) else None


@dataclass
class SlackReply:
    status: int = 200
    body: Any = field(default_factory=lambda: {"ok": True})  # dict -> JSON; str/bytes sent as text
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[SlackCall], "SlackReply | dict[str, Any]"]


class FakeSlack(LoopbackServer):
    thread_name = "fake-slack"

    def __init__(self, *, expected_token: str | None = None, app_token: str | None = None,
                 socket_mode: FakeSocketMode | None = None) -> None:
        """``expected_token``: when set, API calls with another token get ``{"ok": false, "error":
        "invalid_auth"}``; ``app_token`` is the same for ``apps.connections.open``, answered with a URL of
        ``socket_mode`` (see the module docstring)."""
        super().__init__()
        self.expected_token = expected_token
        self.app_token = app_token
        self.socket_mode = socket_mode
        self.calls: list[SlackCall] = []
        self.uploads: dict[str, bytes] = {}  # file_id -> uploaded bytes
        self.response_url_posts: dict[str, list[Any]] = {}  # id -> JSON payloads posted to response_url(id)
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, ts) -> current message
        self.users: dict[str, dict[str, Any]] = {}  # user id -> user object for users.info (default made up)
        self.channels: dict[str, dict[str, Any]] = {}  # channel id -> channel object for conversations.info
        self.views: dict[str, dict[str, Any]] = {}  # view id -> view opened with views.open (as Slack returns it)
        self.down: str | None = None  # None, "error" (HTTP 503 to everything) or "reset" (drop connections)
        self._failures: dict[str, list[SlackReply]] = {}
        self._handlers: dict[str, Handler] = {}
        self._ts = itertools.count(100)
        self._file_ids = itertools.count(1)
        self._lock = threading.RLock()  # thread() takes it, and conversations.replies calls thread() under it


    @property
    def api_url(self) -> str:
        """What to pass as ``base_url`` to slack_sdk clients and bolt: ``http://127.0.0.1:<port>/api/``."""
        return self.base_url + "/api/"

    def response_url(self, id: str) -> str:
        return f"{self.base_url}/response_url/{id}"

    # scripting -------------------------------------------------------------------------------------------
    def fail_next(
        self,
        method: str,
        *,
        status: int = 200,
        error: str | None = None,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int = 1,
    ) -> None:
        """The next ``times`` calls of ``method`` fail. ``status=429`` defaults to ``error="ratelimited"`` and
        ``Retry-After: 0``; ``status=200`` with ``error`` is Slack's usual ``{"ok": false, "error": ...}``."""
        if status == 429:
            headers = {"Retry-After": "0", **(headers or {})}
            error = error or "ratelimited"
        if body is None:
            body = {"ok": False, "error": error or ("internal_error" if status >= 500 else "fatal_error")}
        with self._lock:
            self._failures.setdefault(method, []).extend(
                SlackReply(status, body, dict(headers or {})) for _ in range(times)
            )

    def on(self, method: str, handler: Handler | dict[str, Any] | None) -> None:
        """Answer ``method`` with ``handler(call)`` (or a fixed dict) from now on; ``None`` restores the
        default."""
        with self._lock:
            if handler is None:
                self._handlers.pop(method, None)
            elif callable(handler):
                self._handlers[method] = handler
            else:
                fixed = handler
                self._handlers[method] = lambda _call: fixed

    # inspection ------------------------------------------------------------------------------------------
    def calls_to(self, method: str) -> list[SlackCall]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def message(self, channel: str, ts: str) -> dict[str, Any]:
        """The current state of a message posted through chat.postMessage (after any chat.update)."""
        return self.messages[(channel, ts)]

    def all_messages(self) -> dict[tuple[str, str], dict[str, Any]]:
        """A copy of every message by (channel, ts), taken under the lock: the server thread posts meanwhile, and
        iterating the live dict can fail then ("dictionary changed size during iteration")."""
        with self._lock:
            return dict(self.messages)

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """Messages in a thread (the parent, if posted here, and replies), oldest first."""
        return [
            m
            for (ch, ts), m in sorted(self.all_messages().items(), key=lambda kv: float(kv[0][1]))
            if ch == channel and (ts == thread_ts or m.get("thread_ts") == thread_ts)
        ]

    # answering -------------------------------------------------------------------------------------------
    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    def _answer(self, call: SlackCall) -> SlackReply:
        with self._lock:
            failures = self._failures.get(call.method)
            if failures:
                return failures.pop(0)
            handler = self._handlers.get(call.method)
        if call.method == "upload":
            file_id = call.path.rsplit("/", 1)[-1]
            with self._lock:
                self.uploads[file_id] = call.body
            return SlackReply(200, f"OK - {len(call.body)}", {"Content-Type": "text/plain"})
        if call.method == "response_url":
            rid = call.path.rsplit("/", 1)[-1]
            with self._lock:
                self.response_url_posts.setdefault(rid, []).append(call.json)
            return SlackReply(200, "ok", {"Content-Type": "text/html"})
        if call.method == "apps.connections.open" and self.socket_mode is not None and handler is None:
            return SlackReply(200, self._open_connection(call))
        if self.expected_token is not None and call.token != self.expected_token:
            return SlackReply(200, {"ok": False, "error": "invalid_auth" if call.token else "not_authed"})
        if handler is not None:
            result = handler(call)
            return result if isinstance(result, SlackReply) else SlackReply(200, result)
        default = getattr(self, "_api_" + call.method.replace(".", "_"), None)
        if default is None:
            return SlackReply(200, {"ok": False, "error": "unknown_method"})
        return SlackReply(200, default(call.params))

    def _open_connection(self, call: SlackCall) -> dict[str, Any]:
        assert self.socket_mode is not None
        if not call.token:
            return {"ok": False, "error": "not_authed"}
        if not call.token.startswith("xapp-"):
            return {"ok": False, "error": "not_allowed_token_type"}
        if self.app_token is not None and call.token != self.app_token:
            return {"ok": False, "error": "invalid_auth"}
        return {"ok": True, "url": self.socket_mode.issue_url()}

    def _api_auth_test(self, p: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": f"https://{TEAM}.slack.com/",
            "team": TEAM,
            "user": "fisk",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _api_chat_postMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = str(p.get("channel", ""))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        ts = self._next_ts()
        message = {
            "type": "message",
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": "AFAKE",
            "team": TEAM_ID,
            "text": p.get("text", ""),
            "ts": ts,
        }
        for key in ("blocks", "attachments", "thread_ts", "metadata"):
            if p.get(key) is not None:
                message[key] = p[key]
        with self._lock:
            self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _api_chat_update(self, p: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(p.get("channel", "")), str(p.get("ts", ""))
        with self._lock:
            message = self.messages.get((channel, ts))
            if message is None:
                message = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": ts}
                self.messages[(channel, ts)] = message
            message["text"] = p.get("text", message.get("text", ""))
            for key in ("blocks", "attachments", "metadata"):
                if key in p:
                    message[key] = p[key]
            message["edited"] = {"user": BOT_USER_ID, "ts": self._next_ts()}
        return {"ok": True, "channel": channel, "ts": ts, "text": message["text"], "message": dict(message)}

    def _api_chat_getPermalink(self, p: dict[str, Any]) -> dict[str, Any]:
        """Like Slack: ``https://<team>.slack.com/archives/<channel>/p<ts without the dot>``, with
        ``thread_ts`` and ``cid`` for a reply in a thread; ``message_not_found`` for an unknown message."""
        channel, ts = str(p.get("channel", "")), str(p.get("message_ts", ""))
        with self._lock:
            message = self.messages.get((channel, ts))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        link = f"https://{TEAM}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        if message.get("thread_ts") and message["thread_ts"] != ts:
            link += f"?thread_ts={message['thread_ts']}&cid={channel}"
        return {"ok": True, "channel": channel, "permalink": link}

    def _api_views_open(self, p: dict[str, Any]) -> dict[str, Any]:
        """Like Slack: needs a trigger_id and a modal view (title <= 24 chars, <= 100 blocks, private_metadata
        <= 3000 chars); answers with the view as opened (id, empty state, hash)."""
        view = p.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        if not p.get("trigger_id"):
            return {"ok": False, "error": "invalid_arguments"}
        if not isinstance(view, dict) or view.get("type") not in ("modal", "home"):
            return {"ok": False, "error": "invalid_arguments"}
        title = (view.get("title") or {}).get("text", "")
        if not title or len(title) > 24 or len(view.get("blocks") or []) > 100 or \
                len(view.get("private_metadata") or "") > 3000:
            return {"ok": False, "error": "invalid_arguments"}
        view_id = f"V{next(self._file_ids):010d}"
        opened = {**view, "id": view_id, "team_id": TEAM_ID, "app_id": "AFAKE", "bot_id": BOT_ID,
                  "state": {"values": {}}, "hash": f"{int(time.time())}.{view_id}", "root_view_id": view_id,
                  "previous_view_id": None, "external_id": ""}
        with self._lock:
            self.views[view_id] = opened
        return {"ok": True, "view": opened}

    def _api_chat_postEphemeral(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._next_ts()}

    def _api_conversations_replies(self, p: dict[str, Any]) -> dict[str, Any]:
        """The thread, oldest first, in one page; metadata only with ``include_all_metadata`` (as Slack)."""
        channel, ts = str(p.get("channel", "")), str(p.get("ts", ""))
        with self._lock:
            messages = [dict(m) for m in self.thread(channel, ts)]
        if str(p.get("include_all_metadata", "")).lower() not in ("1", "true"):
            for message in messages:
                message.pop("metadata", None)
        if not messages:
            return {"ok": False, "error": "thread_not_found"}
        return {"ok": True, "messages": messages, "has_more": False, "response_metadata": {"next_cursor": ""}}

    def _api_conversations_history(self, p: dict[str, Any]) -> dict[str, Any]:
        """Top-level messages of a channel, newest first, at or after ``oldest``; metadata only with
        ``include_all_metadata`` (as Slack)."""
        channel, oldest = str(p.get("channel", "")), float(p.get("oldest") or 0)
        with self._lock:
            messages = [dict(m) for (ch, ts), m in self.messages.items()
                        if ch == channel and m.get("thread_ts", ts) == ts and float(ts) >= oldest]
        messages.sort(key=lambda m: float(m["ts"]), reverse=True)
        if str(p.get("include_all_metadata", "")).lower() not in ("1", "true"):
            for message in messages:
                message.pop("metadata", None)
        return {"ok": True, "messages": messages, "has_more": False, "response_metadata": {"next_cursor": ""}}

    def _api_chat_delete(self, p: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(p.get("channel", "")), str(p.get("ts", ""))
        with self._lock:
            self.messages.pop((channel, ts), None)
        return {"ok": True, "channel": channel, "ts": ts}

    def _api_reactions_add(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _api_reactions_remove(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _api_assistant_threads_setStatus(self, p: dict[str, Any]) -> dict[str, Any]:
        """Like Slack: channel_id, thread_ts and status (``""`` clears it) are required."""
        if not p.get("channel_id") or not p.get("thread_ts") or "status" not in p:
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True}

    def _api_assistant_threads_setSuggestedPrompts(self, p: dict[str, Any]) -> dict[str, Any]:
        """Like Slack: channel_id and 1-4 prompts, each with a title and a message."""
        prompts = p.get("prompts")
        if isinstance(prompts, str):
            prompts = json.loads(prompts)
        if not p.get("channel_id") or not isinstance(prompts, list) or not 1 <= len(prompts) <= 4 or \
                not all(isinstance(x, dict) and x.get("title") and x.get("message") for x in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True}

    def _api_conversations_info(self, p: dict[str, Any]) -> dict[str, Any]:
        cid = str(p.get("channel", ""))
        channel = self.channels.get(cid) or {
            "id": cid,
            "name": f"chan-{cid.lower()}",
            "is_channel": cid.startswith("C"),
            "is_group": False,
            "is_im": cid.startswith("D"),
            "is_private": cid.startswith("G"),
            "is_member": True,
            "is_archived": False,
        }
        return {"ok": True, "channel": channel}

    def _api_users_info(self, p: dict[str, Any]) -> dict[str, Any]:
        uid = str(p.get("user", ""))
        user = self.users.get(uid) or {
            "id": uid,
            "team_id": TEAM_ID,
            "name": f"user-{uid.lower()}",
            "real_name": f"User {uid}",
            "deleted": False,
            "is_bot": uid == BOT_USER_ID,
            "is_admin": False,
            "tz": "UTC",
            "profile": {"display_name": f"user-{uid.lower()}", "real_name": f"User {uid}"},
        }
        return {"ok": True, "user": user}

    def _api_files_getUploadURLExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._file_ids):08d}"
        return {"ok": True, "upload_url": f"{self.base_url}/upload/{file_id}", "file_id": file_id}

    def _api_files_completeUploadExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        files = p.get("files", [])
        if isinstance(files, str):
            files = json.loads(files)
        out = []
        for f in files:
            if f.get("id") not in self.uploads:
                return {"ok": False, "error": "file_not_found"}
            out.append({"id": f["id"], "title": f.get("title") or "", "size": len(self.uploads[f["id"]])})
        return {"ok": True, "files": out}


class _RequestHandler(BaseHTTPRequestHandler):
    owner: FakeSlack
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, a kept-alive connection waits for the client's
    # delayed ACK (~40 ms) between them. Slack itself has no such stall.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        fake = self.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if fake.down == "reset":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        url = urlsplit(self.path)
        params: dict[str, Any] = dict(parse_qsl(url.query, keep_blank_values=True))
        content_type = (self.headers.get("content-type") or "").split(";")[0].strip().lower()
        parsed_json: Any = None
        if content_type == "application/json" and body:
            parsed_json = json.loads(body)
            if isinstance(parsed_json, dict):
                params.update(parsed_json)
        elif content_type == "application/x-www-form-urlencoded" and body:
            params.update(parse_qsl(body.decode(), keep_blank_values=True))
        if url.path.startswith("/api/"):
            method = url.path[len("/api/") :]
        elif url.path.startswith("/upload/"):
            method = "upload"
        elif url.path.startswith("/response_url/"):
            method = "response_url"
            if parsed_json is None and body:
                parsed_json = json.loads(body)
        else:
            method = url.path
        call = SlackCall(
            method=method,
            params=params,
            headers={k.lower(): v for k, v in self.headers.items()},
            http_method=self.command,
            path=url.path,
            body=body,
            json=parsed_json,
        )
        if fake.down == "error":
            reply = SlackReply(503, "service unavailable", {"Content-Type": "text/plain"})
        else:
            reply = fake._answer(call)
        call.status, call.response = reply.status, reply.body
        with fake._lock:
            fake.calls.append(call)
        if isinstance(reply.body, dict | list):
            data = json.dumps(reply.body).encode()
            headers = {"Content-Type": "application/json; charset=utf-8"}
        else:
            data = reply.body.encode() if isinstance(reply.body, str) else bytes(reply.body)
            headers = {"Content-Type": "text/plain; charset=utf-8"}
        headers.update(reply.headers)
        self.send_response(reply.status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = _handle
    do_POST = _handle


FakeSlack.handler = _RequestHandler
