"""Run the accept6 corpora through the real ``fisk-chatops exec`` and say what survived, changed or failed.

Leak cases are batched into outputs well under the 64 KiB cap, a new shell prompt (``$ clear``) between two cases
so each is judged on its own, and the benign files are printed a few at a time as one output each: the whole
check costs a handful of ``exec`` processes. ``--alone`` runs each leak case in an ``exec`` of its own instead
(slow: the ground truth the batches are compared with). Cards are rendered by the Slack role's ``render_card``.

    PYTHONPATH=. python -m tests.corpora.accept6.measure [--alone] [--cards]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tests.corpora.accept6.benign import benign_files
from tests.corpora.accept6.cards import CARD_CASES, CardCase, invisible_characters
from tests.corpora.accept6.leaks import LEAK_CASES
from tests.corpora.accept6.values import LeakCase
from tests.corpora.card_check import card_failures as failures_of_card
from tests.corpora.card_check import card_of, print_cards
from tests.corpora.exec_harness import ExecHarness

# secret-dense batches much larger than this could draw the density budget's marker; the families are taken in
# turn so no batch is made of one secret-dense family alone
HARNESS = ExecHarness(label="accept6", batch_bytes=16_000, benign_bytes=40_000, by_family=True)


batches = HARNESS.batches
batch_text = HARNESS.batch_text


def leaks_batched(cases: Sequence[LeakCase] | None = None) -> dict[str, list[str]]:
    """Case name -> its secrets that survived, for the cases where one did (batched exec calls)."""
    return HARNESS.leaks_batched(cases if cases is not None else LEAK_CASES.values())


def benign_changes() -> dict[str, tuple[str, str]]:
    """``file:line`` -> (line in, line out) for every ordinary line that did not come out byte-identical."""
    return HARNESS.benign_changes(benign_files())


def card_failures(case: CardCase) -> list[str]:
    """What is wrong with the card of ``case``: a secret shown, an invisible character shown raw, no warning
    (every accept6 card holds an invisible character), or no redaction marker."""
    card = card_of(case.name, case.argv, "C0ACME:1764680000.000100")
    return failures_of_card(card, case.secrets, True, invisible_characters)


def cards_failing() -> dict[str, list[str]]:
    return {name: found for name, case in CARD_CASES.items() if (found := card_failures(case))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--alone", action="store_true", help="each leak case in an exec of its own")
    parser.add_argument("--cards", action="store_true", help="only the cards (no exec)")
    args = parser.parse_args()
    print_cards(len(CARD_CASES), cards_failing())
    if not args.cards:
        HARNESS.print_report(list(LEAK_CASES.values()), benign_files(), args.alone)


if __name__ == "__main__":
    main()
