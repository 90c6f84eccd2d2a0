"""Where the sanitizer's time goes on realistic tool output: CPU per automaton, first sight against warm.

    python bench/bench_realistic_automata.py [--top 12] [--only NAME ...]

Why this exists: the realistic input of ``bench_sanitize.py`` (access and JSON logs) runs at 55-65 MB/s, while
accept4's long mixes of kubectl, infra, platform, CI and host logs (``tests/corpora/accept4/measure.py --long``)
run at 8-16 MB/s. This bench times each of those mixes twice in one process, the first call on text it has not
seen (RE2 builds the DFA states that text needs, verdict memos are cold) and the median of three calls more
(warm; the very first call of the process also compiles the parsers that ``re`` builds on first use, ~0.3 s),
and prints for the warm calls each automaton's RE2 calls, hits and CPU (its unanchored scan, its anchored
finder match, its ``searched`` check), so that a change can be aimed at what dominates. The automata are timed by
wrapping their RE2 ``Match`` (a few hundred ns a call added to the totals, not to the per-automaton CPU); the
sanitizer's output is not touched. The load average is printed first and last: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_sanitize import realistic  # noqa: E402
from bot.sanitize import automata, sanitize_output  # noqa: E402
from tests.corpora.accept3_long import journalctl, kubectl_describe_pods, terraform_plan  # noqa: E402
from tests.corpora.accept4 import measure  # noqa: E402

# (pass, automaton index, what it is, RE2 entry point) -> [calls, hits, CPU seconds]
Stats = defaultdict[tuple[str, int, str, str], list[float]]


def _label(detectors: tuple[object, ...]) -> str:
    kinds = sorted({str(getattr(d, "kind", "?")) for d in detectors})
    return ",".join(kinds[:3]) + (f",+{len(kinds) - 3}" if len(kinds) > 3 else "")


def _literal_text(literals: tuple[bytes | tuple[bytes, ...], ...]) -> str:
    """The automaton's literals as text, a choice among strings (a tuple) in parentheses."""
    return "|".join(lit.decode(errors="replace") if isinstance(lit, bytes)
                    else "(" + "/".join(part.decode(errors="replace") for part in lit) + ")" for lit in literals)


def _instrument(stats: Stats) -> None:
    """Wrap each pass automaton's RE2 ``Match`` entry points to count calls, hits and CPU."""
    for pass_name, pass_ in (("token", automata.TOKEN_PASS), ("context", automata.CONTEXT_PASS)):
        groups = automata._groups(pass_.detectors)
        for index, (automaton, (group, literals)) in enumerate(zip(pass_.finders, groups, strict=True)):
            what = _label(group) + (f" [{_literal_text(literals)!r}]" if literals else "")
            for attribute in ("_scan", "_verify", "_searched"):
                match = getattr(automaton, attribute)
                if match is None:
                    continue
                key = (pass_name, index, what, attribute.strip("_"))

                def timed(anchor: object, data: bytes, pos: int, length: int,
                          match: Callable[..., tuple[tuple[int, int], ...]] = match,
                          key: tuple[str, int, str, str] = key) -> tuple[tuple[int, int], ...]:
                    start = time.process_time()
                    result = match(anchor, data, pos, length)
                    entry = stats[key]
                    entry[2] += time.process_time() - start
                    entry[0] += 1
                    entry[1] += result[0][0] >= 0
                    return result

                object.__setattr__(automaton, attribute, timed)


def _mixes() -> dict[str, bytes]:
    by = {p.name: p for p in measure.BENIGN}
    return {
        "reference: bench_sanitize.py's realistic input (access + JSON logs), 1 MiB": realistic(1 << 20),
        "all benign files + a leak case every 4 KiB, 200 KiB": measure.long_mix(
            200 << 10, measure.BENIGN, measure.LEAKS, 4096),
        "all benign files, 400 KiB": measure.long_mix(400 << 10, measure.BENIGN, [], 0),
        "kubectl+infra + platform leaks every 8 KiB, 700 KiB": measure.long_mix(
            700 << 10, [by["kubectl.txt"], by["infra.txt"]], measure.PLATFORM, 8192),
        "apps/CI+hosts logs + app leaks every 16 KiB, 1 MiB": measure.long_mix(
            1 << 20, [by["apps_ci.txt"], by["hosts.txt"]], measure.APPS, 16384),
        # accept3's long outputs (``bench_accept3_speed.py``'s realistic rows), 1 MiB each
        "accept3 kubectl describe pods, 1 MiB": kubectl_describe_pods(1 << 20, 1).encode()[: 1 << 20],
        "accept3 journalctl, 1 MiB": journalctl(1 << 20, 1).encode()[: 1 << 20],
        "accept3 terraform plan, 1 MiB": terraform_plan(1 << 20, 1).encode()[: 1 << 20],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=12, help="automata entry points printed per mix, by CPU")
    parser.add_argument("--only", nargs="*", default=(), help="mixes whose name contains one of these")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    stats: Stats = defaultdict(lambda: [0, 0, 0.0])
    _instrument(stats)
    sanitize_output(b"warm up\n")
    for name, data in _mixes().items():
        if args.only and not any(o in name for o in args.only):
            continue
        start = time.process_time()
        sanitize_output(data)
        first = time.process_time() - start
        warm: list[float] = []
        stats.clear()
        for _ in range(3):
            start = time.process_time()
            sanitize_output(data)
            warm.append(time.process_time() - start)
        warm_s, mb = statistics.median(warm), len(data) / 1e6
        in_re2 = sum(entry[2] for entry in stats.values()) / 3
        scanned = {(pass_name, index) for pass_name, index, _, point in stats if point == "scan"}
        hits = sum(entry[1] for (pass_name, index, _, point), entry in stats.items()
                   if point == "scan" or point == "verify" and (pass_name, index) not in scanned)
        print(f"\n{name}: {len(data)} B, {hits / 3 / (len(data) / 1024):.2f} candidate hits per KiB; "
              f"first sight {first * 1000:.1f} ms ({mb / first:.1f} MB/s), warm "
              f"{warm_s * 1000:.1f} ms ({mb / warm_s:.1f} MB/s), of which RE2 {in_re2 * 1000:.1f} ms "
              f"(the rest: Python around the candidates)")
        empty = [entry for entry in stats.values() if entry[0] and not entry[1]]
        print(f"  {len(empty)} RE2 entry points read the text without a hit: "
              f"{sum(entry[2] for entry in empty) / 3 * 1000:.1f} ms of the RE2 time")
        for (pass_name, index, what, entry_point), (calls, hits, cpu) in sorted(
                stats.items(), key=lambda item: -item[1][2])[: args.top]:
            print(f"  {pass_name}[{index}] {entry_point:8s} {calls / 3:6.0f} calls {hits / 3:6.0f} hits "
                  f"{cpu / 3 * 1000:6.2f} ms  {what[:70]}")
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
