"""The second pass's detectors (``CONTEXT``): secrets known by what surrounds them, not by a prefix of their own.

A URL's password, ``aws ... <key>``, ``NAME=<value>`` in its many spellings (environment lines, quoted pairs,
flags, XML attributes, two-column tables). They run after ``detectors.TOKENS`` so that a token redacted there is
never their visible context; kept apart from the tokens because they share their own building blocks (the
sensitive names, the bounded values, the finders' candidate shapes that ``shapes.trivial`` would reject anyway),
and every repetition here is bounded for the reason given in ``detectors.py``.
"""

from __future__ import annotations

import re

from bot.sanitize.detectors import TOKENS, Detector, _token
from bot.sanitize.finder_name import FINDER_NAME

# A URL's user: plain characters, possibly with the marker of a token redacted by the first pass.
_USER = r"[^\s:/@\"'<>\[\]]{0,64}"
_USER_MARKER = r"(?:\[REDACTED:[a-z_]{1,40}(?:#[0-9a-f]{6})?\])?"

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
_QUOTED_VALUE = r"\"[^\"\n]{1,256}(?:\"|$)|'[^'\n]{1,256}(?:'|$)"
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
_DOUBLE_QUOTED_START = r"\"(?:" + _candidate_start(r"[^\"\n]") + ")"
_QUOTED_START = _DOUBLE_QUOTED_START + r"|'(?:" + _candidate_start(r"[^'\n]") + ")"
_XML_START = _candidate_start(r"[^<\s]")
_BARE_CANDIDATE = _candidate_value(r"[^\s\"',;&}\])]")
_IN_DOUBLE_QUOTES, _IN_SINGLE_QUOTES = _candidate_value(r"[^\"\n]"), _candidate_value(r"[^'\n]")
_DOUBLE_QUOTED_CANDIDATE = rf"\"(?:{_IN_DOUBLE_QUOTES})(?:\"|$)"
_QUOTED_CANDIDATE = _DOUBLE_QUOTED_CANDIDATE + rf"|'(?:{_IN_SINGLE_QUOTES})(?:'|$)"
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
# And only names in which the sensitive word is a word of its own as shapes.name_kind reads it: see finder_name.py.
_FINDER_NAME = FINDER_NAME
_ASSIGNMENT_FINDER_NAME_HEAD = _ASSIGNMENT_NAME_HEAD.replace(_NAME, _FINDER_NAME)

# What may open a line before the text a tool wrote there: a unified diff's line marker before the file's own
# indentation ("+", "-"; a context line's " " is indentation: ``git diff``, ``helm diff``) or a mail or Markdown
# quote ("> ", nested). The environment line and the line-start detector read past it; ``judge._YAML_KEY_LINE``
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
# "NAME=value" as one quoted string: docker inspect's "Env": ["DB_PASSWORD=ab;cd"], a compose list item
# - "DB_PASSWORD=ab;cd", systemd's Environment="DB_PASSWORD=x y": the value runs to the closing quote.
_ENV_STRING_HEAD = rf"(?:^|[^A-Za-z0-9_.\\-])\"(?P<name>{_NAME})="
_ENV_STRING_SINGLE_HEAD = rf"(?:^|[^A-Za-z0-9_.\\-])'(?P<name>{_NAME})="
# A command-line flag and its value as separate words (ps output, a logged command): --token abc, -password x.
_FLAG_HEAD = rf"(?:^|[ \t])(?P<name>-{{1,2}}{_NAME})[ \t]{{1,4}}"
_FLAG_VALUE = r"\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'-][^\s\"']{0,255}"
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
# with no line start is no candidate (one per line at most here, each scanned from its line's start).
ALIGNMENT_BLANKS = 64
_ALIGNMENT = rf"[ \t]{{1,{ALIGNMENT_BLANKS}}}"
_LINE_VALUE_HEAD = (
    rf"{_LINE_INDENT}(?P<name>{_NAME})"
    rf"(?P<sep>{_ALIGNMENT}(?:[?:]?=|:)|:=?|\?=|=[ \t])[ \t]{{0,4}}"
)
_SHORT_RUN = r"[^\s\"',;&}\])]{0,2}"
_SHORT_RUN_THEN_DELIMITER = rf"(?:{_SHORT_RUN}|[0-9]{{3,6}})[,;&)}}\]]"
# A name aligned in a column wider than code's blanks, opening its line (``ALIGNMENT_BLANKS``): after indentation, a
# diff's or a quote's opener, a YAML list's "- ", or a plan's change marker after the indentation (``terraform
# plan``'s ``      + password                 = "..."``, ``~``, ``-``). Judged as the assignment detector judges
# its candidates (``judge.judge``: check "aligned"), which it never shares a start with (four blanks at most).
_ALIGNED_HEAD = (
    rf"(?:^|\n){_LINE_OPENER}[ \t]{{0,64}}(?:[-+~][ \t]{{1,4}})?(?P<name>{_NAME})[ \t]{{5,{ALIGNMENT_BLANKS}}}"
    r"(?P<sep>[?:]?=|:)[ \t]{0,4}"
)
_ALIGNED_FINDER_HEAD = _ALIGNED_HEAD.replace(_NAME, _FINDER_NAME)
# Its finder's value: a candidate's start, then the rest of the value unbounded. The value's counters
# (``_QUOTED_CANDIDATE``) grew the alternation's program by a quarter, past what its DFA budget keeps
# (tests/test_sanitize_memory.py), and a finder without the value is no memo key (``candidates.run_pass``: the same
# rejected line on every line, ``  secret          = "db-credentials"``, was judged in full each time). Linear still:
# the finder is matched anchored at a line's start only, so each line is read to its end at most once.
_ALIGNED_FINDER_VALUE = (
    r"(?:\"(?:" + _candidate_start(r"[^\"\n]") + r")[^\"\n]*\"?"
    r"|'(?:" + _candidate_start(r"[^'\n]") + r")[^'\n]*'?"
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
# reports it too (``judge.judge`` then reads the value with its glued tail, ``judge._glued_word``: a list's next
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


# RE2 counts a short run in characters (UTF-8 mode), the pass's Python parser in bytes: a run of two characters in
# three or more bytes (``éa;``, ``日;``) was a candidate the parser could not read, and no other detector's, so the
# password showed. The parser reads these runs as UTF-8 characters (``automata._compile_pass``).
PARSER_CHARACTER_RUNS = tuple((run, _characters_as_utf8(run)) for run in (_SHORT_RUN, _QUOTED_KEY_SHORT_RUN))

# The SQL around a password: [WITH] [ENCRYPTED] PASSWORD after WITH or after USER|ROLE name (not the word in prose:
# "the password 'expired' message"), and MySQL's IDENTIFIED [WITH plugin] BY.
_SQL_PASSWORD_HEAD = (
    r"(?i:\b(?:(?:with|(?:user|role)[ \t]{1,4}[^\s;]{1,128})(?:[ \t]{1,4}encrypted)?[ \t]{1,4}password"
    r"|identified(?:[ \t]{1,4}with[ \t]{1,4}[a-z0-9_]{1,64})?[ \t]{1,4}by))[ \t]{1,4}"
)

_CLIENT_PASSWORD_HEAD = (
    r"(?:(?:\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles)\b"
    r"[^\n]{0,256}?\s-p|\b(?:sqlcmd|bcp)\b[^\n]{0,256}?\s-P"
    r"|\bldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)\b[^\n]{0,256}?\s-w"
    r"|\bopenssl\b[^\n]{0,256}?\s-k"
    # htpasswd -b[c] FILE USER PW, htpasswd -nb USER PW: the password is the last word
    r"|\bhtpasswd[ \t]{1,4}-[A-Za-z]{0,8}b[A-Za-z]{0,8}[ \t]{1,4}[^\s]{1,256}(?:[ \t]{1,4}[^\s]{1,128})?)[ \t]{1,4}"
    r"|(?:^|\s)-pass(?:in|out|word)?[ \t]{1,4}pass:)"
)
_SECURE_STRING_HEAD = (
    r"\"?Type\"?[ \t]{0,4}:[ \t]{0,4}\"?SecureString\"?,?\s{0,64}\"?Value\"?[ \t]{0,4}:[ \t]{0,4}"
)
_FLAG_ITEM_HEAD = (
    r"(?:(?m:^)[ \t]{0,64}-[ \t]{1,4}[\"']?|\")"
    rf"(?P<name>-{{1,2}}{_NAME})"
    r"(?:[\"']?[ \t]{0,4}\n[ \t]{0,64}-[ \t]{1,4}|\",[ \t]{0,4}\n?[ \t]{0,64})"
)

# A Go MySQL DSN's user before its password (``dsn_password``): a boundary, then the user name and ":".
_DSN_USER = r"(?:^|[\s\"'=(])[A-Za-z0-9_.-]{0,64}:"

# A .pgpass field (``password`` below): "\\" escapes the next character, so "\\:" is no separator.
_ESCAPED = r"\\[^\s]"
_PGPASS_FIELD = rf"(?:[^\s:\\]|{_ESCAPED}){{1,128}}"
# Between a two-column row's name and value: blanks, or psql's "|" with blanks around it (or none); and psql's
# border before the name (``\pset border 2``: ``| password_plain | PW |``).
_KV_GAP = r"(?:[ \t]{1,16}|[ \t]{0,16}\|[ \t]{0,16})"
_PSQL_BORDER = r"(?:\|[ \t]{1,4})?"

# curl's, wget's and httpie's user flag before "user:password" (``basic_auth``)
_USER_FLAG = r"(?:^|\s)(?:-u|--user|--proxy-user)(?:\s{1,4}|=)"

_RABBITMQ_USER_HEAD = (
    r"\brabbitmqctl[ \t]{1,4}(?:-[^\n]{0,128}?[ \t]{1,4})?(?:add_user|change_password)[ \t]{1,4}[^\s]{1,128}"
    r"[ \t]{1,4}"
)

def _url_password_detector(separator: str, literal: bytes) -> Detector:
    """A URL's password after a scheme and ``separator`` (the pattern of "://", as written or JSON-escaped). Each in
    an automaton of its own: the scheme's threads start at every letter after "+", "-" or "." and count to 20, and
    the set of live counts, times the other detectors' states, made RE2 build new DFA states on random base64 for
    ever."""
    return Detector(
        "url_password",
        rf"(?i:\b[a-z][a-z0-9+.-]{{1,20}}{separator})" + _USER + _USER_MARKER + _USER + ":"
        r"(?P<v>[^\s\"'<>]{1,256})@[A-Za-z0-9\[]",
        check="url_password",
        own_automaton=True,
        literals=(literal, b"@"),
    )


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


CONTEXT: tuple[Detector, ...] = (
    # First: its candidates are parsed by the first branch of the pass's alternation (a full parse tried every
    # branch before it: a third of such a candidate's cost). No other detector matches where it starts (a
    # newline or the text's start, then a key with a blank or ":" before its separator) except the assignment
    # (its own automaton, last), the DSN (its own automaton), and at the text's start only, the two-column
    # key_value_line and requirepass lines, which hide the same value (see ``_LINE_VALUE_HEAD``).
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
    Detector(
        "aws_secret_key",
        # A 40-character base64 token within 60 characters after "aws" on the same line (not a hex digest).
        r"(?i:aws)[^\n]{0,60}?(?:[^A-Za-z0-9/+=_])(?P<v>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)",
        check="not_hex",
    ),
    _token(
        "authorization",
        r"(?i:\b(?:proxy-)?authorization[\"']?\s{0,4}[:=]\s{0,4}[\"'`]?"
        r"(?:(?:bearer|basic|token|digest|negotiate|aws4-hmac-sha256|ssws|apikey)\s{1,4})?)(?P<v>[^\s\"',;]{1,256})",
        check="not_placeholder",
    ),
    Detector(
        "bearer",
        r"(?i:\bbearer\s{1,4})(?P<v>[A-Za-z0-9._~+/-]{8,256}={0,2})(?:[^A-Za-z0-9=]|$)",
        check="generated",
    ),
    # RFC 3986 userinfo: user ":" password "@" host. Tools print passwords holding "/" or "@" unescaped, so the
    # password runs to the last "@" of the token that is followed by a host. Access logs are full of URLs, rarely
    # with a user: only text holding the separator and "@" is searched.
    _url_password_detector("://", b"://"),
    # The same URL inside a JSON string whose encoder escapes "/" (PHP's json_encode, Java's org.json and others):
    # https:\/\/user:password@host.
    _url_password_detector(r":\\/\\/", b":\\/\\/"),
    Detector(
        "dsn_password",
        # A Go MySQL DSN, user:password@net(address)/db. The driver splits its user-info at the LAST "@" before the
        # address, so the password may hold "@" (``backup:ab@cd@tcp(db:3306)/``): the value is lazy, running to the
        # first "@net(" after the user (a second DSN later on the line keeps its own user and host visible).
        _DSN_USER + r"(?P<v>[^\s]{1,256}?)@(?:tcp6?|udp|unix)\(",
        # Apart: its count to 256 after every "name:" (kept alive along any run without blanks, beside every other
        # detector's threads) made the alternation build new DFA states on each text it had not seen (source code
        # at 64 KiB: 1.1 ms of a 3.2 ms call for the scan, 0.4 without it), and text without "@" or "(" never
        # needs it searched.
        own_automaton=True,
        literals=(b"@", b"("),
    ),
    Detector(
        # The same DSN with the default address (localhost:3306): user:password@/dbname?params. Only before a
        # database's name, its parameters, a quote, a blank or the line's end, and never after "://" (a URL's path
        # holding "@/" is no DSN); apart, and searched only in text holding "@/".
        "dsn_password",
        _DSN_USER + r"(?P<v>(?:[^\s/]|/[^\s/])[^\s]{0,254}?)@/(?:[A-Za-z0-9_?-]|[\s\"'`]|$)",
        own_automaton=True,
        literals=(b"@/",),
    ),
    # curl -u "user:pass word" (or single quotes): the whole quoted rest is the password, blanks included, to the
    # first quote of either kind. Before the plain form, which wins nothing at the same start then (it would stop at
    # the first blank); a printed script's ``-u "$NEXUS_USER:$NEXUS_PASS"`` stays, as there. Apart, searched only in
    # text holding "-u" (as -u, --user and --proxy-user all do): in the alternation its counters grew the largest
    # automaton past what its DFA budget keeps (tests/test_sanitize_memory.py).
    Detector(
        "basic_auth",
        _USER_FLAG + r"[\"'][^:\"'\n]{0,128}:(?P<v>[^\"'\n]{1,256})",
        "not_reference",
        search=_USER_FLAG + r"[\"'][^:\"'\n]{0,128}:[^\"'\n]",
        own_automaton=True,
        literals=(b"-u",),
    ),
    _token(
        "basic_auth",  # curl -u user:password
        _USER_FLAG + r"[\"']?[^\s:\"']{0,128}:(?P<v>[^\s\"']{1,256})",
        check="not_reference",  # a printed script's ``-u "$NEXUS_USER:$NEXUS_PASS"``; ``ops:$3cr3t!x9`` is hidden
    ),
    Detector(
        "password",  # mysql -pPASSWORD, redis-cli -a PASSWORD (one counter for both: a smaller automaton)
        r"(?i:\b(?:mysql|mysqldump|mysqladmin|mariadb|redis-cli)\b)[^\n]{0,256}?\s(?:-p|-a[ \t]{1,4})"
        r"(?P<v>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"'-][^\s\"']{0,255})",
        # a printed script's ``-p"$DB_PASS"`` is a variable, any other value is taken; the finder's span does not
        # hold the value, and a rejection is remembered only when the parse lies inside the span (run_pass)
        check="not_reference",
        finder=r"(?i:\b(?:mysql|mysqldump|mysqladmin|mariadb|redis-cli)\b)[^\n]{0,256}?\s(?:-p|-a[ \t]{1,4})[^\s-]",
    ),
    Detector(
        "password",
        # SQL that sets a password, as database logs and psql/mysql history print it: CREATE/ALTER USER|ROLE ...
        # [WITH] [ENCRYPTED] PASSWORD 'pw', MySQL's IDENTIFIED BY 'pw' (also IDENTIFIED WITH plugin BY 'pw').
        _SQL_PASSWORD_HEAD + r"(?P<v>'[^'\n]{1,256}'?)",
        check="not_placeholder",
        finder=_SQL_PASSWORD_HEAD + r"'[^'\n]",
    ),
    Detector(
        # The password flag of a few clients, its value the next word: mongosh/mongodump -p PW, sqlcmd/bcp -P PW,
        # ldapsearch/ldapmodify -w PW, openssl enc -k PW, htpasswd -b FILE USER PW; and OpenSSL's -passin/-passout/
        # -pass pass:PW
        "password",
        _CLIENT_PASSWORD_HEAD + r"(?P<v>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"'-][^\s\"']{0,255})",
        check="not_placeholder",
        finder=_CLIENT_PASSWORD_HEAD + r"[^\s-]",
    ),
    Detector(
        # aws ssm get-parameter(s) --with-decryption: "Type": "SecureString" then "Value": the decrypted value
        # (JSON, or YAML with --output yaml)
        "secure_string",
        _SECURE_STRING_HEAD + r"(?P<v>\"[^\"\n]{1,256}\"?|[^\s,}\"][^\n,}]{0,255})",
        check="not_placeholder",
        finder=_SECURE_STRING_HEAD + r"[^\s,}]",
    ),
    Detector(
        # A container's args as a list, the flag then its value as the next item (kubectl get pod -o yaml/json):
        # "- --db-password" / "- VALUE", or "--token", "VALUE"
        "flag_value",
        _FLAG_ITEM_HEAD + r"(?P<v>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'-][^\n]{0,255})",
        check="env_string",
        finder=_FLAG_ITEM_HEAD.replace(_NAME, _FINDER_NAME) + r"[^\s-]",
    ),
    Detector(
        # Oracle's user/password@service: sqlplus, expdp/impdp, rman, a thin JDBC URL
        "password",
        r"(?i:\b(?:jdbc:oracle:(?:thin|oci):|(?:sqlplus|sqlldr|expdp|impdp|exp|imp|rman[ \t]{1,4}target=?)"
        r"(?:[ \t]{1,4}-[a-zA-Z]{1,8}){0,4}[ \t]{1,4}))[\"']?[A-Za-z0-9_#.\\$]{1,64}/(?P<v>[^\s@/\"']{1,256})@",
    ),
    Detector(
        # rabbitmqctl add_user USER PASSWORD / change_password USER PASSWORD
        "password",
        _RABBITMQ_USER_HEAD + r"(?P<v>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"'-][^\s\"']{0,255})",
        finder=_RABBITMQ_USER_HEAD + r"[^\s-]",
    ),
    Detector(
        # Redis ACL rules: ACL SETUSER name ... >password, a users.acl line "user name on >password ~* +@all"
        "password",
        r"(?:(?i:\bacl[ \t]{1,4}setuser)|(?m:^)user)[ \t]{1,4}[^\s>]{1,128}(?:[ \t]{1,4}[^\s>]{1,40}){0,6}?[ \t]{1,4}>"
        r"(?P<v>[^\s]{1,256})",
        finder=r"(?:(?i:\bacl[ \t]{1,4}setuser)|(?m:^)user)[ \t]{1,4}[^\s>]{1,128}(?:[ \t]{1,4}[^\s>]{1,40}){0,6}?"
        r"[ \t]{1,4}>[^\s]",
    ),
    Detector(
        # pgbouncer's userlist.txt: "user" "password" (plain, md5... or SCRAM-SHA-256$...) alone on its line
        "password",
        r"(?m:^)\"[^\"\s]{1,64}\"[ \t]{1,8}\"(?P<v>[^\"\n]{1,256})\"[ \t]{0,8}(?m:$)",
        check="not_placeholder",
        finder=r"(?m:^)\"[^\"\s]{1,64}\"[ \t]{1,8}\"[^\"\n]",
    ),
    Detector(
        "password",  # .netrc on one line: machine HOST login USER password PW
        r"\blogin[ \t]{1,4}[^\s]{1,128}[ \t]{1,4}password[ \t]{1,4}(?P<v>[^\s]{1,256})",
        finder=r"\blogin[ \t]{1,4}[^\s]{1,128}[ \t]{1,4}password[ \t]{1,4}[^\s]",
    ),
    Detector(
        # An ACL token's secret as Consul ("SecretID:   <uuid>"), Nomad ("Secret ID    = <uuid>") and Vault (AppRole's
        # "secret_id   <uuid>", also in -format=yaml; a wrapped response's "wrapping_token:   s.<24>") print it in
        # their tables: the name ends in "ID", which makes it an identifier's to the assignment detectors, and the
        # columns are wider than their blanks. These exact names only (AccessorID, secret_id_accessor stay), the
        # value alone on its line; before key_value_line, which would take the Vault row at the same byte. A value
        # of under 8 characters is no candidate (shapes.acl_secret takes a UUID or a generated value, 8 or more).
        "token",
        r"(?m:^)[ \t]{0,16}(?:SecretID|Secret ID|secret_id|wrapping_token)(?:[ \t]{0,32}[:=][ \t]{0,64}|[ \t]{1,64})"
        r"(?P<v>[^\s\"'][^\s]{7,255})[ \t]{0,16}(?m:$)",
        check="acl_secret",
    ),
    Detector(
        # The same in -format=json / -json: "SecretID": "<uuid>", "secret_id": "<uuid>"; before quoted_pair, which
        # starts at the same quote.
        "token",
        r"\"(?:SecretID|secret_id)\"[ \t]{0,4}:[ \t]{0,4}\"(?P<v>[^\"\n]{8,256})\"",
        check="acl_secret",
    ),
    _token(
        # ... and as a command's argument or an environment variable: vault write auth/approle/login role_id=<id>
        # secret_id=<uuid>, VAULT_SECRET_ID=<uuid> (starting at the "_" before it, where no assignment starts). The
        # value stops at "=": one that ran on would swallow the next name and leave its secret to no detector
        # ("secret_id=password = 'pw'" showed the password).
        "token",
        r"(?:^|[^A-Za-z0-9])(?:secret_id|SECRET_ID)=(?P<v>[^\s\"'&;,=]{8,256})",
        check="acl_secret",
    ),
    Detector(
        "quoted_pair",
        # JSON inside a JSON string (aws secretsmanager's SecretString: {\"password\":\"x\"}); PHP and Ruby
        # arrays ('password' => 'x'), define('DB_PASSWORD', 'x'), a default (os.getenv("DB_PASSWORD", "x")).
        rf"(?P<q>\\?[\"'])(?P<name>{_NAME})\\?[\"'][ \t]{{0,4}}(?:=>|,|:)[ \t]{{0,4}}\\?[\"']"
        r"(?P<v>[^\"'\\\n]{1,256})",
        check="quoted_pair",
        finder=rf"\\?[\"']{_FINDER_NAME}\\?[\"'][ \t]{{0,4}}(?:=>|,|:)[ \t]{{0,4}}\\?[\"'][^\"'\\\n]",
    ),
    _token(
        "session_cookie",
        # A session cookie is a credential: Cookie: / Set-Cookie: sessionid=..., PHPSESSID=..., remember_me=...
        r"(?:(?i:cookie:)[ \t]{0,4}|(?i:cookie)\"[ \t]{0,4}:[ \t]{0,4}\"|;[ \t]{1,4})"  # "cookie": "..." in JSON logs
        r"(?i:[a-z0-9_.-]{0,32}(?:sess|sid|remember)[a-z0-9_.-]{0,32})="
        r"(?P<v>[^;\s\"']{1,256})",
        check="generated",
    ),
    Detector(
        "env_word",
        # NAME and value as words: a Dockerfile's ENV NAME value, fish's set -gx NAME value, csh's setenv NAME value
        _ENV_WORD_HEAD + rf"(?P<name>{_NAME})[ \t]{{1,4}}(?P<v>[^\s\"'=][^\n]{{0,255}})",
        check="env_string",
        finder=_ENV_WORD_HEAD + rf"{_FINDER_NAME}[ \t]{{1,4}}[^\s\"'=]",
    ),
    Detector(
        # docker / podman / helm registry login -p PASSWORD (the long --password is a flag_value), sshpass -p PW
        "password",
        r"(?i:\b(?:login|sshpass)\b)[^\n]{0,128}?\s-p[ \t]{0,4}"
        r"(?P<v>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s\"'-][^\s\"']{0,255})",
        # a port is no password ("ssh login@host -p 2222", "psql -U login -p 5432"); a rejection is remembered
        # only on a span holding the value (candidates.run_pass), never on this short finder's
        check="not_placeholder",
        finder=r"(?i:\b(?:login|sshpass)\b)[^\n]{0,128}?\s-p[ \t]{0,4}[^\s-]",
    ),
    Detector(
        "sensitive_value",
        # terraform output -json prints a sensitive output in clear: {"sensitive": true, "type": ..., "value": ...}
        r"\"sensitive\"[ \t]{0,4}:[ \t]{0,4}true,\s{0,64}\"type\"[ \t]{0,4}:[ \t]{0,4}\"[a-z]{1,16}\",\s{0,64}"
        r"\"value\"[ \t]{0,4}:[ \t]{0,4}(?P<v>\"[^\"\n]{1,256}\"?|[^\s,}\]\[{\"][^\s,}\]]{0,255})",
        # no check: every such value is one the operator marked sensitive (and so the short finder is safe:
        # nothing is rejected, so nothing is memoized on a span that does not hold the value)
        finder=r"\"sensitive\"[ \t]{0,4}:[ \t]{0,4}true,\s{0,64}\"type\"[ \t]{0,4}:[ \t]{0,4}\"[a-z]{1,16}\",\s{0,64}"
        r"\"value\"[ \t]{0,4}:[ \t]{0,4}[^\s,}\]\[{]",
    ),
    Detector(
        "password_hash",
        # htpasswd and shadow lines: user:$apr1$..., user:$2y$..., user:{SHA}...
        r"(?m:^)[A-Za-z0-9_.@-]{1,64}:(?P<v>\$(?:apr1|2[abxy]|1|5|6|y|7|argon2id|argon2i|argon2d)\$[^\s:]{8,300}"
        r"|\{S?SHA\}[A-Za-z0-9+/=]{20,100})",
        search=r"(?m:^)[A-Za-z0-9_.@-]{1,64}:(?:\$(?:apr1|2[abxy]|1|5|6|y|7|argon2id|argon2i|argon2d)\$[^\s:]{8}"
        r"|\{S?SHA\}[A-Za-z0-9+/=]{20})",
    ),
    Detector(
        "password",
        # .pgpass lines: hostname:port:database:username:password, where "\\" escapes a ":" or "\\" in a field
        # (an IPv6 host: ``\\:\\:1:5432:*:replicator:PW``)
        rf"(?m:^)(?:[^\s:#\\]|{_ESCAPED}){{1,253}}:(?:\d{{1,5}}|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:"
        r"(?P<v>[^\s]{1,256})(?m:$)",
        # The first field unbounded in the scan: a count to 253 from every line's start (and the text's) kept
        # alive beside every other detector's threads made RE2 build new DFA states at the start of every text it
        # had not seen (random base64 at 8 KiB: 5 MB/s). Linear still: the field starts only at a line's start, so
        # each line holds at most one such thread, and the anchored finder bounds it at each hit.
        search=rf"(?m:^)(?:[^\s:#\\]|{_ESCAPED})+:(?:\d{{1,5}}|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:[^\s]",
    ),
    Detector(
        "env_value",
        # A container's environment in a manifest: "- name: DB_PASSWORD" then "value: ..." (YAML or JSON).
        _ENV_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="env_pair",
        finder=_ENV_HEAD + rf"(?P<v>{_QUOTED_CANDIDATE}|{_BARE_CANDIDATE})",
        search=_ENV_HEAD + rf"(?:{_QUOTED_START}|{_BARE_START})",
    ),
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
        rf"(?i:key|name)=\"(?P<name>{_NAME})\"[ \t]{{1,4}}(?i:value)=(?P<v>\"[^\"\n]{{1,256}}\")",
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
        r"(?P<v>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'#=][^\s\"']{0,255})",
        finder=r"(?m:^)[ \t]{0,16}(?:requirepass|masterauth|rootpw|bindpw|bind_pw)(?:[ \t]{0,8}=[ \t]{0,8}|[ \t]{1,8})"
        r"[^\s#=]",
    ),
    Detector(
        "key_value_line",
        # Two columns, a secret's name then its value, alone on a line: vault kv get's "Key  Value" table, a
        # .netrc's "  password x". Words follow no separator here, so the value must look generated for every
        # name (a line "password expired" stays). psql's rows put a "|" between the cells (``\x``'s records,
        # ``password_plain | PW``; ``\pset border 2`` opens and closes the row with one too).
        rf"(?m:^)[ \t]{{0,16}}{_PSQL_BORDER}"
        rf"(?P<name>(?:[A-Za-z][A-Za-z0-9_.-]{{0,40}})?{_KV_WORD}[A-Za-z0-9_.-]{{0,20}})"
        rf"{_KV_GAP}(?P<v>[^\s\"'][^\s]{{0,255}})(?:[ \t]{{1,16}}\|)?[ \t]{{0,16}}(?m:$)",
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
        search=_ENV_LINE_HEAD + r"[^\s\"'][^\n]{2}",
    ),
    Detector(
        "assignment",
        _ASSIGNMENT_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="assignment",
        # (and ``NAME=`` then a short first run glued to more text, "=" right after the name: ``_GLUED_SHORT_RUN``)
        finder=_ASSIGNMENT_FINDER_NAME_HEAD
        + rf"(?:{_ASSIGNMENT_SEPARATOR}(?P<v>{_QUOTED_CANDIDATE}|{_BARE_CANDIDATE})|={_GLUED_SHORT_RUN})",
        search=_ASSIGNMENT_FINDER_NAME_HEAD
        + rf"(?:{_ASSIGNMENT_SEPARATOR}(?:{_QUOTED_START}|{_BARE_START})|={_GLUED_SHORT_RUN})",
        # Apart, so a hit of its own tells that the candidate is an assignment (candidates._assignment_head)
        own_automaton=True,
    ),
)


# The boundary before a token or a name (``(?:^|[^A-Za-z0-9_-])``): RE2 reads its class as one character, the
# parser as one byte, so after a character of two to four bytes (``é``, ``日``, ``→``) RE2's candidate started at
# that character and the parser could not read it: the token showed (found by review: every vendor token, the AWS
# key id). The parser reads each such boundary as a UTF-8 character too.
_LEADING_BOUNDARY = re.compile(r"\(\?:\^\|(\[\^(?:\\.|[^\]\\])*\])\)")
PARSER_CHARACTER_RUNS += tuple(dict.fromkeys(
    (found.group(), "(?:^|" + _characters_as_utf8(found.group(1)) + ")")
    for detector in (*TOKENS, *CONTEXT) for found in _LEADING_BOUNDARY.finditer(detector.pattern)
))
