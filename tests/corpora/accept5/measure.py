"""Run the accept5 corpora through the real ``fisk-chatops exec`` and say what survived or changed.

Cases are batched into outputs well under the 64 KiB cap (a blank line and a new prompt, ``$ clear``, between
two cases), so the whole check costs a handful of ``exec`` processes; ``--alone`` runs each leak case in an
``exec`` of its own instead (slow: the ground truth the batches are compared with).

    PYTHONPATH=. python -m tests.corpora.accept5.measure [--alone]
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
from tests.corpora.accept5.cards import CARD_CASES, CardCase, invisible_characters
from tests.corpora.accept5.leaks import LEAK_CASES
from tests.corpora.accept5.values import LeakCase
from tests.support.exec_printing import exec_printing

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[1] / "fixtures" / "fisk"
BENIGN_DIR = HERE / "benign"
DENSE_MARKER = "[REDACTED:dense_candidates]"
BATCH_BYTES = 8_000  # larger batches of these secret-dense cases draw the density budget's marker (12_000 did, leaks14)


def exec_outputs(datas: Sequence[bytes], workers: int = 2) -> list[str]:
    """The sanitized ``output`` of one ``fisk-chatops exec`` call per item (two at a time: the machine has two
    cores); each item must fit under the cap."""
    def one(data: bytes) -> str:
        with tempfile.TemporaryDirectory(prefix="accept5-") as tmp:
            return str(exec_printing(Path(tmp), FIXTURES, data)["output"])

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, datas))


def separator(name: str) -> str:
    """A new shell prompt before each case: what a tool printed after an echoed ``$ cat ~/.aws/credentials`` is
    that file's content until the next prompt, so without one a case would be judged as part of the last."""
    return f"\n$ clear  # accept5 case {name}\n"


def batches(cases: Iterable[LeakCase], limit: int = BATCH_BYTES) -> list[list[LeakCase]]:
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
    """``kind:whole`` / ``kind:partly`` for each of the case's secrets found in ``output``."""
    found = []
    for secret in case.secrets:
        how = secret.survives_in(output)
        if how:
            found.append(f"{secret.kind}:{how}")
    return found


def leaks_batched(cases: Sequence[LeakCase] | None = None) -> dict[str, list[str]]:
    """Case name -> the secrets of it that survived, for the cases where one did (batched exec calls)."""
    groups = batches(cases if cases is not None else LEAK_CASES.values())
    outputs = exec_outputs([batch_text(g).encode() for g in groups])
    leaked: dict[str, list[str]] = {}
    for group, output in zip(groups, outputs, strict=True):
        # a batch whose secrets drew a dense_candidates marker would hide its neighbours' leaks: each case must be
        # judged as it is judged alone (``--alone`` gives the same cases)
        assert DENSE_MARKER not in output, f"batch from {group[0].name} drew {DENSE_MARKER}: make BATCH_BYTES smaller"
        for case in group:
            found = survivors(case, output)
            if found:
                leaked[case.name] = found
    return leaked


def leaks_alone(cases: Sequence[LeakCase]) -> dict[str, list[str]]:
    outputs = exec_outputs([c.text.encode() for c in cases])
    return {c.name: found for c, o in zip(cases, outputs, strict=True) if (found := survivors(c, o))}


def benign_files() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(BENIGN_DIR.glob("*.txt"))}


def benign_groups(limit: int = 24_000) -> list[list[str]]:
    """The benign files in groups printed as one output each (an on-call session's worth, under the cap)."""
    groups: list[list[str]] = [[]]
    size = 0
    for name, text in benign_files().items():
        if groups[-1] and size + len(text) > limit:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += len(text)
    return groups


def benign_changes() -> dict[str, tuple[str, str]]:
    """``file:line`` -> (line in, line out) for every ordinary line that did not come out byte-identical."""
    files = benign_files()
    groups = benign_groups()
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


WARNING_WORDS = "invisible or control characters"


def card_of(case: CardCase) -> tuple[str, list[dict[str, Any]]]:
    """The awaiting card the Slack role posts for a call proposing ``case.argv`` (the real ``render_card``)."""
    now = datetime.now(UTC)
    record = CallRecord(id=f"c-{case.name}", conversation="C0ACME:1764660000.000100", tool="run", app="opsctl",
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
    """What is wrong with the card of ``case``: a secret shown, an invisible character shown raw, no warning
    for an argv holding one, or no redaction marker for an argv holding a secret."""
    text, blocks = card_of(case)
    shown = "\n".join([text, *_strings(blocks)])
    failures = [f"secret {s.kind} {how}" for s in case.secrets if (how := s.survives_in(shown))]
    raw = invisible_characters(shown)
    if raw:
        failures.append(f"raw invisible {' '.join(sorted(set(raw)))}")
    if case.invisible and WARNING_WORDS not in shown:
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
    if args.cards:
        for name, found in cards_failing().items():
            print(f"  CARD {name}: {'; '.join(found)}")
        return
    cases = list(LEAK_CASES.values())
    leaked = leaks_alone(cases) if args.alone else leaks_batched(cases)
    secrets = sum(len(c.secrets) for c in cases)
    survived = sum(map(len, leaked.values()))
    print(f"leak cases {len(cases)}, secrets {secrets}; survived {survived} in {len(leaked)} cases")
    for name, found in sorted(leaked.items()):
        print(f"  LEAK {LEAK_CASES[name].family:8} {name}: {', '.join(found)}")
    lines = sum(len(t.splitlines()) for t in benign_files().values())
    changes = benign_changes()
    print(f"benign files {len(benign_files())}, lines {lines}; changed {len(changes)}")
    for where, (before, after) in changes.items():
        print(f"  CHANGED {where}: {before!r} -> {after!r}")
    failing = cards_failing()
    print(f"cards {len(CARD_CASES)}; failing {len(failing)}")
    for name, found in failing.items():
        print(f"  CARD {name}: {'; '.join(found)}")


if __name__ == "__main__":
    main()
