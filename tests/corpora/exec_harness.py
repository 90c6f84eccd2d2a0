"""How an acceptance check's corpora go through the real ``fisk-chatops exec``: leak cases batched into a handful
of outputs under the 64 KiB cap (a new shell prompt between two cases), the benign files printed a few at a time,
and what survived or changed read back. One harness for every acceptance round, so each round's ``measure`` says
only what differs (its label, batch size, whether families are interleaved) and the checks cannot drift apart."""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from tests.support.exec_printing import exec_printing

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fisk"
DENSE_MARKER = "[REDACTED:dense_candidates]"


class CorpusSecret(Protocol):
    @property
    def kind(self) -> str: ...

    def survives_in(self, output: str) -> str | None: ...


class CorpusCase(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def family(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def secrets(self) -> Sequence[CorpusSecret]: ...


Case = TypeVar("Case", bound=CorpusCase)


def survivors(case: CorpusCase, output: str) -> list[str]:
    """``kind:whole`` / ``kind:partly`` for each secret of ``case`` found in ``output``."""
    return [f"{s.kind}:{how}" for s in case.secrets if (how := s.survives_in(output))]


def interleaved(cases: Iterable[Case]) -> list[Case]:
    """The cases taken from each family in turn, so no batch is made of one secret-dense family alone (an
    on-call session mixes tools too)."""
    by_family: dict[str, list[Case]] = {}
    for case in cases:
        by_family.setdefault(case.family, []).append(case)
    columns = list(by_family.values())
    return [col[i] for i in range(max(map(len, columns), default=0)) for col in columns if i < len(col)]


def split_open(found: Mapping[str, object], open_ones: Mapping[str, str]) -> tuple[dict[str, object], list[str]]:
    """(what is found but not listed open, what is listed open but no longer found): both must be empty."""
    new = {where: what for where, what in found.items() if where not in open_ones}
    return new, sorted(set(open_ones) - set(found))


@dataclass(frozen=True)
class ExecHarness:
    """One acceptance round's way of batching: ``label`` names its temporary folders and case prompts."""

    label: str
    batch_bytes: int
    benign_bytes: int
    by_family: bool = False  # interleave the families before batching

    def exec_outputs(self, datas: Sequence[bytes], workers: int = 2) -> list[str]:
        """The sanitized ``output`` of one ``fisk-chatops exec`` call per item (two at a time: the machine has two
        cores); each item must fit under the cap."""
        def one(data: bytes) -> str:
            with tempfile.TemporaryDirectory(prefix=f"{self.label}-") as tmp:
                return str(exec_printing(Path(tmp), FIXTURES, data)["output"])

        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, datas))

    def separator(self, name: str) -> str:
        """A new shell prompt before each case: what a tool printed after an echoed ``$ cat ~/.aws/credentials``
        is that file's content until the next prompt, so without one a case would be judged as part of the last."""
        return f"\n$ clear  # {self.label} case {name}\n"

    def batches(self, cases: Iterable[Case]) -> list[list[Case]]:
        ordered = interleaved(cases) if self.by_family else cases
        groups: list[list[Case]] = [[]]
        size = 0
        for case in ordered:
            if groups[-1] and size + len(case.text) > self.batch_bytes:
                groups.append([])
                size = 0
            groups[-1].append(case)
            size += len(case.text) + 40
        return groups

    def batch_text(self, group: Sequence[CorpusCase]) -> str:
        return "".join(self.separator(c.name) + c.text for c in group)

    def leaks_batched(self, cases: Iterable[CorpusCase]) -> dict[str, list[str]]:
        """Case name -> its secrets that survived, for the cases where one did (batched exec calls)."""
        groups = self.batches(cases)
        outputs = self.exec_outputs([self.batch_text(g).encode() for g in groups])
        leaked: dict[str, list[str]] = {}
        for group, output in zip(groups, outputs, strict=True):
            # a batch whose secrets drew a dense_candidates marker would hide its neighbours' leaks: each case must
            # be judged as it is judged alone (``--alone`` gives the same cases)
            assert DENSE_MARKER not in output, f"batch from {group[0].name} drew {DENSE_MARKER}: lower batch_bytes"
            for case in group:
                if found := survivors(case, output):
                    leaked[case.name] = found
        return leaked

    def leaks_alone(self, cases: Sequence[CorpusCase]) -> dict[str, list[str]]:
        outputs = self.exec_outputs([c.text.encode() for c in cases])
        return {c.name: found for c, o in zip(cases, outputs, strict=True) if (found := survivors(c, o))}

    def benign_groups(self, files: Mapping[str, str]) -> list[list[str]]:
        """The benign files in groups printed as one output each (an on-call session's worth, under the cap)."""
        groups: list[list[str]] = [[]]
        size = 0
        for name, text in files.items():
            if groups[-1] and size + len(text) > self.benign_bytes:
                groups.append([])
                size = 0
            groups[-1].append(name)
            size += len(text)
        return groups

    def benign_changes(self, files: Mapping[str, str]) -> dict[str, tuple[str, str]]:
        """``file:line`` -> (line in, line out) for every ordinary line that did not come out byte-identical."""
        groups = self.benign_groups(files)
        outputs = self.exec_outputs(["".join(files[n] for n in g).encode() for g in groups])
        changed: dict[str, tuple[str, str]] = {}
        for group, output in zip(groups, outputs, strict=True):
            where = [f"{name}:{i}" for name in group for i in range(1, len(files[name].splitlines()) + 1)]
            before = "".join(files[n] for n in group).splitlines()
            after = output.splitlines()
            if before == after:
                continue
            matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag == "equal":
                    continue
                outs = after[j1:j2]
                for k in range(i1, max(i2, i1 + 1) if i1 < len(before) else i1):
                    changed[where[k]] = (before[k], outs[k - i1] if k - i1 < len(outs) else "")
        return changed

    def print_report(self, cases: Sequence[CorpusCase], files: Mapping[str, str], alone: bool) -> None:
        """The figures a round's README cites (leak cases, secrets, survivors; benign lines, changed), each
        survivor and changed line under them; ``alone``: each leak case in an exec of its own."""
        leaked = self.leaks_alone(cases) if alone else self.leaks_batched(cases)
        family = {c.name: c.family for c in cases}
        width = max(map(len, family.values()), default=0)
        secrets = sum(len(c.secrets) for c in cases)
        survived = sum(map(len, leaked.values()))
        print(f"leak cases {len(cases)}, secrets {secrets}; survived {survived} in {len(leaked)} cases")
        for name, found in sorted(leaked.items()):
            print(f"  LEAK {family[name]:{width}} {name}: {', '.join(found)}")
        changes = self.benign_changes(files)
        lines = sum(len(t.splitlines()) for t in files.values())
        print(f"benign files {len(files)}, lines {lines}; changed {len(changes)}")
        for where, (before, after) in changes.items():
            print(f"  CHANGED {where}: {before!r} -> {after!r}")
