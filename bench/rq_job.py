"""The job RQ workers run in ``bench_peer_rq.py``: the same compiled tool our runner starts, no shell, stdin
/dev/null, output captured; returns the output (which holds the child's own start stamp)."""

from __future__ import annotations

import subprocess


def run_tool(argv: list[str]) -> str:
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          check=False)
    return done.stdout.decode()
