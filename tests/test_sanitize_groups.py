"""Detectors that share one automaton (``Detector.group``, ``automata._groups``): the rare spellings of
``context_services.py``, scanned once for all of them instead of each behind a literal searched in every text."""

from __future__ import annotations

import dataclasses
import random

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.automata import CONTEXT_PASS, Leftmost, _automata, _groups
from bot.sanitize.context_detectors import CONTEXT
from bot.sanitize.context_services import SERVICE_FORMATS
from bot.sanitize.detectors import Detector


def test_the_services_detectors_share_one_automaton_that_no_literal_gates_but_ruby_s() -> None:
    holding = [(group, literals) for group, literals in _groups(CONTEXT)
               if any(d is s for d in group for s in SERVICE_FORMATS)]
    assert len(holding) == 2
    (shared, literals), (ruby, ruby_literals) = holding
    assert all(a is b for a, b in zip(shared, SERVICE_FORMATS[:-1], strict=True)) and literals == ()
    assert ruby == (SERVICE_FORMATS[-1],) and ruby_literals == (b"=>",) and ":(?P<name>" in ruby[0].pattern
    assert not any(d.search for d in shared)  # (a scan of its own would cost each hit a second, anchored match)
    assert sum(1 for a in CONTEXT_PASS.finders if not a.literals) == 3  # the alternation, the group, the assignment


def test_only_neighbours_of_one_group_share_an_automaton() -> None:
    def own(name: str, group: str = "") -> Detector:
        return Detector("x", f"{name}(?P<v>1)", own_automaton=True, group=group, literals=(name.encode(),))

    a, b, c, d, f = own("a", "g"), own("b", "g"), own("c"), own("d", "g"), own("f", "h")
    plain = Detector("x", "e(?P<v>1)")
    assert _groups((a, b, plain, c, d, f)) == [((plain,), ()), ((a, b), ()), ((c,), (b"c",)), ((d,), ()), ((f,), ())]
    assert _groups((a, plain, b)) == [((plain,), ()), ((a,), ()), ((b,), ())]  # (not neighbours in the pass)


# Each a service's spelling from context_services.py, with what would make another one start near it.
_PIECES = (
    'proxy_set_header X-Api-Key "a1b2c3d4e5";', "stats auth admin:Zq8vR2mK9", 'psk="correct horse"', '#psk="x"',
    '1) "requirepass"\n2) "Zq8vR2mK9"', "userPassword:: e1NTSEF9QUFBQUFB", "unicodePwd::QUFB", "FTP: PASS Zq8vR2",
    "---> PASS Zq8vR2", "AUTH PLAIN AHVzZXIAcGFzc3dvcmQ=", 'ConvertTo-SecureString "Zq8vR2mK9"',
    "define( 'AUTH_KEY',  'Zq8&vR2mK9pL4wZ8t' );", ':password=>"Zq8vR2mK9", ', '"db.password":{"value":"Zq8vR2"}',
    "%26access_token%3DAb3dEf5gH9", "SECRET_KEY_BASE:     Zq8vR2mK9pL4", "\n", " ", ":", '"', "%", "=>", "::",
    "{", "x", "PASS ", "header ",
)


def test_the_shared_automaton_reports_the_candidates_each_detectors_own_automaton_reported() -> None:
    # What a group changes is how the candidates are found, never which: the leftmost hit of the detectors each in
    # an automaton of its own (as before the group) is the shared automaton's hit, start and end.
    shared = _automata(SERVICE_FORMATS)
    apart = _automata(tuple(dataclasses.replace(d, group="", literals=()) for d in SERVICE_FORMATS))
    assert len(shared) == 2 and len(apart) == len(SERVICE_FORMATS)
    rng = random.Random(11)
    texts = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(5, 120))).encode() for _ in range(300)]
    found = 0
    for text in texts:
        one, many, pos = Leftmost(shared, text), Leftmost(apart, text), 0  # (``find`` read each time: it narrows)
        while (hit := one.find(pos)) == (other := many.find(pos)) and hit[0] >= 0:
            found += 1
            pos = hit[0] + 1
        assert hit == other, (text, pos)
    assert found > 1000


@pytest.mark.parametrize("line", [
    '$cred = convertto-securestring "Zq8vR2mK9pL4wZ8t" -AsPlainText -Force\n',  # PowerShell: any letter case
    '$cred = CONVERTTO-SECURESTRING "Zq8vR2mK9pL4wZ8t" -ASPLAINTEXT\n',
    'REQUESTHEADER SET X-Api-Key "Zq8vR2mK9pL4wZ8t"\n',  # Apache's directives: any letter case
])
def test_a_services_spelling_in_another_letter_case_is_hidden(line: str) -> None:
    # Behind its literal ("ecureString", "eader"), matched in one letter case, a case-insensitive detector was never
    # searched for these; the shared automaton has no literal to miss.
    cleaned = sanitize_output(line.encode()).text
    assert "Zq8vR2mK9pL4wZ8t" not in cleaned and "[REDACTED:" in cleaned, cleaned
