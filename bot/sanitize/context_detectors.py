"""The second pass's detectors (``CONTEXT``): secrets known by what surrounds them, not by a prefix of their own.

A URL's password, ``aws ... <key>``, ``NAME=<value>`` in its many spellings (environment lines, quoted pairs,
flags, XML attributes, two-column tables). They run after ``detectors.TOKENS`` so that a token redacted there is
never their visible context. This module holds the name-based families (line-start and aligned names, environment
lines, assignments, flags, two-column rows) and the order of the whole pass; ``context_tools.py`` the detectors
that know one tool's or format's spelling; ``context_patterns.py`` the building blocks both share (the sensitive
names, the bounded values, the finders' candidate shapes). Every repetition is bounded for the reason given in
``detectors.py``.
"""

from __future__ import annotations

import re

from bot.sanitize.context_handoffs import HANDOFF_FORMATS
from bot.sanitize.context_patterns import (
    _ALIGNED_FINDER_HEAD,
    _ALIGNED_FINDER_VALUE,
    _ALIGNED_HEAD,
    _ALIGNED_NBSP_FINDER_HEAD,
    _ALIGNED_NBSP_HEAD,
    _ASSIGNMENT_FINDER_NAME_HEAD,
    _ASSIGNMENT_HEAD,
    _ASSIGNMENT_QUOTED_CANDIDATE,
    _ASSIGNMENT_SEPARATOR,
    _BARE_CANDIDATE,
    _BARE_START,
    _BARE_VALUE,
    _DOUBLE_QUOTED_CANDIDATE,
    _DOUBLE_QUOTED_START,
    _ENV_HEAD,
    _ENV_LINE_HEAD,
    _ENV_LINE_SEARCH_HEAD,
    _ENV_LINE_VALUE,
    _ENV_STRING_HEAD,
    _ENV_STRING_SINGLE_HEAD,
    _FINDER_NAME,
    _FLAG_HEAD,
    _FLAG_START,
    _FLAG_VALUE,
    _GLUED_SHORT_RUN,
    _KV_GAP,
    _KV_WORD,
    _LINE_VALUE_HEAD,
    _MIDLINE_ALIGNED_FINDER_HEAD,
    _MIDLINE_ALIGNED_HEAD,
    _MIDLINE_CELL_END,
    _MIDLINE_CELLS_HEAD,
    _MIDLINE_TAB_CELL_END,
    _MIDLINE_TAB_CELLS_HEAD,
    _NAME,
    _NODE_PROPERTIES,
    _PSQL_BORDER,
    _PW_ENV_LINE_HEAD,
    _PW_ENV_LINE_VALUE,
    _QUOTED_CANDIDATE,
    _QUOTED_KEY_HEAD,
    _QUOTED_KEY_SHORT_RUN,
    _QUOTED_START,
    _QUOTED_VALUE,
    _SHORT_RUN,
    _SHORT_RUN_THEN_DELIMITER,
    _XML_CANDIDATE,
    _XML_START,
    DOUBLE_QUOTED,
    MAKE_APPEND_HEAD,
    MIDLINE_ALIGNMENT,
    QUOTED,
    TAB,
    _characters_as_utf8,
)
from bot.sanitize.context_programs import PROGRAM_FORMATS
from bot.sanitize.context_records import RECORD_FORMATS
from bot.sanitize.context_services import SERVICE_FORMATS
from bot.sanitize.context_system import SYSTEM_FORMATS
from bot.sanitize.context_tools import TOOL_FORMATS
from bot.sanitize.detectors import TOKENS, Detector


def _line_value_detector(head: str, short_run: str) -> Detector:
    """A line-start detector: after ``head``, a value behind YAML node properties, or one
    whose first run is ``short_run``, to the line's end. "&" opens an anchor and is a delimiter too; "!!" a tag (no
    counter in the finder: a superset, parsed in full)."""
    return Detector(
        "line_value",
        head + rf"(?P<v>{_NODE_PROPERTIES}[^\s][^\n]{{0,255}}|{short_run}[^\n]{{0,255}})",
        check="line_value",
        finder=head.replace(_NAME, _FINDER_NAME) + rf"(?:!!|{short_run})",
    )


# A row's last cell that is a flag (a setting's "slot setting", "sensitive", "enabled" column), after two blanks
_FLAG_CELL = r"[ \t]{2,16}(?:[Tt]rue|[Ff]alse|TRUE|FALSE|[Yy]es|[Nn]o|YES|NO|[01]|-)"

CONTEXT: tuple[Detector, ...] = (
    # First: its candidates are parsed by the first branch of the pass's alternation (a full parse tried every
    # branch before it: a third of such a candidate's cost). No other detector matches where it starts (a
    # newline or the text's start, then a key with a blank or ":" before its separator) except the assignment
    # (its own automaton, last), the DSN (its own automaton), and at the text's start only, the two-column
    # key_value_line and requirepass lines, which hide the same value (see ``_LINE_VALUE_HEAD``).
    # make's "+=" and "!=" at a line's start, any value (``MAKE_APPEND_HEAD``): before the one below, which starts at
    # the same newline when "+=" is followed by a short first run, and judges it alike.
    _line_value_detector(MAKE_APPEND_HEAD, r"[^\s]"),
    _line_value_detector(_LINE_VALUE_HEAD, _SHORT_RUN_THEN_DELIMITER),
    # The same line under a quoted key (``_QUOTED_KEY_HEAD``); it starts where the other does, never both.
    _line_value_detector(_QUOTED_KEY_HEAD, _QUOTED_KEY_SHORT_RUN),
    # A name aligned in a column, opening its line (``_ALIGNED_HEAD``): early too, for its candidates' parse. Where it
    # starts the line-value detectors may too (the same newline), but never both: their values' first runs differ.
    Detector(
        "assignment",
        _ALIGNED_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="aligned",
        finder=_ALIGNED_FINDER_HEAD + _ALIGNED_FINDER_VALUE,
        search=_ALIGNED_FINDER_HEAD + rf"(?:{_QUOTED_START}|{_BARE_START})",
    ),
    # The same column's narrower keys after one to four no-break spaces (``_ALIGNED_NBSP_HEAD``). Where both start,
    # five to eight blanks with a no-break space among them, the one above wins with the same judgement.
    Detector(
        "assignment",
        _ALIGNED_NBSP_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="aligned",
        finder=_ALIGNED_NBSP_FINDER_HEAD + _ALIGNED_FINDER_VALUE,
        search=_ALIGNED_NBSP_FINDER_HEAD + rf"(?:{_QUOTED_START}|{_BARE_START})",
    ),
    *TOOL_FORMATS,
    *SERVICE_FORMATS,
    *SYSTEM_FORMATS,
    *PROGRAM_FORMATS,
    Detector(
        "env_value",
        # A container's environment in a manifest: "- name: DB_PASSWORD" then "value: ..." (YAML or JSON).
        _ENV_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="env_pair",
        finder=_ENV_HEAD + rf"(?P<v>{_QUOTED_CANDIDATE}|{_BARE_CANDIDATE})",
        search=_ENV_HEAD + rf"(?:{_QUOTED_START}|{_BARE_START})",
    ),
    *RECORD_FORMATS,  # (after the container's pair: where both start, its environment judgement wins)
    *HANDOFF_FORMATS,
    Detector(
        "xml_value",
        # XML configuration: <password>v</password> (Maven settings.xml), <add key="DbPassword" value="v"/> (.NET).
        rf"<(?P<name>{_NAME})>(?P<v>[^<\s]{{1,256}})</",
        check="xml_pair",
        finder=rf"<(?P<name>{_NAME})>(?P<v>{_XML_CANDIDATE})</",
        search=rf"<{_NAME}>(?:{_XML_START})",
    ),
    Detector(
        "xml_value",
        rf"(?i:key|name)=\"(?P<name>{_NAME})\"[ \t]{{1,4}}(?i:value)=(?P<v>{DOUBLE_QUOTED})",
        check="xml_pair",
        finder=rf"(?i:key|name)=\"(?P<name>{_NAME})\"[ \t]{{1,4}}(?i:value)=(?P<v>{_DOUBLE_QUOTED_CANDIDATE})",
        search=rf"(?i:key|name)=\"{_NAME}\"[ \t]{{1,4}}(?i:value)=(?:{_DOUBLE_QUOTED_START})",
    ),
    Detector(
        "env_string",
        _ENV_STRING_HEAD + r"(?P<v>[^\"\n]{1,256})",
        check="env_string",
        # Short finders (no value counter, a smaller automaton): their verdicts are never memoized, so the
        # candidate's span need not hold the whole value (judge.judge).
        finder=_ENV_STRING_HEAD.replace(_NAME, _FINDER_NAME) + r"[^\"\n]{3}",
    ),
    Detector(
        "env_string",
        _ENV_STRING_SINGLE_HEAD + r"(?P<v>[^'\n]{1,256})",
        check="env_string",
        finder=_ENV_STRING_SINGLE_HEAD.replace(_NAME, _FINDER_NAME) + r"[^'\n]{3}",
    ),
    Detector(
        "flag_value",
        _FLAG_HEAD + rf"(?P<v>{_FLAG_VALUE})",
        check="flag",
        finder=_FLAG_HEAD.replace(_NAME, _FINDER_NAME) + rf"(?:{_QUOTED_START}|{_FLAG_START})",
    ),
    Detector(
        # redis.conf's requirepass / masterauth lines (the value may be quoted, with blanks), and the same shape in
        # LDAP servers' and clients' files: slapd.conf's rootpw, nslcd.conf's bindpw, postfix's bind_pw
        "password",
        r"(?m:^)[ \t]{0,16}(?:requirepass|masterauth|rootpw|bindpw|bind_pw)(?:[ \t]{0,8}=[ \t]{0,8}|[ \t]{1,8})"
        r"(?P<v>" + QUOTED + r"|[^\s\"'#=][^\s\"']{0,255})",
        finder=r"(?m:^)[ \t]{0,16}(?:requirepass|masterauth|rootpw|bindpw|bind_pw)(?:[ \t]{0,8}=[ \t]{0,8}|[ \t]{1,8})"
        r"[^\s#=]",
    ),
    Detector(
        "key_value_line",
        # Two columns, a secret's name then its value, alone on a line: vault kv get's "Key  Value" table, a
        # .netrc's "  password x". Words follow no separator here, so the value must look generated for every
        # name (a line "password expired" stays). psql's rows put a "|" between the cells (``\x``'s records,
        # ``password_plain | PW``; ``\pset border 2`` opens and closes the row with one too). A third cell that is a
        # flag may follow (``az webapp config appsettings list -o table``'s rows without their header: ``DB_PASSWORD
        # PW  False``, its SlotSetting).
        rf"(?m:^)[ \t]{{0,16}}{_PSQL_BORDER}"
        rf"(?P<name>(?:[A-Za-z][A-Za-z0-9_.-]{{0,40}})?{_KV_WORD}[A-Za-z0-9_.-]{{0,20}})"
        rf"{_KV_GAP}(?P<v>[^\s\"'][^\s]{{0,255}})(?:[ \t]{{1,16}}\||{_FLAG_CELL})?[ \t]{{0,16}}(?m:$)",
        check="key_value_line",
        finder=rf"(?m:^)[ \t]{{0,16}}{_PSQL_BORDER}(?:[A-Za-z][A-Za-z0-9_.-]*)?{_KV_WORD}[A-Za-z0-9_.-]{{0,20}}"
        rf"{_KV_GAP}[^\s\"'-]",
    ),
    Detector(
        "env_line",
        _ENV_LINE_HEAD + rf"(?P<v>{_ENV_LINE_VALUE})",
        check="env_line",
        # shapes.trivial rejects a value of under three characters (trailing whitespace aside, kept loose here)
        finder=_ENV_LINE_HEAD + r"(?P<v>[^\s\"'][^\n]{2,255})",
        search=_ENV_LINE_SEARCH_HEAD + r"[^\s\"'][^\n]{2}",
    ),
    Detector(
        "env_line",
        _PW_ENV_LINE_HEAD + rf"(?P<v>{_PW_ENV_LINE_VALUE})",
        check="env_line",
        # No value counter in the alternation (three of them grew its program past what its DFA budget keeps,
        # tests/test_sanitize_memory.py): the finder stops at the value's first character, so a verdict on this
        # short span is never remembered (``candidates.run_pass`` keeps one only when the match lies inside it).
        finder=_PW_ENV_LINE_HEAD + r"(?:[\"'][^\"'\n]|[^\s\"'])",
        search=_PW_ENV_LINE_HEAD.replace("{0,40}", "*").replace("{0,16}", "*") + r"[^\s]",
    ),
    # A secret's name's cell then its value's, separated by tabs mid-line (``_MIDLINE_TAB_CELLS_HEAD``): apart, searched
    # only in text with a tab; before the five blanks' automata below (``candidate_scan`` stops at the first that hits).
    Detector(
        "key_value_line",
        _MIDLINE_TAB_CELLS_HEAD + rf"(?P<v>[^\s\"'=:][^\s]{{0,255}}){_MIDLINE_TAB_CELL_END}",
        check="key_value_line",
        search=_MIDLINE_TAB_CELLS_HEAD + r"[^\s\"'=:-]",
        own_automaton=True,
        literals=(TAB,),
    ),
    # A name aligned in a column mid-line (``_MIDLINE_ALIGNED_HEAD``), judged as at a line's start (check "aligned":
    # after it, words make a sentence). Apart, searched only in text holding five spaces in a row; before the
    # assignment, which cannot start where it does (four blanks at most before its separator).
    Detector(
        "assignment",
        _MIDLINE_ALIGNED_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="aligned",
        finder=_MIDLINE_ALIGNED_FINDER_HEAD + _ALIGNED_FINDER_VALUE,
        search=_MIDLINE_ALIGNED_FINDER_HEAD + rf"(?:{_QUOTED_START}|{_BARE_START})",
        own_automaton=True,
        literals=(MIDLINE_ALIGNMENT,),
    ),
    # ... and without a separator, a name's cell then its value's (``_MIDLINE_CELLS_HEAD``); apart and gated alike.
    Detector(
        "key_value_line",
        _MIDLINE_CELLS_HEAD + rf"(?P<v>[^\s\"'=:][^\s]{{0,255}}){_MIDLINE_CELL_END}",
        check="key_value_line",
        search=_MIDLINE_CELLS_HEAD + r"[^\s\"'=:-]",  # (a separator after the blanks: the one above)
        own_automaton=True,
        literals=(MIDLINE_ALIGNMENT,),
    ),
    Detector(
        "assignment",
        _ASSIGNMENT_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="assignment",
        # (and ``NAME=`` then a short first run glued to more text, "=" right after the name: ``_GLUED_SHORT_RUN``;
        # make's ``NAME?=`` and ``NAME:=`` as an argv's word writes them too, as ``value_spans._argv_assignment``
        # reads them)
        finder=_ASSIGNMENT_FINDER_NAME_HEAD
        + rf"(?:{_ASSIGNMENT_SEPARATOR}(?P<v>{_ASSIGNMENT_QUOTED_CANDIDATE}|{_BARE_CANDIDATE})"
        rf"|[?:]?={_GLUED_SHORT_RUN})",
        search=_ASSIGNMENT_FINDER_NAME_HEAD
        + rf"(?:{_ASSIGNMENT_SEPARATOR}(?:{_QUOTED_START}|{_BARE_START})|[?:]?={_GLUED_SHORT_RUN})",
        # Apart, so a hit of its own tells that the candidate is an assignment (assignment_screen._assignment_head)
        own_automaton=True,
    ),
)

# RE2 counts a short run in characters (UTF-8 mode), the pass's Python parser in bytes: a run of two characters in
# three or more bytes (``éa;``, ``日;``) was a candidate the parser could not read, and no other detector's, so the
# password showed. The parser reads these runs as UTF-8 characters (``automata._compile_pass``).
PARSER_CHARACTER_RUNS = tuple((run, _characters_as_utf8(run)) for run in (_SHORT_RUN, _QUOTED_KEY_SHORT_RUN))

# The boundary before a token or a name (``(?:^|[^A-Za-z0-9_-])``): RE2 reads its class as one character, the
# parser as one byte, so after a character of two to four bytes (``é``, ``日``, ``→``) RE2's candidate started at
# that character and the parser could not read it: the token showed (found by review: every vendor token, the AWS
# key id). The parser reads each such boundary as a UTF-8 character too.
_LEADING_BOUNDARY = re.compile(r"\(\?:\^\|(\[\^(?:\\.|[^\]\\])*\])\)")
PARSER_CHARACTER_RUNS += tuple(dict.fromkeys(
    (found.group(), "(?:^|" + _characters_as_utf8(found.group(1)) + ")")
    for detector in (*TOKENS, *CONTEXT) for found in _LEADING_BOUNDARY.finditer(detector.pattern)
))
