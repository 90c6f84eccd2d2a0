"""``python -m bot.config_check [PATH]``: validate a configuration file (or $FISK_CHATOPS_CONFIG) exactly as every
role does (``bot.config``: the pydantic models, the ``FISK_CHATOPS__`` overrides, binaries resolved) and print the
result as one JSON object, every default filled in; on a problem, print ``bot.config``'s message on stderr and
exit 2.

A runner process starts this as a child to read its configuration (``bot.config_view.load_runner_config``): the
validation and its messages stay in one place, and pydantic's memory leaves with the child.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

EXIT_INVALID = 2


def main(argv: Sequence[str]) -> int:
    from bot.config import ConfigError, load_config

    try:
        config = load_config(argv[0] if argv else None)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    validated = config.model_dump(mode="json")
    validated["source"] = config.source  # not a setting (excluded from dumps), but every message names it
    print(json.dumps(validated))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
