"""The Web API client: base URL, retry handlers, startup checks, safe posting, user-group lookups."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.ratelimit import SharedRateLimitRetryHandler
from bot.slack.settings import SlackSettings, SlackStartupError
from bot.slack.state import SlackState
from bot.slack.webclient import CountingWebClient

__all__ = ["CountingWebClient"]  # re-exported: it lived here before bot/slack/webclient.py

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"
#: Slack answers that mean "try again later", not "this request is wrong".
TRANSIENT_ERRORS = frozenset(
    {"ratelimited", "rate_limited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
#: Answers that mean the goal is already reached (reactions).
HARMLESS_ERRORS = frozenset({"already_reacted", "no_reaction", "message_not_found", "message_not_in_thread"})


def api_url_problem(settings: SlackSettings, env_url: str | None = None) -> str | None:
    """Why the configured Web API base URL cannot be right, or None. slack_sdk appends the method name
    (``auth.test``) to it, so anything but an http(s) URL ending in ``/api/`` reaches a page that is not the API."""
    url = env_url or settings.api_url
    if not url:
        return None
    name = "SLACK_API_URL" if env_url else "slack.api_url"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.path.rstrip("/").endswith("/api"):
        return f"{name} must be the Web API base URL ending in /api/ (like {DEFAULT_API_URL}), got {url!r}"
    return None


def api_base_url(settings: SlackSettings, env_url: str | None = None) -> str:
    if problem := api_url_problem(settings, env_url):
        raise SlackStartupError(problem)
    url = env_url or settings.api_url or DEFAULT_API_URL
    return url if url.endswith("/") else url + "/"


async def close_client(client: AsyncWebClient) -> None:
    """Close the client's kept-open connections (at shutdown)."""
    session = client.session
    if session is not None and not session.closed:
        await session.close()


def make_client(token: str, base_url: str, *, rate_limit_retries: int = 3, timeout: int = 30) -> AsyncWebClient:
    """An AsyncWebClient that also retries 429s after Retry-After (slack_sdk only retries connection errors by
    default), pausing the whole method meanwhile, with per-method concurrency by Slack's rate-limit tier."""
    client = CountingWebClient(token=token, base_url=base_url, timeout=timeout)
    client.retry_handlers = [
        AsyncConnectionErrorRetryHandler(),
        SharedRateLimitRetryHandler(client.pacer, max_retry_count=rate_limit_retries),
    ]
    return client


def token_problems(mode: str, bot_token: str | None, app_token: str | None, signing_secret: str | None) -> list[str]:
    """Every missing or obviously swapped Slack credential, each with what to set (empty when all is well)."""
    problems = []
    if not bot_token:
        problems.append("SLACK_BOT_TOKEN is not set (the bot token, xoxb-...)")
    elif not bot_token.startswith("xoxb-"):
        problems.append("SLACK_BOT_TOKEN must be a bot token starting with xoxb- (OAuth & Permissions page)")
    if mode == "socket":
        if not app_token:
            problems.append("SLACK_APP_TOKEN is not set: Socket Mode needs an app-level token (xapp-...)")
        elif not app_token.startswith("xapp-"):
            problems.append("SLACK_APP_TOKEN must be an app-level token starting with xapp- (Basic Information)")
    elif not signing_secret:
        problems.append("SLACK_SIGNING_SECRET is not set: HTTP mode verifies every request with it")
    return problems


def check_tokens(mode: str, bot_token: str | None, app_token: str | None, signing_secret: str | None) -> None:
    """Fail clearly before touching the network when a credential is missing or obviously swapped."""
    problems = token_problems(mode, bot_token, app_token, signing_secret)
    if problems:
        raise SlackStartupError("Slack is not configured: " + "; ".join(problems))


async def verify_auth(client: AsyncWebClient) -> dict[str, Any]:
    """auth.test with the bot token: the bot's user id and team, or a clear SlackStartupError."""
    try:
        reply = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error") if isinstance(getattr(exc.response, "data", None), dict) else None
        if error == "unknown_method" or error is None:
            raise SlackStartupError(_not_the_api(client, exc)) from None
        raise SlackStartupError(
            f"Slack refused the bot token (auth.test: {error or exc}); check SLACK_BOT_TOKEN and that the app is "
            "installed in the workspace"
        ) from None
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        raise SlackStartupError(f"cannot reach the Slack Web API at {client.base_url}: {exc}") from None
    if not isinstance(reply.data, dict):
        raise SlackStartupError(_not_the_api(client, None, reply.status_code))
    url = reply.data.get("url")
    if isinstance(client, CountingWebClient) and isinstance(url, str) and _is_team_url(url):
        client.team_url = url if url.endswith("/") else url + "/"
    return dict(reply.data)


def _is_team_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" and bool(parts.netloc) and parts.path in ("", "/") and not parts.query


def _not_the_api(client: AsyncWebClient, exc: SlackApiError | None, status: int | None = None) -> str:
    if exc is not None:
        status = getattr(exc.response, "status_code", None)
    return (f"{client.base_url}auth.test did not answer like the Slack Web API (HTTP {status}); SLACK_API_URL "
            f"(or slack.api_url) must be the Web API base URL ending in /api/, like {DEFAULT_API_URL}")


def is_transient(exc: BaseException) -> bool:
    """Whether a failed Web API call should be retried later (outage, rate limit) rather than given up."""
    if isinstance(exc, SlackApiError):
        status = getattr(exc.response, "status_code", 200)
        error = exc.response.get("error") if isinstance(getattr(exc.response, "data", None), dict) else None
        return status >= 500 or status == 429 or error is None or error in TRANSIENT_ERRORS
    return isinstance(exc, aiohttp.ClientError | TimeoutError | OSError)


def error_code(exc: BaseException) -> str | None:
    if isinstance(exc, SlackApiError) and isinstance(getattr(exc.response, "data", None), dict):
        return exc.response.get("error")
    return None


#: Message metadata event type that marks the bot's own posts with a key, so a retry can find them.
POST_EVENT = "fisk_chatops_post"


async def post(
    client: AsyncWebClient, channel: str, text: str, blocks: list[dict[str, Any]] | None = None,
    thread_ts: str | None = None, key: str | None = None,
) -> dict[str, Any]:
    """chat.postMessage with mentions and link parsing disabled and no unfurls.

    ``key`` goes into the message's metadata: Slack has no idempotency key, so after a crash between "posted"
    and "recorded as posted" the poster looks for its key in the thread (``find_posted``) instead of posting
    twice."""
    extra: dict[str, Any] = {}
    if key:
        extra["metadata"] = {"event_type": POST_EVENT, "event_payload": {"key": key}}
    reply = await client.chat_postMessage(
        channel=channel, text=text, blocks=blocks, thread_ts=thread_ts,
        parse="none", link_names=False, unfurl_links=False, unfurl_media=False, **extra,
    )  # fmt: skip
    return dict(reply.data) if isinstance(reply.data, dict) else {}


async def post_once(client: AsyncWebClient, where: tuple[str, str], text: str, blocks: list[dict[str, Any]],
                    key: str, retry: bool) -> dict[str, Any]:
    """Post in the thread ``where`` (channel, thread ts), unless ``retry`` and an earlier attempt that died before
    recording its post already did (found by ``key``)."""
    if retry and key:
        found = await find_posted(client, where[0], where[1], key)
        if found is not None:
            log.info("poster: %s was already posted before a restart; not posting it again", key)
            return found
    return await post(client, where[0], text, blocks, thread_ts=where[1], key=key or None)


async def find_posted(client: AsyncWebClient, channel: str, thread_ts: str, key: str) -> dict[str, Any] | None:
    """The message this bot already posted in the thread with ``key`` in its metadata, if any."""
    cursor: str | None = None
    while True:
        try:
            reply = await client.conversations_replies(
                channel=channel, ts=thread_ts, include_all_metadata=True, limit=200, cursor=cursor
            )
        except SlackApiError as exc:
            if error_code(exc) == "thread_not_found":  # no thread yet: nothing of ours can be in it
                return None
            raise
        for message in reply.get("messages") or []:
            metadata = message.get("metadata") or {}
            if metadata.get("event_type") == POST_EVENT and (metadata.get("event_payload") or {}).get("key") == key:
                return {"ok": True, "channel": channel, "ts": message.get("ts"), "message": message}
        cursor = (reply.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            return None


async def update(client: AsyncWebClient, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
    await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks, parse="none", link_names=False)


async def permalink(client: AsyncWebClient, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
    """The permalink of a message (``thread_ts``: the thread it is a reply in), or None when Slack will not give
    one (the link is a convenience: a missing link must not stop the card or the result from being posted).

    When auth.test told the workspace's URL (``CountingWebClient.team_url``) the link is built in the format
    chat.getPermalink answers with (``<team url>archives/<channel>/p<ts without the dot>``, plus ``thread_ts``
    and ``cid`` for a reply): asking Slack cost a Web API call (and a Tier 4 rate-limit slot) per link, two per
    posted result. Otherwise chat.getPermalink is asked; its outages still raise, to be retried."""
    team_url = getattr(client, "team_url", "")
    if team_url and channel and ts:
        built = f"{team_url}archives/{quote(channel)}/p{ts.replace('.', '')}"
        if thread_ts and thread_ts != ts:
            built += f"?thread_ts={quote(thread_ts)}&cid={quote(channel)}"
        return built
    try:
        reply = await client.chat_getPermalink(channel=channel, message_ts=ts)
    except SlackApiError as exc:
        if is_transient(exc):
            raise
        log.warning("chat.getPermalink %s/%s failed: %s", channel, ts, error_code(exc))
        return None
    link = reply.get("permalink")
    return str(link) if link else None


async def ephemeral(client: AsyncWebClient, channel: str, user: str, text: str, thread_ts: str | None = None,
                    blocks: list[dict[str, Any]] | None = None) -> None:
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts, blocks=blocks)
    except SlackApiError as exc:  # best effort: the user may have left, the channel may be gone
        log.warning("chat.postEphemeral to %s in %s failed: %s", user, channel, error_code(exc) or exc)


async def react(client: AsyncWebClient, channel: str, ts: str, name: str, *, add: bool) -> None:
    try:
        if add:
            await client.reactions_add(channel=channel, timestamp=ts, name=name)
        else:
            await client.reactions_remove(channel=channel, timestamp=ts, name=name)
    except SlackApiError as exc:
        if error_code(exc) not in HARMLESS_ERRORS:
            raise


async def user_groups(client: AsyncWebClient, state: SlackState, user: str, groups: set[str]) -> list[str]:
    """The configured approver groups ``user`` belongs to (members cached briefly in Redis). A lookup that
    fails counts as "not a member": refusing a click is safe, approving on a guess is not."""
    member_of = []
    for group in sorted(groups):
        members = await state.cached_group(group)
        if members is None:
            try:
                reply = await client.usergroups_users_list(usergroup=group)
                members = list(reply.get("users") or [])
                await state.cache_group(group, members)
            except (TimeoutError, SlackApiError, aiohttp.ClientError, OSError) as exc:
                log.warning("usergroups.users.list %s failed: %s", group, error_code(exc) or exc)
                continue
        if user in members:
            member_of.append(group)
    return member_of
