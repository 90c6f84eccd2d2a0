"""accept4's acceptance check of issue #11, pinned: corpora written without reading the project's own
(``tests/corpora/accept4/``), each leak case printed alone as one tool's output, the benign files line by line,
and approval cards rendered as the Slack role renders them.

What passes is required from now on. What does not is listed in an OPEN set with the reason; the tests assert
each is still open, so a fix must move it out of its set (and a new leak or a new changed line fails at once).
The counts through ``fisk-chatops exec`` itself come from ``PYTHONPATH=. python -m tests.corpora.accept4.measure
--exec``; here exec is shown to print exactly what the in-process sanitizer gives, on a few of the corpora.
"""

from __future__ import annotations

from pathlib import Path

from tests.corpora.accept4.measure import (
    BENIGN,
    CARDS,
    FIXTURES,
    LEAKS,
    case_leaks,
    changed_lines,
    run_benign,
    run_cards,
    run_leaks,
    sanitized,
)
from tests.support.exec_printing import exec_printing

# case name -> what leaks (family, and why it is open)
OPEN_LEAKS: dict[str, str] = {}
# "file:line" of benign/ -> why the line is changed (it must come out byte-identical)
OPEN_BENIGN: dict[str, str] = {}
# "file:line" of benign/ changed on purpose (decided, not open): the line must stay changed, for the reason given
CHANGED_ON_PURPOSE = {
    # The JSON is the same with or without --with-decryption ("Type": "SecureString", "Value"), and nothing in the
    # value proves it ciphertext; even when it is, whoever may call kms:Decrypt on the key (with the parameter's ARN,
    # its public encryption context) reads the secret from the transcript without SSM's own access check.
    "infra.txt:117": "aws ssm get-parameter without --with-decryption: the KMS ciphertext `Value` is redacted",
}
# cards whose raw invisible character sits inside a redacted secret: no raw character reaches the card, but the
# approver is not warned that the value that runs holds one
OPEN_CARDS_UNWARNED: dict[str, str] = {}  # both closed: the warning asks the argv that runs, not the card


def test_the_corpora_are_the_size_the_check_promised() -> None:
    assert len(LEAKS) >= 150 and len({c.name for c in LEAKS}) == len(LEAKS)
    assert sum(len(p.read_text().splitlines()) for p in BENIGN) >= 400
    assert len(CARDS) >= 30


def test_no_secret_of_a_closed_case_survives_and_each_open_case_still_leaks() -> None:
    leaking = run_leaks(lambda case_: sanitized(case_.text)).leaking
    new = {name: runs for name, runs in leaking.items() if name not in OPEN_LEAKS}
    fixed = sorted(set(OPEN_LEAKS) - set(leaking))
    assert new == {}, f"secrets survive (each a {len('abcdef')}-character run of a secret): {new}"
    assert fixed == [], f"no longer leaking: move out of OPEN_LEAKS: {fixed}"


def test_benign_lines_pass_byte_identical_except_the_open_ones() -> None:
    changed = run_benign(sanitized).changed
    new = {where: line for where, line in changed.items() if where not in OPEN_BENIGN | CHANGED_ON_PURPOSE}
    fixed = sorted(set(OPEN_BENIGN | CHANGED_ON_PURPOSE) - set(changed))
    assert new == {}, f"benign lines changed: {new}"
    assert fixed == [], f"no longer changed: move out of OPEN_BENIGN: {fixed}"


def test_cards_show_no_secret_and_no_raw_invisible_character() -> None:
    result = run_cards()
    assert result.raw_secrets == {}
    assert result.raw_invisibles == {}
    assert sorted(result.unwarned) == sorted(OPEN_CARDS_UNWARNED), "warning changed: update OPEN_CARDS_UNWARNED"


def test_exec_prints_what_the_sanitizer_gives_for_the_benign_files_and_leak_cases(
        tmp_path: Path, fixtures_dir: Path) -> None:
    assert fixtures_dir == FIXTURES
    benign = "".join(p.read_text() for p in BENIGN)
    assert len(benign.encode()) < 60 << 10  # under the cap: a cut would prove nothing
    shown = str(exec_printing(tmp_path / "benign", fixtures_dir, benign.encode())["output"])
    assert shown == sanitized(benign)
    assert {line for line in changed_lines("all", benign, shown).values()} == {
        line for line in run_benign(sanitized).changed.values()}
    by_name = {c.name: c for c in LEAKS}
    for name in ("kubeconfig-raw", "op-item-get-json"):  # closed cases (op-item-get-json by leaks10)
        case_ = by_name[name]
        shown = str(exec_printing(tmp_path / name, fixtures_dir, case_.text.encode())["output"])
        assert shown == sanitized(case_.text)
        assert bool(case_leaks(case_, shown)) == (name in OPEN_LEAKS)
