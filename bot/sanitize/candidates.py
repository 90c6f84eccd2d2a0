"""Finding and judging secret candidates: one RE2 search loop per detector pass, each candidate judged in Python.

RE2 finds where a candidate starts (a DFA scan, linear, no backtracking); Python's ``re`` takes that one
candidate apart in a bounded window and ``shapes`` judges its name and value. Two things keep the Python part
cheap and bounded whatever the text:

- **Verdict memo.** A rejection that depends only on the candidate's own bytes (a describing name such as
  ``token_type=``, a trivial value, a value that does not look generated) is remembered, keyed on those bytes
  and the one byte on each side (which decides ``^``, ``$`` and ``\\b``). Logs repeat themselves, so most
  candidates of ordinary output are then dismissed after the RE2 search alone. Only rejections are memoized (an
  accepted candidate is parsed to find the value to replace), and only short candidates, in a bounded table.
- **Density budget.** An RE2 hit costs about a microsecond of Python and judging a candidate several more, so
  text that is nothing but candidates (``pass: abc`` on every line, each one different) would run at a few
  MB/s. A pass spends one unit per hit, ``JUDGEMENT_UNITS`` more per candidate it judges and ``ACCEPT_UNITS``
  more per redaction, and may spend ``FREE_UNITS`` plus one per ``BYTES_PER_UNIT`` bytes of text before the
  candidate. A candidate beyond that budget is not judged: the text from it to the end of the line
  ``DENSE_SPAN`` bytes on is replaced by one ``[REDACTED:dense_candidates]`` marker and never searched again.
  That fails closed (nothing in a dense run can leak) and bounds the Python work per byte by a constant,
  whatever the text. Ordinary output stays below it (the benign corpora, the realistic bench input, a describing
  or recurring name on every line; an integer or a one- or two-character value is not even a hit, see
  ``Detector.finder``); a long run of lines each needing a full judgement (a new password-like name with a
  prose value on every line) can reach it, and then parts of that run show the marker.

The automata this loop searches with are built in ``automata.py``; the cheap questions it asks of an assignment
before judging it (its head, its name, whether its value is code) are ``assignment_screen.py``'s, whether a token
pass's candidate is a hint it reports is ``reports.py``'s, and a candidate that must be judged in full is judged by
``judge.py``. This module is the loop, its verdict memo and its density budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.sanitize.assignment_screen import (
    _ASSIGNMENT_HEAD,
    _CODE_VALUE,
    _HARMLESS_NAMES,
    _LINE_READING_LAST,
    _PASSWORD_NAMES,
    _assignment_head,
    _code_expression,
    _general_expression,
    _hinted,
    _judge_name,
    _opens_its_line,
    _plain_word,
    _quoted,
    _within_reach,
    name_beyond_reach,
)
from bot.sanitize.automata import MEMO_ENTRIES, MEMO_KEY_BYTES, DetectorPass, Leftmost, MemoKey, memo_key
from bot.sanitize.blankless import finders_for
from bot.sanitize.characters import whole_characters
from bot.sanitize.cheap_rejection import (
    PARSED_CHECKS,
    READ_ON,
    arrow_ahead,
    refuse_head,
    refuse_parsed,
    unrefusable_password_word,
)
from bot.sanitize.code_expressions import settings_reference
from bot.sanitize.detectors import VALUE_BOUND, lead_start
from bot.sanitize.judge import changed_kind, judge, reads_name_first
from bot.sanitize.reports import Reports, reported_hint
from bot.sanitize.value_spans import (
    NAME,
    changed_to,
    extended_end,
    quoted_span,
    reads_line,
    unclosed_long_value,
)

Marker = Callable[[str, bytes], bytes]

# The density budget (see the module docstring).
FREE_UNITS = 512
BYTES_PER_UNIT = 32
HEAD_UNITS = 1
NAME_UNITS = 2
JUDGEMENT_UNITS = 6
PARSE_UNITS = 3  # the anchored parse alone, the first half of a judgement (about 3 us of the 6-8)
EXPRESSION_UNITS = 2  # an assignment whose value is an expression of code, dismissed without the full parse
SCREEN_UNITS = 1  # a password's plain word screened in the scan and left to the full judgement (``dismiss``)
LOOKUP_UNITS = 1  # a parsed candidate's name looked up before the judgement, which then follows (``run_pass``)
CHEAP_UNITS = 2  # an assignment's value read and refused alone (``cheap_rejection``), asked before a judgement
READ_ON_UNITS = 3  # a cheap refusal that read on to the line's end or a glued tail, as judge reads it
ACCEPT_UNITS = 4
REPORT_UNITS = 2  # a hint the token pass reports (``reports.py``), beyond the unit every candidate costs
DENSE_SPAN = 4096
DENSE_KIND = "dense_candidates"
# The verdict memo: candidates up to this many bytes, at most this many remembered (then it starts over).
_MEMO_KEY_BYTES = MEMO_KEY_BYTES
_MEMO_ENTRIES = MEMO_ENTRIES
# Assignments (head, value, the byte after it) whose value is an expression of code (``_code_expression``); only
# keys of up to ``_MEMO_KEY_BYTES`` bytes.
_CODE_EXPRESSIONS: set[bytes] = set()
# The longest unquoted value ``refuse_in_scan`` reads: the shapes it refuses are short, and reading a long one
# (``aaa..._token=aaa..._token=...``, 256 name characters) cost more than the loop's refusal.
_CHEAP_VALUE_BYTES = 96
# Assignments (head, value, the byte after it) refused by their value alone (``cheap_rejection``) in the scan; only
# keys of up to ``_MEMO_KEY_BYTES`` bytes.
_REFUSED_HEADS: set[bytes] = set()
def _remember(rejected: dict[MemoKey, int], key: MemoKey, resume: int) -> None:
    if len(rejected) >= _MEMO_ENTRIES:
        rejected.clear()  # bounded memory; ordinary logs refill it with their few recurring candidates at once
    rejected[key] = resume


def _dense_end(data: bytes, start: int) -> int:
    """Where a run of candidates over budget is cut: the end of the line ``DENSE_SPAN`` bytes on (one forward
    scan; the text up to there is replaced and never searched again)."""
    newline = data.find(b"\n", min(len(data), start + DENSE_SPAN))
    return len(data) if newline < 0 else newline


def run_pass(
    data: bytes, pass_: DetectorPass, marker: Marker, reports: Reports | None = None,
    skip: frozenset[int] = frozenset(),
) -> tuple[bytes, int]:
    """One search loop over ``data``; each search resumes where the previous secret ended (see detectors.py).

    ``reports``: where a table's header may name a secret's column (``tables.HEADER_HINT``) and where a command is
    echoed (``echoed.ECHO_HINT``), both branches of the token pass, are added to it for the caller to read those
    lines (nothing is redacted for them here; without ``reports`` the branches are candidates that are rejected).
    ``skip``: automata (their ``id``) known to find nothing in ``data`` (``any_candidate.candidate_scan``), not
    searched."""
    pieces: list[bytes] = []
    edits = reports.edits if reports is not None else None  # what was replaced, for the reports' spans to join
    data_length = len(data)
    last = pos = count = spent = 0
    assignment = pass_.assignment_automaton
    # What ``dismiss`` read at the last start it did not dismiss, for the loop not to read it again: the head, and
    # the start whose value it found to be no expression of code.
    scanned_head: re.Match[bytes] | None = None
    scanned_value: re.Match[bytes] | None = None  # ``_CODE_VALUE`` at ``scanned_head``'s end, when it was read
    not_expression_at = not_refused_at = reach_at = -1
    in_reach = True  # ``_within_reach`` of the name at ``reach_at``, asked by ``refuse_in_scan``
    # How far the assignment automaton's scan has dismissed candidates (``dismiss``): it runs ahead of the loop,
    # charging the budget for text the loop has not reached yet, so the loop's allowance counts the bytes read up to
    # there too (the Python work stays within ``FREE_UNITS`` plus a unit per ``BYTES_PER_UNIT`` bytes read).
    reach = 0

    def dismiss(start: int) -> bool:
        """An assignment the loop below would only dismiss, dismissed in the scan while the budget lasts: a name
        that holds no secret (``token_type=``, ``secretName:``; one unit when the name was judged before, as a
        remembered verdict, else what the loop charges for judging it), or a secret's name whose value is an
        expression of code (``password = settings.DB_PASSWORD``: what the loop charges for that dismissal). Either
        costs less here (no anchored finder match, no memo key, no round of the loop: that saved about half of a
        dismissed line of source code). Another detector's candidate at the same start is still reported by its
        own automaton, and wins there as it does in the one alternation (the loop too judges the assignment only
        where no other automaton hits)."""
        nonlocal spent, scanned_head, scanned_value, not_expression_at, not_refused_at, reach
        reach = start  # (each scan moves forward: its dismissals come in order)
        budget = FREE_UNITS + start // BYTES_PER_UNIT
        if spent + 1 > budget:
            return False  # over budget: reported, so that the loop cuts the run there
        head = scanned_head = head_match(data, start)
        scanned_value = None
        if head is None:
            if name_beyond_reach(data, start):  # no name the parse takes: dismissed as the loop would (below)
                spent += 1
                return True
            return False
        name = head[1]  # (``m[i]``, not ``m.group(i)``: half the cost, read several times on every line of code)
        harmless = harmless_names(name)
        cost = 1  # what the loop charges a remembered verdict
        if harmless is None:  # judged here, charged as the loop charges it (it will not judge it again)
            if spent + 1 + HEAD_UNITS + NAME_UNITS > budget:
                return False
            spent += NAME_UNITS
            harmless = _judge_name(name)
            cost += HEAD_UNITS
        if harmless:
            spent += cost
            return True
        whole = head[0]
        if 34 in whole or 39 in whole:  # ``_quoted``, inline (asked on every line of source code)
            return False
        for hit in leftmost.hits:  # the other automata's are current (this one is searched last, ``Leftmost``)
            if hit[0] == start:
                return False  # shared: the loop parses it in full (password=x is an environment line too)
        value = scanned_value = value_match(data, head.end())
        if value is None:
            not_expression_at = start  # no value: as _code_expression decides (the loop need not ask again)
            return refuse_in_scan(start, head, None, b"", budget)
        shown = value[1]
        # What the verdict reads: the head, the value and the one byte after it (``_code_expression``).
        value_end = value.end()
        if _plain_word(shown):
            # No ``_hinted``'s hint (then no remembered expression either: only hinted values are): as
            # _code_expression decides (the loop need not ask again)
            not_expression_at = start
            if _PASSWORD_NAMES.get(name) and unrefusable_password_word(shown, data[value_end : value_end + 1]):
                # A password's plain word with no words after it (a password, or ``pass: x{i}`` on every line):
                # nothing cheap refuses it (``cheap_rejection.refuse_head``'s screen), so the loop judges it in
                # full; this screen is charged its unit
                spent += SCREEN_UNITS
                not_refused_at = start
                return False
        key = data[start : value_end + 1] if value_end - start < _MEMO_KEY_BYTES else b""
        if key and key in _REFUSED_HEADS and (key[-1] != 32 or not arrow_ahead(data, value_end)):
            # a remembered refusal (``refuse_in_scan``), unless a plan's change follows (``(sensitive value) ->``)
            spent += 1
            return True
        if not_expression_at == start:
            return refuse_in_scan(start, head, value, key, budget)
        # A remembered verdict (``grep`` prints the same call on many lines; the same bytes hold the same hint, so
        # it need not be looked for again), unless a key line's whole value is judged.
        if key and key in code_expressions and not (
            (key[-1] in _LINE_READING_LAST or value_end == data_length) and reads_line(data, value.start(1), value_end)
            and _opens_its_line(data, head.start(1))
        ):
            spent += 1
            return True
        # A settings reference is hinted (each of its separators holds a hint character), and an expression
        # whatever follows it: asked first, it spares the hint's search and _code_expression's round.
        settings = settings_reference(shown)
        if not settings and not _hinted(shown):
            not_expression_at = start
            return refuse_in_scan(start, head, value, key, budget)
        cost = 1 + HEAD_UNITS + EXPRESSION_UNITS
        if spent + cost > budget:
            return False
        if not settings and not _general_expression(data, head, value, hinted=True):
            not_expression_at = start  # the loop need not ask again
            return refuse_in_scan(start, head, value, key, budget)
        if key:  # (a key line's "expression" is what code_reference said of the key's bytes too, as anywhere)
            if len(code_expressions) >= _MEMO_ENTRIES:
                code_expressions.clear()
            code_expressions.add(key)
        spent += cost
        return True

    # Looked up once per pass, not at every candidate (each is a global then an attribute): the tables are cleared
    # in place, never replaced, so these stay theirs.
    head_match, value_match = _ASSIGNMENT_HEAD.match, _CODE_VALUE.match
    harmless_names, code_expressions = _HARMLESS_NAMES.get, _CODE_EXPRESSIONS

    def refuse_in_scan(
        start: int, head: re.Match[bytes], value: re.Match[bytes] | None, key: bytes, budget: int
    ) -> bool:
        """An assignment whose value alone says no (``cheap_rejection``), dismissed in the scan as a code expression
        is, charged what the loop would charge for it (the hit, the head, ``CHEAP_UNITS``); remembered under the
        bytes the verdict read (the head, the value and the byte after it: ``key``) where it read no more."""
        nonlocal spent, not_refused_at, reach_at, in_reach
        cost = 1 + HEAD_UNITS + CHEAP_UNITS
        if spent + cost > budget:
            return False  # reported, so that the loop cuts the run there
        if value is not None and value.end() - value.start(1) > _CHEAP_VALUE_BYTES:
            not_refused_at = start
            return False  # a long value: the shapes refused cheaply are short, and reading a long one costs more
        reach_at, in_reach = start, _within_reach(head.group(1))
        if not in_reach:
            not_refused_at = start
            return False  # a name the parse refuses at length: the loop refuses it without judging
        verdict = refuse_head(data, head, value.end() if value is not None else -1, value)
        if verdict is None:
            spent += CHEAP_UNITS  # the loop will not ask again
            not_refused_at = start
            return False
        spent += cost if verdict != READ_ON else cost + READ_ON_UNITS
        if verdict == 1 and key:
            if len(_REFUSED_HEADS) >= _MEMO_ENTRIES:
                _REFUSED_HEADS.clear()
            _REFUSED_HEADS.add(key)
        return True

    rejected, branch_of = pass_.rejected, pass_.branch_of

    def charge(start: int) -> bool:
        """Spend the one unit a remembered rejection of the candidate at ``start`` costs, as the loop below would,
        and say True; False (nothing spent) when it is over budget, for the loop to cut the run there. Asked by
        the scan of the last automaton left (``Leftmost``'s ``remembered``), where the candidate is the loop's next
        one and not ambiguous, so a recurring one (``Bearer x`` on every line) costs one RE2 call and this, not a
        round of the loop."""
        nonlocal spent
        if spent + 1 > FREE_UNITS + (start if start > reach else reach) // BYTES_PER_UNIT:
            return False
        spent += 1
        return True

    finders, skip = finders_for(pass_, data, skip)  # (text without blanks: narrower scans, the same hits)
    leftmost = Leftmost(finders, data, dismiss if assignment >= 0 else None, assignment, (rejected, charge), skip)
    parsers, length = pass_.parsers, len(data)  # the parser for the candidate's first byte
    assignment_parse = pass_.assignment_parser.match if pass_.assignment_parser is not None else None
    own_branches, parse_alone = pass_.own_branches, pass_.parse_alone
    while (span := leftmost.find(pos))[0] >= 0:  # ``find`` is read each time: ``Leftmost`` narrows it
        candidate_start, candidate_end = span
        spent += 1
        if spent > FREE_UNITS + (candidate_start if candidate_start > reach else reach) // BYTES_PER_UNIT:
            candidate_start, end = whole_characters(data, candidate_start, _dense_end(data, candidate_start), last)
            pieces += (data[last:candidate_start], marker(DENSE_KIND, data[candidate_start:end]))
            if edits is not None:
                edits.append((candidate_start, end, pieces[-1]))
            last = pos = end
            count += 1
            continue
        key: MemoKey | None = None
        if candidate_end - candidate_start <= _MEMO_KEY_BYTES and not leftmost.ambiguous:
            key = (data[candidate_start - 1 : candidate_end + 1] if candidate_start > 0 and candidate_end < length
                   else memo_key(data, candidate_start, candidate_end, length))  # memo_key: inline where it can be
            resume = rejected.get(key)
            # (not when a plan's "->" follows: the remembered old value says nothing of the new one, ``changed_to``;
            # after Terraform's "(sensitive", " value) ->" follows)
            if resume is not None and (key[-1] != 32 or data[candidate_end + 1 : candidate_end + 3] != b"->"
                                       and data[candidate_end + 8 : candidate_end + 10] != b"->"):
                pos = candidate_start + resume
                continue
        if reports is not None and (hint := reported_hint(data, candidate_start, candidate_end)):
            # Charged what it costs: a hint's round of the loop (the automata's hits on its line, ``reported_hint``)
            # took 2-3 us, three times a remembered verdict's one unit (charged one unit, a text of nothing but
            # hints ran at 4-10 MB/s; found by review).
            spent += REPORT_UNITS
            (reports.echoes if hint < 0 else reports.tables).append(candidate_start)
            pos = candidate_start + abs(hint)  # the command line, or the next column's name, may hold a token
            continue
        spent += HEAD_UNITS
        head = (_assignment_head(data, candidate_start, leftmost, assignment, scanned_head)
                if leftmost.source == assignment >= 0 and not leftmost.ambiguous else None)
        if head is None and leftmost.source == assignment >= 0 and not leftmost.ambiguous and name_beyond_reach(
                data, candidate_start):
            pos = candidate_start + 1  # the parse would fail: no name is that long (one match, charged as the head)
            continue
        if head is not None:
            name = head[1]
            harmless = _HARMLESS_NAMES.get(name)
            if harmless is None:  # a name not seen yet: splitting it into words costs about a judgement
                spent += NAME_UNITS
                harmless = _judge_name(name)
            if harmless:
                pos = candidate_start + 1  # where a rejected assignment resumes: its name's start
                if key is not None:
                    _remember(rejected, key, 1)
                continue
            if (not _quoted(head[0]) and not_expression_at != candidate_start
                    and _code_expression(data, head)):
                spent += EXPRESSION_UNITS
                resume = max(1, head.start(1) - candidate_start)  # as a rejected assignment: at its name
                value = _CODE_VALUE.match(data, head.end())
                if key is not None and value is not None and not reads_line(data, value.start(1), value.end()):
                    _remember(rejected, key, resume)  # (on a key line the verdict read on: never remembered)
                pos = candidate_start + resume
                continue
            if not (in_reach if reach_at == candidate_start else _within_reach(head.group(1))):
                spent += JUDGEMENT_UNITS
                pos = candidate_start + 1  # the parse would fail (``match is None``), at length (``_within_reach``)
                continue
            value = scanned_value if head is scanned_head else _CODE_VALUE.match(data, head.end())
            short = value is None or value.end() - value.start(1) <= _CHEAP_VALUE_BYTES
            if not_refused_at != candidate_start and short:  # (not asked in the scan: a quoted name, a shared start)
                spent += CHEAP_UNITS
                verdict = refuse_head(data, head, candidate_end, value)
                if verdict is not None:  # refused by what its value alone says, as the judgement would
                    if verdict == READ_ON:
                        spent += READ_ON_UNITS
                    elif verdict and key is not None:
                        _remember(rejected, key, 1)
                    pos = candidate_start + 1  # where a rejected assignment resumes: its name's start
                    continue
        spent += PARSE_UNITS
        if head is not None and assignment_parse:
            match = assignment_parse(data, candidate_start)
        else:
            match = None
            if (source := leftmost.source) >= 0 and not leftmost.ambiguous and (branches := own_branches[source]):
                match = parse_alone(branches)(data, candidate_start)  # (see ``DetectorPass.own_branches``)
            if match is None:
                match = (parsers[data[candidate_start]] if candidate_start < length else pass_.parser.match)(
                    data, candidate_start)
        if match is None:  # the engines disagree (a construct they read differently): skip this position
            pos = candidate_start + 1
            continue
        index = branch_of[match.lastgroup]  # type: ignore[index]  # the last group closed is the branch's
        detector = pass_.detectors[index]
        start, end = quoted_span(data, match, index)
        if end - start == VALUE_BOUND and unclosed_long_value(data, start, end):
            spent += CHEAP_UNITS
            pos = candidate_start + 1  # refused, as a rejected candidate resumes
            continue
        if detector.check == "env_line":  # the line's trailing whitespace (and "\r") is not the value's
            end = start + len(data[start:end].rstrip())
        refused: int | None = None
        if head is None and reads_name_first(detector.check):  # (a head was offered to ``refuse_head`` already)
            # What the judgement would refuse first, asked before it: a name that holds no secret (judge's first
            # question, for the checks that read a name), then an assignment's, an aligned column's or a line's
            # plain value that says no (``cheap_rejection.refuse_parsed``)
            name = match.group(NAME[index])
            harmless = _HARMLESS_NAMES.get(name)
            if harmless is None:
                spent += NAME_UNITS
                harmless = _judge_name(name)
            if harmless:
                refused = True  # as judge: (None, True)
            else:
                spent += LOOKUP_UNITS
                if detector.check in PARSED_CHECKS and end - start <= _CHEAP_VALUE_BYTES and not (
                        _PASSWORD_NAMES.get(name) and unrefusable_password_word(data[start:end], data[end : end + 1])):
                    spent += CHEAP_UNITS
                    refused = refuse_parsed(data, detector.check, match, index, candidate_end)
        if refused is not None:
            kind, context_free = None, refused == 1
            if refused == READ_ON:
                spent += READ_ON_UNITS
        else:
            spent += JUDGEMENT_UNITS - PARSE_UNITS
            kind, context_free = judge(detector, match, index, data[start:end])  # judged on the bounded value
        if kind is None and detector.check == "quoted_pair" and assignment_parse is not None:
            # quoted_pair won the tie at this start and rejected: where both start at one byte (the text's start,
            # '"password": "x"' opening an output) quoted_pair leaves plain JSON to the assignment, which cannot
            # start again inside the name, so it is judged here or never. (An environment line's rejection is
            # final: it judged the first word as the assignment would.)
            fallback = assignment_parse(data, candidate_start)
            if fallback is not None:
                match, context_free = fallback, False  # not memoized: two parses read this span
                index = branch_of[match.lastgroup]  # type: ignore[index]
                detector = pass_.detectors[index]
                start, end = quoted_span(data, match, index)
                if refuse_parsed(data, "assignment", match, index, candidate_end) is None:  # (JSON's ``true``)
                    kind, _ = judge(detector, match, index, data[start:end])
        if kind is not None:
            spent += ACCEPT_UNITS
            end = extended_end(data, match, index, detector, start, end)  # only now: one scan, then consumed
            if detector.lead:
                start = lead_start(data, start, detector.lead, last)
            if start < length and data[start] >= 0x80 or end < length and data[end] >= 0x80:  # (ASCII ends: whole)
                start, end = whole_characters(data, start, end, last)
            pieces += (data[last:start], marker(kind, data[start:end]))
            if edits is not None:
                edits.append((start, end, pieces[-1]))
            last, count = end, count + 1
            if (change := changed_to(data, detector, end)) is not None:  # a plan's ``"old" -> "new"``
                pieces += (data[last : change[0]], marker(kind, data[change[0] : change[1]]))
                if edits is not None:
                    edits.append((change[0], change[1], pieces[-1]))
                last, count = change[1], count + 1
            pos = max(last, candidate_start + 1)
            continue
        if (change := changed_to(data, detector, end)) is not None:  # a plan's ``"changeme" -> "new"``: the new
            new_kind = changed_kind(match, index, data[change[0] : change[1]])  # value judged on its own; never
            if new_kind is not None:  # remembered (the same candidate without the change is no secret)
                spent += ACCEPT_UNITS
                pieces += (data[last : change[0]], marker(new_kind, data[change[0] : change[1]]))
                if edits is not None:
                    edits.append((change[0], change[1], pieces[-1]))
                last, count = change[1], count + 1
                pos = change[1]
                continue
        # No assignment can start inside its name: the search moves on from there.
        resume = max(1, match.start(NAME[index]) - candidate_start) if detector.check == "assignment" else 1
        # The key holds the candidate's span (plus a byte each side): a verdict is remembered only when what it
        # read lies inside it. A short finder's hit may be parsed as another, longer branch (a two-column line's
        # "password =" parsed as the assignment "password = var.db_password"): remembered on the short span, that
        # rejection hid "password = \"hunter2-Prod!\"" later in the same process.
        if context_free and key is not None and match.end() <= candidate_end and end <= match.end():
            # (a JSON string read on past an escaped quote, ``value_spans.escaped_string_end``, is never remembered)
            _remember(rejected, key, resume)
        pos = candidate_start + resume
    if not count:
        return data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
