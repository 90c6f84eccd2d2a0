"""What one candidate is: the kind of secret its shape says it holds, or none.

Called by the search loop (``candidates.run_pass``) on a candidate it could not dismiss more cheaply; kept apart
because it is the detectors' semantics (one rule per ``Detector.check``, each reading the candidate's groups and
a bounded window around them) while the loop is about cost (the verdict memo, the density budget). Which bytes a
verdict reads and which an accepted candidate replaces is ``value_spans``'s.
"""

from __future__ import annotations

import re

from bot.sanitize import code_expressions, secret_names, shapes
from bot.sanitize.context_handoffs import announced_value
from bot.sanitize.context_programs import key_vault_value
from bot.sanitize.context_records import record_value
from bot.sanitize.detectors import Detector
from bot.sanitize.nkeys import is_seed
from bot.sanitize.terraform_random import random_password_result
from bot.sanitize.value_spans import (
    LOOK_AROUND,
    NAME,
    QUOTE,
    SEPARATOR,
    VALUE,
    read_on,
    reads_line,
    without_comment,
)

# A blank inside make's ``!=`` value (``MAKE_APPEND_HEAD``): a command with its arguments, not a literal
_MAKE_COMMAND = re.compile(r"\s")
# The most blanks before "=" as code and ini files write them (more: an aligned column, see ``judge``)
_CODE_BLANKS = 4
_ENVIRONMENT_NAME = secret_names.ENVIRONMENT_NAME
# A diff's "+" and a quote's ">" too, opening the line only (``_YAML_KEY_LINE``): "-> password: x" is prose
_LINE_START = re.compile(rb"(?:\+|(?:>[ \t]?){1,4})?[ \t\-{,\[]*")
_HEX = re.compile(r"[0-9a-fA-F]+")
_NODE_REFERENCE_FIRST = frozenset("*&!")  # how every ``shapes.yaml_node_reference`` starts
# A diff's or a quote's line opener (``context_patterns._LINE_OPENER``) before an environment line: "+", ">"
# (nested, a blank after each), or "-" then indentation (a removed line; "- " with one blank is a YAML list item).
_LINE_OPENER = re.compile(rb"\+|-(?=[ \t]{2}|\t)|(?:>[ \t]?){1,4}")
_OPENER_FIRST = (b"+", b"-", b">")
_BLANKS = (b" ", b"\t")
# What no indentation of code holds before a keyword argument (``judge``'s environment line): a list's "-", a word
_CODE_INDENT = re.compile(rb"[-a-z]")
# A YAML node's properties before its value (``context_patterns._NODE_PROPERTIES``): an anchor, a standard tag.
_NODE_PROPERTIES = re.compile(r"(?:(?:&\S{1,40}|!!\S{0,40})[ \t]{1,4}){1,2}")
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
     "private_lines", "nkey_seed"}
)
# The checks that read neither a name nor the value alone: what stands around the candidate decides (a reported
# hint's reader, a Key Vault value's object), so no verdict of theirs is remembered.
_CONTEXT_CHECKS = frozenset({"reported", "key_vault_value", "random_password_result", "announced_value",
                             "record_value"})
def reads_name_first(check: str) -> bool:
    """Whether ``judge`` asks first of a candidate of this check whether its name holds a secret, and refuses it,
    context-free, when it does not (every check but the value checks and the reported hints): the loop may ask
    that itself, from the names it has judged (``assignment_screen._HARMLESS_NAMES``)."""
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
    if check == "record_value":  # the record's name, read back from the candidate (not in the memo key)
        return (detector.kind if record_value(match.string, match.start(), shown) else None), False
    if check == "announced_value":  # the line before the value, read back from the candidate (not in the memo key)
        return (detector.kind if announced_value(match.string, match.start(), shown) else None), False
    if check == "random_password_result":  # the resource's type, read back from the candidate (not in the memo key)
        return (detector.kind if random_password_result(match.string, match.start()) else None), False
    text = match.string
    name_start, name_end = match.span(NAME[index])
    name = text[name_start:name_end].decode("utf-8", "replace")
    if secret_names.name_kind(name) is None:
        return None, True  # most candidates in ordinary logs end here (token_type=, key_id=): cached, cheap
    value_start, value_end = match.span(VALUE[index])
    quoted = text[value_start : value_start + 1] in (b'"', b"'")
    if check == "line_value":
        separator_group = match[SEPARATOR[index]]
        if b"!" in separator_group and _MAKE_COMMAND.search(without_comment(shown)):
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
        rest = text[value_end : value_end + LOOK_AROUND].split(b"\n", 1)[0].strip()
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
    after_value = text[value_end : value_end + LOOK_AROUND].split(b"\n", 1)[0].strip()
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
        rest = text[value_end : value_end + LOOK_AROUND].split(b"\n", 1)[0].strip()
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
        rest = text[value_end : value_end + LOOK_AROUND].split(b"\n", 1)[0].strip()
        if rest[:1].isalpha() and not quoted:
            verdict = shapes.accept_assignment(name, separator, shown, True, False, quoted=quoted,
                                               following=following, spaced=spaced)
        return verdict, False
    if not env_name and not shapes.reads_position(name, quoted):
        return verdict, False  # the call below differs in the context alone, which this name's verdict never reads
    # Looks around the candidate stay bounded (a search to the line's start or end could cross a megabyte-long
    # line for every candidate on it, which is quadratic).
    lookback = max(0, name_start - LOOK_AROUND)
    newline = text.rfind(b"\n", lookback, name_start)
    line_start = newline + 1 if newline >= 0 or lookback == 0 else -1
    at_line_start = line_start >= 0 and _LINE_START.fullmatch(text, line_start, name_start) is not None
    rest = text[value_end : value_end + LOOK_AROUND].split(b"\n", 1)[0].strip()
    sentence = rest[:1].isalpha() and not quoted  # more words follow: prose
    if at_line_start and not sentence:
        return verdict, False  # the context of the permissive call above, whose verdict this is (a second call
        # cost a tenth of a judgement: "pass: x1" on every line, each one judged)
    return shapes.accept_assignment(name, separator, shown, at_line_start, sentence, quoted=quoted,
                                    following=following, spaced=spaced,
                                    environment=env_name and at_line_start and not sentence), False


def line_value_refused(separator: str, value: str) -> bool:
    """Whether ``_judge_line_value`` refuses a line's plain value before judging it at all: a YAML alias or a
    node's properties alone, or a trivial value (once a trailing "," or ";" is dropped: ``"token": [],``)."""
    return _line_value_reading(separator, value) is None


def _line_value_reading(separator: str, value: str) -> tuple[str, bool] | None:
    """What ``_judge_line_value`` judges of a line's plain value: the text (its first word when words follow it)
    and whether words follow it, None when it is refused before (``line_value_refused``)."""
    plain = without_comment(value)
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
    if check == "nkey_seed":
        return detector.kind if is_seed(shown) else None
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


def changed_kind(match: re.Match[bytes], index: int, new_value: bytes) -> str | None:
    """The kind of a plan's new value whose old value was no secret (``"changeme" -> "PW"``, ``null -> "PW"``):
    judged as the quoted value of an aligned attribute under the same name is."""
    name = match.group(NAME[index]).decode("utf-8", "replace")
    return shapes.accept_assignment(name, "=", new_value.decode("utf-8", "replace"), True, False, quoted=True,
                                    following='"', spaced=False)
