"""Echoed commands and REPL expressions whose last words name a secret, and the bare value printed after them
(issue #11).

``echoed.py`` withholds what a command prints when its argv asks for a secret the way a tool's own shape says
(``vault kv get -field=password``, ``cat /run/secrets/db_password``). Many more commands say so only by the word
they end with: ``$ cat /etc/ssl/private/api.pass``, ``$ sudo wg show wg0 private-key``, ``$ cloudflared tunnel
token prod-edge``, ``$ gh auth token``, a REPL's ``>>> settings.SECRET_KEY`` or ``>>> print(os.environ["DB_PASSWORD"])``
and ``$ python3 -c 'print(...)'``. Listing them program by program would never end, so the judge reads the words
themselves: a file whose extension or name says secret, a command whose last positional word names one (or whose
word before last does, the last being the secret's own name: ``token prod-edge``), an expression naming one.

That evidence is weaker than a tool's shape (``$ kubectl get secrets``, ``$ git log -- auth`` end so too), so what
such a command printed is withheld line by line only where the line *looks* like a bare secret (``bare_secret``):
one word, not a number, a boolean, a path, a file's or a resource's name, and generated-looking (``shapes.generated``:
eight characters or more, letters with digits or symbols, or long mixed case). ``$ cat notes.txt`` and
``>>> settings.DEBUG`` are not judged at all; ``>>> len(settings.SECRET_KEY)`` then ``50`` and ``$ kubectl get
secrets``' table stay as they are.
"""

from __future__ import annotations

import re

from bot.sanitize.secret_argv import Verdict
from bot.sanitize.secret_names import holds_secret
from bot.sanitize.shapes import generated, is_path, trivial

# The marker kinds of these rules: ``echoed.withheld_lines`` asks ``bare_secret`` of each line after them.
NAMED_FILE = "named_file"
NAMED_COMMAND = "named_command"
NAMED_EXPRESSION = "named_expression"
SHAPE_CHECKED = frozenset(f"echoed_{kind}" for kind in (NAMED_FILE, NAMED_COMMAND, NAMED_EXPRESSION))

# Extensions a file holding one secret is given (``api.pass``, ``tls.key``, ``ci.token``, ``vault.secret``).
_SECRET_EXTENSIONS = frozenset({"pass", "password", "passphrase", "pw", "key", "token", "secret", "cred", "creds"})
# Extensions of files that hold code, configuration or documentation about a secret, not its bare value
# (``tokens.py``, ``password_policy.md``): a file named for a secret with such an extension is not judged.
_VALUE_EXTENSIONS = frozenset({"", "txt", "b64", "base64", "raw", "out", "dat", "value", "secret"})
FILE_PRINTERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "batcat", "tac"})
# Programs whose output names things (files, matches, commits) rather than printing what their words name.
NAMING_PROGRAMS = frozenset({
    "ls", "ll", "find", "locate", "tree", "grep", "egrep", "fgrep", "rg", "ag", "ack", "git", "cd", "mkdir", "rm",
    "cp", "mv", "ln", "chmod", "chown", "touch", "stat", "file", "wc", "du", "df", "which", "whereis", "type",
    "man", "vi", "vim", "nano", "emacs", "code", "diff", "sha256sum", "sha1sum", "md5sum", "shasum", "echo",
    "printf", "history", "apropos", "help",
})
# Verbs that list or remove rather than print (``docker secret ls -q`` prints ids).
_LISTING_VERBS = frozenset({"ls", "list", "rm", "remove", "delete", "del", "inspect", "describe", "help", "lookup",
                            "info", "status", "revoke", "renew", "capabilities", "explain"})
_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "|&"})
# Verbs before an object's kind and name (``kubectl get secret NAME``, ``oc edit secret NAME``): the object's
# listing or its manifest, not its value (``cloudflared tunnel token NAME`` prints the token).
_OBJECT_VERBS = _LISTING_VERBS | frozenset({"get", "edit", "patch", "label", "annotate", "apply", "set"})
# A word that is a secret's own name (``prod-edge``, ``DB_PASSWORD``, ``wg0``): what ``token <name>`` asks for;
# and a subcommand's word (``private-key``, ``auth:token``: no "." either, ``settings.SECRET_KEY`` is an expression,
# ``# HELP ... about secret.`` a sentence).
_NAME_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}")
_SUBCOMMAND_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_:-]{0,127}")
_PUBLIC_PATHS = frozenset({"/etc/passwd", "/etc/group"})  # their "passwd" is the accounts' list's name
# Interpreters given code on their command line, and the options that take it.
INTERPRETERS = frozenset({"python", "python2", "python3", "node", "nodejs", "ruby", "perl", "php", "deno", "bun"})
_CODE_OPTIONS = frozenset({"-c", "-e", "-r", "-p", "--eval", "--print"})
# An expression's names: identifiers (a call's function name, followed by "(", is left out: ``check_password(x)``
# asks a question) and quoted strings that are names (``os.environ["DB_PASSWORD"]``, ``ENV['API_TOKEN']``).
_EXPRESSION_NAME = re.compile(
    r"""([A-Za-z_][A-Za-z0-9_]*)(\s*\()?|"([A-Za-z_][\w.-]{0,127})"|'([A-Za-z_][\w.-]{0,127})'""")


def _positional(words: list[str]) -> list[str]:
    """The command's words after its program up to the first shell operator, options left out."""
    found = []
    for word in words[1:]:
        if word in _SHELL_OPERATORS:
            break
        if not word.startswith("-") and "=" not in word:
            found.append(word)
    return found


def _named_file(words: list[str]) -> Verdict | None:
    """A file printed whose extension says it holds a secret (``api.pass``, ``server.key``), or whose name does,
    with no extension or one of a bare value's (``db-password.b64``)."""
    if words[0] not in FILE_PRINTERS:
        return None
    for word in _positional(words):
        if word in _PUBLIC_PATHS:
            continue
        base = word.rstrip("/").rpartition("/")[2]
        stem, dot, extension = base.lower().rpartition(".")
        if not dot:
            stem, extension = extension, ""
        if extension in _SECRET_EXTENSIONS and stem.strip("."):
            return Verdict(NAMED_FILE, f"{words[0]} {word}")
        if extension in _VALUE_EXTENSIONS and stem and holds_secret(stem):
            return Verdict(NAMED_FILE, f"{words[0]} {word}")
    return None


# Files that hold one secret per row, whatever a line's words are: ppp's CHAP and PAP secrets (``vpnuser * "PW" *``:
# a row's password has no name beside it). A grep of one prints its rows (not with -l/-L/-c/-q: names, a count).
CREDENTIAL_TABLES = frozenset({"chap-secrets", "pap-secrets"})
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_GREP_QUIET = re.compile(r"-(?:[A-Za-z]*[lLcq][A-Za-z]*|-files-with(?:out)?-match(?:es)?|-count|-quiet|-silent)")


def _grepped_table(words: list[str]) -> Verdict | None:
    """A grep of a credential table (``grep -i secret /etc/ppp/chap-secrets``) that prints its matching rows."""
    if words[0] not in _GREPS or any(_GREP_QUIET.fullmatch(word) for word in words[1:]):
        return None
    for word in _positional(words):
        if word.rstrip("/").rpartition("/")[2] in CREDENTIAL_TABLES:
            # every row printed is withheld, as ``cat``'s of such a file (a row is no bare value: not shape-checked)
            return Verdict("secret_file", f"{words[0]} {word}")
    return None


def named_command(words: list[str]) -> Verdict | None:
    """A command whose last positional word names a secret (``wg show wg0 private-key``, ``gh auth token``), or
    whose word before last does by itself with the secret's own name last (``cloudflared tunnel token prod-edge``).
    Words holding "/" are paths (``cat``'s are judged by ``_named_file``; ``git checkout feature/token`` is none)."""
    if words[0] in NAMING_PROGRAMS or words[0] in FILE_PRINTERS or "=" in words:
        return None  # (``+    secret = settings.SECRET_KEY``: a diff's added line, no command)
    positional = _positional(words)
    if not positional or "/" in positional[-1]:
        return None
    last = positional[-1]
    if holds_secret(last) and _SUBCOMMAND_WORD.fullmatch(last):
        return Verdict(NAMED_COMMAND, " ".join(words[:1] + positional[-2:]))
    if len(positional) < 2 or positional[-2].lower() in _LISTING_VERBS or last.lower() in _LISTING_VERBS:
        return None
    if len(positional) >= 3 and positional[-3].lower() in _OBJECT_VERBS:
        return None  # ``kubectl get secret orders-db``: a listing of the object, not its value
    before = positional[-2]
    if "/" not in before and "." not in before and holds_secret(before) and _NAME_WORD.fullmatch(last):
        return Verdict(NAMED_COMMAND, " ".join(words[:1] + positional[-2:]))
    return None


def expression_names_secret(code: str) -> bool:
    """Whether an expression (a REPL's input, ``python -c``'s code) names a secret: an identifier that is not a
    call's function (``settings.SECRET_KEY``, ``print(token)``) or a quoted name (``os.environ["DB_PASSWORD"]``)."""
    for match in _EXPRESSION_NAME.finditer(code):
        identifier, call, double, single = match.groups()
        name = identifier if call is None else None
        for candidate in (name, double, single):
            if candidate is not None and holds_secret(candidate):
                return True
    return False


def _named_expression(words: list[str]) -> Verdict | None:
    """An interpreter's code on its command line that names a secret (``python3 -c 'print(os.environ[...])'``)."""
    if words[0].rpartition("/")[2] not in INTERPRETERS:
        return None
    for option, code in zip(words[1:], words[2:], strict=False):
        if option in _CODE_OPTIONS and expression_names_secret(code):
            return Verdict(NAMED_EXPRESSION, f"{words[0]} {option}")
    return None


def judge_named(words: list[str]) -> Verdict | None:
    """Why an echoed shell command's output may be a secret named by its last words (see the module), or None."""
    if not words:
        return None
    return _named_file(words) or _grepped_table(words) or _named_expression(words) or named_command(words)


def judge_repl(expression: str) -> Verdict | None:
    """Why a REPL's result after ``>>> expression`` may be a secret: the expression names one."""
    if expression_names_secret(expression):
        return Verdict(NAMED_EXPRESSION, expression.strip()[:64])
    return None


# A REPL's mark before its result (IPython's ``Out[3]: ``, irb's ``=> ``), and a bytes or string literal's quotes.
_RESULT_MARK = re.compile(r"Out\[[0-9]{1,6}\]:\s*|=>\s*")
_QUOTED = re.compile(r"""b?(['"])(.*)\1""", re.S)
# What a bare secret printed alone is made of (base64, hex, a token's or a password's usual symbols): no quote,
# bracket, brace, ",", ":" or ";" (``"default",``, ``root:x:0:0:...``, ``DESCRIPTION:``, ``{"a":"b"}``, ``f(x)``:
# code and data, not a value). A quoted one (a REPL's repr) may hold parentheses and ":" too (Django's keys do), not
# brackets (``'[redacted]'``, ``'<unset>'``).
_BARE_SECRET = re.compile(r"[A-Za-z0-9+/=_.~!#$%^&*@?-]{8,4096}")
_QUOTED_SECRET = re.compile(r"[^\s'\"\[\]{}<>,;|\\]{8,4096}")
# A file's name (``tls.key``, ``key-2024.pem``) and a lower-case resource's (``secret/db-pass2``, ``db.internal``).
_FILE_NAME = re.compile(r"[\w-]+\.[a-z]{1,5}")
_RESOURCE_NAME = re.compile(r"[a-z0-9_-]+(?:[./:][a-z0-9_-]+)+")
_UPPER_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # an environment variable's name, no value


def bare_secret(line: str) -> bool:
    """Whether a line printed after a command judged by these rules looks like a bare secret (the module's
    docstring)."""
    value = line.strip()
    mark = _RESULT_MARK.match(value)
    if mark is not None:
        value = value[mark.end() :]
    quoted = _QUOTED.fullmatch(value)
    if quoted is not None:
        value = quoted.group(2)
    if (_BARE_SECRET if quoted is None else _QUOTED_SECRET).fullmatch(value) is None:
        return False
    if not value or any(c.isspace() for c in value) or trivial(value):
        return False
    if is_path(value) or _FILE_NAME.fullmatch(value) or _UPPER_NAME.fullmatch(value) or _resource_name(value):
        return False
    if "/" in value and value.lower() == value:
        return False  # a store's path (``kv-orders-prod/secrets/db-password/4f1c...``): base64 holds capitals
    return generated(value)


def _resource_name(value: str) -> bool:
    """A lower-case name of parts joined by "." "/" ":" (``secret/db-pass2``, ``db01.internal``), none of them a long
    random run of letters and digits (a kubeadm token's ``abcdef.0123456789abcdef`` is one)."""
    if _RESOURCE_NAME.fullmatch(value) is None:
        return False
    return not any(len(part) >= 16 and not part.isalpha() and not part.isdigit()
                   for part in re.split(r"[./:_-]", value))
