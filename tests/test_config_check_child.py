"""The validating child a runner starts (``bot.config_view.load_runner_config``) runs this installation's
``bot.config_check``, never a ``bot`` package that happens to be in the runner's working directory: ``python -m``
puts the working directory first on sys.path, and a runner's working directory (the image's WORKDIR, its state
dir) is writable by the runner's own user, so by the tools it runs too; a file a tool wrote there must not become
code the runner runs with its credentials at its next start (nor another checkout's ``bot`` validate its file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config_view import load_runner_config

ROOT = Path(__file__).resolve().parents[1]
PLANTED = """
import pathlib, sys
pathlib.Path(sys.argv[0]).with_name("ran").write_text("planted code ran")
print('{"applications": []}')
"""


def plant(directory: Path) -> Path:
    package = directory / "bot"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "config_check.py").write_text(PLANTED)
    return package / "ran"


def test_a_bot_package_in_the_working_directory_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "config.yaml"
    config.write_text("applications: [{binary: /bin/true}]\n")
    work = tmp_path / "work"
    work.mkdir()
    ran = plant(work)
    monkeypatch.chdir(work)
    loaded = load_runner_config(config)
    assert not ran.exists()
    assert [app.binary for app in loaded.applications] == ["/bin/true"]


def test_a_runner_started_from_its_source_tree_still_finds_its_own_checker(tmp_path: Path):
    """``python -m bot.cli`` in a checkout, nothing installed on the path: the child finds the parent's ``bot``."""
    config = tmp_path / "config.yaml"
    config.write_text("applications: [{binary: /bin/true}]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    probe = ("import sys, bot; assert bot.__file__.startswith(sys.argv[1]), bot.__file__; "
             "from bot.config_view import load_runner_config; print(load_runner_config(sys.argv[2]).source)")
    done = subprocess.run([sys.executable, "-c", probe, str(ROOT), str(config)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(config)
