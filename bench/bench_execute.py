"""Benchmarks for bot/runner (a plain script, not a test). Run: .venv/bin/python bench/bench_execute.py

1. ``--calls``: the whole approved-call path (``execute_approved_call``: catalog lookup, JSON arguments to argv,
   the argv check, the scrubbed environment, spawn, capture, sanitizing and redaction) against a bare
   ``subprocess.run`` of the same argv in the same working directory. The tool is the compiled bench tool
   (``bench/support.py``), which writes 0 B, 4 KiB or 64 KiB of realistic log output. Credential values (Slack,
   Anthropic, Redis) are in this process's environment, as in a runner, so scrubbing and redaction do real
   work. Bare and project runs alternate (which goes first alternates too) so machine noise hits both alike;
   prints medians, p99 and the ratio from this one run, and this process's CPU per call on each side (the
   children's own CPU not counted), which moves far less with the machine's load than wall time does.
2. ``--judge``: what judging a call's argv for a secret's value costs (``bot/sanitize/secret_argv.py``, once per
   call): CPU per argv, each argv new (the judge's memory of command lines missed) and the same argv again.
3. ``--secrets``: the hand-written redactor against detect-secrets' plugins on ~1 MB of log-like text with
   planted secrets; prints time per MB, the ratio, and how many planted secrets each finds. detect-secrets is
   optional (``pip install detect-secrets``); it is only measured when importable.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support import FIXTURE, TOOL, build_tool, median_ms, pct, realistic_output  # noqa: E402
from bot.fisk.digest import file_digest  # noqa: E402
from bot.fisk.introspect import parse_application  # noqa: E402
from bot.runner.binary import BinarySnapshots  # noqa: E402
from bot.runner.call import ChildEnvironments, ExecutionLimits, execute_approved_call  # noqa: E402
from bot.sanitize import build_redactor  # noqa: E402
from bot.sanitize.cap import Captured, sanitize_captured  # noqa: E402
from bot.sanitize.secret_argv import judge_argv  # noqa: E402
from bot.sanitize.withheld import WithheldOutput  # noqa: E402
from bot.tools.catalog import AppSpec, Catalog, build_catalog  # noqa: E402
from bot.tools.tool import AppSettings  # noqa: E402

#: what a runner's environment holds besides the tool's own variables (values are fake but realistic)
CREDENTIALS = {
    "SLACK_BOT_TOKEN": "xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "SLACK_APP_TOKEN": "xapp-" + "1-A0123456789-1234567890123-abcdef0123456789abcdef0123456789",
    "SLACK_SIGNING_SECRET": "0123456789abcdef0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-" + "ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGh",
    "REDIS_URL": "redis://:S3cr3tRedisPassw0rd@redis.internal:6379/0",
}
SIZES = (("0 B", 0), ("4 KiB", 4096), ("64 KiB", 65536))


def _catalog(binary: Path, payload: Path, working_dir: Path | None = None) -> Catalog:
    """The opsctl catalog with the bench tool as its binary (the fixture parsed, no process started); the tool's
    environment names its payload, as an application's ``env`` setting would."""
    model = parse_application(FIXTURE.read_bytes())
    settings = AppSettings(binary=str(binary), env={"BENCH_PAYLOAD": str(payload)},
                           working_dir=str(working_dir) if working_dir is not None else None)
    return build_catalog([AppSpec(settings=settings)], lambda _settings: model)


async def bench_calls(n: int) -> None:
    """Median wall time of execute_approved_call vs subprocess.run for the same argv, per output size."""
    os.environ.update(CREDENTIALS)
    limits = ExecutionLimits()
    environments = ChildEnvironments(limits)  # what a runner builds once at start (bot/roles/workers.py)
    binaries = BinarySnapshots()  # the runner's sealed copies of the binaries (one per binary, reused)
    with tempfile.TemporaryDirectory() as tmp:
        binary = build_tool(Path(tmp) / "bin")

        print(f"calls: N={n} of each kind per size, interleaved; tool {TOOL} (compiled C, writes $BENCH_PAYLOAD)")
        print(f"{'output':>8} {'bare p50':>9} {'ours p50':>9} {'bare p99':>9} {'ours p99':>9} {'ratio':>6} "
              f"{'overhead':>10} {'bare CPU':>9} {'ours CPU':>9}")
        cases = [(label, size, False) for label, size in SIZES] + [("0 B, cwd", 0, True)]
        for label, size, with_cwd in cases:
            workdir = Path(tmp) / f"w{size}{'cwd' if with_cwd else ''}"
            workdir.mkdir()
            payload = workdir / "payload"
            payload.write_bytes(realistic_output(size))
            # "cwd": the application sets working_dir, so the runner starts it with Popen (posix_spawn cannot chdir)
            catalog = _catalog(binary, payload, workdir if with_cwd else None)
            tool = catalog.get(TOOL)
            assert tool is not None, TOOL
            argv = tool.render_argv("{}")
            digest = file_digest(binary)  # what a verified decision carries

            def bare(argv: list[str] = argv, workdir: Path | None = workdir if with_cwd else None,
                     size: int = size) -> None:
                done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, cwd=workdir, check=False)
                assert done.returncode == 0 and len(done.stdout) == size

            async def ours(argv: list[str] = argv, catalog: Catalog = catalog, size: int = size,
                           digest: str = digest) -> None:
                result = await execute_approved_call(catalog, TOOL, "{}", argv, limits, binaries, digest, environments)
                assert result.status == "finished" and result.exit_code == 0, result
                assert result.total_bytes == size, result.total_bytes

            os.environ["BENCH_PAYLOAD"] = str(payload)  # bare runs inherit the environment (env=None)
            for _ in range(10):  # warm up both paths (imports, regex compilation, page cache)
                bare()
                await ours()
            bare_times: list[float] = []
            our_times: list[float] = []
            cpu = [0.0, 0.0]  # this process's CPU seconds: bare, ours
            for i in range(n):
                for kind in ((0, 1) if i % 2 == 0 else (1, 0)):
                    c0, t0 = time.process_time(), time.perf_counter()
                    if kind == 0:
                        bare()
                        bare_times.append(time.perf_counter() - t0)
                    else:
                        await ours()
                        our_times.append(time.perf_counter() - t0)
                    cpu[kind] += time.process_time() - c0
            mb, mo = median_ms(bare_times), median_ms(our_times)
            print(f"{label:>8} {mb:8.3f}ms {mo:8.3f}ms {pct(bare_times, 99) * 1e3:8.3f}ms "
                  f"{pct(our_times, 99) * 1e3:8.3f}ms {mo / mb:6.2f} {mo - mb:+.3f} ms "
                  f"{cpu[0] / n * 1e3:7.3f}ms {cpu[1] / n * 1e3:7.3f}ms")
    print("  (ratio = median of execute_approved_call / median of subprocess.run, same run; bare runs inherit "
          "the environment, ours scrubs it and redacts the removed values; CPU = this process's user + system "
          "time per call, mean)")


def _corpus() -> tuple[str, list[str]]:
    """About 1 MB of log lines with a planted secret every 50 lines; returns the text and the secrets."""
    planted = [
        "xox" + "b-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "ghp" + "_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AKIA" + "IOSFODNN7EXAMPLE",
        "sk-" + "ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGh",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36P",
        "gl" + "pat-AbCdEfGhIjKlMnOpQrSt",
        "S3cr3tPassw0rd",  # in a URL
        "hunter2hunter2",  # in password=
    ]
    carriers = [
        "token {}",
        "cloned with {}",
        "key id {}",
        "ANTHROPIC key {}",
        "session {}",
        "gitlab {}",
        "postgres://admin:{}@db.internal:5432/app",
        "password={}",
    ]
    lines: list[str] = []
    secrets: list[str] = []
    i = 0
    while sum(len(line) + 1 for line in lines) < 1_000_000:
        if i % 50 == 49:
            k = (i // 50) % len(planted)
            lines.append(f"2025-01-01T00:00:{i % 60:02d}Z WARN web-{i % 7} " + carriers[k].format(planted[k]))
            secrets.append(planted[k])
        else:
            lines.append(
                f"2025-01-01T00:00:{i % 60:02d}Z INFO web-{i % 7} GET /api/v1/items/{i} status=200 "
                f"latency={i % 97}ms bytes={i * 13 % 5000} request_id=req-{i:08x}"
            )
        i += 1
    return "\n".join(lines) + "\n", secrets


def bench_secrets(repeat: int) -> None:
    """Hand-written compiled redactor vs detect-secrets' plugins (detection only) on the same text."""
    text, secrets = _corpus()
    size_mb = len(text.encode()) / 1e6
    redactor = build_redactor()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        redacted, count = redactor.redact(text)
        times.append(time.perf_counter() - t0)
    ours = min(times)
    ours_found = sum(1 for line in redacted.splitlines() if " WARN " in line and "[REDACTED:" in line)
    print(f"secrets: {size_mb:.2f} MB, {len(text.splitlines())} lines, {len(secrets)} planted secrets")
    print(f"  hand-written regex set: {ours * 1e3 / size_mb:.1f} ms/MB, redacted {ours_found}/{len(secrets)}")
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import default_settings
    except ImportError:
        print("  detect-secrets not installed: not measured")
        return
    with default_settings():
        plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()]
        lines = text.splitlines()
        t0 = time.perf_counter()
        flagged = set()
        for number, line in enumerate(lines, 1):
            for plugin in plugins:
                if plugin.analyze_line(filename="output.txt", line=line, line_number=number):
                    flagged.add(number)
        theirs = time.perf_counter() - t0
    planted_lines = [n for n, line in enumerate(lines, 1) if " WARN " in line]
    found = sum(1 for n in planted_lines if n in flagged)
    false_pos = len(flagged) - found
    print(
        f"  detect-secrets {len(plugins)} plugins (detect only, no redaction): {theirs * 1e3 / size_mb:.1f} ms/MB, "
        f"flagged {found}/{len(planted_lines)} planted lines, {false_pos} other lines"
    )
    print(f"  ratio detect-secrets/hand-written: {theirs / ours:.1f}x")


JUDGED = {  # argv shapes a runner meets, the last item made unique per call in the "new argv" column
    "opsctl service status": ["/opt/fisk/bin/opsctl", "service", "status", "--json", "--", "api"],
    "opsctl db query (8 items)": ["/opt/fisk/bin/opsctl", "--context=prod", "db", "query", "--format=json",
                                  "--max-rows=100", "--", "main", "select 1"],
    "vault kv get -field=password": ["/usr/bin/vault", "kv", "get", "-field=password", "secret/db"],
    "kubectl -o jsonpath={.data.password}": ["/usr/bin/kubectl", "get", "secret", "-o",
                                             "jsonpath={.data.password}", "db"],
}


def bench_judge(n: int) -> None:
    """CPU per call of judge_argv: a new argv each time (nothing remembered), and the same argv again."""
    print(f"argv judge: N={n} calls per shape, CPU per call")
    print(f"{'argv':>38} {'new argv':>9} {'same argv':>10} {'verdict':>15}")
    for label, argv in JUDGED.items():
        fresh = [argv[:-1] + [f"{argv[-1]}{i}"] for i in range(n)]
        c0 = time.process_time()
        for one in fresh:
            judge_argv(one)
        new = (time.process_time() - c0) / n
        c0 = time.process_time()
        for _ in range(n):
            judge_argv(argv)
        same = (time.process_time() - c0) / n
        verdict = judge_argv(argv)
        print(f"{label:>38} {new * 1e6:7.2f}us {same * 1e6:8.2f}us {verdict.kind if verdict else '-':>15}")
    # Hostile argv: CPU grows with its length, not its square (target: 16x the items, <= 20x the time).
    for label, make in (
        ("words skipped between command words", lambda k: ["aws"] + ["--x", "secretsmanager"] * (k // 2)),
        ("one long path expression", lambda k: ["kubectl", "get", "secret", "--jsonpath", "{" + ".a" * k + "}"]),
    ):
        cpu = []
        for k in (6250, 100000):
            argv = make(k)
            c0 = time.process_time()
            judge_argv(argv)
            cpu.append(time.process_time() - c0)
        print(f"  hostile argv, {label}: 6,250 items {cpu[0] * 1e3:.1f} ms, 100,000 {cpu[1] * 1e3:.1f} ms CPU,"
              f" ratio {cpu[1] / max(cpu[0], 1e-9):.1f} (linear: 16)")
    data = realistic_output(65536)
    captured = Captured(head=data, tail=b"", total_bytes=len(data))
    for label, redactor in (("the detectors", build_redactor()), ("withheld whole", WithheldOutput("secret_field"))):
        c0 = time.process_time()
        for _ in range(200):
            sanitize_captured(captured, redactor, 65536)
        cpu_ms = (time.process_time() - c0) / 200 * 1e3
        print(f"  sanitizing 64 KiB of realistic output with {label}: {cpu_ms:.3f} ms CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="calls of each kind")
    parser.add_argument("--calls", action="store_true", help="only the per-call overhead benchmark")
    parser.add_argument("--judge", action="store_true", help="only the argv judge's cost per call")
    parser.add_argument("--secrets", action="store_true", help="only the secret detector comparison")
    args = parser.parse_args()
    both = not args.calls and not args.secrets and not args.judge
    if args.calls or both:
        asyncio.run(bench_calls(args.n))
    if args.judge or both:
        bench_judge(max(args.n, 20000))
    if args.secrets or both:
        bench_secrets(repeat=3)


if __name__ == "__main__":
    main()
