"""Run the accept5 corpora through the real ``fisk-chatops exec`` and say what survived or changed.

Cases are batched into outputs well under the 64 KiB cap (a blank line and a new prompt, ``$ clear``, between
two cases), so the whole check costs a handful of ``exec`` processes; ``--alone`` runs each leak case in an
``exec`` of its own instead (slow: the ground truth the batches are compared with).

    PYTHONPATH=. python -m tests.corpora.accept5.measure [--alone]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tests.corpora.accept5.cards import CARD_CASES, CardCase, invisible_characters
from tests.corpora.accept5.leaks import LEAK_CASES
from tests.corpora.accept5.values import LeakCase
from tests.corpora.card_check import card_failures as failures_of_card
from tests.corpora.card_check import card_of, print_cards
from tests.corpora.exec_harness import ExecHarness

BENIGN_DIR = Path(__file__).resolve().parent / "benign"
# larger batches of these secret-dense cases draw the density budget's marker (12_000 did, leaks14)
HARNESS = ExecHarness(label="accept5", batch_bytes=8_000, benign_bytes=24_000)


batches = HARNESS.batches
batch_text = HARNESS.batch_text


def leaks_batched(cases: Sequence[LeakCase] | None = None) -> dict[str, list[str]]:
    """Case name -> the secrets of it that survived, for the cases where one did (batched exec calls)."""
    return HARNESS.leaks_batched(cases if cases is not None else LEAK_CASES.values())


def benign_files() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(BENIGN_DIR.glob("*.txt"))}


def benign_changes() -> dict[str, tuple[str, str]]:
    """``file:line`` -> (line in, line out) for every ordinary line that did not come out byte-identical."""
    return HARNESS.benign_changes(benign_files())


def card_failures(case: CardCase) -> list[str]:
    """What is wrong with the card of ``case``: a secret shown, an invisible character shown raw, no warning
    for an argv holding one, or no redaction marker for an argv holding a secret."""
    card = card_of(case.name, case.argv, "C0ACME:1764660000.000100")
    return failures_of_card(card, case.secrets, case.invisible, invisible_characters)


def cards_failing() -> dict[str, list[str]]:
    return {name: found for name, case in CARD_CASES.items() if (found := card_failures(case))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--alone", action="store_true", help="each leak case in an exec of its own")
    parser.add_argument("--cards", action="store_true", help="only the cards (no exec)")
    args = parser.parse_args()
    if not args.cards:
        HARNESS.print_report(list(LEAK_CASES.values()), benign_files(), args.alone)
    print_cards(len(CARD_CASES), cards_failing())


if __name__ == "__main__":
    main()
