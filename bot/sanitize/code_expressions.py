"""Is this unquoted value an expression of source code (a call, a reference to a setting or a field, a variable
named like a secret, a type) rather than a literal?

Source code is full of secrets' names whose value is no secret (``password = settings.DB_PASSWORD``, ``token: str``):
every context refuses such a value (``shapes.accept_assignment``), and the search loop dismisses it early on these
answers (``settings_reference`` on a value's bytes, ``EXPRESSION_HINT`` as the screen before ``code_reference``).
What counts is chosen so that passwords people pick stay secrets (``code_reference``). Kept apart from ``shapes``
(whether a value looks like a secret) because it is a reader of code's syntax, with patterns and word lists of its
own.
"""

from __future__ import annotations

import functools
import re

from bot.sanitize.secret_names import name_kind, name_words, word_set

# Source code: a value that is an expression (a call, a subscript, a reference to a variable or a field), not a
# literal. Identifiers joined by ".", "?.", "->" or "::"; a leading "." (Helm's .Values), "&" or "*" (Go).
# Possessive (``*+``): what may follow an identifier here (a separator, a bracket, "<", "!", the end) never starts
# with an identifier's character, so a shorter identifier never matches where the whole one did not; without it a
# failing match tried every shorter one at every identifier (a 256-byte value of name characters: 3.6 us, not 0.3).
_IDENTIFIER = r"[A-Za-z_$][A-Za-z0-9_$]*+"
_SEPARATOR = r"(?:\.|\?\.|->|::)"
_CALL_OR_SUBSCRIPT = re.compile(
    rf"(?:new\s|await\s|[&*])?\.?{_IDENTIFIER}(?:{_SEPARATOR}{_IDENTIFIER})*(?:(?:::)?<[A-Za-z0-9_$.\[\]]{{1,64}}>)?[(\[]"
)  # a generic's type argument before the call: config.get<string>(...), parse::<u32>()
_REFERENCE = re.compile(
    rf"(?:new\s|await\s|[&*])?(?P<dot>\.)?(?P<root>{_IDENTIFIER})(?:{_SEPARATOR}{_IDENTIFIER})*?"
    rf"(?:{_SEPARATOR}(?P<last>{_IDENTIFIER}))?!?"
)
# An identifier with two runs of digits (Xk9mQ2): how generated passwords look, not how people name things.
_TWO_DIGIT_RUNS = re.compile(r"[0-9][A-Za-z_$]+[0-9]")
# What every value code_reference accepts contains (a bracket, a separator, "$", "_", a camel hump) or is (a type):
# a plain word (x123, hunter2: the secret itself, often) is decided without it.
EXPRESSION_HINT = re.compile(r"[.(\[$:>_&*]|[a-z][A-Z]|(?i:^(?:str|string|bytes|int|any|object|char|byte)$)")
# Where code keeps its settings: a dotted reference that starts here is an expression whatever it ends with.
_CODE_ROOTS = word_set(
    "self this cls os process settings config conf cfg c opts options args params props env environ var local "
    "locals module data vars values secrets ctx context request req res app import system environment "
    "configuration appsettings viper flags st spec creds credentials"
)
# What a reference's last segment is called when it reads a stored secret (Terraform's .result, .value ...).
_ACCESSOR_WORDS = word_set("value result string plaintext secret_string secretstring data text contents")
# Type names of annotated declarations (password: str, Token string, api_key: SecretStr).
_TYPE_NAMES = word_set("str string bytes secretstr secretbytes byte[] []byte char[] object any int")


@functools.lru_cache(maxsize=64)  # one candidate asks up to three times (the cheap dismissal, then each context)
def code_reference(value: str, following: str = "", colon: bool = False) -> bool:
    """Whether an unquoted value is an expression of source code rather than a literal: a call or subscript
    (``get_token()``, ``os.environ["X"]``), a reference to a setting or a field (``settings.SECRET_KEY``,
    ``cfg.Password``, ``var.db_password``, ``.Values.db.password``), a variable named like a secret
    (``db_password``, ``apiKey``) or a type (``password: str``).

    ``colon``: the value follows a ``:`` (YAML, JSON, a struct or object literal), where a dotted value that ends
    in a secret's name is a reference only with code's delimiter after it. ``following`` is the text right after
    the value (a value stops at ``)`` ``]`` ``,`` and quotes, so
    ``get_token(`` is followed by ``)``). What counts is chosen so that passwords people pick stay secrets:
    a dotted value must start at a known settings object or end in a secret's name or an accessor
    (``correct.horse.battery`` and ``Winter2024.Secure`` do not), a call's name mixes at most one run of digits
    into each identifier (``Xk9mQ2(vL8)`` is no call), and a bare identifier needs two words."""
    bare = value.strip().rstrip(",;")
    if "(" in bare or "[" in bare:
        call = _CALL_OR_SUBSCRIPT.match(bare)
        if call is not None and not _TWO_DIGIT_RUNS.search(bare, 0, call.end()):
            tail = bare[call.end() :] + following
            closer = ")" if bare[call.end() - 1] == "(" else "]"
            return (
                closer in tail
                or tail[:1] in ("\"", "'", "`", "{", "[", "(", "&", "*")
                or tail[-1:] in ("\"", "'", "`", ",")
            )
        return False
    reference = _REFERENCE.fullmatch(bare)
    if reference is None or _TWO_DIGIT_RUNS.search(bare):
        return False
    root, last = reference.group("root"), reference.group("last")
    if last is None:  # one identifier: a type, or a variable named for a secret (db_password, apiKey; no digit)
        if root.lower() in _TYPE_NAMES:
            return True
        if "_" not in root and (root.islower() or root.isupper()):
            return False  # one word (x1234, hunter2): a variable or the password itself
        words = name_words(root)
        return len(words) >= 2 and not any(c.isdigit() for c in root) and name_kind(words[-1]) is not None
    if reference.group("dot") is not None or root.lower() in _CODE_ROOTS:
        return True
    if colon and following not in (",", ")", "}", ";"):
        return False  # YAML's "password: admin.secret" is a literal; code's "Password: cfg.Password," has its comma
    return last.lower() in _ACCESSOR_WORDS or name_kind(last) is not None


_OPENERS, _CLOSERS = "([{", ")]}"
# What may follow a call's or a subscript's closing bracket in code, glued to it: a member, another call or
# subscript (``_code_after_closer``; the first bracket has no enclosing one in the value).
_AFTER_CLOSER = frozenset(".([")


def line_expression(value: str, colon: bool) -> bool:
    """Whether a YAML or ini line's whole plain value (``password: T8(ewCIS)|&G9`` to its line's end) is an
    expression of code (``password = get_password(user, host)``, ``token: Optional[str] = None``), as
    ``code_reference`` reads it, with one more condition where it opens a bracket: the first bracket closes and
    is followed by what code puts there (``_AFTER_CLOSER``), or it stays open on a line that ends as a call
    continued on the next one does (``f(user,``) or holds blanks. ``code_reference`` judges a value's first run,
    which stops at a delimiter, so a generated password that opens a bracket early (``l(o/wwHOkU)aCQa9``,
    ``U[&LA-wh@+#4``) read as a call or a subscript; the whole line tells them apart."""
    stripped = value.strip()
    bare = stripped.rstrip(",;")
    first = min((i for i in (bare.find("("), bare.find("[")) if i >= 0), default=-1)
    if first >= 0:
        close = _matching_closer(bare, first)
        if close < 0:
            if not stripped.endswith((",", "(", "[")) and not any(c.isspace() for c in bare):
                return False  # open to the line's end, glued: a password's bracket
        elif not _code_after_closer(bare[close + 1 :]):
            return False  # "T8(ewCIS)|&G9", "Ci(p?wd);kkruW": characters glued to the closer, as no code writes them
    return code_reference(bare, stripped[len(bare) : len(bare) + 1], colon)  # its "," or ";" follows it


def _code_after_closer(rest: str) -> bool:
    """What follows a call's or a subscript's closing bracket in code: nothing, a blank, a member, another call
    or subscript, or a "," or ";" and then a blank."""
    return not rest or rest[0].isspace() or rest[0] in _AFTER_CLOSER or rest[0] in ",;" and rest[1:2].isspace()


def _matching_closer(value: str, start: int) -> int:
    """The index of the bracket that closes the one at ``start``, -1 when none does (or another closes first)."""
    open_: list[str] = []
    for i in range(start, len(value)):
        c = value[i]
        if c in _OPENERS:
            open_.append(c)
        elif c in _CLOSERS:
            if not open_ or _OPENERS.index(open_.pop()) != _CLOSERS.index(c):
                return -1
            if not open_:
                return i
    return -1


# ``code_reference``'s surest "yes" on a value's raw bytes: a reference (no call, no subscript) that starts with
# "." or at a known settings object. Identifiers, separators and the digit-run check are code_reference's own.
_ROOTED_REFERENCE = re.compile(
    rf"[&*]?(?P<dot>\.)?(?P<root>{_IDENTIFIER})(?:{_SEPARATOR}{_IDENTIFIER})+!?".encode()
)
_TWO_DIGIT_RUNS_BYTES = re.compile(_TWO_DIGIT_RUNS.pattern.encode())
_CODE_ROOTS_BYTES = frozenset(root.encode() for root in _CODE_ROOTS)


def settings_reference(value: bytes) -> bool:
    """Whether ``value`` (an unquoted value's bytes) is a reference to a setting or a field that ``code_reference``
    accepts in every context (``settings.DB_PASSWORD``, ``cfg.Db.Password``, ``.Values.db.password``): True
    only where ``code_reference`` of the decoded value says True whatever follows it, so a caller may skip
    decoding it and the general parse (source code is made of these: ``grep -rn password src/``). False says
    nothing: ask ``code_reference``."""
    reference = _ROOTED_REFERENCE.fullmatch(value)
    return (
        reference is not None
        and (reference["dot"] is not None or reference["root"].lower() in _CODE_ROOTS_BYTES)
        and _TWO_DIGIT_RUNS_BYTES.search(value) is None
    )
