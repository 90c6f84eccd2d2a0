"""The argv as shown to people (approval cards, audit entries, results): secrets redacted, controls removed.

The argv that runs and its hash are never changed: only what is displayed is.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from bot.sanitize import secret_names, shapes
from bot.sanitize.argv_invisible import carried_back, visible
from bot.sanitize.controls import has_invisible, reveal_invisible, strip_controls
from bot.sanitize.redact import MARKER, build_redactor, fingerprint

# A flag whose value is a secret: its last word names one (--password, --db-pass, --secret-key, --auth).
_FLAG_WITH_SECRET = re.compile(
    r"(?i)^--?(?:[\w-]*[-_])?(?:password|passwd|passphrase|pass|pwd|secret|token|api-?key|apikey|secret-?key"
    r"|private-?key|access-?key|signing-?key|encryption-?key|auth|credentials?|client-?secret)$"
)
_FLAG_EQUALS = re.compile(r"^(--?[\w-]+)=(.+)$", re.DOTALL)
# Short flags that take a password, per client: the same letter means something else in most other programs
# (ssh -p and docker run -p a port, grep -w a word match, ps -w wide output, tar -P absolute names), so a flag is
# read as a password's only for the programs listed here.
_LDAP_BIND = frozenset({"-w"})  # OpenLDAP's clients: -w is the bind password (-W prompts for it)
_MONGO_PASSWORD = frozenset({"-p"})  # the MongoDB tools: -p is --password (the port is --port only)
_MSSQL_PASSWORD = frozenset({"-P"})  # SQL Server's clients: -P is the password (-p prints statistics)
_PROGRAM_PASSWORD_FLAGS = {
    "sshpass": frozenset({"-p"}), "redis-cli": frozenset({"-a", "--pass"}), "cqlsh": frozenset({"-p"}),
    "sqlcmd": _MSSQL_PASSWORD, "bcp": _MSSQL_PASSWORD, "osql": _MSSQL_PASSWORD,
    "zip": frozenset({"-P"}), "unzip": frozenset({"-P"}),
    "ssh-keygen": frozenset({"-N", "-P"}),  # the new passphrase and the old one (-p changes it, prompting)
    "openssl": frozenset({"-k"}),  # openssl enc's password (-kfile names a file; -pass is a flag with its name)
    **dict.fromkeys(("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapmodrdn", "ldapcompare",
                     "ldapwhoami", "ldapexop"), _LDAP_BIND),
    "ldappasswd": frozenset({"-w", "-a", "-s"}),  # the bind password, the old one and the new one
    **dict.fromkeys(("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat",
                     "mongotop", "mongofiles"), _MONGO_PASSWORD),
}
# Flags that take a password only after a word of the command line: a container or cloud client's "login -p"
# ("docker run -p 8080:80" publishes a port, "az vm open-port -p" ... is no login), gh's "secret set --body"
# ("gh pr create --body TEXT" is a description).
_LOGIN_PASSWORD = ("login", frozenset({"-p"}))
_PASSWORD_FLAGS_AFTER_WORD = {
    **dict.fromkeys(("docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "az", "oc", "cf"),
                    _LOGIN_PASSWORD),
    "gh": ("secret", frozenset({"-b", "--body"})),
}
# Programs whose password flag may be glued to its value (7-Zip's -pPW: a lone -p prompts; getopt's programs take
# -NPW as -N PW: ssh-keygen, sshpass, zip, unzip; found by review, revsan5); mysql's -pPW is read by its own
# branch (any program whose name starts with mysql or mariadb).
_GLUED_PASSWORD_FLAG: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("7z", "7za", "7zz", "7zr"), ("-p",)), "ssh-keygen": ("-N", "-P"), "sshpass": ("-p",),
    "zip": ("-P",), "unzip": ("-P",),
}
# A subcommand whose next argument is a password: rclone obscure PW (it prints the obscured form), vault login
# TOKEN (its flags, -method=..., come before any argument).
_PASSWORD_AFTER_SUBCOMMAND = {"rclone": "obscure", "vault": "login"}
# htpasswd's batch mode (-b, alone or among other letters: -bB, -nb) takes the password as its last argument.
_HTPASSWD_BATCH = re.compile(r"-[A-Za-z]*b[A-Za-z]*")
# A positional setting name before its value (aws configure set aws_secret_access_key VALUE).
_SETTING_NAME = re.compile(r"^[A-Za-z][\w.]*[_.][\w.]*$")
# A bare positional word naming a password before its value (opsctl kv put password VALUE); "passwd" is left out,
# it is mostly the command (passwd alice).
_BARE_PASSWORD_NAMES = frozenset({"password", "passphrase"})
# A plain lower-case word after such a name is a subcommand (opsctl password reset), not a value.
_SUBCOMMAND = re.compile(r"[a-z][a-z-]*")
# Generic value options: their value is hidden when it looks machine-generated (opsctl kv put --value VALUE).
_VALUE_FLAGS = frozenset({"--value", "--data"})

_DETECTED_KIND = re.compile(r"\[REDACTED:([a-z0-9_]+)")
_MYSQL_PASSWORD = re.compile(r"-p[^\s]+")
_USER_FLAGS = frozenset({"-u", "--user", "--proxy-user"})
# The same flags with "user:password" in the same item (--user=ops:pw, curl's -uops:pw): the whole rest after the
# first ":" is the password, blanks included (one argument).
_USER_EQUALS = re.compile(r"(--user=|--proxy-user=)([^:]*):(.+)", re.DOTALL)
_CURL_USER_GLUED = re.compile(r"(-u)([^:]*):(.+)", re.DOTALL)
DISPLAYS_REMEMBERED = 256  # command lines whose display (card, result) is kept (the calls being shown now)
# The longest command line (characters of its items) those memos keep: a model-proposed argv has no bound of its
# own, and 256 remembered command lines of 64 KiB arguments kept ~50 MB alive (found by review); a longer one is
# redacted again each time it is shown.
_REMEMBERED_ARGV_CHARS = 16 << 10
# The cards' displays are kept by size, not by count: every card pending approval is rendered again when it is
# clicked, and a burst has far more cards open than 256 (600 in the load bench: every click's update redacted its
# command line again). Up to DISPLAY_CHARS_KEPT characters of command lines and displays together (ordinary ones
# are ~100 characters: thousands of cards), and no more entries than DISPLAYS_KEPT.
DISPLAY_CHARS_KEPT = 4 << 20
DISPLAYS_KEPT = 8192


# Values that hold nothing (``ssh-keygen -N ""``: no passphrase; the model may spell it with its quotes): shown as they
# are, since a marker there told the approver of a secret that is not there.
_EMPTY_VALUES = frozenset({"", '""', "''"})


def _marker(kind: str, secret: str, fingerprints: bool) -> str:
    if secret in _EMPTY_VALUES:
        return secret
    return MARKER.format(kind=f"{kind}#{fingerprint(secret.encode())}" if fingerprints else kind)


def _shown_items(
    argv: Sequence[str], secret_values: Iterable[str], patterns: Iterable[str], *, fingerprints: bool, strip: bool
) -> list[str]:
    """Each item redacted (``_judged_items``), and judged again without the characters that draw nothing when it
    or the item before it holds one (``argv_invisible``): a marker only that reading puts in is carried back onto
    the item as it is."""
    values, given = tuple(secret_values), tuple(patterns)
    shown = _judged_items(argv, values, given, fingerprints=fingerprints, strip=strip)
    seen = [visible(item) for item in argv]
    if seen == list(argv):
        return shown
    judged = _judged_items(seen, values, given, fingerprints=fingerprints, strip=strip)
    for index, item in enumerate(argv):
        if judged[index] != seen[index] and judged[index] != shown[index]:
            carried = carried_back(strip_controls(item) if strip else item, judged[index], fingerprints, shown[index])
            shown[index] = shown[index] if carried is None else carried
    return shown


def _judged_items(
    argv: Sequence[str], secret_values: Iterable[str], patterns: Iterable[str], *, fingerprints: bool, strip: bool
) -> list[str]:
    """Each item redacted; plus what only the previous item or the program reveals (``--password x``,
    ``curl -u user:pw``, ``mysql -ppw``)."""
    redactor = build_redactor(secret_values, patterns)
    shown: list[str] = []
    previous = ""
    batch_password = -1  # the index of htpasswd -b's password (the last argument)
    password_word = -1  # the index of a subcommand's password argument (rclone obscure PW)
    for index, item in enumerate(argv):
        if index == 0 or previous == "--":
            # a command passed through after "--" (opsctl run -- mysql -pPW) is judged as its own program
            program = os.path.basename(item)
            mysql = program.startswith(("mysql", "mariadb"))
            program_flags = _PROGRAM_PASSWORD_FLAGS.get(program, frozenset())
            glued = _GLUED_PASSWORD_FLAG.get(program, ())
            if program == "htpasswd" and any(_HTPASSWD_BATCH.fullmatch(a) for a in argv[index + 1:]):
                batch_password = len(argv) - 1
        word, flags_after_word = _PASSWORD_FLAGS_AFTER_WORD.get(program, ("", frozenset()))
        if item == word:
            program_flags = program_flags | flags_after_word
        if index > 0 and item == _PASSWORD_AFTER_SUBCOMMAND.get(program) and password_word < 0:
            password_word = index + 1  # its usage: rclone obscure PASSWORD [flags] ("-" reads it from stdin)
        text = strip_controls(item) if strip else item
        flag_equals = _FLAG_EQUALS.match(text)
        if (_FLAG_WITH_SECRET.match(previous) or previous in program_flags) and not item.startswith("-"):
            shown.append(_marker("flag_value", item, fingerprints))
        elif index in (batch_password, password_word) and index > 0 and not item.startswith("-"):
            shown.append(_marker("password", item, fingerprints))
        elif flag_equals and flag_equals[1] in program_flags:
            shown.append(f"{flag_equals[1]}={_marker('flag_value', flag_equals[2], fingerprints)}")
        elif _setting_value(previous, item):
            shown.append(_marker("setting_value", item, fingerprints))
        elif previous in _USER_FLAGS and ":" in text:
            user, _, password = text.partition(":")
            shown.append(f"{user}:{_marker('basic_auth', password, fingerprints)}")
        elif user_password := (_USER_EQUALS.fullmatch(text)
                               or (_CURL_USER_GLUED.fullmatch(text) if program == "curl" else None)):
            flag, user, password = user_password.groups()
            shown.append(f"{flag}{user}:{_marker('basic_auth', password, fingerprints)}")
        elif mysql and _MYSQL_PASSWORD.fullmatch(text):
            shown.append("-p" + _marker("password", text[2:], fingerprints))
        elif flag := next((g for g in glued if text.startswith(g) and len(text) > len(g)), ""):
            shown.append(flag + _marker("password", text[len(flag):], fingerprints))
        else:
            redacted, found = redactor.redact(text, fingerprints=fingerprints)
            if flag_equals and _FLAG_WITH_SECRET.match(flag_equals[1]) and not shapes.trivial(flag_equals[2]):
                # the whole value, spaces included (--passphrase=three word phrase is one argument), under the
                # kind a detector gave it, if any
                detected = _DETECTED_KIND.search(redacted) if found else None
                kind = detected[1] if detected else "flag_value"
                redacted = f"{flag_equals[1]}={_marker(kind, flag_equals[2], fingerprints)}"
            shown.append(redacted)
        previous = item
    return shown


def _setting_value(previous: str, item: str) -> bool:
    """Whether ``item`` is a value that only the positional word or generic option before it marks as secret."""
    if _SETTING_NAME.match(previous) and secret_names.name_kind(previous) and shapes.generated(item):
        return True  # aws configure set aws_secret_access_key VALUE
    return _password_after_bare_name(previous, item) or (previous in _VALUE_FLAGS and shapes.generated(item))


def _password_after_bare_name(previous: str, item: str) -> bool:
    """A positional ``password`` or ``passphrase`` followed by a value that is no flag, no subcommand-like word, no
    trivial value and no variable's reference: a key-value command's password (``kv put password VALUE``)."""
    if previous.lower() not in _BARE_PASSWORD_NAMES or item.startswith("-") or _SUBCOMMAND.fullmatch(item):
        return False
    return not shapes.trivial(item) and not shapes.variable_reference(item)


def redact_argv(argv: Iterable[str], secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> list[str]:
    """The argv as shown in results and audit entries: secrets redacted with the output's detectors, plus
    values that only their flag marks as secret; control characters stripped so an argument can't rewrite a
    terminal-style rendering."""
    items, values, given = tuple(argv), tuple(secret_values), tuple(patterns)
    redacted = _redacted_argv if _rememberable(items) else _redacted_argv.__wrapped__
    return list(redacted(items, values, given))


def _rememberable(argv: tuple[str, ...]) -> bool:
    return sum(map(len, argv)) <= _REMEMBERED_ARGV_CHARS


@functools.lru_cache(maxsize=DISPLAYS_REMEMBERED)
def _redacted_argv(argv: tuple[str, ...], secret_values: tuple[str, ...], patterns: tuple[str, ...]) -> tuple[str, ...]:
    """``redact_argv`` remembered per command line, credential values and patterns (it depends on nothing else):
    a runner starts the same few command lines again and again, and redacting one (every item through every
    detector) cost more than the rest of the start."""
    return tuple(_shown_items(list(argv), secret_values, patterns, fingerprints=False, strip=True))


def display_command_line(argv: Sequence[str], patterns: Iterable[str] = ()) -> tuple[str, bool]:
    """The command line for an approval card, and whether the argv holds invisible characters (shown as escapes,
    or hidden inside a redaction marker).

    Secrets become ``[REDACTED:<kind>#<fingerprint>]``: approvers see that a secret is there and that two
    different secrets are different, without seeing either. Nothing is stripped: every invisible or control
    character is written as an escape instead (``reveal_invisible``), so what is read is what runs. Only the
    display changes; the argv that runs and its hash are untouched."""
    items, given = tuple(argv), tuple(patterns)
    if not _rememberable(items):
        return _display_command_line(items, given)
    return _DISPLAYS.get((items, given), _display_command_line)


def _display_command_line(argv: tuple[str, ...], patterns: tuple[str, ...]) -> tuple[str, bool]:
    """``display_command_line`` itself; remembered per command line and patterns (it depends on nothing else) in
    ``_DISPLAYS``: a call's card is rendered at each of its transitions and its result names it again, and
    redacting the command line was the largest part of rendering them in the slack role."""
    shown = _shown_items(argv, (), patterns, fingerprints=True, strip=False)
    text, revealed = reveal_invisible(shlex.join(shown))
    # a character hidden inside a marker is not escaped on the card but still runs: the warning says so too
    return text, revealed or any(map(has_invisible, argv))


DisplayKey = tuple[tuple[str, ...], tuple[str, ...]]


class DisplayMemo:
    """Least recently used displays, bounded by the characters they hold (command line, patterns and display)
    and by their number. Thread-safe: cards are rendered on the event loop, tests and tools may call from
    threads."""

    def __init__(self, chars: int = DISPLAY_CHARS_KEPT, entries: int = DISPLAYS_KEPT) -> None:
        self.chars, self.entries = chars, entries
        self._kept: OrderedDict[DisplayKey, tuple[tuple[str, bool], int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: DisplayKey,
            make: Callable[[tuple[str, ...], tuple[str, ...]], tuple[str, bool]]) -> tuple[str, bool]:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found[0]
        value = make(*key)  # outside the lock: two threads may both make it, and the second one is kept
        size = sum(map(len, key[0])) + sum(map(len, key[1])) + len(value[0])
        with self._lock:
            old = self._kept.pop(key, None)
            self._held -= old[1] if old is not None else 0
            self._kept[key] = (value, size)
            self._held += size
            while self._kept and (self._held > self.chars or len(self._kept) > self.entries):
                self._held -= self._kept.popitem(last=False)[1][1]
        return value

    def __len__(self) -> int:
        return len(self._kept)

    def held_chars(self) -> int:
        return self._held


_DISPLAYS = DisplayMemo()
