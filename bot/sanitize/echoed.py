"""A command echoed in the text that asks for a secret's value, and the bare value printed after it (issue #11).

A CI log or a pasted terminal session shows ``$ terraform output -raw admin_password`` and, on the next line, the
password alone: no name beside it, so no detector can tell it from any other word. The runner withholds such output
when it ran the command itself (``secret_argv.judge_argv`` on its argv); here the same judge reads a command line the
text echoes after a prompt sign (``$ ``, ``# ``, ``+ `` to ``+++ `` of ``set -x``), and the lines after it are
replaced, one ``[REDACTED:echoed_<rule>]`` marker each (``echoed_secret_field``: what an echoed command asking for
a secret's field printed), up to the next echoed command, ``MAX_WITHHELD_LINES`` lines or the text's end; blank lines
stay. ``> `` (a quote, a shell's continuation prompt) is not a prompt here: too much prose starts with it.

The judge does not run on every line: the token pass's own scan reports only lines that start with a prompt sign
and hold one of the words every built-in shape needs (``ECHO_HINT``), and the judge, remembered per command line,
runs on those. The operator's added shapes (``execution.secret_output``) are not known here: they apply to the argv
the runner runs, not to text.
"""

from __future__ import annotations

import re
import shlex

from bot.sanitize.echoed_names import SHAPE_CHECKED, bare_secret, judge_named, judge_repl
from bot.sanitize.echoed_screen import UNSURE, screen
from bot.sanitize.secret_argv import Verdict, judge_argv
from bot.sanitize.secret_names import holds_secret

# A prompt sign at a line's start, a blank, then a command line holding what one of ``secret_argv``'s built-in shapes
# needs, as that shape writes it: an option (``-field``, ``--fields``, ``--query``, ``--jq``, ``--format``, a template,
# ``-o jsonpath=``, ``--with-decryption``, ``--show-secrets``, ``--reveal``), a program with its asking word
# (``terraform``/``tofu``/``terragrunt`` ... ``output``, ``printenv``, ``jq``/``yq``, ``op read``, ``pass show``, ``bw
# get password``), or a secret store's command word (``secret``/``secrets``, ``get-secret-value``, ``view-secret``,
# ``get-login-password``), or ``echo``/``printf`` with a variable whose name holds a secret's word (``$ echo
# $DB_PASSWORD``: the shell prints its value on the next line). A bare word (``read``, ``show``, ``output``, ``format``)
# is none: a ``set -x`` trace (``+ read -r line``, ``$ git show HEAD``) made every line a hint, each costing the search
# loop microseconds, and drew ``dense_candidates`` markers (found by review). Unbounded to the word on its line, not
# counted: a count would be alive on every prompt line beside every other detector's (a DFA's states multiply), while
# "[^\n]*" is one state. It cannot make the search loop rescan: it starts only at a line's start, and the loop resumes
# one byte after it.
_OPTION_HINT = (
    r"-(?i:-?fields?|-?jsonpath|-?(?:go-)?template|-?query|-?jq|-?format|-?with-decryption|-?show-secrets?"
    r"|-?reveal|-?o(?:utput)?[ =]?(?:jsonpath|go-template|template|custom-columns))"
)
# What a secret variable's name holds (``secret_names.name_kind`` decides; the hint only asks for one of its words).
_SECRET_WORD = r"(?i:pass|pwd|secret|token|key|credential|auth)"
_PROGRAM_HINT = (
    r"(?:[^\n]*[ /=])?(?:(?:terraform|tofu|terragrunt) [^\n]*output|printenv|g?o?jq |jaq |yq |op [^\n]*read"
    r"|g?o?pass [^\n]*show|bw [^\n]*password|(?i:secrets?)[ /]|[a-z-]*get-secret-value|view-secret"
    r"|get-login-password|(?:echo|printf) [^\n]*\$\{?[A-Za-z0-9_]*" + _SECRET_WORD
    + r"|(?:cat|head|tail|less|more|bat|batcat|tac) [^\n]*" + _SECRET_WORD
    + r"|consul [^\n]*(?:keygen|kv get )|etcdctl [^\n]*get |wg genkey|nmcli [^\n]*-s"
    r"|[a-z]*grep [^\n]*/(?:chap|pap)-secrets)"
)
# A shell's own prompt before its sign, as a pasted terminal session shows it: ``user@host:~/dir$ ``,
# ``root@host:/# ``, ``[user@host dir]$ ``, after a virtual environment's ``(venv) ``. Always a user "@" a host
# (``echo_hint`` looks for the "@" first); unbounded runs, no counters (one DFA state each).
# ("\x24" is "$": the parser's rewrite reads a bare "$" as the end of the text, even in a class.)
_PROMPT = (r"(?:\([^()\n]*\) )?\[?[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+(?:[: ][^\n\x24#\]]*)?\]? ?[\x24#]"
           # a shell's default prompt, no user nor host (``bash-5.1$ ``, ``sh-4.4# ``: a container's ``exec -it``)
           r"|(?:ba|da|k|z)?sh-[0-9]+(?:\.[0-9]+)*[\x24#]")
# A REPL's prompt: Python's ``>>>``, IPython's ``In [3]:``, irb's ``irb(main):001:0>`` (a Rails console's too). What
# follows it is an expression, judged by ``echoed_names.judge_repl``.
_REPL_PROMPT = r">>>|In \[[0-9]{1,6}\]:|irb\([^()\n]{0,64}\)[0-9:]{0,16}[>*]"
# A secret's word ending a command line's last word (``cat api.pass``, ``wg show wg0 private-key``,
# ``>>> settings.SECRET_KEY``, ``print(os.environ["API_TOKEN"])'``: a plural, a suffix of a name, an extension and
# closing quotes or brackets may follow it), or a whole word before the last (``tunnel token prod-edge``):
# ``echoed_names`` judges what those words name. Not a secret's word inside a word (``token_ttl: 1h``,
# ``vault_token_count gauge``, ``service tokens.``): a diff's "+" lines and a comment's "#" open lines too, and each
# hint costs a judgement of the density budget. Not a last word holding "/" (``+ git push origin feature/auth17``,
# ``--token-file /etc/app/token``: a branch's or a path's name, which ``echoed_names`` never judges; a file printer's
# path is ``_PROGRAM_HINT``'s): a ``set -x`` trace of such lines, each different, drew ``echoed_dense_commands`` and
# ``dense_candidates`` markers over its ordinary output (found by review). Unbounded runs and small counts, as above.
_LAST_WORDS_HINT = (
    r"(?:[^\n]*[ \t])?[^\s/]*" + _SECRET_WORD + r"[A-Za-z0-9_]{0,12}(?:\.[A-Za-z0-9]{1,8})?[\"')\]]{0,4}[ \t]*\r?(?m:$)"
    r"|[^\n]* " + _SECRET_WORD + r"[A-Za-z]{0,6}[ \t]+[A-Za-z0-9][A-Za-z0-9_.@:-]*[ \t]*\r?(?m:$)"
)
ECHO_HINT = (r"(?P<v>(?m:^)(?:" + _PROMPT + r"|\$|#|\+{1,3}|" + _REPL_PROMPT + r") (?:[^\n]*" + _OPTION_HINT + "|"
             + _PROGRAM_HINT + "|" + _LAST_WORDS_HINT + "))")
_ECHO_HEAD = re.compile(("(?:" + _PROMPT + r"|\$|#|\+{1,3}|(?P<repl>" + _REPL_PROMPT + ")) ").encode())
# How a shell's default prompt starts (``_PROMPT``'s second form): asked when the line holds no "@".
_SHELL_NAMES = (b"sh-", b"bash-", b"dash-", b"ksh-", b"zsh-", b"In [", b"irb(")  # (and IPython's, irb's prompts)
# The bytes an echoed command line may start with: a prompt sign, or a prompt's user, "[" or "(".
PROMPT_FIRST = frozenset(b"$#+>[(_.-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
# What may stand before the program on an echoed line: sudo, env, a variable's assignment (FOO=bar cmd).
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "command", "exec", "nohup"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# What shlex reads differently from a split at blanks (comments are off): quotes and escapes.
_SHELL_QUOTING = re.compile(r"['\"\\]")
MAX_COMMAND_BYTES = 4096
MAX_WITHHELD_LINES = 64
# The echoed commands' share of the density budget (``candidates.py``): splitting a command line the shell's way
# and judging it costs tens of microseconds, so a text of nothing but echoed command lines, each different, ran at
# about 1.5 MB/s (found by review), 5.8-10 MB/s with 128 free judgements and one per 2 KiB (review again: a line
# without quotes is now split at blanks, ~8 us a judgement). A text may have this many judged, plus one per this
# many bytes before the command; one beyond that is not judged and its lines are withheld (fails closed: padding a
# text with echoed commands must not let a real one's secret through).
FREE_JUDGEMENTS = 48
BYTES_PER_JUDGEMENT = 4096
UNJUDGED_KIND = "echoed_dense_commands"
# The cheap screen's ration (``echoed_screen``, 2-5 us a command line): every echoed command of an output under the
# cap (a ``set -x`` trace's, one every 32 bytes), and one per this many bytes beyond; past it, the judge's.
FREE_SCREENS = 2048
BYTES_PER_SCREEN = 512
# Screens past the judge's ration that did not clear their command (a text of commands asking for secrets or that
# the screen cannot tell, each different: what an attacker would write): after this many, no more screening.
MAX_WASTED_SCREENS = 64
# Verdicts by command line (its bytes decide the argv): a ``set -x`` trace echoes the same few lines many times.
_VERDICTS: dict[bytes, str | None] = {}
_VERDICT_ENTRIES = 1024


def starts_echoed_command(data: bytes, start: int) -> bool:
    """Whether the line at ``start`` is written as an echoed command line is (a prompt sign and a blank): the cap's
    tail is read after the last one near the head's end (``cut_context``), whatever it asks for."""
    return _ECHO_HEAD.match(data, start) is not None


def echo_hint(data: bytes, start: int, end: int) -> bool:
    """Whether a candidate of the token pass at ``data[start:end]`` is an ``ECHO_HINT`` match: a prompt sign, or a
    shell's prompt (which holds "@": asked first, a token opening its line costs a ``find``), opening its line and
    a blank."""
    if start > 0 and data[start - 1] != 10:  # 10: "\n"
        return False
    return (data[start] in b"$#+>" or data.find(b"@", start, end) >= 0 or data.startswith(_SHELL_NAMES, start)) and (
        _ECHO_HEAD.match(data, start) is not None)


# The shell's echoing builtins, and a variable's reference in their words (``$DB_PASSWORD``, ``${DB_PASSWORD}``,
# ``${DB_PASSWORD:0:4}``; not its length, ``${#DB_PASSWORD}``).
_ECHO_PROGRAMS = frozenset({"echo", "printf"})
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _echoed_variable(words: list[str]) -> Verdict | None:
    """Why ``echo``/``printf`` prints a secret's value: one of its words refers to a variable whose name holds a
    secret by the sanitizer's name rules (``$DB_PASSWORD``, ``"${VAULT_TOKEN}"``; ``$HOME``, ``$TOKEN_TTL`` are
    none). The runner runs no shell, so only an echoed command line (text) expands a variable: this is no argv
    shape (``secret_argv``)."""
    if not words or words[0] not in _ECHO_PROGRAMS:
        return None
    for word in words[1:]:
        for variable in _VARIABLE.finditer(word):
            if holds_secret(variable.group(1)):
                return Verdict("secret_variable", f"{words[0]} {variable.group()}")
    return None


# Programs that print a file as it is, and file names that say they hold no secret (a mounted secret's directory
# also holds a service account's namespace and CA certificate: ``/var/run/secrets/kubernetes.io/serviceaccount``).
_FILE_PRINTERS = frozenset({"cat", "head", "tail", "less", "more"})
_PUBLIC_FILES = frozenset({"namespace", "readme", "readme.md"})
_PUBLIC_SUFFIXES = (".crt", ".cert", ".pub", ".md")
_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "|&"})
_KEY_FILES = ("keyfile", "-keyfile.txt", "_keyfile.txt")  # a file named for a shared key, no extension
_PUBLIC_PATHS = frozenset({"/etc/passwd"})  # its "passwd" is a name: the accounts' list, no password


def _echoed_secret_file(words: list[str]) -> Verdict | None:
    """Why ``cat`` (``head``, ``tail``...) prints a secret's value: a file it prints is a mounted secret (a directory
    named ``secrets``: Docker's and Kubernetes' ``/run/secrets/db_password``), or its name, with no extension but
    ``.txt``, holds a secret by the sanitizer's name rules (``db_password``, ``api_token.txt``; ``tokens.py``,
    ``0042_password_hash.sql``, ``namespace``, ``ca.crt`` are none). The words after a shell operator (``|``) are the
    next command's.
    Text only, as ``_echoed_variable``: the runner's own argv keeps ``secret_argv``'s shapes."""
    if not words or words[0] not in _FILE_PRINTERS:
        return None
    for word in words[1:]:
        if word in _SHELL_OPERATORS:
            break  # the next command's words (``| grep -i 'secret|password'``) name no file printed
        if word.startswith("-") or word in _PUBLIC_PATHS:
            continue
        directory, _, base = word.rstrip("/").rpartition("/")
        lowered = base.lower()
        if not base or lowered in _PUBLIC_FILES or lowered.endswith(_PUBLIC_SUFFIXES):
            continue
        stem = base[: -len(".txt")] if lowered.endswith(".txt") else base
        if lowered.endswith(_KEY_FILES):
            return Verdict("secret_file", f"{words[0]} {word}")  # a replica set's shared key (MongoDB's keyFile)
        # (by its name only without an extension, or ".txt": ``0042_password_hash.sql``, ``api_token.go`` are files
        # of code or data about the secret, not its value)
        if "secrets" in directory.lower().split("/") or "." not in stem and holds_secret(stem):
            return Verdict("secret_file", f"{words[0]} {word}")
    return None


# Commands that print a generated secret alone (Consul's gossip encryption key, a WireGuard private key), and the
# stores whose ``get`` prints a key's value alone (on the line after the key, for etcdctl).
_KEY_GENERATORS: tuple[tuple[str, ...], ...] = (("consul", "keygen"), ("wg", "genkey"))
_VALUE_GETTERS: tuple[tuple[str, ...], ...] = (("consul", "kv", "get"), ("etcdctl", "get"))


def _echoed_secret_command(words: list[str]) -> Verdict | None:
    """Why a command prints a secret's value alone: it generates one (``consul keygen``), or it gets a key-value
    store's key whose last name holds a secret by the sanitizer's name rules (``consul kv get app/db_password``;
    ``consul kv get app/replicas`` is none). Text only, as ``_echoed_variable``."""
    for command in _KEY_GENERATORS:
        if tuple(words[: len(command)]) == command:
            return Verdict("secret_command", " ".join(command))
    for command in _VALUE_GETTERS:
        if tuple(words[: len(command)]) == command:
            for word in words[len(command) :]:
                if word in _SHELL_OPERATORS:
                    break
                if not word.startswith("-") and _names_secret_key(word.rstrip("/").rpartition("/")[2]):
                    return Verdict("secret_command", f"{' '.join(command)} {word}")
    return None


def _names_secret_key(name: str) -> bool:
    return bool(name) and holds_secret(name)


def _argv(command: str) -> list[str]:
    """The echoed command line's words as a shell would pass them (quotes removed), without what stands before the
    program (``sudo``, ``FOO=bar``); split at blanks when the quoting is unbalanced (a line cut short)."""
    if _SHELL_QUOTING.search(command) is None:
        words = command.split()  # what shlex gives for such a line, at a tenth of its cost (~20 us a line)
    else:
        try:
            words = shlex.split(command, comments=False)
        except ValueError:
            words = command.split()
    while words and (words[0] in _PREFIX_WORDS or _ASSIGNMENT.match(words[0])):
        words.pop(0)
    return words


def _command(data: bytes, head: re.Match[bytes], line_end: int) -> bytes:
    """The echoed line's command after its prompt, as the verdicts remember it: a REPL's expression is marked
    (``>>> token`` asks what ``$ token`` does not)."""
    command = data[head.end() : line_end]
    return command if head.group("repl") is None else _REPL_KEY + command


_REPL_KEY = b"\x00repl "


def _judged(command: bytes) -> str | None:
    """The marker's kind for what an echoed command line prints (``echoed_<rule>``), None when it asks for no
    secret; remembered per command line."""
    if command.startswith(_REPL_KEY):
        verdict = judge_repl(command[len(_REPL_KEY) :].decode("utf-8", "replace"))
    else:
        words = _argv(command.decode("utf-8", "replace"))
        verdict = (judge_argv(words) or _echoed_variable(words) or _echoed_secret_file(words)
                   or _echoed_secret_command(words) or judge_named(words))
    kind = None if verdict is None else f"echoed_{verdict.kind}"
    if len(_VERDICTS) >= _VERDICT_ENTRIES:
        _VERDICTS.clear()
    _VERDICTS[command] = kind
    return kind


def withholds(kind: str, line: bytes | str) -> bool:
    """Whether a non-blank line printed after an echoed command of marker ``kind`` is withheld: every one, but after
    a command whose last words only name a secret (``echoed_names``), one that looks like a bare secret."""
    if kind not in SHAPE_CHECKED:
        return True
    return bare_secret(line if isinstance(line, str) else line.decode("utf-8", "replace"))


def open_withholding(data: bytes, start: int, end: int) -> str | None:
    """The marker's kind for what the echoed command line at ``start`` prints (it ends at a newline or ``end``),
    None when it asks for no secret: a capped output's head whose last lines follow it withholds the tail's first
    lines too (``cut_context``)."""
    head = _ECHO_HEAD.match(data, start, end)
    line_end = data.find(b"\n", start, end)
    line_end = end if line_end < 0 else line_end
    if head is None or line_end - head.end() > MAX_COMMAND_BYTES:
        return None
    command = _command(data, head, line_end)
    kind = _VERDICTS.get(command, UNJUDGED_KIND)
    return _judged(command) if kind == UNJUDGED_KIND else kind


def withheld_lines(data: bytes, hints: list[int]) -> list[tuple[int, int, str]]:
    """The spans (start, end, kind) of the non-blank lines printed after each echoed command that asks for a
    secret's value, in increasing order. ``hints``: where the token pass found ``ECHO_HINT``, in increasing order.
    Each line is read once: the lines withheld after one command are not read again for the next."""
    spans: list[tuple[int, int, str]] = []
    pos, length, judged, screened, wasted = 0, len(data), 0, 0, 0
    # The head that ended the last command's withheld lines (the next echoed command's), matched again at its hint
    # otherwise (a command on every other line, each different, matched each head twice)
    next_head: re.Match[bytes] | None = None
    for hint in hints:
        if hint < pos:
            continue
        line_end = data.find(b"\n", hint)
        line_end = length if line_end < 0 else line_end
        pos = line_end + 1
        head = next_head if next_head is not None and next_head.start() == hint else _ECHO_HEAD.match(data, hint)
        if head is None or line_end - head.end() > MAX_COMMAND_BYTES:
            continue
        command = _command(data, head, line_end)
        kind, allowed = _VERDICTS.get(command, UNSURE), FREE_JUDGEMENTS + hint // BYTES_PER_JUDGEMENT
        if (kind == UNSURE and head.group("repl") is None and wasted < MAX_WASTED_SCREENS
                and screened < FREE_SCREENS + hint // BYTES_PER_SCREEN):
            # A cheaper ration than the judge's (echoed_screen.py); a command it finds asking for a secret costs a
            # judgement too: each line printed after it is then judged by its shape (``bare_secret``, ~4.5 us a line).
            screened += 1
            kind = screen(command.decode("utf-8", "replace"))
            if kind is not None and judged >= allowed:
                kind, wasted = UNSURE, wasted + 1  # withheld all the same: screening on would only cost
            elif kind is not None and kind != UNSURE:
                judged += 1
        if kind == UNSURE and judged < allowed:
            judged += 1
            kind = _judged(command)
        if kind is None:
            continue
        kind = UNJUDGED_KIND if kind == UNSURE else kind
        row_start, rows = pos, 0
        while row_start < length and rows < MAX_WITHHELD_LINES:
            row_end = data.find(b"\n", row_start)
            row_end = length if row_end < 0 else row_end
            if (row_start == 0 or data[row_start - 1] == 10) and (next_head := _ECHO_HEAD.match(data, row_start)):
                break  # the next echoed command: its own hint decides about what follows it
            row = data[row_start:row_end]
            if row.strip() and (kind not in SHAPE_CHECKED or withholds(kind, row)):
                spans.append((row_start, row_end, kind))
            row_start, rows = row_end + 1, rows + 1
        pos = row_start
    return spans
