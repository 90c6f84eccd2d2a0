"""Cards of approvals no Redis replica has confirmed yet (``redis.durability``): they say so, and they are put
back to "awaiting" when a failover lost the approval, without anyone clicking.

A click whose approve transition was not confirmed by a replica (``NotDurable``) marks the call
(``meta:slack_unconfirmed`` = the clicker), so every render of its card says "not yet confirmed by a replica", and
registers it here. The mark is written to the primary like the approval: a failover that loses the approval loses
the mark with it, and the card rendered from the new primary is the awaiting one, with its buttons. Nothing posts
an event for a write that vanished, though, so the slack role re-reads each registered call every
``PERIOD_SECONDS`` (one read per unconfirmed approval: they are rare) and re-renders the card of one whose
approval is gone. A confirmation (the clicker's Confirm, which waits for the replica again) clears the mark; a
claim moves the call on (the claim's own wait covers the approval before it), and the poster shows that.

A denial no replica confirmed is watched the same way (``watch_denial``): it has no mark (a denied card has no
buttons to keep), so it is re-read for ``DENIAL_WATCH_SECONDS``; if a failover lost it the call is awaiting
again, and its card gets Approve / Deny back (the denier was told to deny it again if it is offered) instead of
staying "Denied" while the call quietly expires.

The registry is the clicking process's memory: with several slack replicas the one that handled the click
watches it; if that process dies within the window, the card is corrected at the call's next transition only."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from slack_sdk.errors import SlackApiError

from bot.approvals.records import CallRecord, CallState
from bot.slack import client as api
from bot.slack.retry import pause

if TYPE_CHECKING:
    from bot.slack.interactions import SlackDeps

log = logging.getLogger(__name__)

MARK = "slack_unconfirmed"  # record meta: the user whose approval no replica has confirmed yet
PERIOD_SECONDS = 1.0
MAX_WATCHED = 10_000  # a bound on memory if a replica stays away for long: the oldest are dropped first
#: how long a denial no replica confirmed is re-read: past a failover's detection and election (Sentinel's default
#: down-after-milliseconds is 30 s) with room for the slack role to reach the new primary
DENIAL_WATCH_SECONDS = 300.0


def unconfirmed_approver(record: CallRecord) -> str | None:
    """The approver whose approval is on the primary only, as far as the bot knows (None: none is)."""
    user = record.meta.get(MARK) or ""
    if record.state not in (CallState.awaiting_approval, CallState.approved) or not user:
        return None
    return user if any(a.user == user for a in record.approvals) else None


class UnconfirmedApprovals:
    """The calls whose cards this process marked unconfirmed: call id -> the approver."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.watched: dict[str, str] = {}
        self.denials: dict[str, float] = {}  # call id -> until when its unconfirmed denial is re-read
        self.clock = clock

    def watch(self, call_id: str, user: str) -> None:
        self.watched.pop(call_id, None)
        self.watched[call_id] = user
        while len(self.watched) > MAX_WATCHED:
            del self.watched[next(iter(self.watched))]

    def watch_denial(self, call_id: str, seconds: float = DENIAL_WATCH_SECONDS) -> None:
        """A denial is on the primary only: re-read the call for ``seconds`` in case a failover loses it."""
        self.denials.pop(call_id, None)
        self.denials[call_id] = self.clock() + seconds
        while len(self.denials) > MAX_WATCHED:
            del self.denials[next(iter(self.denials))]

    def watching(self) -> bool:
        return bool(self.watched or self.denials)


async def mark_unconfirmed(deps: SlackDeps, call_id: str, user: str) -> None:
    """The click's approval is on the primary only: mark it on the record (the card shows it) and watch it."""
    deps.unconfirmed.watch(call_id, user)
    await deps.store.set_meta(call_id, **{MARK: user})


async def clear_unconfirmed(deps: SlackDeps, record: CallRecord, user: str) -> CallRecord:
    """A replica confirmed ``user``'s approval: the card goes back to the plain approved state."""
    deps.unconfirmed.watched.pop(record.id, None)
    if record.meta.get(MARK) != user:
        return record
    await deps.store.set_meta(record.id, **{MARK: ""})
    return await deps.store.get(record.id)


async def reconcile(deps: SlackDeps) -> int:
    """Re-read each watched call; re-render the card of one whose approval a failover lost (awaiting again, the
    approver gone from its approvals). Returns how many cards were re-rendered."""
    from bot.slack.interactions import refresh_card  # interactions holds the registry: import late

    fixed = 0
    for call_id, user in list(deps.unconfirmed.watched.items()):
        record = await deps.store.find(call_id)
        if record is None:
            deps.unconfirmed.watched.pop(call_id, None)
            continue
        if unconfirmed_approver(record) == user:
            continue  # still on the primary only: keep watching
        if record.state == CallState.awaiting_approval and all(a.user != user for a in record.approvals):
            log.warning("call %s: the approval by %s was lost in a Redis failover; its card awaits approval again",
                        call_id, user, extra={"call_id": call_id})
            shown = await _show_again(deps, record, refresh_card)
            if shown is None:
                continue  # kept: tried again next period
            fixed += shown
        deps.unconfirmed.watched.pop(call_id, None)
    return fixed + await _reconcile_denials(deps, refresh_card)


async def _reconcile_denials(deps: SlackDeps, refresh_card: Callable[..., Any]) -> int:
    """Re-read each watched denial: awaiting again means a failover lost it, and its card offers the buttons again;
    still denied, it is re-read until its watch ends; any other state (expired, ...) has its own card."""
    fixed = 0
    now = deps.unconfirmed.clock()
    for call_id, until in list(deps.unconfirmed.denials.items()):
        record = await deps.store.find(call_id)
        if record is not None and record.state == CallState.denied and now < until:
            continue  # still denied on the primary: a failover could yet lose it
        if record is not None and record.state == CallState.awaiting_approval:
            log.warning("call %s: its denial was lost in a Redis failover; its card awaits a decision again",
                        call_id, extra={"call_id": call_id})
            shown = await _show_again(deps, record, refresh_card)
            if shown is None:
                continue  # kept: tried again next period
            fixed += shown
        deps.unconfirmed.denials.pop(call_id, None)
    return fixed


async def _show_again(deps: SlackDeps, record: CallRecord, refresh_card: Callable[..., Any]) -> bool | None:
    """Re-render the card of a call a failover put back to awaiting: True when shown, False when Slack refused for
    good (logged), None when Slack's refusal was transient and the watch should try again next period."""
    try:
        await refresh_card(deps, record)
    except SlackApiError as exc:
        if api.is_transient(exc):
            return None
        log.error("call %s: its card could not be updated (%s)", record.id, api.error_code(exc))
        return False
    return True


async def watch_unconfirmed(deps: SlackDeps, stop_event: asyncio.Event, period: float = PERIOD_SECONDS) -> None:
    """``reconcile`` every ``period`` until stopped; Redis being away (the failover itself) is "try again"."""
    while not stop_event.is_set():
        if deps.unconfirmed.watching():
            try:
                await reconcile(deps)
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                log.info("unconfirmed approvals: Redis unavailable (%s); retrying", exc)
            except Exception:  # never let the loop die: a lost approval's card would stay wrong
                log.exception("unconfirmed approvals: reconciling failed; retrying")
        await pause(stop_event, period)
