"""Every card state rendered from records the real store produced: a human sentence per state, no "Expires"
once decided, the right buttons, and results that say which call they belong to."""

from __future__ import annotations

import json

import pytest

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, Proposal
from bot.approvals.store import CallStore
from bot.slack.cards import CardStyle, render_card, render_decision_note, render_result
from tests.slack.conftest import CHANNEL

CONV = f"slack:{CHANNEL}:1700.000001"
POLICY = ApprovalPolicy(approvers={"users": ["UAPP"]})


async def _running(store: CallStore) -> CallRecord:
    (record,) = await store.propose(CONV, [Proposal(tool="service_logs", app="opsctl", arguments="{}",
                                                    argv=["/usr/local/bin/opsctl", "logs", "web"])], POLICY, "UREQ")
    await store.approve(record.id, "UAPP", [], POLICY)
    claimed = await store.claim(record.id, "runner-a")
    assert claimed is not None
    return claimed


def _text(message: tuple[str, list[dict[str, object]]]) -> str:
    return json.dumps(message[1])


async def test_awaiting_card_shows_expiry_and_decided_cards_do_not(store: CallStore) -> None:
    (record,) = await store.propose(CONV, [Proposal(tool="t", app="a", arguments="{}", argv=["a"])], POLICY, "UREQ")
    assert "Expires" in _text(render_card(record, POLICY)) and "Who may approve" in _text(render_card(record, POLICY))
    approved = await store.approve(record.id, "UAPP", [], POLICY)
    text = _text(render_card(approved, POLICY))
    assert "Expires" not in text and "Approved by <@UAPP>" in text and "Waiting for a runner" in text


async def test_running_card_says_since_when_where_and_offers_cancel(store: CallStore) -> None:
    record = await _running(store)
    _, blocks = render_card(record, POLICY)
    text = json.dumps(blocks)
    assert "Running since <!date^" in text and "runner-a" in text
    assert [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]] == ["fisk_cancel"]


async def test_each_end_has_a_human_sentence(store: CallStore) -> None:
    cases = {
        "finished": ({"status": "finished", "exit_code": 0, "duration_seconds": 2.0},
                     "Finished: exit code 0 after 2.0s"),
        "failed": ({"status": "finished", "exit_code": 3},
                   "Finished with exit code 3 (the command reported a failure)"),
        "timed_out": ({"status": "timed_out", "exit_code": -15, "duration_seconds": 60}, "Timed out after 60.0s"),
        "failed_to_start": ({"status": "failed_to_start", "error": "the program opsctl was not found"},
                            "Could not start: the program opsctl was not found. Nothing ran."),
    }
    for _name, (result, sentence) in cases.items():
        record = await _running(store)
        ended = await store.finish(record.id, "runner-a", result)
        card = _text(render_card(ended, POLICY))
        assert sentence in card and "Expires" not in card and "fisk_cancel" not in card
    record = await _running(store)
    interrupted = await store.mark_interrupted(record.id, "heartbeat of runner runner-a stopped")
    assert "Interrupted: outcome unknown, check by hand" in _text(render_card(interrupted, POLICY))
    _text_, blocks, _attach = render_result(interrupted)
    assert "outcome unknown, check by hand" in json.dumps(blocks)


async def test_result_names_tool_short_command_call_and_approver(store: CallStore) -> None:
    record = await _running(store)
    ended = await store.finish(record.id, "runner-a", {"status": "finished", "exit_code": 0, "output": "x",
                                                        "argv_display": ["/usr/local/bin/opsctl", "logs", "web"]})
    await store.set_meta(record.id, slack_card_link="https://t.slack.com/archives/C/p1")
    _text_, blocks, _attach = render_result(await store.get(ended.id))
    text = json.dumps(blocks)
    assert "`service_logs` finished" in text and "`opsctl logs web`" in text and f"call `{record.id}`" in text
    assert "Approved by <@UAPP>" in text and "<https://t.slack.com/archives/C/p1|card>" in text


async def test_denied_note_quotes_the_reason(store: CallStore) -> None:
    (record,) = await store.propose(CONV, [Proposal(tool="t", app="a", arguments="{}", argv=["a"])], POLICY, "UREQ")
    denied = await store.deny(record.id, "UAPP", [], POLICY, reason="not during the <!channel> freeze")
    assert denied.state is CallState.denied
    text = json.dumps(render_decision_note(denied)[1]) + _text(render_card(denied, POLICY))
    assert "Denied by <@UAPP>" in text and "not during the &lt;!channel&gt; freeze" in text
    assert "<!channel>" not in text


def test_size_problems_are_named() -> None:
    from bot.slack.render import section, size_problem

    assert size_problem([section("ok")]) is None
    assert "3000" in (size_problem([section("x" * 3001)]) or "")
    assert "2000" in (size_problem([{"type": "section", "fields": [{"type": "mrkdwn", "text": "x" * 2001}]}]) or "")
    assert "51 blocks" in (size_problem([section("a")] * 51) or "")


def test_a_block_checked_once_is_not_modelled_again_and_keeps_its_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A card is checked at every update and most of its blocks do not change: each block's verdict is
    remembered by its JSON (bounded), so slack_sdk's model is built once per distinct block, and a block that
    does not fit is still refused the second time (by its place in the new message)."""
    from slack_sdk.models.blocks import Block

    from bot.slack import render
    from bot.slack.render import section, size_problem

    parsed: list[object] = []
    real_parse = Block.parse

    def counting(block: object) -> object:
        parsed.append(block)
        return real_parse(block)  # type: ignore[arg-type]

    monkeypatch.setattr(Block, "parse", counting)
    monkeypatch.setattr(render, "_BLOCK_VERDICTS", type(render._BLOCK_VERDICTS)())
    fine, too_long = section("same every update"), section("y" * 3001)
    assert size_problem([fine]) is None and len(parsed) == 1
    assert size_problem([fine, section("status: running")]) is None and len(parsed) == 2
    first = size_problem([fine, too_long]) or ""
    assert first.startswith("block 2:") and "3000" in first and len(parsed) == 3
    again = size_problem([too_long]) or ""
    assert again.startswith("block 1:") and "3000" in again and len(parsed) == 3
    monkeypatch.setattr(render, "BLOCK_VERDICTS_KEPT", 2)
    for n in range(5):
        size_problem([section(f"distinct {n}")])
    assert len(render._BLOCK_VERDICTS) == 2


async def test_the_approve_confirm_dialog_shows_model_text_escaped(store: CallStore) -> None:
    """The "are you sure?" dialog quotes the command line the model wrote: a mention or a link in it must be
    shown as typed, never rendered (a link's label could hide where it goes, a mention would ping)."""
    argv = ["/usr/local/bin/opsctl", "restart", "<!channel>", "<https://evil.example|the runbook>", "a&b"]
    (record,) = await store.propose(CONV, [Proposal(tool="service_restart", app="opsctl", arguments="{}",
                                                    argv=argv, tags=["impact:rw"])], POLICY, "UREQ")
    _, blocks = render_card(record, POLICY, style=CardStyle(confirm_tags=frozenset({"impact:rw"})))
    (approve,) = [e for b in blocks if b["type"] == "actions" for e in b["elements"]  # type: ignore[attr-defined]
                  if e["action_id"] == "fisk_approve"]
    text = approve["confirm"]["text"]
    assert text["type"] == "mrkdwn" and text.get("verbatim") is True
    assert "&lt;!channel&gt;" in text["text"] and "&lt;https://evil.example|the runbook&gt;" in text["text"]
    assert "<!channel>" not in text["text"] and "<https" not in text["text"] and "a&amp;b" in text["text"]
    assert len(text["text"]) <= 300
