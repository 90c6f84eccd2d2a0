"""How candidates are found: several RE2 automata merged leftmost-first (``automata.Leftmost``), the URL
detector in an automaton of its own, and the assignment finder's unbounded name prefix (``context_patterns.py``).
Each must find what one alternation of the bounded patterns found, and redact the same."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

import re2

from bot.sanitize import redact
from bot.sanitize.any_candidate import candidate_scan, has_candidate
from bot.sanitize.automata import (
    CONTEXT_PASS,
    TOKEN_PASS,
    UNANCHORED,
    Automaton,
    DetectorPass,
    Leftmost,
    MemoKey,
    _ungrouped,
    re2_options,
)
from bot.sanitize.context_detectors import CONTEXT
from bot.sanitize.context_patterns import _FINDER_NAME, _NAME
from bot.sanitize.detectors import TOKENS, Detector
from bot.sanitize.judge import judge
from bot.sanitize.literals import literal_strings
from bot.sanitize.secret_names import name_kind
from tests.corpora.leaks import LEAKS

BENIGN = sorted((Path(__file__).resolve().parent / "corpora" / "benign").glob("*.txt"))


def _starts(pass_: DetectorPass, data: bytes) -> list[int]:
    find, pos, starts = Leftmost(pass_.finders, data).find, 0, []
    while (start := find(pos)[0]) >= 0:
        starts.append(start)
        pos = start + 1
    return starts


def _one_alternation(detectors: tuple[Detector, ...], data: bytes) -> list[int]:
    """The starts one automaton over every finder reports, the name before an assignment's word bounded: what
    the merged automata replaced."""
    patterns = ((d.finder or d.pattern).replace(_FINDER_NAME, _NAME) for d in detectors)
    union = re2.compile("|".join(f"(?:{_ungrouped(p)})" for p in patterns), re2_options())
    pos, starts = 0, []
    while (start := union._regexp.Match(UNANCHORED, data, pos, len(data))[0][0]) >= 0:
        starts.append(start)
        pos = start + 1
    return starts


def _gated_and_refused(pass_: DetectorPass, parsed: re.Match[bytes]) -> bool:
    """Whether the candidate's detector is skipped on this text for lacking its literals, and its check refuses the
    candidate there: a literal may stand outside the match when the check reads it around the candidate (a Key
    Vault ``"value"`` and its object's id), so without it no candidate of that detector is a secret."""
    index = pass_.branch_of[parsed.lastgroup]  # type: ignore[index]
    detector = pass_.detectors[index]
    if not detector.literals or all(any(choice in parsed.string for choice in literal_strings(literal))
                                    for literal in detector.literals):
        return False
    start, end = parsed.span(f"b{index}_v")
    return judge(detector, parsed, index, parsed.string[start:end])[0] is None


def test_the_merged_automata_report_every_start_one_alternation_reports() -> None:
    texts = [leak.text.encode() for leak in LEAKS] + [path.read_bytes() for path in BENIGN]
    texts.append(b"aws://admin:Sup3rS3cretPw@db.internal/x DB_PASSWORD=hunter2x https://u:p4ssw0rd9@h/\n")
    texts.append(("+" + "a" * 50 + "_token=v1x9 " + "a+" * 30 + "postgres://u:Sup3rS3cretPw@h/\n").encode())
    extra_seen = 0
    for text in texts:
        for pass_, detectors in ((TOKEN_PASS, TOKENS), (CONTEXT_PASS, CONTEXT)):
            merged, single = _starts(pass_, text), _one_alternation(detectors, text)
            # The finder's name reports only names secret_names.name_kind can accept (finder_name.py), where the bounded
            # name takes any with a word inside ("oauth2:" of https://oauth2:<token>@gitlab...): judged no name.
            for start in set(single) - set(merged):
                parsed = pass_.parser.match(text, start)
                if parsed is not None and _gated_and_refused(pass_, parsed):
                    continue
                names = [v for k, v in (parsed.groupdict() if parsed else {}).items() if k.endswith("_name") and v]
                assert names and all(name_kind(n.decode().strip("\"'")) is None for n in names), (text, start)
            # The unbounded name prefix reports more: names the bounded pattern refuses, so it parses nothing there.
            for start in set(merged) - set(single):
                assert pass_.parser.match(text, start) is None
                extra_seen += 1
    assert extra_seen  # the texts above exercise the superset


def test_a_name_too_long_before_its_word_is_skipped_and_the_next_secret_still_found() -> None:
    long_name = "a" * 50 + "_token"
    text = f"{long_name}=v1x9 DB_PASSWORD=hunter2x\n"
    out, count = redact(text)
    assert out == f"{long_name}=v1x9 DB_PASSWORD=[REDACTED:password]\n" and count == 1


def test_a_url_password_is_found_where_another_detector_starts_at_the_same_byte() -> None:
    # "aws" starts both the AWS secret detector and this URL's scheme: the one alternation's choice decides.
    for _ in range(2):  # the second time, a remembered verdict must not hide it
        out, _count = redact("aws://admin:Sup3rS3cretPw@db.internal/x\n")
        assert "Sup3rS3cretPw" not in out and "[REDACTED:" in out


def test_a_url_password_after_a_long_scheme_like_run_is_found() -> None:
    text = "a+" * 40 + "postgres://admin:Sup3rS3cretPw@db.internal/x\n"
    out, _count = redact(text)
    assert "Sup3rS3cretPw" not in out


def test_text_without_the_url_literals_skips_the_url_automaton_but_not_the_rest() -> None:
    assert not has_candidate(b"https-ish text with no scheme separator, user:pw@host\n")
    assert not has_candidate(b'GET https://shop.example.com/orders/1 "Mozilla/5.0" no user here\n')
    assert has_candidate(b"DB_PASSWORD=hunter2x\n") and has_candidate(b"mysql://u:hunter2x@h/\n")


def test_random_base64_has_no_candidates_and_comes_back_unchanged() -> None:
    rng = random.Random(3)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    text = "".join(rng.choice(alphabet) for _ in range(1 << 16))
    assert not has_candidate(text.encode())
    assert redact(text) == (text, 0)


def test_the_short_scan_then_the_anchored_finder_report_what_the_finder_alone_reports() -> None:
    """Review of #11: the assignment, env and XML finders counted their values to 255 in the unanchored scan,
    and on text of overlapping candidates ("aaa..tokenbbb..=" runs) RE2 built DFA states for ever (0.05 MB/s,
    ``bench_sanitize.py`` "name runs"). The scan now looks for a value's first characters only and the finder
    is matched anchored at each hit: the spans must be exactly those of the finder searched on its own."""
    from bot.sanitize.any_candidate import _ANY_CANDIDATE

    rng = random.Random(11)
    runs = "".join("a" * rng.randint(30, 60) + "token" + "b" * rng.randint(30, 50) + "=" for _ in range(40))
    texts = [leak.text.encode() for leak in LEAKS] + [path.read_bytes() for path in BENIGN] + [runs.encode()]
    texts += [b'"password": "abc\nnext" DB_PASS=0000a pass=1234567 pass=12 pass=123456 <token>0000000</token>\n',
              b'- name: DB_PASSWORD\n  value: "12\n- name: API_TOKEN\n  value: 00x\n<add key="DbPassword" value="0a"/>']
    searched = 0
    for automaton in (*CONTEXT_PASS.finders, *TOKEN_PASS.finders, *_ANY_CANDIDATE):
        if automaton.search is None:
            continue
        searched += 1
        for text in texts:
            pos = 0
            while True:
                alone = automaton.finder._regexp.Match(UNANCHORED, text, pos, len(text))[0]
                assert automaton.first(text, pos, len(text)) == alone, (text[:80], pos)
                if alone[0] < 0:
                    break
                pos = alone[0] + 1
    assert searched >= 2


def test_the_azure_storage_key_is_searched_apart_and_still_found_next_to_other_tokens() -> None:
    """Its count to 86 stays alive along any base64: merged with the other detectors it multiplied their DFA
    states (random base64 with ":@._-": 2.1 MB/s at 64 KiB, ``bench_sanitize.py``); apart, they add."""
    from bot.sanitize.any_candidate import _ANY_CANDIDATE

    own = {id(a): a for a in (*TOKEN_PASS.finders, *_ANY_CANDIDATE) if a.literals == (b"==",)}
    assert len(own) == 1 and all(a.finder.pattern.count("{86}") == 1 for a in own.values())
    key = "Ab3" * 28 + "xy=="
    for text in (f"AccountName=x;AccountKey={key} xoxb-1234567890-abcdefghij", f"{key} ghp_{'a1' * 18}",
                 f'"value": "{key}"'):
        out, _ = redact(text)
        assert key not in out and "[REDACTED:" in out, out


def test_every_scan_pattern_ends_at_its_detectors_shortest_match() -> None:
    """Review of #11 (sanspeed): RE2 finds where an unanchored match starts by running a reversed automaton back
    from the match's end, over every alternative of the scan at once. Values counted to 256 or 512 in the scan
    (``curl -u``'s password, ``Authorization:``'s value, ``AccountKey=``) ran that reversed automaton hundreds of
    bytes back at each hit, its threads branching at every ":" of random base64: new DFA states at every hit, so
    "base64 :@._-" took 24-29x longer at 1 MiB than at 64 KiB (``bench_sanitize.py``). A pattern that ends with its
    value's repetition is scanned for its least count (``Detector.search``), the rest matched anchored."""
    import re

    long_tail = re.compile(r"\{\d+,\d{3}\}\)*$")
    shortened = 0
    for detector in (*TOKENS, *CONTEXT):
        scanned = detector.search or detector.finder or detector.pattern
        assert not long_tail.search(scanned), detector.kind
        shortened += bool(long_tail.search(detector.pattern))
    # The others have a fixed length, or a condition after the value that a least count would drop (bearer's
    # end, "@tcp(", a URL's "@host"): those fail verification only on their own trigger, and their reversed runs
    # do not branch.
    assert shortened >= 15


def test_secrets_inside_random_base64_with_separators_are_still_redacted() -> None:
    rng = random.Random(5)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/:@._-"
    noise = ["".join(rng.choice(alphabet) for _ in range(4000)) for _ in range(4)]
    ghp = "ghp" + "_" + "Zx9" * 12
    cases = [(f"curl -u admin:{'Qw7' * 6}x https://h/", "Qw7" * 6), (f"Authorization: Bearer {'Tk3' * 8}", "Tk3" * 8),
             (ghp, ghp), (f"AccountKey={'Az1' * 10};", "Az1" * 10), (f"mysql -u root -p{'My5' * 4} db", "My5" * 4)]
    for line, secret in cases:
        text = f"{noise[0]}\n{noise[1]} {line} {noise[2]}\n{noise[3]}"
        out, count = redact(text)
        assert secret not in out and count >= 1, line


def test_a_recurring_scan_hit_proven_to_be_its_finders_span_skips_the_finder_and_reports_the_same_span() -> None:
    """#11: a pass's alternation mixes detectors with a scan (``search``) and without; a scan hit whose key was
    proven to be a scan-less detector's (``Automaton.searcher``) is reported without the anchored finder match
    (one RE2 call for ``Bearer x`` on every line, not two). Every span must still be the finder's own, also
    where the same key comes back before text that a searched detector could take further."""
    rng = random.Random(5)
    pieces = ["Bearer abcdefgh", "bearer Zx9-q7Lm2Pw8", "aws ", "AWS_SECRET ", "u:p@tcp(h)", "password=x1",
              "Authorization: Bearer abcdefgh", "authorization=", "session=", "<password>", "- name: ", "x", " ",
              "\n", "=", ":", "\"", "'", "DB_PASSWORD=hunter2x", "$apr1$", "token ", "key=", "-----BEGIN",
              # the services' spellings (context_services.py), whose hits the alternation's scan meets too
              "userPassword:: ", "QUFBQUFB", "FTP: PASS ", "---> PASS ", ":password=>", "stats auth u:",
              "proxy_set_header X-Api-Key "]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(20, 400))).encode() for _ in range(60)]
    texts += [leak.text.encode() for leak in LEAKS] + [path.read_bytes() for path in BENIGN]
    texts += [b"Bearer abcdefgh\n" * 50, b"Bearer abcdefgh" * 50, b"x Authorization: Bearer abcdefgh\n" * 20]
    mixed = [a for a in (*CONTEXT_PASS.finders, *TOKEN_PASS.finders) if a.searched is not None]
    assert len(mixed) == 2  # each pass's alternation (the services' shared automaton has no scan of its own)
    for automaton in mixed:
        automaton.plain_spans.clear()
        for _round in range(3):  # seen once, proven, then taken from the memo
            for text in texts:
                find, pos = automaton.searcher(text, len(text)), 0
                while True:
                    alone = automaton.finder._regexp.Match(UNANCHORED, text, pos, len(text))[0]
                    assert find(pos) == alone, (text[:80], pos)
                    if alone[0] < 0:
                        break
                    pos = alone[0] + 1
    assert any(CONTEXT_PASS.finders[0].plain_spans.values())  # the bearer lines' key was proven and used


def test_every_branch_of_both_passes_has_its_group_names_spelled() -> None:
    from bot.sanitize.value_spans import NAME, VALUE

    for pass_ in (TOKEN_PASS, CONTEXT_PASS):
        assert len(pass_.detectors) <= len(NAME) == len(VALUE)
        assert all(f"b{i}_v" in pass_.parser.groupindex for i in range(len(pass_.detectors)))


def test_a_searched_detectors_hit_is_never_taken_as_proven_though_its_bytes_recur() -> None:
    """The proof of ``Automaton.searcher``'s span memo rests on the hit being a scan-less detector's: a searched
    detector's finder may read past the key ("abc" then ".x" first, ".def" later) and end elsewhere."""
    from bot.sanitize.automata import Automaton

    def compiled(pattern: str) -> re2._Regexp:
        return re2.compile(pattern, re2_options())

    automaton = Automaton(compiled(r"(?:abc(?:\.def)?)|(?:xyz)"), (), compiled(r"(?:abc)|(?:xyz)"),
                          compiled(r"(?:abc)"))
    for text in (b" abc.x", b" abc.x", b" abc.x", b" xyz.", b" xyz.", b" xyz."):
        assert automaton.first(text, 0, len(text)) == (1, 4)
    assert automaton.first(b" abc.def", 0, 8) == (1, 8)
    assert automaton.first(b" xyz.def", 0, 8) == (1, 4)
    assert automaton.plain_spans == {b" abc.": False, b" xyz.": True}


def test_the_candidate_check_scans_with_the_passes_own_automata() -> None:
    """One automaton over both passes' alternations multiplied their DFA states: on random base64 it built new
    states for every 8 KiB it had not seen (5 MB/s, ``bench_sanitize.py``), and it kept a DFA budget of its own.
    ``has_candidate`` now scans with the automata the passes search with (no automaton of its own), and says yes
    exactly where one of them hits."""
    from bot.sanitize.any_candidate import _ANY_CANDIDATE

    passes = (*TOKEN_PASS.finders, *CONTEXT_PASS.finders)
    assert len(_ANY_CANDIDATE) == len(passes)
    assert all(any(a is b for b in passes) for a in _ANY_CANDIDATE)
    texts = [leak.text.encode() for leak in LEAKS] + [path.read_bytes() for path in BENIGN]
    texts += [b"random words only\n", b"x" * 5000, b"DB_PASSWORD=hunter2x\n", b"a:1:b:c:d\n"]
    for text in texts:
        hits = any(Leftmost(pass_.finders, text).find(0)[0] >= 0 for pass_ in (TOKEN_PASS, CONTEXT_PASS))
        assert has_candidate(text) or not hits, text[:80]


def test_a_pgpass_line_after_a_long_first_field_is_still_parsed_as_before() -> None:
    """The .pgpass scan takes its first field unbounded (a count to 253 from every line's start multiplied the
    DFA states at the start of every text); the finder still bounds it, so a host name over 253 characters is no
    candidate there, and a real line still is."""
    assert "s3cretPw!" not in redact("db.internal:5432:app:admin:s3cretPw!\n")[0]
    long_host = "h" * 300 + ":5432:app:admin:s3cretPw!\n"
    assert redact(long_host) == (long_host, 0)  # as the bounded pattern has always read it
    together = CONTEXT_PASS.finders[0]
    for text in (long_host.encode(), b"x\n" + long_host.encode(), b"db:5432:app:admin:pw\n" + long_host.encode()):
        alone = together.finder._regexp.Match(UNANCHORED, text, 0, len(text))[0]
        assert together.first(text, 0, len(text)) == alone


def test_the_parsers_branch_is_the_first_detector_whose_pattern_matches_there() -> None:
    """The parser's branches are not groups (``DetectorPass.branch_of``): the group that closed last names the
    branch, and it must be the first detector, in order, whose own pattern matches at the candidate, with the
    same span."""
    import re

    texts = [leak.text.encode() for leak in LEAKS] + [path.read_bytes() for path in BENIGN]
    texts.append(b"password=a1\nBearer abcdefgh\nx pass: x1 <password>p4ss</password> u:p@tcp(h) key=\"v\"\n")
    parsed = 0
    for pass_, detectors in ((TOKEN_PASS, TOKENS), (CONTEXT_PASS, CONTEXT)):
        alone = [re.compile(re.sub(r"(?<![\\(:m])\$", r"\\Z", d.pattern).encode()) for d in detectors]
        for text in texts:
            for start in _starts(pass_, text):
                match = pass_.parser.match(text, start)
                if match is None:
                    continue
                first = next(i for i, pattern in enumerate(alone) if pattern.match(text, start))
                assert pass_.branch_of[match.lastgroup] == first, (text[start : start + 60], first)
                assert alone[first].match(text, start).span() == match.span()  # type: ignore[union-attr]
                parsed += 1
    assert parsed > 200


def test_the_dsn_detector_is_searched_apart_only_in_text_with_its_literals_and_still_found() -> None:
    """Its count to 256 after every "name:" multiplied the context alternation's DFA states on text it had not
    seen (source code at 64 KiB: the scan 1.1 ms, 0.4 without it; realistic logs 8 KiB 18 -> 48 MB/s,
    ``bench_sanitize.py``): apart, searched only in text holding "@" and "(", as every Go MySQL DSN does."""
    own = [a for a in CONTEXT_PASS.finders if a.literals == (b"@", b"(")]
    assert len(own) == 1 and "tcp6?" in own[0].finder.pattern
    for text in ("dsn: app:Sup3rS3cretPw@tcp(db:3306)/app", 'DSN="root:pa55-w0rd@unix(/tmp/mysql.sock)/x"',
                 "x=u:hunter2x@udp(h:1) Bearer abcdefgh12345678 password=Zx9q7Lm2Pw8"):
        out, count = redact(text)
        assert all(s not in out for s in ("Sup3rS3cretPw", "pa55-w0rd", "hunter2x")) and count >= 1, out


def _offered_and_found(automaton: Automaton, data: bytes) -> tuple[list[int], list[tuple[int, int]]]:
    """Every start the searcher offers to ``dismiss`` (dismissing none), and every span it reports."""
    offered: list[int] = []

    def dismiss(start: int) -> bool:
        offered.append(start)
        return False

    find, pos, found = automaton.searcher(data, len(data), dismiss), 0, []
    while (span := find(pos))[0] >= 0:
        found.append(span)
        pos = span[0] + 1
    return offered, found


def test_a_quoted_value_that_never_closes_is_matched_once_and_each_start_still_offered_to_dismiss() -> None:
    """``token="`` then 257 "x", on one line: the assignment's scan hits at the "=" before each quote (the quote
    read as the next name's) and at the quote, and the finder fails at both (the value never closes within 256);
    the second is now known to fail without searching or matching (``Automaton.quoted_name``, 15 -> 28 MB/s in
    ``bench_sanitize.py``). Whatever the text, the searcher must offer ``dismiss`` the same starts (its budget)
    and find the same spans as without the shortcut."""
    assignment = CONTEXT_PASS.finders[CONTEXT_PASS.assignment_automaton]
    assert assignment.quoted_name  # the shortcut is on (off, silently, if the finder's head changed)
    plain = dataclasses.replace(assignment, quoted_name=False, plain_spans={})
    rng = random.Random(11)
    pieces = ['token="', 'password="', "secret='", '="', '""', '"', "'", "=", ":", " ", "\n", "x" * 257, "x" * 40,
              "ab", "_token", "Pass", "-", ".", '\\"', "hunter2-Prod!", "é", "9"]
    texts = [(unit * 40).encode() for unit in ('token="' + "x" * 257, 'password="' + "x" * 257 + "\n")]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 60))).encode() for _ in range(1500)]
    skipped = 0
    for data in texts:
        shortcut = _offered_and_found(assignment, data)
        assert shortcut == _offered_and_found(plain, data), data[:120]
        skipped += len(shortcut[0])
    assert skipped > 1000
    out, count = redact('token="' + "x" * 257 + 'token="' + "x" * 257 + ' password="hunter2-Prod!"')
    assert "hunter2-Prod!" not in out and count == 1, out


def test_a_remembered_verdict_is_taken_inside_the_scan_of_the_last_automaton_left() -> None:
    """``Leftmost``'s ``remembered``: once one automaton is left, a recurring candidate whose span is proven
    (``Automaton.searcher``) is offered to it, and where it gives a resume the scan goes on from there instead of
    returning the hit (a remembered ``Bearer x`` on every line cost a round of the search loop: 18.4 -> 20.5 MB/s at
    64 KiB in ``bench_sanitize.py``). Every other start is found as without it, in order; while two automata are
    live nothing is offered (another's hit could come first or share the start)."""
    value = f"q{random.Random().getrandbits(40):010x}".encode()  # unseen by the process's span memo
    lines = b"Bearer " + value + b"\n"
    data = b"x password=Zx9q7Lm2Pw8 " + lines * 6 + b"token=" + value + b"Kq8 " + lines * 12
    plain = _starts(CONTEXT_PASS, data)
    last_assignment = data.index(b"token=")
    keep_from = len(data) - len(lines) * 3  # the last three lines: "not remembered", found as before
    asked: list[int] = []

    class Memo(dict[MemoKey, int]):
        def get(self, key: MemoKey, default: object = None) -> int | None:  # type: ignore[override]
            return 1  # every candidate offered is "remembered": resume one byte on

    def charge(start: int) -> bool:
        asked.append(start)
        return start < keep_from  # over budget there: returned to the loop

    leftmost, pos, found = Leftmost(CONTEXT_PASS.finders, data, remembered=(Memo(), charge)), 0, []
    while (start := leftmost.find(pos)[0]) >= 0:  # read each time, as run_pass does (narrowing replaces it)
        found.append(start)
        pos = start + 1
    skipped = [start for start in asked if start < keep_from]
    assert skipped and min(asked) > last_assignment, (plain, found, asked)  # only once the assignments are done
    assert any(start >= keep_from for start in asked)
    assert sorted(found + skipped) == plain and not set(found) & set(skipped)  # nothing lost, nothing twice


def test_the_automata_the_candidate_scan_skips_find_nothing_in_that_text() -> None:
    """``candidate_scan`` names the automata it scanned in full without a hit, and the passes then search the same
    bytes without them (``Leftmost``'s ``skip``: ``Bearer x`` on every line had the assignment's automaton and
    the token pass's scanned twice over the whole text). Each automaton it names must find nothing there, and a
    text with a candidate of one pass only names the others it scanned before it."""
    by_id = {id(a): a for a in (*TOKEN_PASS.finders, *CONTEXT_PASS.finders)}
    found, missed = candidate_scan(b"Bearer abcdefgh\n" * 50)
    assignment = CONTEXT_PASS.finders[CONTEXT_PASS.assignment_automaton]
    assert found and id(assignment) in missed and id(TOKEN_PASS.finders[0]) in missed
    # An automaton whose literals the text lacks is named too (the passes asked for its literals a second time):
    # ``x  password      = a1`` is found by the mid-line aligned automaton, after every automaton with literals.
    text = b"x  password      = a1b2c3\n" * 50
    found, missed = candidate_scan(text)
    lacking = [a for a in (*TOKEN_PASS.finders, *CONTEXT_PASS.finders) if a.literals and not a.may_match(text)]
    assert found and len(lacking) > 5 and all(id(a) in missed for a in lacking)
    rng = random.Random(5)
    pieces = ["Bearer abcdefgh", "password=", "Zx9q7Lm2Pw8", "token: ", "https://u:p@h/", "NAME  TOKEN  AGE", "\n", " ",
              "ghp_" + "a" * 36, "x", "=", ":", "@", "(", "kind: Secret"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))).encode()
        found, missed = candidate_scan(text)
        assert found == has_candidate(text)
        for automaton_id in missed:
            assert by_id[automaton_id].first(text, 0, len(text)) == (-1, -1), text
        for pass_ in (TOKEN_PASS, CONTEXT_PASS):
            assert _starts(pass_, text) == _starts_skipping(pass_, text, missed), text


def _starts_skipping(pass_: DetectorPass, data: bytes, skip: frozenset[int]) -> list[int]:
    leftmost, pos, starts = Leftmost(pass_.finders, data, skip=skip), 0, []
    while (start := leftmost.find(pos)[0]) >= 0:
        starts.append(start)
        pos = start + 1
    return starts


def test_line_start_scans_count_no_run_of_name_characters_and_long_names_read_as_before() -> None:
    """Base64 in lines (a CA bundle, b64speed #11): each line is a fresh run of name characters from a line's start,
    and the environment line's ``{0,40}`` around its word and an htpasswd user's ``{1,64}``, counted in the scan
    beside the pass's other threads, spent the automaton's DFA budget all along the text (1-2 MB/s). The scans take
    those runs unbounded; the finder still bounds them, so a name too long is no candidate, as before."""
    import re

    counted_run = re.compile(r"\[A-Za-z0-9_\.@?-\]\{\d*,?\d+\}")
    for detector in CONTEXT:
        if detector.kind in ("env_line", "password_hash"):
            assert detector.search and not counted_run.search(detector.search), detector.kind
            assert counted_run.search(detector.pattern), detector.kind  # the bound is the parser's and finder's
    htpasswd, env = "admin:$apr1$abcdefgh$0123456789abcdefghijkl\n", "DB_PASSWORD=Xk9#mQ2vL7pRw\n"
    assert "0123456789abcdefghijkl" not in redact(htpasswd)[0]
    assert "Xk9#mQ2vL7pRw" not in redact(env)[0]
    together = CONTEXT_PASS.finders[0]
    for text in ("u" * 70 + htpasswd, "A" * 45 + env, "x\n" + "u" * 70 + htpasswd + env, env + "A" * 45 + env):
        data = text.encode()
        alone = together.finder._regexp.Match(UNANCHORED, data, 0, len(data))[0]
        assert together.first(data, 0, len(data)) == alone, text


def test_a_candidate_only_its_own_automaton_found_parses_alone_as_the_whole_alternation_does() -> None:
    """``DetectorPass.own_branches``: where only one own automaton hit (``Leftmost.source``, not ambiguous), the
    branch of its one detector parsed alone gives the whole parser's match (same branch, same span and groups);
    the loop skips the branches before it there (a mid-line aligned name paid for 55 of them)."""
    texts = [leak.text.encode() for leak in LEAKS] + [path.read_bytes() for path in BENIGN]
    texts += [b"x  password      = a1b2c3\n" * 3, b"x  password      a1b2c3d4\n" * 3,
              b"web  SECRET_TOKEN       Xk9mQ2vL7pRt4wZ8\n", b"u:p@tcp(h:3306)/d https://hooks.slack.com/x\n",
              # the services' shared automaton (``Detector.group``): its branches parsed together, in their order
              b'proxy_set_header X-Api-Key "a1b2c3d4";\nuserPassword:: QUFBQUFB\nFTP: PASS Zq8vR2\n:password=>"ab"\n',
              b'1) "requirepass"\n2) "Zq8vR2"\nSECRET_KEY_BASE:     Zq8vR2mK9pL4\n"x.password":{"value":"Zq8"}\n']
    checked = 0
    for pass_ in (TOKEN_PASS, CONTEXT_PASS):
        assert len(pass_.own_branches) == len(pass_.finders)
        for text in texts:
            leftmost, pos = Leftmost(pass_.finders, text), 0
            while (start := leftmost.find(pos)[0]) >= 0:
                pos = start + 1
                if leftmost.ambiguous or not (branches := pass_.own_branches[leftmost.source]):
                    continue
                alone = pass_.parse_alone(branches)(text, start)
                whole = pass_.parser.match(text, start)
                if alone is None:
                    continue  # (the loop then parses with the whole alternation)
                assert whole is not None and pass_.branch_of[whole.lastgroup] in branches  # type: ignore[index]
                assert pass_.branch_of[whole.lastgroup] == pass_.branch_of[alone.lastgroup]  # type: ignore[index]
                groups = alone.groupdict()
                assert alone.span() == whole.span() and groups == {name: whole[name] for name in groups}
                assert all(value is None for name, value in whole.groupdict().items() if name not in groups)
                checked += 1
    assert checked > 20
