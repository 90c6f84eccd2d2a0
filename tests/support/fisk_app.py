"""Wrap a real ``--fisk-introspect`` fixture in a small executable, so introspection and execution are real.

The executable prints the fixture bytes for ``--fisk-introspect`` and otherwise echoes its argv one item per
line and exits 0, like the fixture's ``opsctl`` demo binary. ``OPSCTL_EXIT_CODE`` sets the exit code (then
one line goes to stderr), so non-zero exits can be exercised too. It runs with ``-S``: it needs only ``os`` and
``sys``, and skipping ``site`` (the venv's .pth files) makes each of its many runs about three times cheaper.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

SCRIPT = """#!{python} -S
import os, sys
FIXTURE = {fixture!r}
args = sys.argv[1:]
if args == ["--fisk-introspect"]:
    with open(FIXTURE, "rb") as f:
        sys.stdout.buffer.write(f.read())
    sys.exit(0)
for a in args:
    print(a)
code = int(os.environ.get("OPSCTL_EXIT_CODE", "0") or 0)
if code:
    print(f"opsctl: exiting with code {{code}}", file=sys.stderr)
sys.exit(code)
"""


def make_fisk_app(directory: Path, fixture: Path, name: str = "opsctl") -> Path:
    """Write an executable named ``name`` in ``directory`` that plays the fixture's application."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(SCRIPT.format(python=sys.executable, fixture=str(fixture)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def make_script(directory: Path, name: str, body: str) -> Path:
    """Write an executable Python script (for tools that misbehave: sleep, flood output, ignore signals)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def make_fisk_app_doing(directory: Path, fixture: Path, name: str, otherwise: str) -> Path:
    """An application that answers ``--fisk-introspect`` with ``fixture``'s bytes (so the catalog is the real
    one) and otherwise runs ``otherwise``: top-level Python with ``os`` and ``sys`` imported (print its
    environment, a corpus, ...)."""
    body = (
        "import os, sys\n"
        "if sys.argv[1:] == ['--fisk-introspect']:\n"
        f"    sys.stdout.buffer.write(open({str(fixture)!r}, 'rb').read())\n"
        "    sys.exit(0)\n"
        f"{otherwise}\n"
    )
    return make_script(directory, name, body)
