"""What this process last showed on each call's card, so a card update that would change nothing is not sent.

A call's card is updated by several writers of one slack process: the click's handler shows the decision at once,
then the poster shows the lifecycle's progress entries (approved, running: the approval's own script writes both)
from the same record. Each sent the same card again: one ``chat.update`` of every approved call (a Tier 3 method,
paced per workspace) and its CPU, for nothing.

``CardsShown.unchanged`` says whether the card shows exactly what is about to be sent, as far as this process
knows: its last update of that card was accepted by Slack with the same text and blocks, and no other update of
that card by this process overlapped it (two updates in flight at once may land in either order, so after an
overlap what the card shows is unknown until the next update that had it alone). Another replica's update is not
seen here: that writer reads the call back after its own update and corrects an older state it may have shown
(``interactions.refresh_card``), as before. What another replica showed since can still differ when a Redis
failover took the call back to the state this process showed last (the unconfirmed approvals' watch re-renders
such cards, ``unconfirmed.py``), so the memory is trusted for ``TRUST_SECONDS`` only: the duplicate it saves comes
milliseconds after the first update. Bounded: the least recently shown cards are forgotten first.

The two writers are often a few hundred microseconds apart, the second rendering while the first's update is on
its way: ``same_in_flight`` then waits for that update and sends nothing when it landed alone.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

CARDS_KEPT = 2048
TRUST_SECONDS = 10.0

Card = tuple[str, str]  # (channel, ts)
Shown = tuple[str, list[dict[str, Any]], float]  # (fallback text, blocks, when Slack accepted them)


class _Flight:
    """One update on its way: its content, and the future its waiters share (made by the first one)."""

    __slots__ = ("content", "done")

    def __init__(self, content: tuple[str, list[dict[str, Any]]]) -> None:
        self.content = content
        self.done: asyncio.Future[bool] | None = None


class CardsShown:
    def __init__(self, kept: int = CARDS_KEPT, trust_seconds: float = TRUST_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.kept, self.trust_seconds, self.clock = kept, trust_seconds, clock
        self._shown: OrderedDict[Card, Shown] = OrderedDict()
        self._sending: dict[Card, int] = {}  # card -> its updates in flight now
        self._overlapped: set[Card] = set()  # cards two updates were in flight for at once
        self._flights: dict[Card, _Flight] = {}  # card -> the update of it started last, while on its way

    def unchanged(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> bool:
        """The card shows ``text`` and ``blocks`` already (this process's last update of it, not overlapped, less
        than ``trust_seconds`` ago)."""
        card = (channel, ts)
        shown = self._shown.get(card)
        return (shown is not None and card not in self._sending and shown[:2] == (text, blocks)
                and self.clock() - shown[2] < self.trust_seconds)

    async def same_in_flight(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> bool:
        """An update of the card with exactly this content is on its way: wait for it; True when Slack accepted
        it and no other update of the card overlapped it (the card shows it), False otherwise (send it)."""
        flight = self._flights.get((channel, ts))
        if flight is None or flight.content != (text, blocks):
            return False
        if flight.done is None:
            flight.done = asyncio.get_running_loop().create_future()
        return await asyncio.shield(flight.done)

    @contextmanager
    def sending(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> Iterator[None]:
        """Around one ``chat.update`` of the card: remembered as shown once Slack accepted it, unless another
        update of the card was in flight meanwhile; forgotten when the update fails (it may have landed)."""
        card = (channel, ts)
        self._shown.pop(card, None)
        if self._sending.get(card):
            self._overlapped.add(card)
        self._sending[card] = self._sending.get(card, 0) + 1
        flight = self._flights[card] = _Flight((text, blocks))
        accepted = False
        try:
            yield
            accepted = True
        finally:
            left = self._sending.pop(card) - 1
            if left:
                self._sending[card] = left
            shown = accepted and card not in self._overlapped
            if not left:
                self._overlapped.discard(card)
            if shown:
                self._shown[card] = (text, blocks, self.clock())
                while len(self._shown) > self.kept:
                    self._shown.popitem(last=False)
            if self._flights.get(card) is flight:
                del self._flights[card]
            if flight.done is not None and not flight.done.done():
                flight.done.set_result(shown)
