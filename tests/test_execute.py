"""run_argv with real subprocesses: exit codes, start failures, timeouts, grandchildren, floods, sanitizing."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from bot.fisk.environment import scrub_environment
from bot.runner import CallResult, run_argv
from tests.support.fisk_app import make_script


def _env() -> dict[str, str]:
    return scrub_environment().env


async def _run(argv: list[str], **kwargs: object) -> CallResult:
    options: dict[str, object] = {"env": _env(), "cwd": None, "timeout": 10.0}
    options.update(kwargs)
    return await run_argv(argv, **options)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie still answers kill(0); it is dead for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_exit_zero_echoes_argv(opsctl: Path) -> None:
    result = await _run([str(opsctl), "status", "--cluster", "web"])
    assert result.status == "finished" and result.exit_code == 0
    assert result.output == "status\n--cluster\nweb\n"
    assert result.total_bytes == len(result.output) and not result.truncated and result.error is None
    assert result.argv_display == [str(opsctl), "status", "--cluster", "web"]


async def test_nonzero_exit_is_a_finished_result_with_stderr_in_order(opsctl: Path) -> None:
    result = await _run([str(opsctl), "restart"], env={**_env(), "OPSCTL_EXIT_CODE": "3"})
    assert result.status == "finished" and result.exit_code == 3
    assert result.output == "restart\nopsctl: exiting with code 3\n"


async def test_stdout_and_stderr_interleave_in_arrival_order(tmp_path: Path) -> None:
    body = (
        "import sys\nfor i in range(3):\n    print(f'out{i}', flush=True)\n"
        "    print(f'err{i}', file=sys.stderr, flush=True)\n"
    )
    result = await _run([str(make_script(tmp_path, "mix", body))])
    assert result.output == "out0\nerr0\nout1\nerr1\nout2\nerr2\n"


async def test_stdin_is_devnull_and_no_shell(tmp_path: Path) -> None:
    script = make_script(tmp_path, "stdin", "import sys\nprint(repr(sys.stdin.read()))\nprint(sys.argv[1])\n")
    result = await _run([str(script), "$(echo pwned); echo `id`"])
    assert result.output == "''\n$(echo pwned); echo `id`\n"


async def test_child_runs_in_its_own_process_group(tmp_path: Path) -> None:
    script = make_script(tmp_path, "pg", "import os\nprint(os.getpgrp() == os.getpid(), os.getsid(0) == os.getpid())\n")
    result = await _run([str(script)])
    assert result.output == "True True\n"


@pytest.mark.parametrize("kind", ["missing", "not_executable", "exec_format", "bad_cwd"])
async def test_failed_to_start_is_a_result_with_reason(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "tool"
    cwd = None
    if kind == "missing":
        expected = "was not found"
    elif kind == "not_executable":
        target.write_text("#!/bin/sh\necho hi\n")
        expected = "is not executable"
    elif kind == "exec_format":
        target.write_bytes(b"\x00\x01garbage, no shebang\n")
        target.chmod(0o755)
        expected = "is not a program this machine can run"
    else:
        target = Path("/bin/true")
        cwd = str(tmp_path / "no-such-dir")
        expected = "working directory"
    result = await _run([str(target), "x"], cwd=cwd)
    assert result.status == "failed_to_start" and result.exit_code is None
    assert result.error is not None and expected in result.error
    assert (cwd or str(target)) in result.error
    assert "errno" not in result.error.lower() and "Error" not in result.error  # a sentence, not an OS error name
    assert result.output == "" and result.argv_display == [str(target), "x"]


async def test_timeout_sigterm_then_sigkill_keeps_partial_output(tmp_path: Path) -> None:
    body = (
        "import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('partial output', flush=True)\ntime.sleep(60)\n"
    )
    started = time.monotonic()
    result = await _run([str(make_script(tmp_path, "stubborn", body))], timeout=1.0, kill_grace=0.5)
    elapsed = time.monotonic() - started
    assert result.status == "timed_out"
    assert result.exit_code == -signal.SIGKILL
    assert result.output == "partial output\n"
    assert 1.4 <= elapsed < 4.0


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    body = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print(child.pid, flush=True)\ntime.sleep(60)\n"
    )
    result = await _run([str(make_script(tmp_path, "parent", body))], timeout=1.0, kill_grace=2.0)
    assert result.status == "timed_out" and result.exit_code == -signal.SIGTERM
    grandchild = int(result.output.split()[0])
    await asyncio.sleep(0.2)
    assert not _alive(grandchild)


async def test_grandchild_holding_the_pipe_does_not_hang_the_runner(tmp_path: Path) -> None:
    body = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print(child.pid, flush=True)\nprint('parent done', flush=True)\n"
    )
    started = time.monotonic()
    result = await _run([str(make_script(tmp_path, "bg", body))], timeout=30.0)
    assert time.monotonic() - started < 3.0
    assert result.status == "finished" and result.exit_code == 0
    assert result.output.endswith("parent done\n")
    await asyncio.sleep(0.2)
    assert not _alive(int(result.output.split()[0])), "a leftover in the tool's group holding the pipe is killed"


async def test_grandchild_in_its_own_session_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    body = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
    )
    started = time.monotonic()
    result = await _run([str(make_script(tmp_path, "daemon", body))], timeout=30.0)
    try:
        assert time.monotonic() - started < 3.0
        assert result.status == "finished" and result.exit_code == 0
    finally:
        os.kill(int(result.output.split()[0]), signal.SIGKILL)


async def _cancel_a_running_tool(tmp_path: Path) -> int:
    """Start a tool that sleeps for a minute, cancel its call once it runs, and return the tool's pid."""
    pidfile = tmp_path / "pid"
    body = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    task = asyncio.create_task(_run([str(make_script(tmp_path, "slow", body))], timeout=60.0))
    for _ in range(100):
        await asyncio.sleep(0.05)
        if pidfile.exists() and pidfile.read_text():
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return int(pidfile.read_text())


async def test_cancellation_kills_the_tool(tmp_path: Path) -> None:
    pid = await _cancel_a_running_tool(tmp_path)
    await asyncio.sleep(0.2)
    assert not _alive(pid)


def _reaped(pid: int) -> bool:
    """True once the process is gone entirely: not running and not a zombie waiting to be collected."""
    return not Path(f"/proc/{pid}").exists()


async def test_cancelled_call_leaves_no_zombie(tmp_path: Path) -> None:
    pid = await _cancel_a_running_tool(tmp_path)
    for _ in range(100):  # the exit watch outlives the cancelled call and collects the status
        if _reaped(pid):
            break
        await asyncio.sleep(0.02)
    assert _reaped(pid)


async def test_finished_calls_are_reaped_and_start_no_thread(tmp_path: Path) -> None:
    """The exit is watched by the event loop (a pidfd), not by a thread per child as asyncio's default
    watcher does on Python 3.11; every child's status is collected."""
    body = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(0.3)\n"
    script = str(make_script(tmp_path, "pid", body))
    before = {t.ident for t in threading.enumerate()}
    tasks = [asyncio.create_task(_run([script])) for _ in range(3)]
    await asyncio.sleep(0.15)
    during = {t.name for t in threading.enumerate() if t.ident not in before}
    results = await asyncio.gather(*tasks)
    assert during == set()
    assert {t.name for t in threading.enumerate() if t.ident not in before} == set()  # small output: inline
    for result in results:
        assert result.status == "finished" and result.exit_code == 0
        assert _reaped(int(result.output.split()[0]))


async def test_exit_by_signal_is_reported_as_a_negative_code(tmp_path: Path) -> None:
    body = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    result = await _run([str(make_script(tmp_path, "killed", body))])
    assert result.status == "finished" and result.exit_code == -signal.SIGKILL


async def test_100_mb_of_output_keeps_head_and_tail_in_bounded_memory(tmp_path: Path) -> None:
    body = (
        "import sys\nout = sys.stdout.buffer\nout.write(b'FIRST-LINE\\n')\nchunk = b'x' * (1 << 20)\n"
        "for _ in range(100):\n    out.write(chunk)\nout.write(b'\\nLAST-LINE\\n')\nout.flush()\n"
    )
    expected_total = len(b"FIRST-LINE\n") + 100 * (1 << 20) + len(b"\nLAST-LINE\n")
    tracemalloc.start()
    try:
        result = await _run([str(make_script(tmp_path, "flood", body))], timeout=60.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "finished" and result.exit_code == 0
    assert result.total_bytes == expected_total
    assert result.truncated
    # the 100 MB line is one token cut by the gap: it is dropped whole, never shown in part (issue #11)
    assert result.output.startswith("FIRST-LINE\n") and result.output.endswith("\nLAST-LINE\n")
    assert "xxx" not in result.output
    assert len(result.output.encode()) <= 65536
    omitted = int(re.search(r"\n… \[(\d+) bytes omitted\] …\n", result.output).group(1))  # type: ignore[union-attr]
    assert omitted > expected_total - 65536
    assert peak < 20 * 1024 * 1024, f"runner peaked at {peak} bytes"


async def test_binary_and_invalid_utf8_output(tmp_path: Path) -> None:
    body = "import sys\nsys.stdout.buffer.write(bytes(range(256)) + b'\\xff\\xfe\\xc3 done\\n')\n"
    result = await _run([str(make_script(tmp_path, "binary", body))])
    assert result.status == "finished" and result.total_bytes == 256 + 9
    assert "\ufffd" in result.output and result.output.endswith(" done\n")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", result.output)


async def test_escape_sequences_are_stripped(tmp_path: Path) -> None:
    body = (
        "import sys\nsys.stdout.write('\\x1b[1;31mERROR\\x1b[0m disk full\\n'\n"
        "  '\\x1b]8;;https://runbook.example/disk\\x1b\\\\runbook\\x1b]8;;\\x1b\\\\\\n'\n"
        "  '\\x1b]0;pwned title\\x07\\x1b]2;other\\x1b\\\\\\x1b[2J\\x1b[1;1Hclean\\x1b[K\\r\\n')\n"
    )
    result = await _run([str(make_script(tmp_path, "ansi", body))])
    assert result.output == "ERROR disk full\nrunbook\nclean\n"


async def test_secrets_in_output_and_argv_are_redacted(opsctl: Path) -> None:
    from tests.test_sanitize import CORPUS

    lines = [c[0].replace("\n", " | ") for c in CORPUS if "PRIVATE KEY" not in c[0]]
    result = await _run([str(opsctl), *lines])
    assert result.status == "finished"
    for text, secret, kind, _ in CORPUS:
        if "PRIVATE KEY" in text:
            continue
        assert secret not in result.output
        assert secret not in " ".join(result.argv_display)
        assert f"[REDACTED:{kind}]" in result.output
    assert result.redactions >= len(lines)


async def test_private_key_block_in_output_is_redacted(tmp_path: Path) -> None:
    from tests.test_sanitize import PEM, PEM_BODY

    script = make_script(tmp_path, "pem", f"print('before')\nprint({PEM!r})\nprint('after')\n")
    result = await _run([str(script)])
    assert result.output == "before\n[REDACTED:private_key]\nafter\n"
    assert PEM_BODY[:20] not in result.output and result.redactions == 1


async def test_environment_dump_leaks_no_credential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    credentials = {
        "SLACK_BOT_TOKEN": "xox" + "b-1111111111-2222222222222-AbCdEfGhIjKlMnOpQrStUvWx",
        "SLACK_SIGNING_SECRET": "plainsigningsecretvalue0123456789",
        "ANTHROPIC_API_KEY": "sk-" + "ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210",
        "ANTHROPIC_AUTH_TOKEN": "opaque-auth-token-value-42",
        "REDIS_URL": "redis://:redispassw0rd@redis.internal:6379/0",
        "OPS_DB_PASSWORD": "operator-db-pass-777",
    }
    for name, value in credentials.items():
        monkeypatch.setenv(name, value)
    scrubbed = scrub_environment(sensitive_env_vars=["OPS_DB_PASSWORD"])
    # The tool prints its environment, then a config file it read that holds the same credentials.
    leak = tmp_path / "leaked.conf"
    leak.write_text("\n".join(f"value {v}" for v in credentials.values()) + "\n")
    body = (
        f"import os\nfor k, v in sorted(os.environ.items()):\n    print(f'{{k}}={{v}}')\n"
        f"print(open({str(leak)!r}).read())\n"
    )
    result = await run_argv(
        [str(make_script(tmp_path, "envdump", body))],
        env=scrubbed.env,
        cwd=str(tmp_path),
        timeout=10.0,
        secret_values=scrubbed.removed_values.values(),
    )
    assert result.status == "finished"
    assert "LLMFORMAT=1" in result.output.splitlines()
    for name, value in credentials.items():
        assert name not in result.output
        assert value not in result.output
    assert result.output.count("[REDACTED:secret_value]") >= 3
    assert result.redactions >= len(credentials)


async def test_operator_patterns_apply_to_output(opsctl: Path) -> None:
    result = await _run([str(opsctl), "ticket ACME-12345678"], redact_patterns=[r"ACME-\d{8}"])
    assert result.output == "ticket [REDACTED:custom]\n"
    assert result.argv_display[1] == "ticket [REDACTED:custom]"


async def test_result_is_json_serializable(opsctl: Path) -> None:
    result = await _run([str(opsctl), "ok"])
    dumped = json.loads(json.dumps(result.as_json()))
    assert CallResult.from_json(dumped) == result
    assert set(dumped) == {
        "status",
        "exit_code",
        "output",
        "truncated",
        "total_bytes",
        "duration_seconds",
        "redactions",
        "argv_display",
        "error",
        "stopped_by",
        "output_withheld",
    }


def test_a_result_refuses_what_it_cannot_be() -> None:
    """The checks the pydantic model made, kept by the dataclass: an unknown status, a negative count, a
    misspelt stored field."""
    with pytest.raises(ValueError, match="status: 'done' is not one of"):
        CallResult(status="done")  # type: ignore[arg-type]
    for name in ("total_bytes", "duration_seconds", "redactions"):
        with pytest.raises(ValueError, match=f"{name}: must be >= 0"):
            CallResult(status="finished", **{name: -1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown result fields: exitcode"):
        CallResult.from_json({"status": "finished", "exitcode": 0})
    assert CallResult.from_json({"status": "finished", "argv_display": ("a",)}).argv_display == ["a"]


async def test_the_same_argv_is_shown_per_secrets_and_patterns(opsctl: Path) -> None:
    """The shown argv is remembered per command line: a credential value or an operator pattern that arrives
    later (another runner configuration in the same process) still redacts the same argv."""
    value = "plain-value-no-detector-knows-4242"
    argv = [str(opsctl), "login", value, "ticket ACME-87654321"]
    plain = await _run(argv)
    assert plain.argv_display == argv and value in plain.output
    with_secret = await _run(argv, secret_values=[value])
    assert with_secret.argv_display == [str(opsctl), "login", "[REDACTED:secret_value]", "ticket ACME-87654321"]
    assert value not in with_secret.output and "[REDACTED:secret_value]" in with_secret.output  # same for output
    with_pattern = await _run(argv, redact_patterns=[r"ACME-\d{8}"])
    assert with_pattern.argv_display == [str(opsctl), "login", value, "ticket [REDACTED:custom]"]
    assert (await _run(argv)).argv_display == argv
    with_secret.argv_display.append("changed by a caller")  # each result gets its own list
    assert (await _run(argv, secret_values=[value])).argv_display[-1] == "ticket ACME-87654321"


async def test_a_silent_tool_gives_an_empty_clean_result(tmp_path: Path) -> None:
    script = make_script(tmp_path, "silent", "import sys\nsys.exit(3)\n")
    result = await _run([str(script)])
    assert (result.status, result.exit_code, result.output, result.truncated, result.total_bytes,
            result.redactions) == ("finished", 3, "", False, 0, 0)
