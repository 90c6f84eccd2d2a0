"""The sanitizer's memory bound: every RE2 automaton it compiles carries the same DFA budget and never writes to
stderr itself, and a real ``fisk-chatops exec`` cleaning varied output prints nothing from RE2.

RE2 keeps the DFA states it builds up to ``max_mem`` per automaton; the growth this bounds is measured by
``bench/bench_rss.py`` (README "Resident memory"), not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import re2

from bot.sanitize import build_redactor
from bot.sanitize.any_candidate import _ANY_CANDIDATE, _NARROW_CANDIDATE, _region_splits
from bot.sanitize.automata import CONTEXT_PASS, MAX_MEM_PER_AUTOMATON, TOKEN_PASS
from tests.support.fisk_app import make_script

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "fisk" / "opsctl.introspect.json"


def _all_automata() -> list[re2._Regexp]:
    redactor = build_redactor(["a-credential-value-42"], [r"corp-[0-9]{6}"])
    narrowed = (automaton for automata in _NARROW_CANDIDATE for automaton in automata)
    crossing = (split.crossing for split in _region_splits().values() if split.crossing is not None)
    finders = (*_ANY_CANDIDATE, *TOKEN_PASS.finders, *CONTEXT_PASS.finders, *narrowed, *crossing)
    automata = [a.finder for a in finders] + [a.search for a in finders if a.search is not None]
    return automata + [redactor.values, *redactor.custom]  # type: ignore[list-item]


def test_every_compiled_automaton_has_the_bounded_budget_and_logs_nothing() -> None:
    automata = _all_automata()
    assert len(automata) >= 10
    for automaton in automata:
        assert automaton.options.max_mem == MAX_MEM_PER_AUTOMATON
        assert automaton.options.log_errors is False
    assert MAX_MEM_PER_AUTOMATON <= 32 << 20


def test_no_automaton_is_too_large_for_its_budget_to_keep_a_dfa() -> None:
    # Measured: the largest automaton (~146k instructions) kept its DFA with 20 MiB and lost it with 16 (then
    # every search runs on RE2's NFA, 20x slower): about 7,300 instructions per MiB works. Keep a 1.5x margin, so
    # a detector that grows an automaton past it is noticed here, not as a silent slowdown.
    largest = max(automaton.programsize for automaton in _all_automata())
    assert largest <= (MAX_MEM_PER_AUTOMATON >> 20) * 4800, largest


# Runs the detector automata with the smallest budget that compiles them, far too small for their DFA, so RE2
# falls back to its NFA on every search: with log_errors as re2_options sets it nothing reaches stderr, and the
# redaction is the same.
_STARVED = """
import sys
import re2
from bot.sanitize import automata, candidates
from bot.sanitize.context_detectors import CONTEXT
options = automata.re2_options()
options.log_errors = sys.argv[1] == "on"
automata.re2_options = lambda: options
for mebibytes in range(1, 64):  # the smallest budget that still compiles: no room left for a DFA
    options.max_mem = mebibytes << 20
    try:
        starved = automata._compile_pass(CONTEXT)
        break
    except re2.error:
        continue
text = b"ok\\npassword: Xq7vR2mK9pL4wZ8t\\n" + b"token_type=bearer id=7 " * 200
print(candidates.run_pass(text, starved, lambda kind, secret: b"<" + kind.encode() + b">")[0] ==
      candidates.run_pass(text, automata.CONTEXT_PASS, lambda kind, secret: b"<" + kind.encode() + b">")[0])
"""


def test_an_automaton_out_of_dfa_memory_still_redacts_and_writes_nothing_to_stderr() -> None:
    quiet = subprocess.run([sys.executable, "-c", _STARVED, "off"], capture_output=True, text=True, cwd=ROOT,
                           timeout=120)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.strip() == "True" and quiet.stderr == ""
    # The same run with RE2's logging on does write: the quiet run above is quiet because of log_errors.
    loud = subprocess.run([sys.executable, "-c", _STARVED, "on"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert loud.stdout.strip() == "True" and "DFA out of memory" in loud.stderr


def test_exec_cleaning_varied_output_writes_no_re2_errors(tmp_path: Path) -> None:
    body = (
        "import base64, random, sys\n"
        f"if sys.argv[1:] == ['--fisk-introspect']:\n    sys.stdout.write(open({str(FIXTURE)!r}).read())\n"
        "    raise SystemExit(0)\n"
        "rng = random.Random(3)\n"
        "heads = ['token=', 'password: ', 'key_id=', 'https://u:p@h/', 'AKIA', 'eyJ', 'secret ', 'sk-', '=']\n"
        "for _ in range(1500):\n"
        "    print(base64.b64encode(rng.randbytes(30)).decode(), rng.choice(heads) +"
        " base64.b64encode(rng.randbytes(rng.randint(8, 30))).decode())\n"
        "print('db_password: Xq7vR2mK9pL4wZ8tYb3n')\n"
    )
    app = make_script(tmp_path, "varied", body)
    result = subprocess.run([sys.executable, "-m", "bot.cli", "exec", "--app", str(app), "service_status",
                             '{"service":"web"}'], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "DFA" not in result.stderr and "re2" not in result.stderr.lower()
    output = json.loads(result.stdout)["output"]
    assert "Xq7vR2mK9pL4wZ8tYb3n" not in output and "[REDACTED:" in output
