"""The command line a newcomer meets: --version, help for every option, plain-text help, quiet on a closed pipe."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
MARKUP = re.compile(r"``|`|:class:|:func:|\*\*|\.\. ")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_option_and_argument_has_help_and_no_markup() -> None:
    parsers = {"": build_parser(), **subcommands()}
    assert {"tools", "explain", "exec", "serve", "console", "audit"} <= set(parsers)
    for name, parser in parsers.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            assert action.help, f"{name or 'fisk-chatops'}: {action.option_strings or action.dest} has no help"
        text = parser.format_help()
        assert not MARKUP.search(text), f"markup in the help of {name or 'fisk-chatops'}:\n{text}"


def run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, **kw)  # type: ignore[call-overload]


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and re.fullmatch(r"fisk-chatops \d+\.\d+\.\d+\S*\n", result.stdout)


@pytest.mark.parametrize("args", [["tools", "--json"], ["tools"]])
def test_closed_pipe_exits_quietly(opsctl: Path, args: list[str]) -> None:
    """`fisk-chatops tools --json | head`: the reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", "bot.cli", *args, "--app", str(opsctl)], stdout=write_end,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=60)
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 141
