"""What may be said about a Redis target: URL checks, redaction and descriptions that never show a password.

Every message about Redis (startup errors, logs, ``config check``) names its target through these functions,
so a password in ``REDIS_URL`` (user info or a ``password=`` query option) never reaches a log or a user.
The errors live here too because their messages are built from such text: ``RedisUnavailable`` (cannot be
reached or started) and its ``RedisUrlError`` (a malformed URL, a typo rather than an outage).
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from redis.connection import parse_url

__all__ = [
    "URL_FORMS",
    "RedisUnavailable",
    "RedisUrlError",
    "check_redis_url",
    "describe_redis_url",
    "redact_url",
    "scrub_password",
]


class RedisUnavailable(RuntimeError):
    """Redis cannot be reached or started. The message names the target, never a password."""


class RedisUrlError(RedisUnavailable):
    """The Redis URL is malformed (a typo, not an outage): the message says what is wrong, never the password."""


URL_FORMS = "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or unix:///path/to/socket"


def check_redis_url(url: str) -> None:
    """Raise :class:`RedisUrlError` when redis-py could not use ``url`` as written (or would silently ignore
    part of it, like a database that is not a number)."""
    shown = scrub_password(url, url)  # as written (redact_url would re-assemble it), minus any password
    try:
        parse_url(url)
        parts = urlsplit(url)
        db = unquote(parts.path).lstrip("/")
        if parts.scheme == "unix" and not parts.path:
            raise ValueError("no socket path after unix://")
        if parts.scheme != "unix" and db and not db.isdigit():
            raise ValueError(f"the database after the host must be a number, got {db!r}")
    except ValueError as exc:
        reason = scrub_password(str(exc), url).rstrip(".")
        raise RedisUrlError(
            f"the Redis URL (REDIS_URL or redis.url) {shown!r} is malformed: {reason}; expected {URL_FORMS}"
        ) from None


def redact_url(url: str) -> str:
    """``url`` with any password (in the user info or a ``password=`` query option) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable Redis URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        # user info without a colon is a user name to redis-py, but some write a bare password there
        netloc = f"{user}:***@{hostport}" if sep else f"***@{hostport}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*/")
    redacted = f"{parts.scheme}://{netloc}{parts.path}"
    redacted += f"?{query}" if query else ""
    return redacted + (f"#{parts.fragment}" if parts.fragment else "")


def describe_redis_url(url: str) -> str:
    """``host:port`` (``, TLS`` for rediss), or the socket path of a unix URL; no credentials."""
    try:
        parts = urlsplit(url)
        if parts.scheme == "unix":
            return f"unix socket {unquote(parts.path)}"
        host = parts.hostname or "localhost"
        port = parts.port or 6379
    except ValueError:
        return redact_url(url)
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}" + (" (TLS)" if parts.scheme == "rediss" else "")


def scrub_password(text: str, url: str) -> str:
    """``text`` with the URL's password removed (as written, decoded or encoded), in case a library ever echoes
    it in an error."""
    try:
        parts = urlsplit(url)
        secrets = [parts.password if parts.password is not None else parts.username]
        secrets += [v for k, v in parse_qsl(parts.query) if k.lower() == "password"]
    except ValueError:
        secrets = []
    for secret in secrets:
        if secret:
            for form in {secret, unquote(secret), quote(unquote(secret), safe="")}:
                text = text.replace(form, "***")
    return text
