"""Hostile nesting in introspection output ends in one clear line, never a RecursionError (issue 12, item 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.fisk.introspect import MAX_COMMAND_DEPTH, IntrospectionNotJSON, NotAFiskModel, parse_application
from tests.support.fisk_app import make_script

ROOT = Path(__file__).resolve().parents[2]


def command_tree(depth: int) -> str:
    """An application whose single command nests ``depth`` levels deep (built as text: no recursion here)."""
    return ('{"name": "app", "commands": ' + '[{"name": "c", "commands": ' * depth + "[]" + "}]" * depth + "}")


def test_100k_deep_json_is_refused_in_one_line() -> None:
    with pytest.raises(IntrospectionNotJSON) as caught:
        parse_application("[" * 100_000 + "]" * 100_000, "deep")
    assert str(caught.value) == "deep: JSON nested too deeply to be an application model"


@pytest.mark.parametrize("depth", [MAX_COMMAND_DEPTH + 1, 500, 3000])
def test_deep_command_trees_are_refused_in_one_line(depth: int) -> None:
    with pytest.raises((NotAFiskModel, IntrospectionNotJSON)) as caught:
        parse_application(command_tree(depth), "deep")
    assert "\n" not in str(caught.value) and "nested" in str(caught.value)


def test_a_tree_at_the_limit_still_parses() -> None:
    app = parse_application(command_tree(MAX_COMMAND_DEPTH - 1), "ok")
    assert app.name == "app"


def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    payload = tmp_path / "deep.json"
    payload.write_text(command_tree(3000))
    binary = make_script(tmp_path, "deep", f"import sys\nsys.stdout.write(open({str(payload)!r}).read())\n")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "tools", "--app", str(binary)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert done.returncode != 0 and "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "nested" in done.stderr
