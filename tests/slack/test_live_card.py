"""One live card per call, driven through the real bolt app, a real runner and a real long-running subprocess:
every state the card goes through is read back from the recorded chat.postMessage / chat.update calls."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.agent import bus
from bot.approvals.records import CallRecord, CallState
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
from bot.slack.interactions import refresh_card
from tests.slack.conftest import CHANNEL, Harness, wait_for
from tests.support.fake_slack import SlackCall
from tests.support.fisk_app import make_script

THREAD_TS = "1700.000001"
CONV = f"slack:{CHANNEL}:{THREAD_TS}"
Start = Callable[[], Awaitable[None]]


def card_states(harness: Harness, card_ts: str) -> list[str]:
    """The status section of the card after its post and after every update, in order."""
    states = []
    for call in harness.slack.calls:
        if call.method in ("chat.postMessage", "chat.update") and call.status == 200 and call.response.get("ok"):
            if call.response.get("ts") != card_ts:
                continue
            blocks = call.params["blocks"]
            blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
            status = [b["text"]["text"] for b in blocks if b.get("text", {}).get("text", "").startswith(":")]
            states.append(status[-1] if status else "")
    return states


def actions(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


@pytest.fixture
async def runner(harness: Harness, tmp_path: Path) -> AsyncIterator[Path]:
    """A real runner whose executor runs a script that prints, then sleeps for two minutes."""
    started = tmp_path / "started"
    script = make_script(tmp_path, "long", "import time\nprint('tailing logs', flush=True)\n"
                                           f"open({str(started)!r}, 'w').close()\ntime.sleep(120)\n")

    async def execute(record: CallRecord) -> dict[str, Any]:
        result = await run_argv(record.argv, env=scrub_environment().env, cwd=None, timeout=300, kill_grace=5)
        return result.as_json()

    worker = RunnerWorker(harness.redis, CallStore(harness.redis), execute, runner_id="runner-7",
                          heartbeat_interval=0.1, stale_after=3.0, block_seconds=0.05, sweep=False, grace_period=1)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    yield script
    stop.set()
    await asyncio.wait_for(task, 15)


async def _card(harness: Harness, poster: Start, script: Path, requester: str = "UREQ") -> CallRecord:
    record = await harness.propose(CONV, [str(script), "logs", "--follow", "web"], requester=requester)
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}))
    await poster()

    async def posted() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.meta.get("slack_ts") else None

    return await wait_for(posted)


async def _state(harness: Harness, call_id: str, state: CallState) -> bool:
    return (await harness.store.get(call_id)).state is state


async def test_long_running_call_cancelled_from_its_card(harness: Harness, poster: Start, runner: Path) -> None:
    record = await _card(harness, poster, runner)
    card_ts = record.meta["slack_ts"]
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _state(harness, record.id, CallState.running))

    def running_card() -> dict[str, Any] | None:
        message = harness.slack.message(CHANNEL, card_ts)
        return message if "Running since" in json.dumps(message["blocks"]) else None

    message = await wait_for(running_card)
    assert actions(message["blocks"]) == ["fisk_cancel"]
    assert "runner-7" in json.dumps(message["blocks"]) and "Expires" not in json.dumps(message["blocks"])

    await wait_for(lambda: (runner.parent / "started").exists())  # it printed: its output must be kept
    await harness.click(await harness.store.get(record.id), "fisk_cancel", "UREQ")  # the requester may cancel
    await wait_for(lambda: _state(harness, record.id, CallState.cancelled), timeout=15)
    final = await harness.store.get(record.id)
    assert final.cancel is not None and final.cancel.actor == "UREQ"
    assert final.result is not None and final.result["stopped_by"] == "SIGTERM"

    async def linked() -> bool:
        return "slack_result_link" in (await harness.store.get(record.id)).meta and \
            "|result>" in json.dumps(harness.slack.message(CHANNEL, card_ts))

    await wait_for(linked)
    final = await harness.store.get(record.id)
    states = card_states(harness, card_ts)
    firsts = [s.split("\n")[0].split(" · ")[0] for s in states]
    compact = [f for i, f in enumerate(firsts) if i == 0 or f != firsts[i - 1]]
    assert compact == [":raising_hand: *Awaiting approval*", ":white_check_mark: *Approved*", ":gear: *Running*",
                       ":octagonal_sign: *Cancelled*"]
    assert any("Stop requested by <@UREQ>" in s for s in states)
    assert "Cancelled by <@UREQ>" in states[-1] and "stopped with SIGTERM" in states[-1]
    card = harness.slack.message(CHANNEL, card_ts)
    assert actions(card["blocks"]) == []
    results = [m for m in harness.slack.thread(CHANNEL, "1700.000001") if m["ts"] != card_ts]
    (result,) = results
    text = json.dumps(result["blocks"])
    assert "`opsctl` cancelled" not in text and "cancelled" in result["text"]
    assert "`long logs --follow web`" in text and f"call `{record.id}`" in text
    assert "Approved by <@UAPPROVER>" in text and f"<{final.meta['slack_card_link']}|card>" in text
    assert "tailing logs" in text


async def test_cancel_refused_to_a_stranger_and_after_the_end(harness: Harness, poster: Start,
                                                             runner: Path) -> None:
    record = await _card(harness, poster, runner)
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _state(harness, record.id, CallState.running))
    await harness.click(record, "fisk_cancel", "USTRANGER")
    refusal = await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                      if c.params["user"] == "USTRANGER"])
    assert "may not cancel" in refusal[0].params["text"]
    assert (await harness.store.get(record.id)).state is CallState.running
    await harness.click(record, "fisk_cancel", "UAPPROVER")  # an approver may
    await wait_for(lambda: _state(harness, record.id, CallState.cancelled), timeout=15)
    await harness.click(record, "fisk_cancel", "UREQ")
    late = await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                   if c.params["user"] == "UREQ"])
    assert "already ended (cancelled)" in late[0].params["text"]


async def test_risk_labels_confirm_dialog_and_one_mention_per_thread(harness: Harness, poster: Start) -> None:
    first = await harness.propose(CONV, ["opsctl", "status"], tags=["impact:ro"])
    second = await harness.propose(CONV, ["opsctl", "restart", "web"], tags=["impact:rw", "team:web"])
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [first.id, second.id]}))
    await poster()

    async def carded(call_id: str) -> CallRecord | None:
        current = await harness.store.get(call_id)
        return current if current.meta.get("slack_ts") else None

    first = await wait_for(lambda: carded(first.id))
    second = await wait_for(lambda: carded(second.id))
    one = harness.slack.message(CHANNEL, first.meta["slack_ts"])["blocks"]
    two = harness.slack.message(CHANNEL, second.meta["slack_ts"])["blocks"]
    assert "<!subteam^SOPS>" in json.dumps(one) and "<@UAPPROVER>" in json.dumps(one)
    assert "<!subteam^" not in json.dumps(two) and "`SOPS`" in json.dumps(two)  # named, not pinged again
    assert ":large_green_circle: read-only" in json.dumps(one)
    assert ":large_orange_circle: changes things" in json.dumps(two) and "`team:web`" in json.dumps(two)
    approve = next(e for b in two if b["type"] == "actions" for e in b["elements"] if e["action_id"] == "fisk_approve")
    assert approve["confirm"]["confirm"]["text"] == "Approve" and "impact:rw" in approve["confirm"]["text"]["text"]
    plain = next(e for b in one if b["type"] == "actions" for e in b["elements"] if e["action_id"] == "fisk_approve")
    assert "confirm" not in plain
    await harness.click(first, "fisk_approve", "UAPPROVER")  # updates keep the card's own mention choice
    await wait_for(lambda: "Approved by" in json.dumps(harness.slack.message(CHANNEL, first.meta["slack_ts"])))
    assert "<!subteam^SOPS>" not in json.dumps(harness.slack.message(CHANNEL, first.meta["slack_ts"]))  # decided


async def test_pending_lists_links_to_the_cards(harness: Harness, poster: Start) -> None:
    conversation = f"slack:{CHANNEL}:{THREAD_TS}"
    await harness.front.deps.state.open_thread(CHANNEL, THREAD_TS, "UREQ", last_ts=THREAD_TS)
    record = await harness.propose(conversation, ["opsctl", "status"])
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", conversation, {"call_ids": [record.id]}))
    await poster()

    async def carded() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.meta.get("slack_ts") else None

    record = await wait_for(carded)
    await harness.command("pending")
    posts = await wait_for(lambda: [p for ps in harness.slack.response_url_posts.values() for p in ps])
    text = json.dumps(posts[0]["blocks"])
    card_ts = record.meta["slack_ts"].replace(".", "")
    link = f"https://fake-team.slack.com/archives/{CHANNEL}/p{card_ts}?thread_ts={THREAD_TS}&cid={CHANNEL}"
    assert f"<{link}|open its card>" in text and "`opsctl_status`" in text
    # the link is kept: a user repeating /fisk pending costs no chat.getPermalink per card each time (a flood
    # of them would queue the poster's own permalink calls behind it)
    asked = len(harness.slack.calls_to("chat.getPermalink"))
    for _ in range(3):
        await harness.command("pending")
    await wait_for(lambda: len([p for ps in harness.slack.response_url_posts.values() for p in ps]) == 4)
    assert len(harness.slack.calls_to("chat.getPermalink")) == asked
    last = [p for ps in harness.slack.response_url_posts.values() for p in ps][-1]
    assert f"<{link}|open its card>" in json.dumps(last["blocks"])


async def test_a_card_that_cannot_fit_is_refused_in_words(harness: Harness, poster: Start) -> None:
    """300 approvers make the "who may approve" field longer than Slack takes: the card is not cut down to
    fit; the call is closed (the model hears it was not run) and the thread says why."""
    deps = harness.front.deps
    deps.policy = deps.policy.model_copy(update={"approvers": deps.policy.approvers.model_copy(
        update={"users": [f"U{i:010d}" for i in range(300)]})})
    record = await harness.propose(CONV, ["opsctl", "status"])
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}))
    await poster()

    async def refused() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.state is CallState.denied and current.meta.get("slack_ts") else None

    final = await wait_for(refused)
    assert final.decision is not None and "does not fit in a Slack message" in final.decision.reason
    (post,) = [c for c in harness.slack.calls_to("chat.postMessage") if c.status == 200]
    assert "cannot be shown for approval" in post.params["text"] and "It was not run" in post.params["text"]
    assert "field is longer than 2000" in post.params["text"]
    await asyncio.sleep(0.3)
    assert not harness.slack.calls_to("chat.update")  # the refusal stays; no oversized update is attempted


async def _ended_behind_a_late_click(harness: Harness) -> tuple[CallRecord, CallRecord, str]:
    """A call approved (the click's handler holds that record), then claimed and finished before the handler's
    card update: (the approved record, the finished one, the card's ts)."""
    record = await harness.propose(CONV, ["opsctl", "status", "web"])
    await harness.front.poster.post_card(record.id)
    card_ts = (await harness.store.get(record.id)).meta["slack_ts"]
    approved = await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy,
                                           argv_hash=record.argv_hash)
    assert await harness.store.claim(record.id, "runner-1") is not None
    await harness.store.finish(record.id, "runner-1", {"status": "finished", "exit_code": 0, "output": "ok"})
    return approved, await harness.store.get(record.id), card_ts


def _card_updates(harness: Harness, card_ts: str) -> int:
    return len([c for c in harness.slack.calls_to("chat.update") if c.params["ts"] == card_ts])


async def test_a_late_card_update_never_leaves_an_older_state_on_the_card(harness: Harness) -> None:
    """A click's handler updating the card from the record it read ("approved") after the poster already showed
    "finished" with the result (another task or replica) must not leave the card at "approved" with a Cancel
    button: its read back finds the newer state and shows it."""
    approved, finished, card_ts = await _ended_behind_a_late_click(harness)
    await harness.front.poster.handle_completion(finished.id)  # the poster: the result posted, the card updated
    assert (await harness.store.get(finished.id)).meta.get("slack_result_ts")
    await refresh_card(harness.front.deps, approved)  # the click's update, landing late
    shown = harness.slack.message(CHANNEL, card_ts)["blocks"]
    assert "Finished: exit code 0" in card_states(harness, card_ts)[-1]
    assert "|result>" in json.dumps(shown)
    assert "fisk_cancel" not in actions(shown)


async def test_a_late_click_leaves_an_ended_call_to_the_poster_of_its_result(harness: Harness) -> None:
    """The click's update lands after the call ended but before its result is posted: the handler's read back
    sees the end and sends nothing more (an update a burst paid for every other call, overwritten moments later),
    since the poster of the result updates the card after recording it, so after that read: the card ends at
    "finished" with the result's link, in one update after the click's, not two."""
    approved, finished, card_ts = await _ended_behind_a_late_click(harness)
    before = _card_updates(harness, card_ts)
    await refresh_card(harness.front.deps, approved)  # the click's update, landing after the end
    assert _card_updates(harness, card_ts) == before + 1
    assert "Approved by <@UAPPROVER>" in json.dumps(harness.slack.message(CHANNEL, card_ts)["blocks"])
    await harness.front.poster.handle_completion(finished.id)  # the completion entry, read after the click
    assert _card_updates(harness, card_ts) == before + 2
    shown = harness.slack.message(CHANNEL, card_ts)["blocks"]
    assert "Finished: exit code 0" in card_states(harness, card_ts)[-1]
    assert "|result>" in json.dumps(shown)
    assert "fisk_cancel" not in actions(shown)
    # the poster's own read back after a progress update stops there too (a "running" entry handled late)
    running = await harness.propose(CONV, ["opsctl", "status", "db"])
    await harness.front.poster.post_card(running.id)
    running_ts = (await harness.store.get(running.id)).meta["slack_ts"]
    await harness.store.approve(running.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=running.argv_hash)
    claimed = await harness.store.claim(running.id, "runner-1")
    assert claimed is not None
    await harness.store.finish(running.id, "runner-1", {"status": "finished", "exit_code": 0, "output": "ok"})
    sent = _card_updates(harness, running_ts)
    await refresh_card(harness.front.deps, claimed)
    assert _card_updates(harness, running_ts) == sent + 1
    await harness.front.poster.handle_completion(running.id)
    assert "Finished: exit code 0" in card_states(harness, running_ts)[-1]


async def test_a_cancel_click_on_a_call_still_awaiting_approval_says_so(harness: Harness, poster: Start) -> None:
    """Cancel is shown only once a call is approved; a crafted Cancel on an awaiting card changes nothing and
    must not claim the call "had already ended": it points to Deny."""
    record = await harness.propose(CONV, ["opsctl", "status"])
    await harness.front.poster.post_card(record.id)
    await harness.click(await harness.store.get(record.id), "fisk_cancel", "UREQ")
    told = await wait_for(lambda: [c for c in harness.slack.calls_to("chat.postEphemeral")
                                   if c.params["user"] == "UREQ"])
    assert "already ended" not in told[0].params["text"] and "Deny" in told[0].params["text"]
    assert (await harness.store.get(record.id)).state is CallState.awaiting_approval


async def _progress_handled(harness: Harness) -> bool:
    """The poster has read every progress entry and acknowledged it (handled, or known to need nothing)."""
    keys = harness.store.keys
    for shard in keys.all_shards():
        stream = keys.progress_stream(shard)
        last = await harness.redis.xrevrange(stream, count=1)
        if not last:
            continue
        groups = {g["name"]: g for g in await harness.redis.xinfo_groups(stream)}
        group = groups.get(b"slack")
        if group is None or group["last-delivered-id"] != last[0][0] or group["pending"]:
            return False
    return True


async def test_an_update_that_would_change_nothing_on_the_card_is_not_sent(harness: Harness, poster: Start) -> None:
    """The click's handler shows the approval on the card at once; the poster then reads the approval's progress
    entry and renders the same card from the same record: it is not sent again (a chat.update per approved
    call, a Tier 3 method, for nothing). A state the card does not show yet is still sent."""
    record = await harness.propose(CONV, ["opsctl", "status"])
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}))
    await poster()

    async def carded() -> CallRecord | None:
        current = await harness.store.get(record.id)
        return current if current.meta.get("slack_ts") else None

    record = await wait_for(carded)
    card_ts = record.meta["slack_ts"]
    await harness.click(record, "fisk_approve", "UAPPROVER")
    await wait_for(lambda: _state(harness, record.id, CallState.approved))
    await wait_for(lambda: _progress_handled(harness))
    updates = [c for c in harness.slack.calls_to("chat.update") if c.params["ts"] == card_ts]
    assert len(updates) == 1, [c.params for c in updates]
    assert "Approved by <@UAPPROVER>" in json.dumps(harness.slack.message(CHANNEL, card_ts)["blocks"])
    claimed = await harness.store.claim(record.id, "runner-9")  # a new state: shown
    assert claimed is not None
    await wait_for(lambda: "runner-9" in json.dumps(harness.slack.message(CHANNEL, card_ts)["blocks"]))
    assert len([c for c in harness.slack.calls_to("chat.update") if c.params["ts"] == card_ts]) == 2


async def test_a_call_that_moves_while_its_card_is_posted_is_shown_as_it_is_now(harness: Harness) -> None:
    """The card is rendered "awaiting approval", and the call is approved while Slack has not answered the post
    yet (a fast auto-approval, a sweeper): the poster looks at the call's state after posting and updates the
    card to the newer state; a call that did not move gets no update."""
    still = await harness.propose(CONV, ["opsctl", "status", "db"])
    await harness.front.poster.post_card(still.id)
    assert not harness.slack.calls_to("chat.update")
    record = await harness.propose(CONV, ["opsctl", "status", "web"])
    held, release = threading.Event(), threading.Event()

    def post(call: SlackCall) -> dict[str, Any]:
        held.set()
        release.wait(10)  # this request's own server thread: the poster waits for Slack's answer meanwhile
        return harness.slack._api_chat_postMessage(call.params)

    harness.slack.on("chat.postMessage", post)
    posting = asyncio.create_task(harness.front.poster.post_card(record.id))
    assert await asyncio.to_thread(held.wait, 10)
    await harness.store.approve(record.id, "UAPPROVER", [], harness.front.deps.policy, argv_hash=record.argv_hash)
    release.set()
    await posting
    card_ts = (await harness.store.get(record.id)).meta["slack_ts"]
    assert "Approved by <@UAPPROVER>" in json.dumps(harness.slack.message(CHANNEL, card_ts)["blocks"])
    assert [c.params["ts"] for c in harness.slack.calls_to("chat.update")] == [card_ts]
