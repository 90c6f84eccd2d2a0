"""The intake: a Slack request that asks for work is written to a Redis stream BEFORE Slack is answered.

Slack is told "got it" (HTTP 200, or the Socket Mode ack) only once the request is durably in Redis; all the work
after that (posting the request, opening the thread, handing it to the agent, deciding a click) is done by
``IntakeWorker`` from the recorded entry, retried until it succeeds, and acknowledged in the stream only then.
So an acknowledged request is never lost: not by a Redis hiccup, a Slack outage after the ack, or a crash.

If the write cannot be made (Redis down, or no free connection within ``RECORD_TIMEOUT_SECONDS``) Slack gets a
refusal it understands: events and clicks a 503 (Slack retries events; a click shows as failed), slash commands
(which Slack never retries) a 200 with an ephemeral "could not start, please try again"; a refused click's person
also gets a note only they see, through the click's response_url, to click again (nothing was changed).

What the user is told is settled, never guessed. A deadline that passes while the script is on its way (sent, no
reply yet: the bot starved of CPU, a stalled Redis) says nothing about whether Redis ran it. So the attempt is
settled by a second script (``_SETTLE``, within ``SETTLE_TIMEOUT_SECONDS``, still inside Slack's 3 s): if the
record landed, the request was recorded and is acknowledged as usual; if not, the attempt key is marked void, so a
record that reaches Redis later refuses itself, and only then is the user told "Nothing was started". When even
the settling fails, the user is told the truth: it could not be confirmed, look before asking again (an event is
still answered 503: Slack's retry carries the same ``event_id``, which the record drops if the first one landed).
A deadline that passes while waiting for a connection (nothing sent) needs no settling.

Recording is ONE Lua script in one hash slot (``{intake}``): answer a re-sent attempt with its entry, refuse a
replayed signature, drop a retried delivery of an event already recorded (``event_id``), then XADD. Keys (prefix
``fc:slack``):

* ``<p>:{intake}:requests``: the stream (fields ``kind`` = command | event | action | view, ``body`` = JSON);
* ``<p>:sig:{intake}:<signature>``: a signed HTTP request seen within the replay window (every signed request,
  whether it asks for work or not);
* ``<p>:{intake}:event:<event_id>``: an event recorded within ``event_dedupe_seconds``;
* ``<p>:{intake}:attempt:<uuid>``: the entry one ``record`` call made (a minute), for redis-py's re-sends, or
  ``void`` (``VOID_MEMORY_SECONDS``) once an unanswered attempt was settled as not recorded.
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
# The rate-limit check and the record share this deadline (they used to get it each: 4 s, past Slack's 3); settling
# an unanswered record gets SETTLE_TIMEOUT_SECONDS more, so every answer leaves within 2.75 s.
RECORD_TIMEOUT_SECONDS = ACK_TIMEOUT_SECONDS
SETTLE_TIMEOUT_SECONDS = 0.75
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
COULD_NOT_CONFIRM = (
    "I could not confirm that your request was recorded: a temporary problem on my side. It may still start: "
    "check this channel in a minute before asking again."
)
CLICK_NOT_CONFIRMED = (
    "I could not confirm that your click was recorded: a temporary problem on my side. Look at the card in a "
    "minute before clicking again."
)

_RECORD = r"""
local again = redis.call('GET', KEYS[4])
if again == 'void' then return {0, 'void'} end
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
# Settle an attempt whose reply did not come in time: the entry it made, or (nothing made) mark it void, so the
# record script, should it reach Redis later still (it was sent, perhaps queued behind a stall), refuses to run.
_SETTLE = r"""
local made = redis.call('GET', KEYS[1])
if made then return made end
redis.call('SET', KEYS[1], 'void', 'EX', ARGV[1])
return 'void'
"""
# A void mark outlives any record still in flight by far: redis-py gives up on a connection long before this.
VOID_MEMORY_SECONDS = 3600
SPARE_CLIENTS = 64  # one-connection clients kept for reuse (each holds a connection only while it records)


class IntakeUnavailable(RuntimeError):
    """The request could not be recorded; nothing was started and Slack must be told so."""


class IntakeUnconfirmed(RuntimeError):
    """Whether the request was recorded could not be learned (sent, no answer, and settling failed too): it may
    still run, so the user must not be told that nothing was started."""


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
        self._settle_script = redis.register_script(_SETTLE)
        self._spare_clients: list[Redis] = []

    async def record(self, kind: RequestKind, body: dict[str, Any], *, signature: str = "", event_id: str = "",
                     timeout: float = RECORD_TIMEOUT_SECONDS) -> Recorded:
        """Write the request (one script) within ``timeout``. Raises ``IntakeUnavailable`` when it was not recorded
        (settled: nothing will run) and ``IntakeUnconfirmed`` when that could not be learned."""
        attempt = f"{self.prefix}:{{intake}}:attempt:{uuid.uuid4().hex}"
        keys = [self.stream, f"{self.prefix}:sig:{{intake}}:{signature}", f"{self.prefix}:{{intake}}:event:{event_id}",
                attempt]
        args = ["1" if signature else "0", "1" if event_id else "0", REPLAY_WINDOW_SECONDS,
                self.settings.event_dedupe_seconds, STREAM_MAXLEN, kind, json.dumps(body), ATTEMPT_MEMORY_SECONDS]
        # A client bound to one connection, taken from the pool by the command itself: when the deadline passes
        # and the client still has none, nothing was sent (settled). A cluster client has no such handle: its every
        # failure is settled by the second script instead.
        client = self._one_connection_client()
        sent = True
        try:
            # asyncio.timeout, not wait_for: wait_for runs the script in a task of its own, which is sent one turn
            # of the event loop later (whatever else is ready runs first), on the way of every click
            async with asyncio.timeout(timeout):
                ok, value = await self._record(keys=keys, args=args, client=client)
        except (RedisError, OSError, TimeoutError) as exc:
            sent = client is None or client.connection is not None
            failure: BaseException | None = exc
        else:
            failure = None
        finally:
            if client is not None:  # the connection back to the pool first: settling may need it (2 ack connections)
                await client.aclose()
                if len(self._spare_clients) < SPARE_CLIENTS:
                    self._spare_clients.append(client)
        if failure is not None:
            if not sent:
                log.error("slack: could not record a %s request (no Redis connection: %s); nothing was sent", kind,
                          failure)
                raise IntakeUnavailable(str(failure)) from failure
            return await self._settle(kind, attempt, failure)
        if ok:
            return Recorded("recorded", _text(value))
        if _text(value) == "void":  # settled as not recorded by an earlier call with this attempt: cannot happen
            raise IntakeUnavailable("attempt void")
        return Recorded("replay" if _text(value) == "replay" else "duplicate")

    def _one_connection_client(self) -> Redis | None:
        """A client bound to one pooled connection (taken on ``initialize``, released on ``aclose``), reused:
        building one costs ~100 us (redis-py fills a 170-entry callback table), more than the record itself."""
        if not isinstance(self.redis, Redis):
            return None
        return self._spare_clients.pop() if self._spare_clients else self.redis.client()

    async def _settle(self, kind: RequestKind, attempt: str, exc: BaseException) -> Recorded:
        """The record was sent but its reply did not come (or the connection broke): learn what Redis did."""
        try:
            made = _text(await asyncio.wait_for(self._settle_script(keys=[attempt], args=[VOID_MEMORY_SECONDS]),
                                                SETTLE_TIMEOUT_SECONDS))
        except (RedisError, OSError, TimeoutError) as settle_exc:
            log.error("slack: could not confirm whether a %s request was recorded (%s, then %s); the user is told "
                      "so", kind, exc, settle_exc)
            raise IntakeUnconfirmed(str(settle_exc)) from exc
        if made == "void":
            log.error("slack: could not record a %s request (%s); voided, Slack is told to retry", kind, exc)
            raise IntakeUnavailable(str(exc)) from exc
        log.warning("slack: a %s request was recorded, its reply late (%s); acknowledged", kind, exc)
        return Recorded("recorded", made)

    async def first_signature(self, signature: str, timeout: float = RECORD_TIMEOUT_SECONDS) -> bool:
        """The replay check of a request that starts nothing (help, a refusal): True when the signature is new.
        If Redis cannot answer, the request is answered anyway: it starts nothing, so a replay is harmless."""
        key = f"{self.prefix}:sig:{{intake}}:{signature}"
        try:
            return bool(await asyncio.wait_for(self.redis.set(key, "1", nx=True, ex=REPLAY_WINDOW_SECONDS),
                                               timeout))
        except (RedisError, OSError, TimeoutError) as exc:
            log.warning("slack: replay check skipped for a request that starts nothing (%s)", exc)
            return True


def _could_not_start(kind: RequestKind, body: dict[str, Any], *, confirmed: bool = True) -> BoltResponse:
    """Slack's answer to a request not recorded (``confirmed``) or perhaps recorded: the user is told which."""
    if kind == "command":  # Slack never retries a slash command: tell the user, in a reply only they see
        text = COULD_NOT_START if confirmed else COULD_NOT_CONFIRM
        return BoltResponse(status=200, body=json.dumps({"response_type": "ephemeral", "text": text}),
                            headers={"content-type": "application/json"})
    if kind == "action":  # nor a click, and the 503 shows only as a failure mark on the button
        _tell_clicker(body.get("response_url"), CLICK_NOT_RECORDED if confirmed else CLICK_NOT_CONFIRMED)
    # an event is retried by Slack with its event_id, dropped by the record if the first one landed after all
    return BoltResponse(status=503, body="could not record the request; please retry")


#: notes to refused clickers still being sent (a reference, so a task is not collected before it ends)
_CLICKER_NOTES: set[asyncio.Task[None]] = set()
CLICKER_NOTE_TIMEOUT_SECONDS = 10.0


def _tell_clicker(response_url: Any, text: str) -> None:
    """Tell the person whose click was refused, in a note only they see (the click's ``response_url``: Slack's
    own, from a verified request; ``replace_original`` false, so the card stays), that nothing changed and to
    click again. Sent after the 503, in its own task: the refusal is not delayed by it."""
    if not isinstance(response_url, str) or not response_url:
        return
    task = asyncio.create_task(_send_clicker_note(response_url, text))
    _CLICKER_NOTES.add(task)
    task.add_done_callback(_CLICKER_NOTES.discard)


async def _send_clicker_note(response_url: str, text: str) -> None:
    try:
        respond = AsyncRespond(response_url=response_url)
        await asyncio.wait_for(respond(text=text, response_type="ephemeral", replace_original=False),
                               CLICKER_NOTE_TIMEOUT_SECONDS)
    except Exception as exc:  # best effort; the URL itself is a credential for the message: never logged
        log.warning("slack: could not tell a refused clicker to click again (%s)", type(exc).__name__)


async def admit(deps: SlackDeps, intake: Intake, body: dict[str, Any], signature: str,
                context: dict[str, Any]) -> BoltResponse | None:
    """Run before bolt acknowledges: record a request that asks for work, refuse replays, drop retried events.
    Returns the response to send instead of the ack (None: go on and ack). A slash command's ack (help, a
    refusal, a rate-limit note, or None for work) is decided here, once, and left in ``context[COMMAND_ANSWER]``."""
    kind = request_kind(body)
    deadline = asyncio.get_running_loop().time() + RECORD_TIMEOUT_SECONDS  # the check and the record share it
    if kind == "command":
        try:
            context[COMMAND_ANSWER] = answer = await asyncio.wait_for(command_ack(deps, body), RECORD_TIMEOUT_SECONDS)
        except (RedisError, OSError, TimeoutError) as exc:  # the rate limiter lives in Redis
            log.error("slack: could not check a command before recording it (%s)", exc)
            return _could_not_start(kind, body)
        work = answer is None
    else:
        work = kind in ("action", "view") or (kind == "event" and not event_ignored(deps, body))
    if not work:  # within what is left of the deadline too
        left = max(0.0, deadline - asyncio.get_running_loop().time())
        if signature and not await intake.first_signature(signature, left):
            return BoltResponse(status=401, body="replayed request")
        return None
    assert kind is not None
    event_id = str(body.get("event_id") or "") if kind == "event" else ""
    left = max(0.0, deadline - asyncio.get_running_loop().time())
    try:
        recorded = await intake.record(kind, body, signature=signature, event_id=event_id, timeout=left)
    except IntakeUnavailable:
        return _could_not_start(kind, body)
    except IntakeUnconfirmed:
        return _could_not_start(kind, body, confirmed=False)
    if recorded.outcome == "replay":
        return BoltResponse(status=401, body="replayed request")
    if recorded.outcome == "duplicate":
        return BoltResponse(status=200, body="")  # a retried delivery of an event recorded already
    return None
