"""Both corpora through ``fisk-chatops exec``, the way issue #11 is checked: a real fisk application prints them,
the command runs it with the default cap, and the JSON it prints must hold no secret and every benign byte."""

from __future__ import annotations

from pathlib import Path

from tests.corpora.leak_case import Leak
from tests.corpora.leaks import LEAKS
from tests.support.exec_printing import exec_printing

ROOT = Path(__file__).resolve().parents[1]
BENIGN = sorted((ROOT / "tests" / "corpora" / "benign").glob("*.txt"))


def _batches(paths: list[Path], limit: int = 60 << 10) -> list[bytes]:
    """The files' bytes in runs under the default 64 KiB cap (the corpus is larger: a cut would prove nothing)."""
    batches: list[bytes] = [b""]
    for path in paths:
        data = path.read_bytes()
        if batches[-1] and len(batches[-1]) + len(data) > limit:
            batches.append(b"")
        batches[-1] += data
    return batches


def test_the_benign_corpus_comes_out_of_exec_byte_identical(tmp_path: Path, fixtures_dir: Path) -> None:
    for i, benign in enumerate(_batches(BENIGN)):
        result = exec_printing(tmp_path / str(i), fixtures_dir, benign)
        assert result["redactions"] == 0
        assert str(result["output"]).encode() == benign


def test_no_secret_of_the_leak_corpus_comes_out_of_exec(tmp_path: Path, fixtures_dir: Path) -> None:
    batches: list[list[Leak]] = [[]]  # in runs under the default cap, as the benign files (a cut would prove nothing)
    for leak in LEAKS:
        if batches[-1] and len("\n".join(x.text for x in [*batches[-1], leak]).encode()) > 60 << 10:
            batches.append([])
        batches[-1].append(leak)
    for i, batch in enumerate(batches):
        result = exec_printing(tmp_path / f"leaks{i}", fixtures_dir, "\n".join(leak.text for leak in batch).encode())
        output = str(result["output"])
        survived = [(leak.family, secret) for leak in batch for secret in leak.secrets if secret in output]
        assert survived == []
        # about one marker per case (one can cover two adjacent cases, e.g. an environment line runs to its end)
        assert int(str(result["redactions"])) >= len(batch) // 2
