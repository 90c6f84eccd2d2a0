"""``fisk-chatops exec`` of a real fisk application that prints given bytes: how the corpora of issue #11 are
checked through the command an operator runs (default cap, real subprocess, the JSON it prints)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.fisk_app import make_fisk_app_doing

ROOT = Path(__file__).resolve().parents[2]


def exec_printing(tmp_path: Path, fixtures_dir: Path, data: bytes, *, truncated: bool = False) -> dict[str, object]:
    """The JSON ``fisk-chatops exec`` prints for a tool whose application prints ``data`` (read from a file named in
    its env); the call must have finished, and been cut by the output cap exactly when ``truncated``."""
    tmp_path.mkdir(exist_ok=True)
    corpus = tmp_path / "corpus.bin"
    corpus.write_bytes(data)
    app = make_fisk_app_doing(tmp_path, fixtures_dir / "opsctl.introspect.json", "printer",
                              "sys.stdout.buffer.write(open(os.environ['CORPUS_FILE'], 'rb').read())")
    config = tmp_path / "c.yaml"
    config.write_text(f"applications: [{{binary: {app}, env: {{CORPUS_FILE: '{corpus}'}}}}]\n")
    result = subprocess.run([sys.executable, "-m", "bot.cli", "exec", "--config", str(config), "service_status", "{}"],
                            capture_output=True, text=True, timeout=60, cwd=ROOT, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    parsed: dict[str, object] = json.loads(result.stdout)
    assert parsed["status"] == "finished" and parsed["truncated"] is truncated, parsed
    return parsed
