"""``CardsShown``: what one process last showed on each card, trusted only when that update had the card alone."""

from __future__ import annotations

import asyncio

import pytest

from bot.slack.shown import CardsShown

BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": ":gear: *Running*", "verbatim": True}}]
OTHER = [{"type": "section", "text": {"type": "mrkdwn", "text": ":white_check_mark: *Finished*", "verbatim": True}}]


def test_an_accepted_update_is_remembered_and_a_different_one_is_not_the_same() -> None:
    shown = CardsShown()
    assert not shown.unchanged("C1", "1.1", "Running", BLOCKS)
    with shown.sending("C1", "1.1", "Running", BLOCKS):
        assert not shown.unchanged("C1", "1.1", "Running", BLOCKS)  # on its way: not known yet
    assert shown.unchanged("C1", "1.1", "Running", [dict(b) for b in BLOCKS])  # equal content, another copy
    assert not shown.unchanged("C1", "1.1", "Finished", OTHER)
    assert not shown.unchanged("C1", "2.2", "Running", BLOCKS)  # another card


def test_overlapping_updates_of_one_card_leave_it_unknown_until_one_has_it_alone() -> None:
    """Two updates in flight at once may land in either order: neither is trusted as what the card shows."""
    shown = CardsShown()
    with shown.sending("C1", "1.1", "Running", BLOCKS), shown.sending("C1", "1.1", "Finished", OTHER):
        pass
    assert not shown.unchanged("C1", "1.1", "Running", BLOCKS)
    assert not shown.unchanged("C1", "1.1", "Finished", OTHER)
    with shown.sending("C1", "1.1", "Finished", OTHER):
        pass
    assert shown.unchanged("C1", "1.1", "Finished", OTHER)


def test_a_failed_update_forgets_what_the_card_showed() -> None:
    shown = CardsShown()
    with shown.sending("C1", "1.1", "Running", BLOCKS):
        pass
    with pytest.raises(RuntimeError), shown.sending("C1", "1.1", "Finished", OTHER):
        raise RuntimeError("slack said no, or did not say")
    assert not shown.unchanged("C1", "1.1", "Running", BLOCKS) and not shown.unchanged("C1", "1.1", "Finished", OTHER)


def test_bounded() -> None:
    shown = CardsShown(kept=2)
    for n in range(3):
        with shown.sending("C1", f"{n}.0", "Running", BLOCKS):
            pass
    assert not shown.unchanged("C1", "0.0", "Running", BLOCKS)
    assert shown.unchanged("C1", "1.0", "Running", BLOCKS) and shown.unchanged("C1", "2.0", "Running", BLOCKS)


def test_trusted_for_a_few_seconds_only() -> None:
    """The duplicate it saves comes milliseconds after the first update; later, another replica or a failover
    may have changed the card, so the update is sent."""
    now = [100.0]
    shown = CardsShown(trust_seconds=10, clock=lambda: now[0])
    with shown.sending("C1", "1.1", "Running", BLOCKS):
        pass
    now[0] += 9.9
    assert shown.unchanged("C1", "1.1", "Running", BLOCKS)
    now[0] += 0.2
    assert not shown.unchanged("C1", "1.1", "Running", BLOCKS)


async def test_a_writer_with_the_same_card_waits_for_the_update_on_its_way_instead_of_sending_it_again() -> None:
    """The click's handler and the poster render the same card a few hundred microseconds apart: the second waits
    for the first's update and sends nothing when Slack accepted it; it sends when that update failed, or when a
    different update of the card overlapped it (what the card shows is then unknown)."""
    shown = CardsShown()
    sent = asyncio.Event()

    async def first(fail: bool = False) -> None:
        with shown.sending("C1", "1.1", "Running", BLOCKS):
            await sent.wait()
            if fail:
                raise RuntimeError("slack said no")

    for fail, overlap, expected in ((False, False, True), (True, False, False), (False, True, False)):
        sent.clear()
        task = asyncio.create_task(first(fail))
        await asyncio.sleep(0)
        assert not await shown.same_in_flight("C1", "1.1", "Finished", OTHER)  # other content: not waited for
        waiting = asyncio.create_task(shown.same_in_flight("C1", "1.1", "Running", BLOCKS))
        await asyncio.sleep(0)
        if overlap:
            with shown.sending("C1", "1.1", "Finished", OTHER):
                pass
        sent.set()
        await asyncio.gather(task, return_exceptions=True)
        assert await waiting is expected
