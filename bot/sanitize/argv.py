"""The argv as shown to people (approval cards, audit entries, results): secrets redacted, controls removed.

The argv that runs and its hash are never changed: only what is displayed is.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence

from bot.sanitize.controls import reveal_invisible, strip_controls
from bot.sanitize.redact import MARKER, build_redactor, fingerprint

_FLAG_WITH_SECRET = re.compile(r"(?i)^--?[\w-]*(?:password|passwd|passphrase|secret|token|api-?key|apikey)$")


_MYSQL_PASSWORD = re.compile(r"-p[^\s]+")
_USER_FLAGS = frozenset({"-u", "--user", "--proxy-user"})


def _marker(kind: str, secret: str, fingerprints: bool) -> str:
    return MARKER.format(kind=f"{kind}#{fingerprint(secret.encode())}" if fingerprints else kind)


def _shown_items(
    argv: Sequence[str], secret_values: Iterable[str], patterns: Iterable[str], *, fingerprints: bool, strip: bool
) -> list[str]:
    """Each item redacted; plus what only the previous item or the program reveals (``--password x``,
    ``curl -u user:pw``, ``mysql -ppw``)."""
    redactor = build_redactor(secret_values, patterns)
    program = os.path.basename(argv[0]) if argv else ""
    mysql = program.startswith(("mysql", "mariadb"))
    shown: list[str] = []
    previous = ""
    for item in argv:
        text = strip_controls(item) if strip else item
        if _FLAG_WITH_SECRET.match(previous) and not item.startswith("-"):
            shown.append(_marker("flag_value", item, fingerprints))
        elif previous in _USER_FLAGS and ":" in text:
            user, _, password = text.partition(":")
            shown.append(f"{user}:{_marker('basic_auth', password, fingerprints)}")
        elif mysql and _MYSQL_PASSWORD.fullmatch(text):
            shown.append("-p" + _marker("password", text[2:], fingerprints))
        else:
            shown.append(redactor.redact(text, fingerprints=fingerprints)[0])
        previous = item
    return shown


def redact_argv(argv: Iterable[str], secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> list[str]:
    """The argv as shown in results and audit entries: secrets redacted with the output's detectors, plus
    values that only their flag marks as secret; control characters stripped so an argument can't rewrite a
    terminal-style rendering."""
    return _shown_items(list(argv), secret_values, patterns, fingerprints=False, strip=True)


def display_command_line(argv: Sequence[str], patterns: Iterable[str] = ()) -> tuple[str, bool]:
    """The command line for an approval card, and whether it holds characters shown as escapes.

    Secrets become ``[REDACTED:<kind>#<fingerprint>]``: approvers see that a secret is there and that two
    different secrets are different, without seeing either. Nothing is stripped: every invisible or control
    character is written as an escape instead (``reveal_invisible``), so what is read is what runs. Only the
    display changes; the argv that runs and its hash are untouched."""
    shown = _shown_items(argv, (), patterns, fingerprints=True, strip=False)
    return reveal_invisible(shlex.join(shown))
