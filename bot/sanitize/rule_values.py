"""Is the value under a rule's name (``PASSWORD_STRENGTH``, ``token_validation``, ``auth_mode``) the rule's setting
or the secret itself? (issue #11)

``secret_names`` reads such a name as its secret's (``names_a_rule``): people put the password itself where a
setting about it belongs (``PASSWORD_STRENGTH=Sup3rS3cr3t!``), and a describing word that made any value show was
a leak (found by review). The rule's own settings are words, numbers, levels and patterns (``strong``, ``3``,
``MEDIUM``, ``strict-v2``, ``^(?=.*[A-Z]).{12,}$``, ``DefaultPolicy2``), so only a value shaped like a strong password
is the secret (``shapes.accept_assignment`` asks it first): one word of eight characters or more with a lower-case
letter, a capital, and a digit or a symbol, that is no pattern, path or CamelCase name.
"""

from __future__ import annotations

import re

# A pattern's syntax (a regular expression, a glob, a template), which a password rarely holds and a rule often does
_PATTERN = re.compile(r"[\[\]{}\\]|\(\?|^\^|\$$|\{\{|\$\{")
# A path of two parts or more (``/etc/app/policy.json``, ``./rules/Strong2.yaml``); base64 seldom holds two "/"
_PATH = re.compile(r"(?:~|\.{1,2})?/[^/]+/.*")
# CamelCase words with a version or digits after them (``DefaultPolicy2``, ``Level3``): a policy's name
_CAMEL_NAME = re.compile(r"(?:[A-Z][a-z]+)+[0-9]{0,4}")


def strong_password(value: str) -> bool:
    """Whether a rule's value looks like a strong password rather than a setting (the module's docstring)."""
    bare = value.strip().strip("\"'")
    if len(bare) < 8 or any(c.isspace() for c in bare) or _PATH.fullmatch(bare):
        return False
    if _PATTERN.search(bare) or _CAMEL_NAME.fullmatch(bare):
        return False
    has_lower = any(c.islower() for c in bare)
    has_upper = any(c.isupper() for c in bare)
    has_other = any(c.isdigit() or not c.isalnum() and c not in "-_." for c in bare)
    return has_lower and has_upper and has_other
