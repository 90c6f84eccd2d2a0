"""The intake: a Slack request that asks for work is written to a Redis stream BEFORE Slack is answered.

Slack is told "got it" (HTTP 200, or the Socket Mode ack) only once the request is durably in Redis; all the work
after that (posting the request, opening the thread, handing it to the agent, deciding a click) is done by
``IntakeWorker`` from the recorded entry, retried until it succeeds, and acknowledged in the stream only then.
So an acknowledged request is never lost: not by a Redis hiccup, a Slack outage after the ack, or a crash.

If the write cannot be made (Redis down, or no free connection within ``RECORD_TIMEOUT_SECONDS``) Slack gets a
refusal it understands: events and clicks a 503 (Slack retries events; a click shows as failed), slash commands
(which Slack never retries) a 200 with an ephemeral "could not start, please try again"; a refused click's person
also gets a note only they see, through the click's response_url, to click again (nothing was changed).

Recording is ONE Lua script in one hash slot (``{intake}``): answer a re-sent attempt with its entry, refuse a
replayed signature, drop a retried delivery of an event already recorded (``event_id``), then XADD. Keys (prefix
``fc:slack``):

* ``<p>:{intake}:requests``: the stream (fields ``kind`` = command | event | action | view, ``body`` = JSON);
* ``<p>:sig:{intake}:<signature>``: a signed HTTP request seen within the replay window (every signed request,
  whether it asks for work or not);
* ``<p>:{intake}:event:<event_id>``: an event recorded within ``event_dedupe_seconds``;
* ``<p>:{intake}:attempt:<uuid>``: the entry one ``record`` call made (a minute), for redis-py's re-sends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from redis.asyncio import Redis
from redis.exceptions import RedisError
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.response import BoltResponse

from bot.redis_pool import ACK_TIMEOUT_SECONDS
from bot.slack.deny import DENY_REASON_VIEW
from bot.slack.interactions import SlackDeps, command_ack, event_ignored
from bot.slack.settings import SlackSettings
from bot.streams import text as _text

log = logging.getLogger(__name__)

RequestKind = Literal["command", "event", "action", "view"]
RECORD_TIMEOUT_SECONDS = ACK_TIMEOUT_SECONDS
# slack_sdk's verifier accepts a timestamp up to 5 minutes away from our clock in EITHER direction, so one signed
# request stays acceptable for 10 minutes from its first possible arrival: remember each signature at least that
# long (plus a minute of margin), or a replay inside the gap would pass.
SIGNATURE_MAX_SKEW_SECONDS = 5 * 60
REPLAY_WINDOW_SECONDS = 2 * SIGNATURE_MAX_SKEW_SECONDS + 60
COMMAND_ANSWER = "fisk_command_answer"  # bolt context key: the slash command's ack, decided once by ``admit``
STREAM_MAXLEN = 100_000
COULD_NOT_START = (
    "I could not start on that: a temporary problem on my side kept me from recording your request. "
    "Nothing was started; please try again in a moment."
)
CLICK_NOT_RECORDED = (
    "I could not record your click: a temporary problem on my side. Nothing was changed; please click again in a "
    "moment."
)

_RECORD = r"""
local again = redis.call('GET', KEYS[4])
if again then return {1, again} end
if ARGV[1] == '1' and not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) then return {0, 'replay'} end
if ARGV[2] == '1' and not redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[4]) then return {0, 'duplicate'} end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', 'kind', ARGV[6], 'body', ARGV[7])
redis.call('SET', KEYS[4], id, 'EX', ARGV[8])
return {1, id}
"""
# redis-py sends a command again on a new connection when the first one broke, also when Redis had run it and only
# the reply was lost. Each ``record`` call carries its own attempt key (``<p>:{intake}:attempt:<uuid>``) naming
# the entry it made, so that second run answers "recorded" instead of finding its own signature (a 401 for a
# request that then ran) or, unsigned, adding the request twice.
ATTEMPT_MEMORY_SECONDS = 60


class IntakeUnavailable(RuntimeError):
    """The request could not be recorded; nothing was started and Slack must be told so."""


@dataclass(frozen=True)
class Recorded:
    """The outcome of ``Intake.record``: ``entry_id`` when recorded, else why not (replay, duplicate)."""

    outcome: Literal["recorded", "replay", "duplicate"]
    entry_id: str = ""


def request_kind(body: dict[str, Any]) -> RequestKind | None:
    """Which recorded kind a Slack payload is (None: nothing to record, e.g. url_verification)."""
    if body.get("command"):
        return "command"
    if body.get("type") == "event_callback":
        return "event"
    if body.get("type") == "block_actions":
        return "action"
    if body.get("type") == "view_submission" and (body.get("view") or {}).get("callback_id") == DENY_REASON_VIEW:
        return "view"
    return None


class Intake:
    def __init__(self, redis: Redis, settings: SlackSettings) -> None:
        self.redis = redis
        self.settings = settings
        self.prefix = settings.key_prefix
        self.stream = f"{self.prefix}:{{intake}}:requests"
        self._record = redis.register_script(_RECORD)

    async def record(self, kind: RequestKind, body: dict[str, Any], *, signature: str = "",
                     event_id: str = "") -> Recorded:
        """Write the request (one script). Raises ``IntakeUnavailable`` when Redis cannot take it in time."""
        keys = [self.stream, f"{self.prefix}:sig:{{intake}}:{signature}",
                f"{self.prefix}:{{intake}}:event:{event_id}", f"{self.prefix}:{{intake}}:attempt:{uuid.uuid4().hex}"]
        args = ["1" if signature else "0", "1" if event_id else "0", REPLAY_WINDOW_SECONDS,
                self.settings.event_dedupe_seconds, STREAM_MAXLEN, kind, json.dumps(body), ATTEMPT_MEMORY_SECONDS]
        try:
            ok, value = await asyncio.wait_for(self._record(keys=keys, args=args), RECORD_TIMEOUT_SECONDS)
        except (RedisError, OSError, TimeoutError) as exc:
            log.error("slack: could not record a %s request (%s); Slack is told to retry", kind, exc)
            raise IntakeUnavailable(str(exc)) from exc
        if ok:
            return Recorded("recorded", _text(value))
        return Recorded("replay" if _text(value) == "replay" else "duplicate")

    async def first_signature(self, signature: str) -> bool:
        """The replay check of a request that starts nothing (help, a refusal): True when the signature is new.
        If Redis cannot answer, the request is answered anyway: it starts nothing, so a replay is harmless."""
        key = f"{self.prefix}:sig:{{intake}}:{signature}"
        try:
            return bool(await asyncio.wait_for(self.redis.set(key, "1", nx=True, ex=REPLAY_WINDOW_SECONDS),
                                               RECORD_TIMEOUT_SECONDS))
        except (RedisError, OSError, TimeoutError) as exc:
            log.warning("slack: replay check skipped for a request that starts nothing (%s)", exc)
            return True


def _could_not_start(kind: RequestKind, body: dict[str, Any]) -> BoltResponse:
    if kind == "command":  # Slack never retries a slash command: tell the user, in a reply only they see
        return BoltResponse(status=200, body=json.dumps({"response_type": "ephemeral", "text": COULD_NOT_START}),
                            headers={"content-type": "application/json"})
    if kind == "action":  # nor a click, and the 503 shows only as a failure mark on the button
        _tell_clicker(body.get("response_url"))
    return BoltResponse(status=503, body="could not record the request; please retry")


#: notes to refused clickers still being sent (a reference, so a task is not collected before it ends)
_CLICKER_NOTES: set[asyncio.Task[None]] = set()
CLICKER_NOTE_TIMEOUT_SECONDS = 10.0


def _tell_clicker(response_url: Any) -> None:
    """Tell the person whose click was refused, in a note only they see (the click's ``response_url``: Slack's
    own, from a verified request; ``replace_original`` false, so the card stays), that nothing changed and to
    click again. Sent after the 503, in its own task: the refusal is not delayed by it."""
    if not isinstance(response_url, str) or not response_url:
        return
    task = asyncio.create_task(_send_clicker_note(response_url))
    _CLICKER_NOTES.add(task)
    task.add_done_callback(_CLICKER_NOTES.discard)


async def _send_clicker_note(response_url: str) -> None:
    try:
        respond = AsyncRespond(response_url=response_url)
        await asyncio.wait_for(respond(text=CLICK_NOT_RECORDED, response_type="ephemeral", replace_original=False),
                               CLICKER_NOTE_TIMEOUT_SECONDS)
    except Exception as exc:  # best effort; the URL itself is a credential for the message: never logged
        log.warning("slack: could not tell a refused clicker to click again (%s)", type(exc).__name__)


async def admit(deps: SlackDeps, intake: Intake, body: dict[str, Any], signature: str,
                context: dict[str, Any]) -> BoltResponse | None:
    """Run before bolt acknowledges: record a request that asks for work, refuse replays, drop retried events.
    Returns the response to send instead of the ack (None: go on and ack). A slash command's ack (help, a
    refusal, a rate-limit note, or None for work) is decided here, once, and left in ``context[COMMAND_ANSWER]``."""
    kind = request_kind(body)
    if kind == "command":
        try:
            context[COMMAND_ANSWER] = answer = await asyncio.wait_for(command_ack(deps, body), RECORD_TIMEOUT_SECONDS)
        except (RedisError, OSError, TimeoutError) as exc:  # the rate limiter lives in Redis
            log.error("slack: could not check a command before recording it (%s)", exc)
            return _could_not_start(kind, body)
        work = answer is None
    else:
        work = kind in ("action", "view") or (kind == "event" and not event_ignored(deps, body))
    if not work:
        if signature and not await intake.first_signature(signature):
            return BoltResponse(status=401, body="replayed request")
        return None
    assert kind is not None
    event_id = str(body.get("event_id") or "") if kind == "event" else ""
    try:
        recorded = await intake.record(kind, body, signature=signature, event_id=event_id)
    except IntakeUnavailable:
        return _could_not_start(kind, body)
    if recorded.outcome == "replay":
        return BoltResponse(status=401, body="replayed request")
    if recorded.outcome == "duplicate":
        return BoltResponse(status=200, body="")  # a retried delivery of an event recorded already
    return None
