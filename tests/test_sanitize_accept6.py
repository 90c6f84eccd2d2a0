"""accept6's fresh-context acceptance check of issue #11, pinned: corpora written before reading the project's own
corpora or detectors (``tests/corpora/accept6/``, generated from fixed seeds): leak cases of real ops tools' output
in eight families and ordinary output full of look-alikes, both printed by a real fisk application and read back
from the real ``fisk-chatops exec`` (batched: a handful of processes check everything), and approval cards
rendered by the Slack role's own ``render_card``.

What passes is required from now on. What does not is listed in an OPEN dict with the reason; the tests assert
each is still open, so a fix must move it out, and a new leak, changed line or failing card fails at once. The
figures come from ``PYTHONPATH=. python -m tests.corpora.accept6.measure`` (``--alone``: each leak case in an exec
of its own).
"""

from __future__ import annotations

from tests.corpora.accept6.benign import benign_files
from tests.corpora.accept6.cards import CARD_CASES
from tests.corpora.accept6.leaks import LEAK_CASES
from tests.corpora.accept6.measure import (
    batch_text,
    batches,
    benign_changes,
    cards_failing,
    leaks_batched,
)
from tests.corpora.exec_harness import split_open

# leak case -> what survives and why it is open
OPEN_LEAKS: dict[str, str] = {}

# "file:line" of benign.py's files -> what changed and why (the line must come out byte-identical)
OPEN_BENIGN: dict[str, str] = {}

# card case -> what is wrong with its card
OPEN_CARDS: dict[str, str] = {}


def test_the_corpora_are_the_size_the_check_promised() -> None:
    assert len(LEAK_CASES) >= 150
    assert sum(len(c.secrets) for c in LEAK_CASES.values()) >= 220
    assert len({c.family for c in LEAK_CASES.values()}) == 8
    assert sum(len(t.splitlines()) for t in benign_files().values()) >= 700
    assert len(CARD_CASES) >= 30 and all(c.invisible and c.secrets for c in CARD_CASES.values())


def test_every_batch_fits_under_the_cap_and_no_secret_is_found_in_the_benign_corpus() -> None:
    groups = batches(LEAK_CASES.values())
    assert sum(len(g) for g in groups) == len(LEAK_CASES)
    assert all(len(batch_text(g).encode()) < 48 << 10 for g in groups)
    ordinary = "".join(benign_files().values())
    assert not [c.name for c in LEAK_CASES.values() if any(s.survives_in(ordinary) for s in c.secrets)]


def test_the_detector_of_a_leak_would_see_one() -> None:
    """The harness itself: a case printed raw (no sanitizer between) is reported with every secret."""
    case = LEAK_CASES["ipsec-secrets"]
    assert [s.survives_in(case.text) for s in case.secrets] == ["whole"]
    assert [s.survives_in(case.text.replace(case.secrets[0].value[5:17], "[REDACTED]")) for s in case.secrets] == [
        "partly"]


def test_no_secret_of_a_closed_case_survives_exec_and_each_open_case_still_leaks() -> None:
    new, fixed = split_open(leaks_batched(), OPEN_LEAKS)
    assert new == {}, f"secrets survive fisk-chatops exec: {new}"
    assert fixed == [], f"no longer leaking: move out of OPEN_LEAKS: {fixed}"


def test_ordinary_output_passes_exec_byte_identical_except_the_open_lines() -> None:
    new, fixed = split_open(benign_changes(), OPEN_BENIGN)
    assert new == {}, f"ordinary lines changed by fisk-chatops exec: {new}"
    assert fixed == [], f"no longer changed: move out of OPEN_BENIGN: {fixed}"


def test_cards_show_no_secret_no_raw_invisible_character_and_warn() -> None:
    new, fixed = split_open(cards_failing(), OPEN_CARDS)
    assert new == {}, f"cards show a secret or a raw invisible character, or do not warn: {new}"
    assert fixed == [], f"card fixed: move out of OPEN_CARDS: {fixed}"
