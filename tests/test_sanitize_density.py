"""What keeps the redactor's Python work bounded: the finder's value conditions, the verdict memo and the density
budget (``bot/sanitize/candidates.py``). Each must keep every secret redacted and leave ordinary text alone."""

from __future__ import annotations

import re

from bot.sanitize import redact, sanitize_output
from bot.sanitize.automata import CONTEXT_PASS, Leftmost
from bot.sanitize.candidates import BYTES_PER_UNIT, DENSE_KIND, FREE_UNITS

DENSE = f"[REDACTED:{DENSE_KIND}]"


def _hits(text: str) -> int:
    """How many candidates RE2 reports in the context pass (each one costs Python work)."""
    data, pos, hits = text.encode(), 0, 0
    find = Leftmost(CONTEXT_PASS.finders, data).find
    while (start := find(pos)[0]) >= 0:
        hits, pos = hits + 1, start + 1
    return hits


def test_values_every_context_rejects_are_not_even_candidates() -> None:
    text = '"input_tokens": 1834, "retries": 3, pass: x, token="ab" secret_count=12 <token>ab</token>\n'
    assert _hits(text) == 0
    assert redact(text) == (text, 0)


def test_values_the_finder_keeps_are_still_redacted() -> None:
    # seven digits or more, three characters, a digit before a letter: all possible passwords
    for value in ("8392013", "abc", "1x9", "12ab", "1.2.3"):
        out, count = redact(f"DB_PASSWORD={value}\n")
        assert count == 1 and value not in out, value
    assert redact('{"password": "8392013"}')[0] == '{"password": "[REDACTED:password]"}'
    assert redact("<password>8392013</password>")[0] == "<password>[REDACTED:password]</password>"


def test_a_remembered_rejection_never_hides_the_same_text_where_it_is_a_secret() -> None:
    # In prose the value must look generated; at a line's start the same bytes are a password. The first
    # verdict depends on its line, so it is not remembered.
    prose = "for the rest see docs, password: correcthorse should be rotated\n"
    assert redact(prose)[0] == prose
    out, count = redact("password: correcthorse\n")
    assert count == 1 and "correcthorse" not in out
    assert redact(prose)[0] == prose


def test_remembered_rejections_give_the_same_output() -> None:
    line = "level=info token_type=refresh key_id=k-17 msg=ok\n"
    once = redact(line)[0]
    assert once == line
    assert redact(line * 500)[0] == line * 500


def test_dense_candidates_are_redacted_as_one_run_and_nothing_in_it_leaks() -> None:
    secrets = [f"s3cret-{i:05x}" for i in range(4000)]
    text = "".join(f"password={s}\n" for s in secrets) + "after the dense run: DB_PASSWORD=tail-s3cret\n"
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert DENSE in out
    assert not any(s in out for s in secrets)
    assert "tail-s3cret" not in out


def test_varied_dense_rejections_are_cut_at_a_line_end_and_the_rest_is_still_searched() -> None:
    units = "".join(f"x secretName{i:x}: yyy\n" for i in range(20000))
    text = units + "export GITHUB_TOKEN_VALUE=" + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + "\n"
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert DENSE in out and "ghp_" not in out
    for piece in out.split("\n"):  # what is kept is whole lines of the input, or the marker at a line's start
        assert piece == "" or piece.startswith(DENSE) or piece + "\n" in text or "REDACTED" in piece


def test_the_budget_leaves_output_below_it_untouched() -> None:
    # One candidate judged per line of ~90 bytes, all different: under the budget however long the text.
    line = "2026-12-01T08:15:{i:05d}Z INFO web secret_name=api-token-{i} rotated by ops-team ok\n"
    text = "".join(line.format(i=i) for i in range(3000))
    assert len(text) // 3000 > BYTES_PER_UNIT * 2 and FREE_UNITS < 3000
    assert sanitize_output(text.encode(), output_limit=1 << 30).text == text


def test_dense_marker_only_where_candidates_come_denser_than_the_budget() -> None:
    # Judged (the name is a password's, the verdict depends on the line) and rejected (prose), every 15 bytes.
    text = "note pass: abc\n" * 5000
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert out.startswith("note pass: abc\n" * 40)  # the free allowance
    assert out.count(DENSE) >= 1
    assert re.fullmatch(r"(?:note(?: pass: abc\n|\[REDACTED:dense_candidates\]\n?))+", out)


def test_a_kubectl_describe_run_of_secret_references_stays_whole_up_to_the_documented_length() -> None:
    # Each line's name is new and its verdict depends on the line (prose follows the value): a full judgement
    # per line, the costliest ordinary case. The README promises ~70 such lines in a row come out unchanged.
    line = "      DB_PASSWORD_{i}:  <set to the key 'password' in secret 'db-credentials-{i}'>  Optional: false\n"
    text = "".join(line.format(i=i) for i in range(70))
    assert sanitize_output(text.encode(), output_limit=1 << 30).text == text


def test_names_dismissed_in_the_scan_still_spend_the_budget_and_hide_nothing() -> None:
    # A known harmless name (x_token_id) is dismissed inside the RE2 scan loop (candidates.run_pass.dismiss),
    # without the anchored finder match: the same verdicts, and the same budget, as in the loop.
    lines = [f"m x_token_id=abc{i:x}\n" for i in range(300)]
    lines[150] = "m x_token_id=abc y DB_PASSWORD=hunter2x\n"
    out = sanitize_output("".join(lines).encode(), output_limit=1 << 30).text
    assert "hunter2x" not in out and out.replace("[REDACTED:password]", "hunter2x") == "".join(lines)
    # Denser than the budget (one every 16 bytes, one line): cut, and a secret after the cut line still found.
    dense = "".join(f"x_token_id=a{i:04x} " for i in range(20000)) + "\nnext DB_PASSWORD=hunter2x\n"
    out = sanitize_output(dense.encode(), output_limit=1 << 30).text
    assert DENSE in out and "hunter2x" not in out and "[REDACTED:password]" in out


def test_code_expressions_dismissed_in_the_scan_keep_every_literal_redacted() -> None:
    # A secret's name whose value is an expression of code is dismissed inside the scan (run_pass.dismiss) and
    # the verdict remembered on the head, the value and the byte after it: the same name and value followed by
    # another byte is judged again ("password: admin.secret," is code's field, "password: admin.secret" alone
    # a YAML literal).
    lines = []
    for i in range(150):  # a new expression costs what the loop charged (4 units), a remembered one 1
        lines += [f"src/billing/settings.py:{i}:    password = settings.DB_{i:x}_PASSWORD\n"]
        lines += ["src/billing/config.go:88:\tpassword: admin.secret,\n"] * 5
    lines[301] = "\tpassword: admin.secret\n"
    lines[555] = "    password = hunter2-Prod!\n"
    lines[700] = "    password = settings.DB_PASSWORD hunter2x\n"
    out = sanitize_output("".join(lines).encode(), output_limit=1 << 30).text
    assert DENSE not in out
    assert out.splitlines(keepends=True)[301] == "\tpassword: [REDACTED:password]\n"
    assert "hunter2-Prod!" not in out and "[REDACTED:password]" in out.splitlines()[555]
    others = [line for n, line in enumerate(out.splitlines(keepends=True)) if n not in (301, 555, 700)]
    assert others == [line for n, line in enumerate(lines) if n not in (301, 555, 700)]


def test_code_expressions_dismissed_in_the_scan_still_spend_the_budget() -> None:
    # Each new expression costs what the loop charged for it (more than the bytes of a short line earn), so a
    # long run of short, different ones reaches the budget and is cut, and a secret after it is still found.
    text = "".join(f"pass=cfg.v{i}\n" for i in range(20000)) + "next DB_PASSWORD=hunter2x\n"
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert DENSE in out and "hunter2x" not in out


def test_a_start_another_detector_shares_is_judged_by_that_detector_too() -> None:
    # At a line's start "NAME=value" is an environment line as well as an assignment: the scan leaves such a
    # start to the loop (run_pass.dismiss), whose full parse judges it as the environment line (a literal, even
    # where it reads like code), while the same assignment indented in source code is an expression and stays.
    text = "DB_PASSWORD=settings.DB_PASSWORD\n    password = settings.DB_PASSWORD\nAPI_TOKEN=cfg.token_value\n"
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert out == ("DB_PASSWORD=[REDACTED:password]\n    password = settings.DB_PASSWORD\n"
                   "API_TOKEN=[REDACTED:token]\n")


def test_a_name_out_of_the_bounded_patterns_reach_is_refused_without_the_parse_and_only_then() -> None:
    """``assignment_screen._within_reach`` says False only where the bounded name pattern cannot take the name, so the
    parse it skips would have failed: checked on generated names of every length around the reach."""
    import random

    from bot.sanitize.assignment_screen import _within_reach
    from bot.sanitize.context_patterns import _NAME

    bounded = re.compile(_NAME.encode())
    rng = random.Random(3)
    words = ["pass", "PWD", "Secret", "token", "credential", "signature", "auth", "key", "Key", "_key",
             "sharedaccess_key", "ApiKey", "x", "9", "-", "."]
    refused = 0
    for _ in range(20000):
        name = "a" * rng.randint(0, 70) + "".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
        name += "b" * rng.randint(0, 45)
        if not _within_reach(name.encode()):
            refused += 1
            assert bounded.fullmatch(name.encode()) is None, name
    assert refused > 1000


def test_a_text_cleaned_cold_then_warm_shows_no_secret_either_time() -> None:
    """The budget's charge depends on the process's memories (README: *Known limit*), so the dense marker may
    fall elsewhere the second time; what it never does is show a secret. Near the budget: a recurring rejected
    candidate on every line (cheap once remembered) between passwords of a new name each."""
    lines = []
    for i in range(3000):
        lines.append(f"level=info token_type=refresh-{i % 7} key_id=k-{i % 5} msg=ok\n")
        if i % 3 == 0:
            lines.append(f"svc{i}_password: Xk9#mQ2vL8pR{i:05d}\n")
    text = "".join(lines).encode()
    secrets = [f"Xk9#mQ2vL8pR{i:05d}" for i in range(0, 3000, 3)]
    cold = sanitize_output(text, output_limit=1 << 30).text
    warm = sanitize_output(text, output_limit=1 << 30).text
    for out in (cold, warm):
        assert not any(s in out for s in secrets)
