"""How accept4's corpora fare: secrets through ``fisk-chatops exec`` (a real fisk application prints them), benign
lines through the same command, and approval cards rendered as the Slack role renders them.

Used by ``tests/test_sanitize_accept4.py`` (which pins the results) and runnable on its own to print the counts:
``PYTHONPATH=. python -m tests.corpora.accept4.measure``."""

from __future__ import annotations

import difflib
import json
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.approvals.policy import ApprovalPolicy, ApproverSet
from bot.approvals.records import CallRecord, CallState, hash_argv
from bot.fisk.introspect import parse_application
from bot.sanitize import sanitize_output
from bot.slack.cards import render_card
from bot.tools.catalog import AppSpec, application_tools
from bot.tools.tool import AppSettings, Tool
from tests.corpora.accept4.cards import CARDS, CardCase
from tests.corpora.accept4.case import LEAK_RUN, Case
from tests.corpora.accept4.leaks_apps import APPS
from tests.corpora.accept4.leaks_platform import PLATFORM
from tests.corpora.accept4.leaks_services import SERVICES
from tests.support.exec_printing import exec_printing

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "fisk"
LEAKS: list[Case] = [*PLATFORM, *SERVICES, *APPS]
BENIGN = sorted((HERE / "benign").glob("*.txt"))
_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")
# What does not show visibly in a Slack code block though its category says it is a letter or a symbol.
_BLANK_LOOKING = {"\u3164", "\u115f", "\u1160", "\uffa0", "\u2800", "\u17b4", "\u17b5"}
_INVISIBLE_CATEGORIES = {"Cf", "Mn", "Me", "Cc", "Co", "Cs", "Cn", "Zl", "Zp", "Zs"}


def leaked_runs(secrets: Sequence[str], output: str, context: str) -> list[str]:
    """The first run of ``LEAK_RUN`` characters of each secret found in ``output`` that ``context`` (the input
    with every secret taken out) does not explain."""
    found = []
    for secret in secrets:
        for i in range(len(secret) - LEAK_RUN + 1):
            run = secret[i : i + LEAK_RUN]
            if run in output and run not in context:
                found.append(run)
                break
    return found


def _without_secrets(text: str, secrets: Sequence[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "\0")
    return text


@dataclass(frozen=True)
class LeakResult:
    leaking: dict[str, list[str]]  # case name -> surviving runs
    secrets_total: int
    secrets_survived: int


def sanitized(text: str) -> str:
    """What the runner shows of ``text`` printed by a tool (in process: the function ``exec`` applies)."""
    return sanitize_output(text.encode()).text


def through_exec(tmp: Path, text: str) -> str:
    """What ``fisk-chatops exec`` prints as the output of a tool that printed ``text``."""
    return str(exec_printing(tmp, FIXTURES, text.encode())["output"])


def case_leaks(case_: Case, output: str) -> list[str]:
    """The runs of the case's secrets ``output`` still shows (markers taken out: ``github_token`` is a kind)."""
    return leaked_runs(case_.secrets, _MARKER.sub("\0", output), _without_secrets(case_.text, case_.secrets))


def run_leaks(outputs: Callable[[Case], str], cases: Sequence[Case] = LEAKS) -> LeakResult:
    """Each case alone, as one tool prints it (together, the density guard would withhold whole runs of cases
    and hide what one output on its own leaks)."""
    leaking: dict[str, list[str]] = {}
    for case_ in cases:
        runs = case_leaks(case_, outputs(case_))
        if runs:
            leaking[case_.name] = runs
    return LeakResult(leaking, sum(len(c.secrets) for c in cases), sum(len(r) for r in leaking.values()))


@dataclass(frozen=True)
class BenignResult:
    changed: dict[str, str]  # "file:line" -> the line as it went in
    lines_total: int


def changed_lines(name: str, before: str, after: str) -> dict[str, str]:
    """The input lines that did not come out unchanged, keyed ``name:line``."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    changed = {}
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            for n in range(i1, i2):
                changed[f"{name}:{n + 1}"] = old[n].rstrip("\n")
    return changed


def run_benign(outputs: Callable[[str], str]) -> BenignResult:
    changed: dict[str, str] = {}
    total = 0
    for path in BENIGN:
        data = path.read_text()
        total += len(data.splitlines())
        changed.update(changed_lines(path.name, data, outputs(data)))
    return BenignResult(changed, total)


def _tools() -> dict[tuple[str, ...], Tool]:
    app = parse_application((FIXTURES / "opsctl.introspect.json").read_bytes())
    tools = application_tools(app, AppSpec(AppSettings(binary="/usr/local/bin/opsctl")))
    return {t.command_path: t for t in tools}


def card_record(case_: CardCase, tool: Tool) -> CallRecord:
    """The record of a call awaiting approval whose argv the tool rendered from the model's arguments."""
    argv = tool.render_argv(case_.arguments)
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    return CallRecord(id=f"c-{case_.name}", conversation="slack:C1:1.0", tool=tool.name,
                      app="opsctl", arguments=json.dumps(case_.arguments), argv=argv, argv_hash=hash_argv(argv),
                      requester="U1", state=CallState.awaiting_approval, created_at=now,
                      expires_at=now + timedelta(minutes=30), updated_at=now)


def invisible_characters(text: str) -> list[str]:
    """Characters of ``text`` a reader would not see (newlines between blocks' lines excepted)."""
    return [c for c in text if c not in "\n " and (unicodedata.category(c) in _INVISIBLE_CATEGORIES
                                                   or c in _BLANK_LOOKING or 0xE0000 <= ord(c) <= 0xE0FFF)]


@dataclass(frozen=True)
class CardResult:
    raw_secrets: dict[str, list[str]]
    raw_invisibles: dict[str, list[str]]
    unwarned: list[str]  # cards holding invisible characters without the warning


def run_cards(cases: Sequence[CardCase] = CARDS) -> CardResult:
    tools = _tools()
    policy = ApprovalPolicy(approvers=ApproverSet(users=["UAPP"]))
    secrets: dict[str, list[str]] = {}
    invisibles: dict[str, list[str]] = {}
    unwarned = []
    for case_ in cases:
        record = card_record(case_, tools[case_.command])
        text, blocks = render_card(record, policy)
        shown = text + json.dumps(blocks, ensure_ascii=False)
        runs = leaked_runs(case_.secrets, shown, "")
        if runs:
            secrets[case_.name] = runs
        raw = invisible_characters(shown)
        if raw:
            invisibles[case_.name] = [f"U+{ord(c):04X}" for c in raw]
        if case_.invisibles and "invisible or control characters" not in shown:
            unwarned.append(case_.name)
    return CardResult(secrets, invisibles, unwarned)


def long_mix(size: int, benign: Sequence[Path], leaks: Sequence[Case], every: int) -> bytes:
    """``size`` bytes of the ``benign`` files in turn with a leak case after every ``every`` bytes of them."""
    parts: list[str] = []
    total = since = i = 0
    texts = [p.read_text() for p in benign]
    while total < size:
        chunk = texts[i % len(texts)]
        parts.append(chunk)
        total += len(chunk.encode())
        since += len(chunk.encode())
        if leaks and since >= every:
            parts.append(leaks[i % len(leaks)].text)
            since = 0
        i += 1
    return "".join(parts).encode()[:size]


def time_long_outputs() -> None:
    """Four long realistic outputs through ``sanitize_output``: MB/s of wall time and of CPU (median of 3)."""
    by = {p.name: p for p in BENIGN}
    mixes = {
        "all benign files + a leak case every 4 KiB, 200 KiB": long_mix(200 << 10, BENIGN, LEAKS, 4096),
        "all benign files, 400 KiB": long_mix(400 << 10, BENIGN, [], 0),
        "kubectl+infra + platform leaks every 8 KiB, 700 KiB": long_mix(
            700 << 10, [by["kubectl.txt"], by["infra.txt"]], PLATFORM, 8192),
        "apps/CI+hosts logs + app leaks every 16 KiB, 1 MiB": long_mix(
            1 << 20, [by["apps_ci.txt"], by["hosts.txt"]], APPS, 16384),
    }
    sanitize_output(b"warm up\n")
    for name, data in mixes.items():
        walls, cpus = [], []
        for _ in range(3):
            wall, cpu = time.perf_counter(), time.process_time()
            result = sanitize_output(data)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        wall_s, cpu_s = sorted(walls)[1], sorted(cpus)[1]
        mb = len(data) / 1e6
        print(f"{name}: {len(data)} B, wall {wall_s * 1000:.1f} ms ({mb / wall_s:.1f} MB/s), "
              f"CPU {cpu_s * 1000:.1f} ms ({mb / cpu_s:.1f} MB/s), redactions {result.redactions}")


def main() -> None:
    """Counts in process, or with ``--exec`` through ``fisk-chatops exec`` (each case its own run, two at a
    time), saying where the two differ; ``--long`` times four long realistic outputs instead."""
    if "--long" in sys.argv[1:]:
        time_long_outputs()
        return
    use_exec = "--exec" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        if use_exec:
            texts = [c.text for c in LEAKS] + [p.read_text() for p in BENIGN]
            with ThreadPoolExecutor(2) as pool:
                outs = dict(zip(texts, pool.map(lambda it: through_exec(Path(tmp) / str(it[0]), it[1]),
                                                 enumerate(texts)), strict=True))
            differ = [t[:40] for t in texts if outs[t] != sanitized(t)]
            print(f"through exec: {len(texts)} runs; outputs differing from in-process sanitize_output: {differ}")
        else:
            outs = {}
        leaks = run_leaks(lambda c: outs[c.text] if use_exec else sanitized(c.text))
        benign = run_benign(lambda t: outs[t] if use_exec else sanitized(t))
    cards = run_cards()
    print(f"cases {len(LEAKS)}; secrets survived {leaks.secrets_survived} / {leaks.secrets_total}; "
          f"leaking cases {len(leaks.leaking)}")
    for name, runs in leaks.leaking.items():
        family = next(c.family for c in LEAKS if c.name == name)
        print(f"  LEAK {name} ({family}): {runs}")
    print(f"benign lines changed {len(benign.changed)} / {benign.lines_total}")
    for where, line in benign.changed.items():
        print(f"  CHANGED {where}: {line[:150]}")
    print(f"cards {len(CARDS)}: raw secrets {len(cards.raw_secrets)}, raw invisibles {len(cards.raw_invisibles)}, "
          f"without warning {len(cards.unwarned)}")
    for name, runs in cards.raw_secrets.items():
        print(f"  CARD SECRET {name}: {runs}")
    for name, chars in cards.raw_invisibles.items():
        print(f"  CARD INVISIBLE {name}: {chars}")
    for name in cards.unwarned:
        print(f"  CARD UNWARNED {name}")


if __name__ == "__main__":
    main()
