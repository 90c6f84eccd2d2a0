"""What one candidate is: the kind of secret its shape says it holds (or none), and the span to replace.

Called by the search loop (``candidates.run_pass``) on a candidate it could not dismiss more cheaply; kept apart
because it is the detectors' semantics (one rule per ``Detector.check``, each reading the candidate's groups and
a bounded window around them) while the loop is about cost (the verdict memo, the density budget).
"""

from __future__ import annotations

import re

from bot.sanitize import code_expressions, putty, secret_names, shapes
from bot.sanitize.context_programs import key_vault_value
from bot.sanitize.detectors import VALUE_BOUND, Detector

# Continuations of a value that reached its pattern's bound: one forward scan, never a second search.
_BARE_CONTINUATION = re.compile(rb"[^\s\"',;&}\])]*")
_TOKEN_CONTINUATION = re.compile(rb"[A-Za-z0-9_\-./+=]*")
# The rest of a JSON string after an escaped quote (``"abc\"def"``): escapes honoured, to the real closing quote or
# the line's end (the alternatives share no first byte: one way to read each byte, linear).
_JSON_STRING_REST = re.compile(rb'(?:[^"\\\n]|\\[^\n])*')
_LOOK_AROUND = 128
# A blank inside make's ``!=`` value (``MAKE_APPEND_HEAD``): a command with its arguments, not a literal
_MAKE_COMMAND = re.compile(r"\s")
# The most blanks before "=" as code and ini files write them (more: an aligned column, see ``judge``)
_CODE_BLANKS = 4
_ENVIRONMENT_NAME = secret_names.ENVIRONMENT_NAME
# A diff's "+" and a quote's ">" too, opening the line only (``_YAML_KEY_LINE``): "-> password: x" is prose
_LINE_START = re.compile(rb"(?:\+|(?:>[ \t]?){1,4})?[ \t\-{,\[]*")
_FIXED_LENGTH_KINDS = frozenset(
    {"aws_secret_key", "aws_access_key_id", "npm_token", "google_api_key", "bearer", "azure_storage_key",
     "telegram_token", "newrelic_key", "age_key", "shopify_token", "brevo_key", "twilio_key",
     "databricks_token", "postman_key", "pulumi_token", "buildkite_token"}
)
_HEX = re.compile(r"[0-9a-fA-F]+")
_NODE_REFERENCE_FIRST = frozenset("*&!")  # how every ``shapes.yaml_node_reference`` starts
# What stands before a value that runs to its line's end: a YAML block mapping's indentation, list "- ", key, ":"
# and blanks; or an ini/conf file's key and " = " (my.cnf, php.ini, pgbouncer.ini: blanks around the "="). Either
# may follow a diff's line marker or a quote's ">" (``context_patterns._LINE_OPENER``).
_YAML_KEY_LINE = re.compile(
    rb"(?:[+-]|(?:>[ \t]{0,4}){1,4})?"
    rb"(?:[ \t]*(?:-[ \t]+)?[\"']?[\w.\-]{1,128}[\"']?[ \t]*:[ \t]*|[ \t]*[\w.\-]{1,128}[ \t]*=[ \t]*)"
)
# A diff's or a quote's line opener (``context_patterns._LINE_OPENER``) before an environment line: "+", ">"
# (nested, a blank after each), or "-" then indentation (a removed line; "- " with one blank is a YAML list item).
_LINE_OPENER = re.compile(rb"\+|-(?=[ \t]{2}|\t)|(?:>[ \t]?){1,4}")
_OPENER_FIRST = (b"+", b"-", b">")
_BLANKS = (b" ", b"\t")
# What no indentation of code holds before a keyword argument (``judge``'s environment line): a list's "-", a word
_CODE_INDENT = re.compile(rb"[-a-z]")
# A YAML node's properties before its value (``context_patterns._NODE_PROPERTIES``): an anchor, a standard tag.
_NODE_PROPERTIES = re.compile(r"(?:(?:&\S{1,40}|!!\S{0,40})[ \t]{1,4}){1,2}")
_YAML_COMMENT = re.compile(rb"[ \t]#")
# What ends a bare value elsewhere (a query string's "&", a connection string's ";", a flow mapping's "," "}"),
# but is a character of a YAML or ini line's plain value.
_PLAIN_DELIMITERS = frozenset((b"&", b";", b",", b")", b"}", b"]"))  # sets: asked of every value judged
_LINE_ENDS = frozenset((b"", b"\n", b"\r"))
# A delimiter glued to more text mid-line (``_glued_end``): the value runs on to the next blank or quote, unless
# the next pair of a list follows (``;Database=``, ``&page=``) or a blank, a quote or the line's end does.
_GLUE_STOPS = (b"", b" ", b"\t", b"\n", b"\r", b"\v", b"\f", b'"', b"'")
_NEXT_PAIR = re.compile(rb"[A-Za-z_][A-Za-z0-9_.\-]{0,63}=")
_GLUED_TAIL = re.compile(rb"[^\s\"']*")
_YAML_COMMENT_TEXT = re.compile(r"[ \t]#")
# Numbers joined by the delimiters (``pass=3,4``, ``retries=1;2;5``): no password read on from a short first run
_NUMBER_LIST = re.compile(r"[0-9]+(?:[,;&)}\]][0-9]+)*")
# Each delimiter read as a letter: what a list of words joined by them looks like to ``shapes.generated``.
_DELIMITERS_AS_LETTERS = str.maketrans("&;,)}]", "aaaaaa")

# A test's id as runners print it after their verdict: a file under a directory or with its test's name
# (``tests/test_tokens.py::test_expiry``, ``src/App.test.tsx``, ``test_x.py::TestA::test_b[param]``).
_TEST_ID = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.[a-z]{1,5}(?:::[\w\[\].:-]+)?|[\w.-]+\.[a-z]{1,5}::[\w\[\].:-]+")
_FIRST_WORD = re.compile(r"[^\s\"',;&}\])]+")
# The checks that read the candidate's value alone (``_judge_value``), asked apart: one set lookup, not seven
# comparisons before the name checks (an environment line on every line reaches those).
_VALUE_CHECKS = frozenset(
    {"not_hex", "not_placeholder", "not_reference", "generated", "connection_password", "url_password", "acl_secret",
     "private_lines"}
)
# The checks that read neither a name nor the value alone: what stands around the candidate decides (a reported
# hint's reader, a Key Vault value's object), so no verdict of theirs is remembered.
_CONTEXT_CHECKS = frozenset({"reported", "key_vault_value"})
# Each branch's group names (``automata._compile_pass``: branch i's parts are ``b{i}_<part>``), spelled
# once: formatting them cost a few percent of a judgement, which dense text does on every line.
_BRANCHES = 256
NAME, VALUE, SEPARATOR, QUOTE = (tuple(f"b{i}_{part}" for i in range(_BRANCHES)) for part in ("name", "v", "sep", "q"))


def reads_name_first(check: str) -> bool:
    """Whether ``judge`` asks first of a candidate of this check whether its name holds a secret, and refuses it,
    context-free, when it does not (every check but the value checks and the reported hints): the loop may ask
    that itself, from the names it has judged (``candidates._HARMLESS_NAMES``)."""
    return bool(check) and check not in _VALUE_CHECKS and check not in _CONTEXT_CHECKS


def judge(detector: Detector, match: re.Match[bytes], index: int, value: bytes) -> tuple[str | None, bool]:
    """The kind to report when the candidate is a secret (None when its shape says it is not), and whether that
    verdict depends on the candidate's bytes alone (not on the rest of its line), so it may be memoized."""
    check = detector.check
    if not check:
        return detector.kind, True
    shown = value.decode("utf-8", "replace")
    if check in _VALUE_CHECKS:
        return _judge_value(detector, check, shown), True
    if check == "reported":  # read by reports.py when the caller asks (run_pass's reports); never remembered, so
        return None, False  # that the next text's header or echoed command is reported again
    if check == "key_vault_value":  # the object's id, read back from the candidate (not in the memo key)
        return (detector.kind if key_vault_value(match.string, match.start()) else None), False
    text = match.string
    name_start, name_end = match.span(NAME[index])
    name = text[name_start:name_end].decode("utf-8", "replace")
    if secret_names.name_kind(name) is None:
        return None, True  # most candidates in ordinary logs end here (token_type=, key_id=): cached, cheap
    value_start, value_end = match.span(VALUE[index])
    quoted = text[value_start : value_start + 1] in (b'"', b"'")
    if check == "line_value":
        separator_group = match[SEPARATOR[index]]
        if b"!" in separator_group and _MAKE_COMMAND.search(_without_comment(shown)):
            return None, True  # make's ``NAME != cat /run/secrets/x``: a shell command, its output never shown
        separator = "=" if b"=" in separator_group else ":"  # its group holds blanks around it
        # The verdict reads the value to its line's end: the candidate's bytes alone when the line ends there
        # (run_pass remembers it only when the whole match lies in the memo key: ``password: a;`` alone).
        return _judge_line_value(name, separator, shown), text[value_end : value_end + 1] in (b"", b"\n")
    if check == "env_line":
        # The whole rest of the line, else its first word as a mid-line assignment would judge it: an environment
        # line hides at least what the assignment detector would (it cannot start again inside this name). A line
        # that is an expression of code (``password=os.environ["X"]``) is judged whole, never by its first word.
        # Only an indented line may be code (a keyword argument: ``    password=os.environ["X"],``); ``env``, a .env
        # file, ``export`` and a YAML list item (``- DB_PASSWORD=...``) hold literals.
        # After a diff's or a quote's opener (``_LINE_OPENER``), the same rule on the text the file holds.
        before = text[match.start() : name_start].lstrip(b"\n")
        if len(before) <= 1:  # nothing, one blank (code), or one character that no blank follows: "+", ">", "-"
            code = before in _BLANKS
        else:
            if before[:1] in _OPENER_FIRST:  # asked only where one may stand
                opener = _LINE_OPENER.match(before)
                before = before[opener.end() :] if opener is not None else before
            code = before[:1] in _BLANKS and _CODE_INDENT.search(before) is None
        verdict = shapes.accept_assignment(name, "=", shown, True, code=code, environment=not code)
        if verdict is not None:
            return verdict, True
        if shown[:1] == "<" and shapes.angle_placeholder(shown):
            return None, True  # JWT_SECRET=<generate with: openssl rand -hex 32>: its first word is the placeholder's
        first = _FIRST_WORD.match(shown)
        if first is not None and first.end() < len(shown) and not (code and code_expressions.code_reference(shown)):
            following = shown[first.end() : first.end() + 1]
            verdict = shapes.accept_assignment(name, "=", first.group(), True, following=following, code=code)
        return verdict, True
    if check in ("env_pair", "xml_pair"):
        return shapes.accept_assignment(name, "=", shown, True, quoted=quoted, environment=check == "env_pair"), True
    if check == "env_string":  # "NAME=value" in quotes: an environment entry, its value a literal
        return shapes.accept_assignment(name, "=", shown, True, code=False, environment=True), False
    if check == "key_value_line":  # "password    Va-ult-Pw9": no separator, so only a generated value counts
        if name == "PASS" and _TEST_ID.fullmatch(shown):
            return None, True  # a test runner's verdict (PASS tests/test_tokens.py::test_token_expiry), no password
        verdict = shapes.accept_assignment(name, ":", shown, False, True, code=False)
        return verdict, False
    if check == "quoted_pair":
        # 'password' => 'x', define('DB_PASSWORD', 'x'), and ":" only in escaped JSON (\"password\":\"x\"): a
        # plain JSON pair is the assignment detector's, whose verdict must not be taken again here.
        pair_separator = text[name_end : name_end + 8].lstrip(b"\\\"' \t")[:1]  # bounded: no copy of the rest
        if pair_separator == b":" and not match.group(QUOTE[index]).startswith(b"\\"):
            return None, False
        pair_start = match.start(QUOTE[index])
        if pair_separator == b"," and not text[max(0, pair_start - 8) : pair_start].rstrip().endswith(b"("):
            return None, False  # "a","b" is a JSON value then a key; only a call's arguments pair a name and value
        return shapes.accept_assignment(name, "=", shown, True, quoted=True, code=False), False
    if check == "flag":
        # --token VALUE: a password-like flag takes any value unless words follow it (prose: "--password flag is
        # deprecated"), others a generated one; the next word is outside the candidate, so not memoized.
        rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
        sentence = rest[:1].isalpha() and not quoted
        following = text[value_end : value_end + 1].decode("utf-8", "replace")
        return shapes.accept_assignment(name, ":", shown, not sentence, sentence, quoted=quoted,
                                        following=following), False
    if shown.endswith(":") and b"\n" in text[name_end:value_start]:
        return None, True  # "credentials:" opening a YAML mapping, its first key on the next line
    separator = "=" if match[SEPARATOR[index]].endswith(b"=") else ":"  # make's ?= and :=, Go's := are "="
    # (A node reference starts with "*", "&" or "!": asked first, a value on every line of dense text reaches here)
    if separator == ":" and not quoted and shown[:1] in _NODE_REFERENCE_FIRST and shapes.yaml_node_reference(shown):
        return None, True  # a YAML alias (``password: *pw``) or a node's properties alone (``password: !!null``)
    sep_start = match.start(SEPARATOR[index])
    if separator == ":" and text[name_start - 1 : name_start] == b":":
        return None, True  # a field of a colon-separated identifier (arn:aws:secretsmanager:...:secret:name)
    if text[max(0, name_start - 9) : name_start] == b"checksum/":
        return None, False  # a chart's annotation: checksum/secret is the digest of the rendered Secret
    if separator == ":":
        if name == "PASS" and text[max(0, name_start - 4) : name_start] == b"--- ":
            return None, False  # go test's verdict (--- PASS: TestTokenRefresh (0.01s)), not a password
        after_separator = text[sep_start + 1 : sep_start + 3]
        if after_separator == b"//":
            return None, True  # a URL's scheme (credential.https://github.com...), not a key and its value
        if after_separator[:1] == b":":
            return None, True  # a path of code (SecretKey::from_slice, Config::TOKEN), not a key and its value
    after_value = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
    if after_value not in (b"", b",") and b"\n" in text[name_end:value_start]:
        # a value on the line after its name is a YAML plain scalar alone on that line; more on the line is the
        # next line's own text (a chart's NOTES: "Credentials:" then ``echo "Username : user"``)
        return None, False
    # What follows the value decides a call (``get_token(`` then ``)``): one byte, inside the memo key.
    following = text[value_end : value_end + 1].decode("utf-8", "replace")
    # The most permissive context (at a line's start, no words after the value) rejects: every context does.
    # After "=" the context does not matter at all (shapes.accept_assignment: NAME=value is structured).
    # In a column aligned wider than code's few blanks (``context_patterns.ALIGNED_BLANK``) the quoted literal
    # is not taken for a secret under any secret's name: a plan or a state lists a resource's attributes there
    # (``  + secret                 = "db-credentials"`` names a Secret); a password or a generated value still is.
    spaced = text[sep_start - 1 : sep_start] in (b" ", b"\t") and sep_start - name_end <= _CODE_BLANKS
    if separator == "=" and not spaced and text[sep_start + 1 : sep_start + 2] in (b" ", b"\t"):
        # "password= and token= ...": a blank after "=" only and words after the value is prose, judged as a
        # sentence (a generated value only); "password= hunter2" alone stays a password. Reads past the
        # candidate, so not memoized.
        rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
        if rest[:1].isalpha() and not quoted:
            return shapes.accept_assignment(name, ":", shown, False, True, quoted=quoted, following=following,
                                            spaced=spaced), False
    # An environment variable's name (JWT_SECRET=, compose's or a ConfigMap's JWT_SECRET: at a line's start) holds
    # its secret whatever it looks like (shapes.accept_assignment's ``environment``); its context is read below.
    env_name = "_" in name and _ENVIRONMENT_NAME.fullmatch(name.strip("\"'")) is not None  # (no "_": never one)
    verdict = shapes.accept_assignment(name, separator, shown, True, False, quoted=quoted, following=following,
                                       spaced=spaced, environment=env_name)
    if verdict is None and not quoted and reads_line(text, value_start, value_end):
        # A YAML or ini line's plain value does not end at this delimiter: judged whole (``secret_key:
        # QWbR|O,J/}A#x7`` is generated; its first run alone is too short to look it), reading the line. One
        # that opens a bracket is read as an expression of code on the whole line
        # (``code_expressions.line_expression``).
        # Mid-line the delimiter ends the value, as before, but the rejection is not remembered: a memo key holds
        # the value and one byte after it, which a key line holding the same bytes would share.
        plain = read_on(text, separator, (name_start, name_end), (value_start, value_end))
        return (None if plain is None else _judge_line_value(name, separator, plain)), False
    if verdict is None or separator == "=" and not env_name:
        return verdict, True
    if separator == "=":  # API_TOKEN=not a token: words after the value are prose, and its value needs a shape
        rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
        if rest[:1].isalpha() and not quoted:
            verdict = shapes.accept_assignment(name, separator, shown, True, False, quoted=quoted,
                                               following=following, spaced=spaced)
        return verdict, False
    if not env_name and not shapes.reads_position(name, quoted):
        return verdict, False  # the call below differs in the context alone, which this name's verdict never reads
    # Looks around the candidate stay bounded (a search to the line's start or end could cross a megabyte-long
    # line for every candidate on it, which is quadratic).
    lookback = max(0, name_start - _LOOK_AROUND)
    newline = text.rfind(b"\n", lookback, name_start)
    line_start = newline + 1 if newline >= 0 or lookback == 0 else -1
    at_line_start = line_start >= 0 and _LINE_START.fullmatch(text, line_start, name_start) is not None
    rest = text[value_end : value_end + _LOOK_AROUND].split(b"\n", 1)[0].strip()
    sentence = rest[:1].isalpha() and not quoted  # more words follow: prose
    if at_line_start and not sentence:
        return verdict, False  # the context of the permissive call above, whose verdict this is (a second call
        # cost a tenth of a judgement: "pass: x1" on every line, each one judged)
    return shapes.accept_assignment(name, separator, shown, at_line_start, sentence, quoted=quoted,
                                    following=following, spaced=spaced,
                                    environment=env_name and at_line_start and not sentence), False


def read_on(text: bytes, separator: str, name_span: tuple[int, int], value_span: tuple[int, int]) -> str | None:
    """The text an unquoted assignment's verdict reads on to when a delimiter glues its refused first run
    (``value_span``) to more (``reads_line``), None when it reads no further (refused then): a YAML or ini line's
    plain value to the line's end (a key opens the line), or mid-line after "=" the value with its glued tail
    (``_glued_end``). Shared by ``judge`` and ``cheap_rejection``."""
    name_start, name_end = name_span
    value_start, value_end = value_span
    plain = plain_line_value(text, value_start)
    if plain is None and separator == "=":  # mid-line NAME=value glued on past it (``_glued_end``): an argv's
        # ``--api_token=Wq4vN8,mR2kT7xL9``; a first run too short to judge alone (``-e DB_PASSWORD=ab;cdefghij``)
        # only in an argv's word, and never a list of numbers (``pass=3,4``)
        # short as the finder's _GLUED_SHORT_RUN reads it, not any trivial run: a long trivial first run
        # (``null;Xk9...``, ``aaaa)Xk9...``) was read with its glued tail on 3f59870 wherever the name stood
        shown = text[value_start:value_end].decode("utf-8", "replace")
        short = len(shown) <= 2 or len(shown) <= 6 and shown.isascii() and shown.isdigit()
        if not short or _argv_assignment(text, name_start, name_end):
            plain = _glued_word(text, name_start, value_start, value_end)
            if short and plain is not None and _NUMBER_LIST.fullmatch(plain):
                plain = None
    return plain


def line_value_refused(separator: str, value: str) -> bool:
    """Whether ``_judge_line_value`` refuses a line's plain value before judging it at all: a YAML alias or a
    node's properties alone, or a trivial value (once a trailing "," or ";" is dropped: ``"token": [],``)."""
    return _line_value_reading(separator, value) is None


def _line_value_reading(separator: str, value: str) -> tuple[str, bool] | None:
    """What ``_judge_line_value`` judges of a line's plain value: the text (its first word when words follow it)
    and whether words follow it, None when it is refused before (``line_value_refused``)."""
    plain = _without_comment(value)
    properties = _NODE_PROPERTIES.match(plain)
    if properties is not None:  # an anchor or a tag is the node's, not its value's (``password: &pw hunter2``)
        plain = plain[properties.end() :]
    if separator == ":" and shapes.yaml_node_reference(plain):
        return None  # an alias, or an anchor with no value on its line (``credentials: &creds``)
    first, _, rest = plain.partition(" ")
    sentence = rest.lstrip()[:1].isalpha()
    judged = first if sentence else plain
    if shapes.trivial(judged.rstrip(",;")):
        return None
    return judged, sentence


def _judge_value(detector: Detector, check: str, shown: str) -> str | None:
    """The kind of a candidate whose check reads its value alone (``_VALUE_CHECKS``), None when its shape says it
    is no secret."""
    if check == "not_hex":
        return None if _HEX.fullmatch(shown) else detector.kind
    if check == "not_placeholder":
        return None if shapes.trivial(shown) else detector.kind
    if check == "not_reference":  # a printed script's ``-p"$DB_PASS"``: any value but a variable's name is taken
        return None if shapes.variable_reference(shown) else detector.kind
    if check == "generated":
        return detector.kind if shapes.generated(shown.rstrip("=")) else None
    if check == "connection_password":  # a path is the shell's PWD (sudo's "; PWD=/home/ops ;"), no password
        return None if shapes.trivial(shown) or shapes.is_path(shown) else detector.kind
    if check == "url_password":
        return detector.kind if shapes.accept_url_password(shown) else None
    if check == "acl_secret":
        return detector.kind if shapes.acl_secret(shown) else None
    return detector.kind  # private_lines: a PuTTY key's first private line, its header says so


def _judge_line_value(name: str, separator: str, value: str) -> str | None:
    """The kind of a ``line_value`` candidate (a YAML or ini line's plain value, its first run before a delimiter
    too short for the assignment detector), judged by the assignment's own rules on the whole rest of the line,
    as a YAML block mapping or an ini file reads it. Its first word alone when words follow it (today's prose
    rule: ``passwords: 3, rotated`` and ``password: a, b and c`` are sentences, so after ":" only a generated
    first word counts), and a value that is trivial once a trailing "," or ";" is dropped stays (code's
    ``password = pw;``, ``"pass": 10,``). An expression of code is read on the whole value
    (``code_expressions.line_expression``), so a generated password that opens a bracket early is still a literal."""
    reading = _line_value_reading(separator, value)
    if reading is None:
        return None
    judged, sentence = reading
    if code_expressions.EXPRESSION_HINT.search(judged) and code_expressions.line_expression(judged, separator == ":"):
        return None
    environment = not sentence and _ENVIRONMENT_NAME.fullmatch(name.strip("\"'")) is not None
    verdict = shapes.accept_assignment(name, separator, judged, True, sentence, code=False, environment=environment)
    if verdict is None or environment or secret_names.name_kind(name) == (verdict, True):
        return verdict
    # A name that needs a generated value (token, key, auth...): the delimiters alone make a list of words look
    # generated to ``shapes.generated`` (``auth: ldap,local``, ``secret_backends: vault,aws``), so the value must
    # look generated with each of them read as a letter (dropped, "(${" could open a value and read as a
    # placeholder).
    return verdict if shapes.generated(judged.translate(_DELIMITERS_AS_LETTERS)) else None


# A plan's change of a value (``terraform plan``'s ``~ password = "old" -> "new"``): the new value after the old one's
# closing quote, within its line and bounded as a quoted value is.
_CHANGED_TO = re.compile(rb'[ \t]{1,4}->[ \t]{1,4}"([^"\n]{1,%d})' % VALUE_BOUND)
CHANGE_CHECKS = frozenset({"assignment", "aligned"})


def changed_to(data: bytes, detector: Detector, end: int) -> tuple[int, int] | None:
    """The span of the new value when a quoted value ending at ``end`` (its closing quote there), a ``null`` or
    Terraform's ``(sensitive value)`` is a plan's change (``"old" -> "new"``, ``null -> "new"``, ``(sensitive value)
    -> "new"``: a variable newly marked sensitive shows its new value), else None. An accepted old value's verdict
    is the new one's (the same attribute): hiding the old one alone showed the new password (found by review); a
    rejected one's new value is judged on its own (``changed_kind``). One bounded match per candidate of these
    checks."""
    if detector.check not in CHANGE_CHECKS:
        return None
    if data[end : end + 1] == b'"':
        arrow_at = end + 1
    elif data[end - 4 : end] == b"null":
        arrow_at = end
    elif data[end - 10 : end] == b"(sensitive" and data[end : end + 7] == b" value)":
        arrow_at = end + 7  # Terraform's old value marked sensitive: its bare candidate is "(sensitive"
    else:
        return None
    change = _CHANGED_TO.match(data, arrow_at)
    if change is None:
        return None
    stop = change.end(1)
    if stop - change.start(1) == VALUE_BOUND:
        stop = _line_stop(data, stop, b'"')
    return change.start(1), stop


def changed_kind(match: re.Match[bytes], index: int, new_value: bytes) -> str | None:
    """The kind of a plan's new value whose old value was no secret (``"changeme" -> "PW"``, ``null -> "PW"``):
    judged as the quoted value of an aligned attribute under the same name is."""
    name = match.group(NAME[index]).decode("utf-8", "replace")
    return shapes.accept_assignment(name, "=", new_value.decode("utf-8", "replace"), True, False, quoted=True,
                                    following='"', spaced=False)


def quoted_span(data: bytes, match: re.Match[bytes], index: int) -> tuple[int, int]:
    """The secret's span inside its quotes (a quoted value keeps its quotes visible)."""
    start, end = match.span(VALUE[index])
    quote = data[start : start + 1]
    if quote in (b'"', b"'"):
        if end - start > 1 and data[end - 1 : end] == quote:
            if quote == b'"' and data[end - 2] == 0x5C and _escaped(data, start, end - 1):
                return start + 1, escaped_string_end(data, end)
            return start + 1, end - 1
        return start + 1, end
    return start, end


def escaped_string_end(data: bytes, after: int) -> int:
    """Where a JSON string whose pattern stopped at an escaped quote (``"a\\"bcdef"``, just before ``after``) really
    ends: at its closing quote, read on by one bounded forward scan (``VALUE_BOUND`` bytes more, within the line), so
    that it is judged on all of it, not on the part before the escape (``a\\`` alone is trivial: ``"a\\"bcdef"``
    showed)."""
    rest = _JSON_STRING_REST.match(data, after, min(len(data), after + VALUE_BOUND))
    return rest.end() if rest is not None else after


def on_key_line(data: bytes, value_start: int) -> bool:
    """Whether the value at ``value_start`` follows a key that opens its line (``_YAML_KEY_LINE``), looking back
    at most ``_LOOK_AROUND`` bytes."""
    lookback = max(0, value_start - _LOOK_AROUND)
    newline = data.rfind(b"\n", lookback, value_start)
    if newline < 0 and lookback > 0:
        return False
    return _YAML_KEY_LINE.fullmatch(data, newline + 1, value_start) is not None


def reads_line(data: bytes, value_start: int, value_end: int) -> bool:
    """Whether the verdict on the unquoted value ``value_start``..``value_end`` reads its whole line when a key
    opens that line (``plain_line_value``): a delimiter follows it, or it opens a bracket and ends its line. A
    verdict that read the line is never remembered (the memo keys hold the value and one byte after it)."""
    after = data[value_end : value_end + 1]
    return after in _PLAIN_DELIMITERS or after in _LINE_ENDS and (
        data.find(b"(", value_start, value_end) >= 0 or data.find(b"[", value_start, value_end) >= 0)


def plain_line_value(data: bytes, value_start: int) -> str | None:
    """The plain value at ``value_start`` to its line's end (at most ``VALUE_BOUND`` bytes; a `` #`` comment and
    trailing blanks aside), when a key opens the line (a YAML block mapping, an ini file), else None: mid-line
    (prose, a flow mapping, a query string) the delimiters end a value."""
    if not on_key_line(data, value_start):
        return None
    line = data[value_start : value_start + VALUE_BOUND].split(b"\n", 1)[0]
    return _without_comment(line.decode("utf-8", "replace"))


def _without_comment(value: str) -> str:
    """A plain value without its `` #`` comment and trailing blanks (and "\r")."""
    comment = _YAML_COMMENT_TEXT.search(value)
    return (value[: comment.start()] if comment else value).rstrip()


def _yaml_plain_end(data: bytes, value_start: int, end: int) -> int:
    """Where an accepted bare value ends when it is a YAML block mapping's plain scalar (``password: ab&cd;ef``,
    a container's ``value: Tr0ub4dor&3x``) or an ini file's (``password = ab&cd``): at its line's end, a `` #``
    comment and trailing blanks aside. The
    delimiters that end a value elsewhere (``&`` of a query string, ``;`` of a connection string, ``,``/``}`` of
    a flow mapping) are characters of the password there, and stopping at them showed its tail. The look back
    is bounded and the scan forward happens once per accepted value (the next search starts after it)."""
    if data[end : end + 1] not in _PLAIN_DELIMITERS or not on_key_line(data, value_start):
        return end  # mid-line (prose, a flow mapping {password: x, user: y}, a query string): its delimiters hold
    return _plain_line_end(data, end)


def _glued_end(data: bytes, name_start: int, end: int, stop: int | None = None) -> int:
    """Where an accepted bare value ends mid-line when a delimiter stops it glued to more text: at the next blank
    (or quote, or the line's end). In an argv as ``ps`` or a log prints it (``docker run -e
    MYSQL_ROOT_PASSWORD=z9<3zU;2pwBLY3cH -p ...``) a ";" "," "&" ")" "}" "]" with no blank after it is a character
    of the value (a shell's ";" is followed by a blank), and stopping there showed the tail. Fails closed: a
    password is never cut at such a delimiter, at the price of a few characters more hidden after a real one.
    Two lists keep their delimiters (today's behaviour): a query string's parameter (the name after "?" or "&",
    ``?token=abc&page=2``) and any value followed by the list's next pair, ``;name=`` (a connection string's
    ``;Database=app``, a query's ``&next=``). One forward scan per accepted value (the next search starts after
    it; ``stop`` bounds a look that is not consumed)."""
    if data[end : end + 1] not in _PLAIN_DELIMITERS or data[end + 1 : end + 2] in _GLUE_STOPS:
        return end
    if data[name_start - 1 : name_start] in (b"?", b"&") or _NEXT_PAIR.match(data, end + 1):
        return end
    return _GLUED_TAIL.match(data, end, len(data) if stop is None else stop).end()  # type: ignore[union-attr]


def _argv_assignment(data: bytes, name_start: int, name_end: int) -> bool:
    """Whether ``NAME=`` stands as an argv word writes it (``-e DB_PASSWORD=ab;cd``, ``--password=x;9Kq``): the name
    opens a word (after a blank, the text's start, or an option's "=": ``--env=DB_PASSWORD=``) and "=" alone
    follows it. Asked before a value whose first run is too short to judge alone (``ab`` before ``;``) is read
    with its glued tail: in code such a run is an expression's (``login(password=pw),next()``, ``secret :=
    []byte(...)``, ``(pass==1)&&x``), and reading on from it hid the code. Make's ``:=`` and ``?=`` written
    right after the name count as "=" (``export DB_PASSWORD:=ab;cdefghij`` was hidden whole on 3f59870, its finder
    reading ":" then "=ab"; Go's ``secret := ...`` has a blank before it)."""
    after = data[name_end : name_end + 3]
    return (name_start == 0 or data[name_start - 1 : name_start] in (b" ", b"\t", b"=")) and (
        after[:1] == b"=" and after[1:2] != b"=" or after[:2] in (b":=", b"?=") and after[2:3] != b"=")


def _glued_word(data: bytes, name_start: int, value_start: int, value_end: int) -> str | None:
    """The value at ``value_start`` with its glued tail (``_glued_end``), at most ``VALUE_BOUND`` bytes (a
    rejected candidate's look must stay bounded: the next one may lie in the same long word), else None when no
    delimiter glues it to more text."""
    end = _glued_end(data, name_start, value_end, value_start + VALUE_BOUND)
    return None if end == value_end else data[value_start:end].decode("utf-8", "replace")


def _plain_line_end(data: bytes, end: int) -> int:
    """Where a plain value that runs on from ``end`` to its line's end stops: before a `` #`` comment and
    trailing blanks (and "\r"). One forward scan, bounded by the line."""
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    comment = _YAML_COMMENT.search(data, end, line_end)
    stop = comment.start() if comment else line_end
    while stop > end and data[stop - 1 : stop].isspace():
        stop -= 1
    return stop


def _line_stop(data: bytes, end: int, *quotes: bytes) -> int:
    """The first of ``quotes`` from ``end`` on within its line, else the line's end: each search stops at the
    newline (a quote searched for past it could lie a megabyte on, and be searched for again by the next
    candidate: quadratic on lines without that quote)."""
    newline = data.find(b"\n", end)
    line_end = len(data) if newline < 0 else newline
    found = [i for i in (data.find(quote, end, line_end) for quote in quotes) if i >= 0]
    return min(found) if found else line_end


def _escaped(data: bytes, floor: int, end: int) -> bool:
    """Whether the quote at ``end`` is escaped: an odd run of backslashes before it (looking back no further than
    ``floor``, the value's opening quote)."""
    run = end
    while run > floor and data[run - 1] == 0x5C:
        run -= 1
    return (end - run) % 2 == 1


def extended_end(data: bytes, match: re.Match[bytes], index: int, detector: Detector, start: int, end: int) -> int:
    """Past the pattern's bound: an accepted value runs on to its real end (one forward scan, never repeated,
    since the next search starts after it)."""
    value_start = match.start(VALUE[index])
    quote = data[value_start : value_start + 1]
    if quote in (b'"', b"'"):
        if quote == b'"' and end > match.end(VALUE[index]):  # read on past an escaped quote (``quoted_span``)
            return _JSON_STRING_REST.match(data, end).end()  # type: ignore[union-attr]
        if quote == b'"' and data[end : end + 1] == quote and _escaped(data, value_start, end):
            # the pattern's closing quote is an escaped one (``"password":"abc\"def"``): the value runs on to the
            # string's real end (one forward scan, consumed: the next search starts after it)
            return _JSON_STRING_REST.match(data, end + 1).end()  # type: ignore[union-attr]
        if end - start < VALUE_BOUND or data[end : end + 1] == quote:
            return end
        return _line_stop(data, end, quote)
    if detector.check == "line_value":
        return _plain_line_end(data, start)
    if detector.check == "env_line":
        if match.end(VALUE[index]) - value_start < VALUE_BOUND:
            return end
        stop = data.find(b"\n", end)
        stop = len(data) if stop < 0 else stop
        while stop > end and data[stop - 1 : stop].isspace():  # one backward step per trailing blank
            stop -= 1
        return stop
    if detector.check in ("assignment", "aligned", "env_pair"):
        end = _BARE_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]
        plain_end = _yaml_plain_end(data, value_start, end)
        return plain_end if plain_end != end else _glued_end(data, match.start(NAME[index]), end)
    if detector.check == "env_string":  # to the closing quote (or the line's end), never past it
        if end - start < VALUE_BOUND:
            return end
        return _line_stop(data, end, b'"', b"'")
    if detector.check == "private_lines":
        return putty.private_lines_end(data, end)
    if detector.kind in _FIXED_LENGTH_KINDS or detector.check in ("url_password", "xml_pair"):
        return end
    return _TOKEN_CONTINUATION.match(data, end).end()  # type: ignore[union-attr]
