"""The argv as shown to people (approval cards, audit entries, results): secrets redacted, controls removed.

The argv that runs and its hash are never changed: only what is displayed is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.sanitize.controls import strip_controls
from bot.sanitize.redact import MARKER, build_redactor

_FLAG_WITH_SECRET = re.compile(r"(?i)^--?[\w-]*(?:password|passwd|passphrase|secret|token|api-?key|apikey)$")


def redact_argv(argv: Iterable[str], secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> list[str]:
    """The argv as shown to humans: secrets redacted with the output's detectors, plus flag values.

    ``--password=x`` is caught by the assignment detector; ``--password x`` (the value as the next item) is
    redacted here because the detectors see one item at a time. Control characters are stripped so an
    argument can't rewrite the approval card's terminal-style rendering.
    """
    redactor = build_redactor(secret_values, patterns)
    shown: list[str] = []
    secret_next = False
    for item in argv:
        if secret_next and not item.startswith("-"):
            shown.append(MARKER.format(kind="flag_value"))
            secret_next = False
            continue
        secret_next = bool(_FLAG_WITH_SECRET.match(item))
        shown.append(redactor.redact(strip_controls(item))[0])
    return shown
