"""Is this name a secret's name, and does this value look like a secret? The precision half of redaction.

Redacting too much costs the on-call the output they need and the model the text it reasons on, so a
context detector's candidate is kept only when both its name and its value say "secret":

- names are split into words (``DB_PASSWORD``, ``clientSecret``, ``api-key``) and a word must *be* a secret
  word (``password``, ``dbpass``, ``apitoken``), not merely contain one (``monkey``, ``passenger``); a last word
  that describes the secret rather than holding it (``..._FILE``, ``secretName``, ``api_key_rotation_days``,
  ``AWS_ACCESS_KEY_ID``) makes the name harmless;
- password-like names accept any value that is not trivial (a boolean, a small number, a placeholder, a path);
  other names (token, secret, key ...) and prose-like positions need a value that looks generated: digits and
  letters, mixed case, or symbols, at least 8 characters.
"""

from __future__ import annotations

import functools
import re


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What a name's last word says when the value is about a secret rather than the secret itself.
_DESCRIBING_WORDS = _word_set(
    "name names type types id ids file files path paths dir length len min max days hours seconds ttl age "
    "policy policies enabled disabled enable disable required optional count expiry expires expiration "
    "rotation rotated algorithm algorithms alg method methods mode ref refs kind version versions prompt "
    "field fields header headers endpoint endpoints url uri lifetime timeout interval size format "
    "encoding strategy provider providers store source env var variable at by set reset changed updated "
    "used last label labels selector annotation annotations mount mounts volume volumes status state hint "
    "hints length_min length_max complexity history attempts retries fingerprint fingerprints"
)
_LOOKUP_KEY_WORDS = _word_set(
    "cache sort partition primary foreign idempotency routing object row dedup dedupe lookup index shard group "
    "map message event hash range composite unique natural surrogate join dict json redis bucket kv registry "
    "search cursor page idempotence correlation trace request"
)
_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pass", "pwd", "pw")
_KEY_WORDS = (
    "apikey", "accesskey", "privatekey", "secretkey", "masterkey", "signingkey", "encryptionkey", "appkey",
    "accountkey", "sharedaccesskey", "clientkey", "authkey", "licensekey", "sessionkey", "hmackey", "key",
)  # fmt: skip
_WORD_SPLIT = re.compile(r"[_.\-\s]+|(?<=[a-z0-9])(?=[A-Z])")
_TRIVIAL_VALUES = _word_set(
    "true false null none nil yes no on off empty unset undefined redacted hidden masked required "
    "optional string secret password token value example n/a na"
)
_NUMBERISH = re.compile(r"[+-]?\d{1,6}(?:\.\d+)?(?:ms|s|m|h|d|w|y|%)?")
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/[\w.@+~-]*)+")
_CAMEL_WORDS = re.compile(r"(?:[A-Z]?[a-z]+)+")
_PLACEHOLDER = re.compile(r"\[REDACTED|\(|<[^>]*>$|\$\{|\$\(|\{\{|%[sd(]|\$[A-Z_][A-Z0-9_]*$")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD_SPLIT.split(name.strip("\"'-")) if w]


@functools.lru_cache(maxsize=4096)  # the same names recur on every line of a log
def name_kind(name: str) -> tuple[str, bool] | None:
    """(kind, password-like) when ``name`` holds a secret, None when it does not."""
    words = _words(name)
    if not words or words[-1] in _DESCRIBING_WORDS or "public" in words:
        return None
    if len(words) >= 2 and words[-1] in ("key", "keys") and words[-2] in _LOOKUP_KEY_WORDS:
        return None  # a lookup key (cache_key, sort_key, partition_key), not a cryptographic one
    if len(words) == 1 and words[0] in ("oldpwd", "key", "keys"):
        return None  # the shell's previous directory, and "key" alone (prose: "key=value pairs")
    for word in reversed(words):
        if word.endswith(_PASSWORD_WORDS) and not word.endswith(("bypass", "compass", "oldpwd")):
            return "password", True
        if word.startswith("credential"):
            return "credential", True
        if word in ("auth", "authtoken", "authkey"):
            return "auth", False
        if word.startswith("secret") or word.endswith("secret"):
            return "secret", False
        if word.endswith(("token", "tokens")) and word not in ("maxtoken", "maxtokens"):
            return "token", False
        if word in ("signature", "sig") or word.endswith("signature"):
            return "signature", False
        if word.endswith(_KEY_WORDS) and (word in _KEY_WORDS or word.endswith("key") and len(words) > 1):
            if "api" in words or word == "apikey":
                return "api_key", False
            if "access" in words or word == "accesskey":
                return "access_key", False
            if "private" in words or word == "privatekey":
                return "private_key", False
            return "key", False
    return None


def trivial(value: str) -> bool:
    """A value no one would call a secret: empty, a boolean, a small number or duration, a placeholder."""
    bare = value.strip().strip("\"'").strip()
    if len(bare) < 3 or bare.lower() in _TRIVIAL_VALUES or _NUMBERISH.fullmatch(bare):
        return True
    return bool(_PLACEHOLDER.match(bare)) or len(set(bare)) == 1


def generated(value: str) -> bool:
    """Looks machine-generated (a key, a token, a strong password) rather than a word or an identifier."""
    bare = value.strip("\"'")
    if len(bare) < 8 or trivial(bare) or " " in bare:
        return False
    has_alpha = any(c.isalpha() for c in bare)
    if has_alpha and any(c.isdigit() or not c.isalnum() and c not in "-_." for c in bare):
        return True
    mixed = any(c.isupper() for c in bare) and any(c.islower() for c in bare)
    return mixed and len(bare) >= 16 and not _CAMEL_WORDS.fullmatch(bare)


def accept_assignment(
    name: str, separator: str, value: str, at_line_start: bool, sentence: bool = False
) -> str | None:
    """The kind of a ``name = value`` candidate when it is a secret, else None.

    A password-like name takes any non-trivial value in ``NAME=value``, a YAML/JSON key or a line's first
    key; after a ``:`` in the middle of a line (prose: "the password: see the vault"), or when more words
    follow the value on its line ("Password: see the team vault"), the value must look generated too."""
    found = name_kind(name)
    if found is None or trivial(value):
        return None
    kind, password_like = found
    bare = value.strip("\"'")
    structured = separator == "=" or at_line_start or name.startswith(("\"", "'"))
    if password_like and _PATH.fullmatch(bare):
        return None  # a path (PWD=/home/deploy, password_file: /run/secrets/db), not a password
    if password_like and structured and not (separator == ":" and sentence):
        return kind
    return kind if generated(value) else None


def accept_url_password(value: str) -> bool:
    """A URL's ``host:port/path@x`` is not ``user:password@host``: a port is all digits up to the path."""
    head = re.split(r"[/?#]", value, maxsplit=1)[0]
    return not head.isdigit() and not trivial(value)
