"""What is wrong with the approval card the Slack role posts for a proposed argv (the real ``render_card``): the
card check every acceptance round's corpus of card cases goes through, so the rounds cannot drift apart."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, hash_argv
from bot.slack.cards import render_card
from tests.corpora.exec_harness import CorpusSecret

WARNING_WORDS = "invisible or control characters"


def card_of(name: str, argv: Sequence[str], conversation: str) -> tuple[str, list[dict[str, Any]]]:
    """The awaiting card the Slack role posts for a call proposing ``argv``."""
    now = datetime.now(UTC)
    record = CallRecord(id=f"c-{name}", conversation=conversation, tool="run", app="opsctl",
                        arguments=json.dumps({"argv": list(argv)}), argv=list(argv),
                        argv_hash=hash_argv(argv), requester="U0ONCALL", state=CallState.awaiting_approval,
                        created_at=now, expires_at=now + timedelta(minutes=15), updated_at=now)
    return render_card(record, ApprovalPolicy())


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def card_failures(card: tuple[str, list[dict[str, Any]]], secrets: Iterable[CorpusSecret], needs_warning: bool,
                  invisible_characters: Callable[[str], list[str]]) -> list[str]:
    """What is wrong with ``card``: a secret shown, an invisible character shown raw (as the round's
    ``invisible_characters`` sees them), no warning where ``needs_warning``, or no redaction marker."""
    text, blocks = card
    shown = "\n".join([text, *_strings(blocks)])
    failures = [f"secret {s.kind} {how}" for s in secrets if (how := s.survives_in(shown))]
    raw = invisible_characters(shown)
    if raw:
        failures.append(f"raw invisible {' '.join(sorted(set(raw)))}")
    if needs_warning and WARNING_WORDS not in shown:
        failures.append("no invisible-character warning")
    if "[REDACTED" not in shown:
        failures.append("no redaction marker")
    return failures


def print_cards(total: int, failing: Mapping[str, list[str]]) -> None:
    print(f"cards {total}; failing {len(failing)}")
    for name, found in failing.items():
        print(f"  CARD {name}: {'; '.join(found)}")
