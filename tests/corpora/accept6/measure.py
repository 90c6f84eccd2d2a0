"""Run the accept6 corpora through the real ``fisk-chatops exec`` and say what survived, changed or failed.

Leak cases are batched into outputs well under the 64 KiB cap, a new shell prompt (``$ clear``) between two cases
so each is judged on its own, and the benign files are printed a few at a time as one output each: the whole
check costs a handful of ``exec`` processes. ``--alone`` runs each leak case in an ``exec`` of its own instead
(slow: the ground truth the batches are compared with). Cards are rendered by the Slack role's ``render_card``.

    PYTHONPATH=. python -m tests.corpora.accept6.measure [--alone] [--cards]
"""

from __future__ import annotations

import argparse
import difflib
import json
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord, CallState, hash_argv
from bot.slack.cards import render_card
from tests.corpora.accept6.benign import benign_files
from tests.corpora.accept6.cards import CARD_CASES, CardCase, invisible_characters
from tests.corpora.accept6.leaks import LEAK_CASES
from tests.corpora.accept6.values import LeakCase
from tests.support.exec_printing import exec_printing

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fisk"
DENSE_MARKER = "[REDACTED:dense_candidates]"
BATCH_BYTES = 16_000  # secret-dense batches much larger than this could draw the density budget's marker
WARNING_WORDS = "invisible or control characters"


def exec_outputs(datas: Sequence[bytes], workers: int = 2) -> list[str]:
    """The sanitized ``output`` of one ``fisk-chatops exec`` call per item (two at a time: two cores)."""
    def one(data: bytes) -> str:
        with tempfile.TemporaryDirectory(prefix="accept6-") as tmp:
            return str(exec_printing(Path(tmp), FIXTURES, data)["output"])

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, datas))


def separator(name: str) -> str:
    return f"\n$ clear  # accept6 case {name}\n"


def interleaved(cases: Iterable[LeakCase]) -> list[LeakCase]:
    """The cases taken from each family in turn, so no batch is made of one secret-dense family alone (an
    on-call session mixes tools too)."""
    by_family: dict[str, list[LeakCase]] = {}
    for case in cases:
        by_family.setdefault(case.family, []).append(case)
    columns = list(by_family.values())
    return [col[i] for i in range(max(map(len, columns), default=0)) for col in columns if i < len(col)]


def batches(cases: Iterable[LeakCase], limit: int = BATCH_BYTES) -> list[list[LeakCase]]:
    cases = interleaved(cases)
    groups: list[list[LeakCase]] = [[]]
    size = 0
    for case in cases:
        if groups[-1] and size + len(case.text) > limit:
            groups.append([])
            size = 0
        groups[-1].append(case)
        size += len(case.text) + 40
    return groups


def batch_text(group: Sequence[LeakCase]) -> str:
    return "".join(separator(c.name) + c.text for c in group)


def survivors(case: LeakCase, output: str) -> list[str]:
    """``kind:whole`` / ``kind:partly`` for each secret of ``case`` found in ``output``."""
    return [f"{s.kind}:{how}" for s in case.secrets if (how := s.survives_in(output))]


def leaks_batched(cases: Sequence[LeakCase] | None = None) -> dict[str, list[str]]:
    """Case name -> its secrets that survived, for the cases where one did (batched exec calls)."""
    groups = batches(cases if cases is not None else LEAK_CASES.values())
    outputs = exec_outputs([batch_text(g).encode() for g in groups])
    leaked: dict[str, list[str]] = {}
    for group, output in zip(groups, outputs, strict=True):
        assert DENSE_MARKER not in output, f"batch from {group[0].name} drew {DENSE_MARKER}: make BATCH_BYTES smaller"
        for case in group:
            if found := survivors(case, output):
                leaked[case.name] = found
    return leaked


def leaks_alone(cases: Sequence[LeakCase]) -> dict[str, list[str]]:
    outputs = exec_outputs([c.text.encode() for c in cases])
    return {c.name: found for c, o in zip(cases, outputs, strict=True) if (found := survivors(c, o))}


def benign_groups(files: dict[str, str], limit: int = 40_000) -> list[list[str]]:
    groups: list[list[str]] = [[]]
    size = 0
    for name, text in files.items():
        if groups[-1] and size + len(text) > limit:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += len(text)
    return groups


def benign_changes() -> dict[str, tuple[str, str]]:
    """``file:line`` -> (line in, line out) for every ordinary line that did not come out byte-identical."""
    files = benign_files()
    groups = benign_groups(files)
    outputs = exec_outputs(["".join(files[n] for n in g).encode() for g in groups])
    changed: dict[str, tuple[str, str]] = {}
    for group, output in zip(groups, outputs, strict=True):
        where = [f"{name}:{i}" for name in group for i in range(1, len(files[name].splitlines()) + 1)]
        before = "".join(files[n] for n in group).splitlines()
        after = output.splitlines()
        if before == after:
            continue
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            outs = after[j1:j2]
            for k in range(i1, max(i2, i1 + 1) if i1 < len(before) else i1):
                changed[where[k]] = (before[k], outs[k - i1] if k - i1 < len(outs) else "")
    return changed


def card_of(case: CardCase) -> tuple[str, list[dict[str, Any]]]:
    """The awaiting card the Slack role posts for a call proposing ``case.argv``."""
    now = datetime.now(UTC)
    record = CallRecord(id=f"c-{case.name}", conversation="C0ACME:1764680000.000100", tool="run", app="opsctl",
                        arguments=json.dumps({"argv": list(case.argv)}), argv=list(case.argv),
                        argv_hash=hash_argv(case.argv), requester="U0ONCALL", state=CallState.awaiting_approval,
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


def card_failures(case: CardCase) -> list[str]:
    """What is wrong with the card of ``case``: a secret shown, an invisible character shown raw, no warning,
    or no redaction marker."""
    text, blocks = card_of(case)
    shown = "\n".join([text, *_strings(blocks)])
    failures = [f"secret {s.kind} {how}" for s in case.secrets if (how := s.survives_in(shown))]
    raw = invisible_characters(shown)
    if raw:
        failures.append(f"raw invisible {' '.join(sorted(set(raw)))}")
    if WARNING_WORDS not in shown:
        failures.append("no invisible-character warning")
    if "[REDACTED" not in shown:
        failures.append("no redaction marker")
    return failures


def cards_failing() -> dict[str, list[str]]:
    return {name: found for name, case in CARD_CASES.items() if (found := card_failures(case))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--alone", action="store_true", help="each leak case in an exec of its own")
    parser.add_argument("--cards", action="store_true", help="only the cards (no exec)")
    args = parser.parse_args()
    failing = cards_failing()
    print(f"cards {len(CARD_CASES)}; failing {len(failing)}")
    for name, found in failing.items():
        print(f"  CARD {name}: {'; '.join(found)}")
    if args.cards:
        return
    cases = list(LEAK_CASES.values())
    leaked = leaks_alone(cases) if args.alone else leaks_batched(cases)
    secrets = sum(len(c.secrets) for c in cases)
    survived = sum(map(len, leaked.values()))
    print(f"leak cases {len(cases)}, secrets {secrets}; survived {survived} in {len(leaked)} cases")
    for name, found in sorted(leaked.items()):
        print(f"  LEAK {LEAK_CASES[name].family:7} {name}: {', '.join(found)}")
    files = benign_files()
    changes = benign_changes()
    lines = sum(len(t.splitlines()) for t in files.values())
    print(f"benign files {len(files)}, lines {lines}; changed {len(changes)}")
    for where, (before, after) in changes.items():
        print(f"  CHANGED {where}: {before!r} -> {after!r}")


if __name__ == "__main__":
    main()
