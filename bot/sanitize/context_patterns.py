"""The building blocks of the second pass's detectors (``context_detectors.CONTEXT``): the sensitive names, the
bounded values, the finders' candidate shapes (what ``shapes.trivial`` would reject anyway left out), and the heads of
the name-based detectors (environment lines, assignments, line-start and aligned names, flags, two-column rows).

Kept apart from the detectors themselves, so that the detector families (``context_detectors.py``: names and their
values; ``context_tools.py``: a tool's or a format's own spelling) share one spelling of each piece; every
repetition here is bounded for the reason given in ``detectors.py``.
"""

from __future__ import annotations

import re

from bot.sanitize.finder_name import FINDER_NAME

# Names of assignments that may hold a secret: checked further in Python (shapes.sensitive_name).
# "key" counts only with a word before it (api_key, AccountKey, SIGNING_KEY): bare "key" is prose ("key=value").
_KEY = (
    r"(?:(?i:api|access|private|secret|master|signing|encryption|app|account|sharedaccess|client|auth|license"
    r"|session|hmac)[_.-]?(?i:key)|[_.-](?i:key)|[a-z]Key)"
)
# "auth" counts only as a word of its own (auth, auth_token, oauth2): not "authorization" or "Author".
_NAME = (
    rf"[A-Za-z0-9_.-]{{0,40}}(?:(?:(?i:pass|pwd|secret|token|credential|signature)|{_KEY})[A-Za-z0-9_.-]{{0,40}}"
    r"|(?i:auth)(?:[_.0-9-][A-Za-z0-9_.-]{0,39})?)"
)
# A quoted value closed within VALUE_BOUND characters, or the first VALUE_BOUND characters of a longer one
# (``value_spans.extended_end`` reads an accepted one on to its closing quote, one forward scan): with the closing
# quote required within the bound, a longer value (a 300-character ``SECRET_KEY="..."``, a JSON ``"private_key"``)
# was no candidate at all and showed whole. The window stays bounded, so a search still dies 256 bytes on.
DOUBLE_QUOTED = r"\"[^\"\n]{1,255}\"|\"[^\"\n]{256}"
SINGLE_QUOTED = r"'[^'\n]{1,255}'|'[^'\n]{256}"
QUOTED = DOUBLE_QUOTED + "|" + SINGLE_QUOTED
_QUOTED_VALUE = r"\"[^\"\n]{1,255}(?:\"|$)|\"[^\"\n]{256}|'[^'\n]{1,255}(?:'|$)|'[^'\n]{256}"
_BARE_VALUE = r"[^\s\"',;&}\])]{1,256}"
# The finder's values: shapes.trivial rejects, under any name and in any context, a value of under three
# characters ("pass: x") and an integer of up to six digits ("input_tokens": 1834, "retries=300"), so RE2 reports
# only a value of three characters or more with a non-digit among them, or of seven digits or more.


def _candidate_value(char: str) -> str:
    """Values of the character class ``char`` ("[^...]") that shapes.trivial does not reject out of hand."""
    other = char[:-1] + "0-9]"  # the class without the digits
    return rf"{other}{char}{{2,255}}|[0-9]{other}{char}{{1,255}}|[0-9]{{2,255}}{other}{char}{{0,255}}|[0-9]{{7,256}}"


def _candidate_start(char: str) -> str:
    """How every value of ``_candidate_value(char)`` starts (its first 3..7 characters): a non-digit among the
    first three, else digits up to a non-digit within seven, else seven digits. No long counter."""
    other = char[:-1] + "0-9]"
    return rf"{other}{char}{{2}}|[0-9]{other}{char}|[0-9]{{2,6}}{other}|[0-9]{{7}}"


_BARE_START = _candidate_start(r"[^\s\"',;&}\])]")
# A JSON string whose first part before an escaped quote is one character or none (``"a\\"bcdef"``): no candidate
# by its length before the quote, judged on the whole string (``value_spans.escaped_string_end``).
_ESCAPED_SHORT = r"\"[^\"\n]?\\\""
_DOUBLE_QUOTED_START = r"\"(?:" + _candidate_start(r"[^\"\n]") + ")|" + _ESCAPED_SHORT
_QUOTED_START = _DOUBLE_QUOTED_START + r"|'(?:" + _candidate_start(r"[^'\n]") + ")"
_XML_START = _candidate_start(r"[^<\s]")
_BARE_CANDIDATE = _candidate_value(r"[^\s\"',;&}\])]")
_IN_DOUBLE_QUOTES, _IN_SINGLE_QUOTES = _candidate_value(r"[^\"\n]"), _candidate_value(r"[^'\n]")
# A longer value than the bound is a candidate too (``DOUBLE_QUOTED``), here by a run that neither a quote nor the
# line ends within 255 characters: the finder's count then goes on by one character, where an exact second count to
# 256 per quote grew the pass's alternation past what its DFA budget keeps (tests/test_sanitize_memory.py). A
# superset (a short unclosed value before a newline is a candidate too): the parse, exact, decides.
_DOUBLE_QUOTED_CANDIDATE = rf"\"(?:{_IN_DOUBLE_QUOTES})(?:\"|$|[^\"\n])|{_ESCAPED_SHORT}"
_QUOTED_CANDIDATE = _DOUBLE_QUOTED_CANDIDATE + rf"|'(?:{_IN_SINGLE_QUOTES})(?:'|$|[^'\n])"
# The same, exact, for the assignment's own automaton (its budget has room for the two counts, and its candidates
# are the commonest: an unclosed short value, ``api_key= "unclosed``, is no candidate of it)
_ASSIGNMENT_QUOTED_CANDIDATE = (
    rf"\"(?:{_IN_DOUBLE_QUOTES})(?:\"|$)|\"[^\"\n]{{256}}|{_ESCAPED_SHORT}"
    rf"|'(?:{_IN_SINGLE_QUOTES})(?:'|$)|'[^'\n]{{256}}"
)
_XML_CANDIDATE = _candidate_value(r"[^<\s]")
_ENV_HEAD = (
    r"(?:(?m:^)[ \t]{0,64}(?:-[ \t]{1,4})?|[{,][ \t]{0,4})"
    rf"\"?name\"?[ \t]{{0,4}}:[ \t]{{0,4}}[\"']?(?P<name>{_NAME})"
    r"[\"']?,?[ \t]{0,4}(?:\n[ \t]{0,64})?\"?value\"?[ \t]{0,4}:[ \t]{0,4}"  # also one line: {"name": .., "value": ..}
)
_ASSIGNMENT_NAME_HEAD = rf"(?:^|[^A-Za-z0-9_.-])(?P<name>\"?{_NAME}\"?|'{_NAME}')"
_ASSIGNMENT_SEPARATOR = (
    r"[ \t]{0,4}(?P<sep>[?:]?=|:)[ \t]{0,4}"
    r"(?:[|>][-+]?[ \t]{0,4}\n[ \t]{1,16}|\n[ \t]{1,16})?"  # the value on the next line (YAML block: its first line)
)
_ASSIGNMENT_HEAD = _ASSIGNMENT_NAME_HEAD + _ASSIGNMENT_SEPARATOR
# What RE2 searches for: the same head with the name's characters around its sensitive word unbounded. Counting
# them (0..40) multiplied the DFA states by 41: on random base64 (no separator, so never a match) RE2 kept
# building new states, 1.5-7 MB/s on text it had not seen. Unbounded, the finder reports a superset (a name
# with more than 40 characters before its word is parsed, rejected by the bounded pattern, and skipped by one
# byte), and the loop stays linear: the part left unbounded lies inside one run of name characters after a
# boundary character, which no other assignment can share, so each run is scanned a bounded number of times.
#
# And only names in which the sensitive word is a word of its own as secret_names.name_kind reads it: see
# finder_name.py.
_FINDER_NAME = FINDER_NAME
_ASSIGNMENT_FINDER_NAME_HEAD = _ASSIGNMENT_NAME_HEAD.replace(_NAME, _FINDER_NAME)

# What may open a line before the text a tool wrote there: a unified diff's line marker before the file's own
# indentation ("+", "-"; a context line's " " is indentation: ``git diff``, ``helm diff``) or a mail or Markdown
# quote ("> ", nested). The environment line and the line-start detector read past it; ``value_spans._YAML_KEY_LINE``
# and ``judge._LINE_OPENER`` are its Python spellings.
_LINE_OPENER = r"(?:[+-]|(?:>[ \t]{0,4}){1,4})?"

# An environment line (``env``, a .env file, ``export NAME=``, ``declare -x NAME=``): NAME=value opening its line,
# its bare value running to the line's end (``DB_PASSWORD=ab;cd``, ``MY_PASS=correct horse``; trailing
# whitespace stays visible); a quoted value is the assignment detector's, to its closing quote. It starts at the
# newline before the line, where the assignment detector would start too, and comes before it in the alternation,
# so the leftmost-first match at that byte is this one. In URLs, query strings, JSON and code the assignment
# detector keeps the format's own delimiters.
_ENV_LINE_HEAD = (
    rf"(?:^|\n){_LINE_OPENER}"
    r"[ \t]{0,16}(?:(?:export|declare[ \t]{1,4}-x|typeset[ \t]{1,4}-x|readonly|set[ \t]{1,4}-x|-)[ \t]{1,4})?"
    rf"(?P<name>{_NAME})="
)
# The same line under a name whose last word is "pw" (DB_PW, ADMIN_PW; ``secret_names.name_kind`` reads it as a
# password's):
# the names the finders take need a longer word (two letters are everywhere in base64, see ``finder_name.py``), so
# only a line that this name opens before "=" reads it, its value quoted (to the closing quote) or bare (to the end).
_PW_ENV_LINE_HEAD = _ENV_LINE_HEAD.replace(f"(?P<name>{_NAME})", r"(?P<name>[A-Za-z0-9_.-]{0,40}[_.-](?i:pw))")
_PW_ENV_LINE_VALUE = r"\"[^\"\n]{1,256}\"?|'[^'\n]{1,256}'?|[^\s\"'][^\n]{0,255}"
# The same head with the name's runs unbounded, for the unanchored scan only (the anchored finder bounds them at
# each hit): two counts to 40 from every line's start, kept alive beside the other detectors' threads, made RE2
# build DFA states without end on base64 in lines (a CA certificate bundle, ``base64`` of a file), whose runs of
# name characters start at every line: its budget spent and rebuilt all along, 1-2 MB/s however often it was seen.
_ENV_LINE_SEARCH_HEAD = _ENV_LINE_HEAD.replace("{0,40}", "*").replace("{0,39}", "*")
# "NAME=value" as one quoted string: docker inspect's "Env": ["DB_PASSWORD=ab;cd"], a compose list item
# - "DB_PASSWORD=ab;cd", systemd's Environment="DB_PASSWORD=x y": the value runs to the closing quote.
_ENV_STRING_HEAD = rf"(?:^|[^A-Za-z0-9_.\\-])\"(?P<name>{_NAME})="
_ENV_STRING_SINGLE_HEAD = rf"(?:^|[^A-Za-z0-9_.\\-])'(?P<name>{_NAME})="
# A command-line flag and its value as separate words (ps output, a logged command): --token abc, -password x.
_FLAG_HEAD = rf"(?:^|[ \t])(?P<name>-{{1,2}}{_NAME})[ \t]{{1,4}}"
_FLAG_VALUE = QUOTED + r"|[^\s\"'-][^\s\"']{0,255}"
_FLAG_CANDIDATE = _candidate_value(r"[^\s\"']").replace(r"[^\s\"'0-9]", r"[^\s\"'0-9-]", 1)
_FLAG_START = _candidate_start(r"[^\s\"']").replace(r"[^\s\"'0-9]", r"[^\s\"'0-9-]", 1)
_ENV_WORD_HEAD = r"(?m:^)[ \t]{0,16}(?:ENV|setenv|set[ \t]{1,4}-[a-zA-Z]{1,4})[ \t]{1,4}"
_KV_WORD = r"(?i:pass|pwd|secret|token|key|credential)"
_ENV_LINE_VALUE = r"[^\s\"'][^\n]{0,255}"

# A YAML block mapping's or an ini/properties file's line whose plain value the assignment detector never reports:
# the name opens its line (after indentation and a list's "- "), then ":" or "=", then a value whose first run
# before a delimiter ("," ";" "&" ")" "}" "]": where a value ends mid-line) is at most two characters, or three to
# six digits (``password: ab;cdefghij``, ``password = 12)xYz9Kq``). The assignment's finder skips such a run, which
# shapes.trivial would reject alone; but in a YAML or ini line the value is the whole rest of the line
# (``judge._judge_line_value`` judges it so). Exactly the complement of ``_BARE_START`` before a delimiter, so a
# line the assignment reports is never this detector's too; unquoted names only (a JSON key is quoted, and its
# values are quoted or numbers: ``"pass": 10,`` stays). ``NAME=value`` with no blank around the "=" is the environment
# line's (``env_line``: the same whole-line value), so the two never start at one byte.
#
_LINE_INDENT = rf"(?:^|\n){_LINE_OPENER}[ \t]{{0,64}}(?:-[ \t]{{1,4}})?"
# The blanks between a name that opens its line and its separator: one to four as people write them, or a column
# a tool aligned (``terraform state show`` and ``terraform fmt``, aligned .tfvars, ini and .properties files,
# PowerShell's Format-List: ``password          = "..."``), as wide as the block's longest key. Only where the name
# opens its line: mid-line (the assignment detector) four blanks stay the bound, so a run of name + blanks + "="
# with no line start is no candidate (one per line at most here, each scanned from its line's start). As wide as
# the column is: a count to 64 left a key of the 65th column (a .properties file aligned to its longest key) to the
# next line, and a count is a DFA state per blank where an unbounded run is one; linear still, since such a run
# starts only after a name that opens its line. A blank there may be a no-break space (U+00A0: a table copied from a
# web page or a wiki, PowerShell output through some terminals), one character to RE2 and one iteration of this
# group to the parser (its two UTF-8 bytes spelled as one literal), so both count it alike.
# Other Unicode spaces pad such a column too (a table pasted from a document or a spreadsheet): the figure space
# U+2007 (digits' width), the narrow no-break space U+202F and the ideographic space U+3000 (CJK input methods).
WIDE_BLANKS = "\u00a0|\u2007|\u202f|\u3000"
ALIGNED_BLANK = "(?:[ \\t]|" + WIDE_BLANKS + ")"
_ALIGNMENT = ALIGNED_BLANK + "+"
# Make's assignments: a directive before the name (``export DB_PASSWORD ?= ab;cd``, ``override``, ``private``), and
# its operators beside "=": "?=" (if unset), ":=" "::=" ":::=" (expanded), "+=" (appended); make's value is the whole
# rest of the line, as the judge reads it (``!=`` runs a shell command: its value is no literal).
_MAKE_DIRECTIVE = r"(?:(?:export|override|private)[ \t]{1,4})?"
_LINE_VALUE_HEAD = (
    rf"{_LINE_INDENT}{_MAKE_DIRECTIVE}(?P<name>{_NAME})"
    rf"(?P<sep>{_ALIGNMENT}(?:[?:+]?=|:::?=|:)|:=?|:::?=|[?+]=|=[ \t])[ \t]{{0,4}}"
)
# Make's "+=" (appended) and "!=" (the output of a shell command) opening their line (make's variables do; code's
# "+=" is indented), any value: the line-value detector above reads "+=" after a short first run only, and no
# detector read "!=" (``DB_PASSWORD += s3cr3t``, ``API_TOKEN != Xk9...`` showed). Judged as a line's plain value
# (``judge._judge_line_value``); after "!=" a value of several words is the command, not its output.
MAKE_APPEND_HEAD = rf"(?:^|\n){_MAKE_DIRECTIVE}(?P<name>{_NAME})(?P<sep>[ \t]{{0,16}}[+!]=)[ \t]{{0,4}}"
_SHORT_RUN = r"[^\s\"',;&}\])]{0,2}"
_SHORT_RUN_THEN_DELIMITER = rf"(?:{_SHORT_RUN}|[0-9]{{3,6}})[,;&)}}\]]"
# A name aligned in a column wider than code's blanks, opening its line (``ALIGNED_BLANK``): after indentation, a
# diff's or a quote's opener, a YAML list's "- ", or a plan's change marker after the indentation (``terraform
# plan``'s ``      + password                 = "..."``, ``~``, ``-``). Judged as the assignment detector judges
# its candidates (``judge.judge``: check "aligned"), which it never shares a start with (four blanks at most).


def _aligned_head(blanks: str) -> str:
    """The aligned name's head with ``blanks`` between the name and its separator."""
    return (rf"(?:^|\n){_LINE_OPENER}[ \t]{{0,64}}(?:[-+~][ \t]{{1,4}})?(?P<name>{_NAME}){blanks}"
            r"(?P<sep>[?:]?=|:)[ \t]{0,4}")


_ALIGNED_HEAD = _aligned_head(ALIGNED_BLANK + "{5,}")
_ALIGNED_FINDER_HEAD = _ALIGNED_HEAD.replace(_NAME, _FINDER_NAME)
# The same column's narrower keys when its blanks are no-break spaces: the longest key of a block has one to four
# before its separator, where plain blanks are code's (the assignment detector's) but a no-break space is no one's
# (code never writes one). A detector of its own (the run is short and bounded: no count on plain blanks).
_ALIGNED_NBSP_HEAD = _aligned_head("[ \\t]{0,4}(?:" + WIDE_BLANKS + ")" + ALIGNED_BLANK + "{0,3}")
_ALIGNED_NBSP_FINDER_HEAD = _ALIGNED_NBSP_HEAD.replace(_NAME, _FINDER_NAME)
# The same aligned name mid-line, after other text (``config: user  admin   password      = s3cr3t``, a log line
# that prints a block's aligned row): after a non-blank and blanks, or after a character no name holds (not a
# plan's or a diff's marker, "+" "~" "-", nor a quote's ">": those open their line, ``_ALIGNED_HEAD``'s), then five
# spaces or more before the separator (at a line's start ``_ALIGNED_HEAD`` is the one). Spaces only: what a
# mid-line column is padded with, and what gates its automaton (text without five spaces in a row skips it).
_MIDLINE_ALIGNED_HEAD = (
    rf"(?:[^\s+~>-][ \t]+|[^\sA-Za-z0-9_.+~>-])(?P<name>{_NAME}) {{5,}}(?P<sep>[?:]?=|:)[ \t]{{0,4}}"
)
_MIDLINE_ALIGNED_FINDER_HEAD = _MIDLINE_ALIGNED_HEAD.replace(_NAME, _FINDER_NAME)
MIDLINE_ALIGNMENT = b"     "
# The same with no separator, a column's cell naming a secret then five spaces or more and the next cell, its value
# (``[db] host  db.internal   password      Xk9...   port  5432``): the name a whole cell (two blanks or more before
# it, after other text), the value too (two blanks or more after it, or the line's end), judged as a two-column
# line's (``key_value_line``: with no separator only a generated value counts).
_MIDLINE_CELL_NAME = rf"(?:[A-Za-z][A-Za-z0-9_.-]{{0,40}})?{_KV_WORD}[A-Za-z0-9_.-]{{0,20}}"
_MIDLINE_CELLS_HEAD = rf"[^\s+~>-][ \t]{{2,}}(?P<name>{_MIDLINE_CELL_NAME}) {{5,}}"
_MIDLINE_CELL_END = r"(?: {2}|[ \t]*\r?(?m:$))"
# The same cells separated by tabs (a tab, blanks around it), as a template's ``{{"\t"}}`` or a TSV row prints them
# (``db-credentials<TAB>password<TAB>Xk9...``, ``loaded<TAB>host<TAB>db<TAB>password<TAB>Xk9...<TAB>port``): after
# other text, the name's cell, a tab, the value's cell, then a tab or the line's end. Gated by a tab (``TAB``).
# At a line's start too, when more cells follow the value's (``az ... -o tsv`` of name, value, enabled: the
# two-column line, ``key_value_line``, wants the value last; found by review, revsan5).
_MIDLINE_TAB_CELLS_HEAD = (
    rf"(?:[^\s][ ]{{0,16}}\t|(?m:^))[ \t]{{0,16}}(?P<name>{_MIDLINE_CELL_NAME})[ ]{{0,16}}\t[ \t]{{0,16}}"
)
_MIDLINE_TAB_CELL_END = r"(?:[ ]{0,16}\t|[ \t]{0,16}\r?(?m:$))"
TAB = b"\t"
# Its finder's value: a candidate's start, then the rest of the value unbounded. The value's counters
# (``_QUOTED_CANDIDATE``) grew the alternation's program by a quarter, past what its DFA budget keeps
# (tests/test_sanitize_memory.py), and a finder without the value is no memo key (``candidates.run_pass``: the same
# rejected line on every line, ``  secret          = "db-credentials"``, was judged in full each time). Linear still:
# the finder is matched anchored at a line's start only, so each line is read to its end at most once.
_ALIGNED_FINDER_VALUE = (
    r"(?:\"(?:" + _candidate_start(r"[^\"\n]") + r")[^\"\n]*\"?"
    r"|" + _ESCAPED_SHORT
    + r"|'(?:" + _candidate_start(r"[^'\n]") + r")[^'\n]*'?"
    r"|(?:" + _BARE_START + r")[^\s\"',;&}\])]*)"
)
# A quoted key (a JSON-ish YAML key, ``"password": a;b...``) then a plain value of the same shape, save for JSON's
# own numbers: digits then "," "}" or "]" (``"input_tokens": 1834,`` on every line of a pretty-printed response
# would be a candidate each). Digits then ";" "&" ")" are a password's still.
_QUOTED_KEY_HEAD = rf"{_LINE_INDENT}(?P<name>\"{_NAME}\"|'{_NAME}')[ \t]{{0,4}}(?P<sep>:)[ \t]{{0,4}}"
_QUOTED_KEY_SHORT_RUN = (
    r"(?:(?:[^\s\"',;&}\])0-9][^\s\"',;&}\])]?|[0-9][^\s\"',;&}\])0-9])?[,;&)}\]]|[0-9]{1,6}[;&)])"
)
# A mid-line value whose first run before a delimiter is one or two characters, or three to six digits (what
# shapes.trivial rejects alone, so no bare candidate), glued to more text by that delimiter: ``docker run -e
# DB_PASSWORD=ab;cdefghij``, ``-e MYSQL_ROOT_PASSWORD=x;9Kq2...`` as ``ps`` prints an argv. The assignment's finder
# reports it too (``judge.judge`` then reads the value with its glued tail, ``value_spans._glued_word``: a list's next
# pair, ``pass=1;fail=0``, or a query's next parameter keeps its delimiter and the candidate is rejected). A blank,
# a quote or the line's end after the delimiter ends the value there (a shell's ``; next``): no candidate. Only
# with "=" right after the name (an argv's word): after ":" or " = " it made every line-start ``db_password: 1,x``
# (the line-value detector's) a hit of the assignment's automaton too, an RE2 scan and a dismissal more per line.
_GLUED_SHORT_RUN = r"(?:[^\s\"',;&}\])]{1,2}|[0-9]{3,6})[,;&)}\]][^\s\"']"

# A YAML node's properties before its value: an anchor (``&pw``) and a standard tag (``!!str``, ``!!binary``), in
# either order. The assignment's value cannot start with "&" and reads a tag as a word followed by prose, so such
# a line is this detector's whatever its value (``judge._judge_line_value`` judges it without them). A local tag
# (``!Ref DBPassword``: CloudFormation's functions) names a reference, not a literal, and stays the assignment's.
_NODE_PROPERTIES = r"(?:(?:&[^\s]{1,40}|!![^\s]{0,40})[ \t]{1,4}){1,2}"


def _characters_as_utf8(pattern: str) -> str:
    """``pattern`` for Python's bytes parser, each negated class ``[^...]`` read as one UTF-8 character (as RE2
    reads it) instead of one byte."""
    # the non-ASCII bytes first in the class: after a class ending in "-" ("[^A-Za-z0-9_-]") they made a range
    return re.sub(r"\[\^((?:\\.|[^\]\\])*)\]", lambda m: rf"(?:[^\x80-\xff{m.group(1)}]|[\xc0-\xff][\x80-\xbf]{{1,3}})",
                  pattern)


# Between a two-column row's name and value: blanks, or psql's "|" with blanks around it (or none); and psql's
# border before the name (``\pset border 2``: ``| password_plain | PW |``).
_KV_GAP = r"(?:[ \t]{1,16}|[ \t]{0,16}\|[ \t]{0,16})"
_PSQL_BORDER = r"(?:\|[ \t]{1,4})?"
