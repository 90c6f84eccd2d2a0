"""Is this name a secret's name? The name half of judging a candidate (``shapes`` judges the value beside it).

A name is split into words (``DB_PASSWORD``, ``clientSecret``, ``api-key``) and a word must *be* a secret word
(``password``, ``dbpass``, ``apitoken``), not merely contain one (``monkey``, ``passenger``); a last word that
describes the secret rather than holding it (``..._FILE``, ``secretName``, ``api_key_rotation_days``,
``AWS_ACCESS_KEY_ID``) makes the name harmless. Kept apart from the value shapes because every reader of a name asks
it alone (the search loop's cheap dismissals, tables' headers, echoed commands, argv shapes), and
``code_expressions`` asks it too, below ``shapes``.
"""

from __future__ import annotations

import functools
import re


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What a name's last word says when the value is about a secret rather than the secret itself.
_DESCRIBING_WORDS = word_set(
    "name names type types id ids file files path paths dir length len min max days hours seconds ttl age "
    "enabled disabled enable disable required optional count expiry expires expiration "
    "rotation rotated algorithm algorithms alg method methods ref refs kind version versions prompt "
    "field fields header headers endpoint endpoints url uri lifetime timeout interval size format "
    "encoding strategy provider providers store source env var variable at by set reset changed updated "
    "used last label labels selector annotation annotations mount mounts volume volumes status state hint "
    "hints length_min length_max history attempts retries fingerprint fingerprints arn arns stdin budget "
    "prefix suffix helper helpers process issuer issuers audience audiences scope scopes realm realms host hosts "
    "hostname server servers region regions namespace namespaces domain domains user users username email owner "
    "manager digest digests checksum checksums sha256 sha1 md5 "
    # when or how a secret is used, not the secret (LDAP's pwdChangedTime, KMS's KeyUsage / KeySpec / KeyMetadata)
    "time times timestamp date usage spec specs metadata "
    # a socket's path (OpenSSH's SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.1234: random letters, no secret)
    "sock socket sockets "
    # what names a token without being it (Vault's accessor, token_accessor, secret_id_accessor)
    "accessor accessors "
    # a file's extension (grep -n prints "src/auth/tokens.py:5:..."): the name is a file's, not a secret's
    "py go ts tsx js jsx mjs rb java kt rs php cs swift yaml yml json toml ini cfg conf tf tfvars hcl sh txt md "
    "xml properties lock log tpl j2 erb"
)
# What a name's last word says when the value is a rule a secret must pass or how it is checked
# (``mysql_password_validation: strong``, ``password_strength: 3``, ``PASSWORD_POLICY=strict``, ``auth_mode: token``):
# usually a setting, but people also put the secret itself there (``PASSWORD_STRENGTH=Sup3rS3cr3t!``), so such a
# name is a secret's (``names_a_rule``) whose value must look like a strong password (``rule_values``), not a word.
# (Only words that described before: a name ending in another word, ``DB_PASSWORD_RULES``, still hides any value.)
_RULE_WORDS = word_set("validation validator validators strength policy policies mode complexity")
_LOOKUP_KEY_WORDS = word_set(
    "cache sort partition primary foreign idempotency routing object row dedup dedupe lookup index shard group "
    "map message event hash range composite unique natural surrogate join dict json redis bucket kv registry "
    "search cursor page idempotence correlation trace request"
)
# A token with one of these words is a listing's position or a request's identity, not a credential.
_PAGING_WORDS = word_set(
    "next page paging pagination continuation continue cursor idempotency idempotence"
)
# ... and in German and French (PASSWORT, MOT_DE_PASSE), which contain "pass" as the patterns require
_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pass", "pwd", "pw", "passwort", "passe")
# A secret's word with one or two digits glued on (``password2``, ``DB_PASSWORD2``, ``client_secret1``, ``token2``):
# the second of two rotated credentials, as ``az acr credential show`` names them. Only these whole words: ``pass1``
# (a compiler's pass), ``key1`` (``key1=value1``) and ``pwd2`` stay no names of a secret.
_NUMBERED_SECRET = re.compile(r"(password|passwd|passphrase|secret|token)[0-9]{1,2}")
_KEY_WORDS = (
    "apikey", "accesskey", "privatekey", "secretkey", "masterkey", "signingkey", "encryptionkey", "appkey",
    "accountkey", "sharedaccesskey", "clientkey", "authkey", "licensekey", "sessionkey", "hmackey", "key",
)  # fmt: skip
_WORD_SPLIT = re.compile(r"[_.\-\s]+|(?<=[a-z0-9])(?=[A-Z])")
# How environment variables are named (upper case words joined by "_"): JWT_SECRET, API_KEY, not jwtSecret
ENVIRONMENT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
def name_words(name: str) -> list[str]:
    stripped = name.strip("\"'-")
    if stripped.isascii() and stripped.isprintable() and " " not in stripped and stripped.lower() == stripped:
        # No upper-case letter (no camel hump) and no blank: the words are what lies between runs of "_", "." and
        # "-", split by C calls instead of the pattern (half of a new name's verdict; ``grep -n`` prints a new file
        # name and line number on every line, each read as a name before ":")
        return [word for word in stripped.replace(".", "_").replace("-", "_").split("_") if word]
    return [w.lower() for w in _WORD_SPLIT.split(stripped) if w]


@functools.lru_cache(maxsize=4096)  # the same names recur on every line of a log
def name_kind(name: str) -> tuple[str, bool] | None:
    """(kind, password-like) when ``name`` holds a secret, None when it does not. A name ending in a rule's word
    (``password_strength``) is its secret's when the words before it are one's, never password-like: its value
    must look generated (``names_a_rule``)."""
    words = name_words(name)
    if len(words) >= 2 and words[-1] in _RULE_WORDS:
        found = _words_kind(words[:-1])
        return None if found is None else (found[0], False)
    return _words_kind(words)


@functools.lru_cache(maxsize=1024)
def names_a_rule(name: str) -> bool:
    """Whether a secret's name ends in a rule's word (``PASSWORD_STRENGTH``, ``token_validation``): its value is
    the secret only when it looks like a strong one (``rule_values.strong_password``), else the rule's setting."""
    words = name_words(name)
    return len(words) >= 2 and words[-1] in _RULE_WORDS and name_kind(name) is not None


def holds_secret(name: str) -> bool:
    """Whether the name alone says its value is a secret (``name_kind``), not a rule's name whose value decides
    (``names_a_rule``): what a command's argument or an echoed command's word is asked (``jq .password_policy``,
    ``echo $PASSWORD_POLICY`` print the setting)."""
    return name_kind(name) is not None and not names_a_rule(name)


def _words_kind(words: list[str]) -> tuple[str, bool] | None:
    if not words:
        return None
    numbered = _NUMBERED_SECRET.fullmatch(words[-1])
    if numbered is not None:
        words[-1] = numbered.group(1)  # the second of two: az acr credential show's "password2"
    described = words[-1]
    if described.isdigit():  # a describing word decides before a version number ("PuTTY-User-Key-File-3:")
        described = next((word for word in reversed(words) if not word.isdigit()), "")
    if described in _DESCRIBING_WORDS or "public" in words:
        return None
    if len(words) >= 2 and words[-1] in ("key", "keys") and words[-2] in _LOOKUP_KEY_WORDS:
        return None  # a lookup key (cache_key, sort_key, partition_key), not a cryptographic one
    if len(words) == 1 and words[0] in ("oldpwd", "key", "keys"):
        return None  # the shell's previous directory, and "key" alone (prose: "key=value pairs")
    if words[-2:] == ["secret", "string"]:
        return "secret", True  # Secrets Manager's SecretString holds the secret itself, whatever people chose
    for word in reversed(words):
        if word.endswith(_PASSWORD_WORDS) and not word.endswith(("bypass", "compass", "oldpwd", "impasse")):
            return "password", True
        if word.startswith("credential"):
            return "credential", True
        if word in ("auth", "authtoken", "authkey"):
            return "auth", False
        if word.startswith("secret") or word.endswith("secret"):
            return "secret", False
        if word.endswith(("token", "tokens")) and word not in ("maxtoken", "maxtokens"):
            if _PAGING_WORDS.intersection(words) or word[: -len("token")] in _PAGING_WORDS:
                return None  # where a listing resumes (NextToken, nextPageToken, page_token): no credential
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
    return _plural_key_kind(words)


def _plural_key_kind(words: list[str]) -> tuple[str, bool] | None:
    """The kind of a name whose last word is the plural of a key's compound (Strapi's ``APP_KEYS``, ``API_KEYS``,
    ``signingKeys``, ``apikeys``): a list of such keys, each as secret as one. ``keys`` after another word
    (``authorized_keys``, ``ssh_keys``, ``gpg_keys``, ``max_keys``) lists public keys, key ids or a count."""
    last = words[-1]
    if last == "keys":
        compound = words[-2] + "key" if len(words) >= 2 else ""
    else:
        compound = last[:-1] if last.endswith("keys") else ""
    if compound == "key" or compound not in _KEY_WORDS:
        return None
    if compound == "apikey":
        return "api_key", False
    if compound == "accesskey":
        return "access_key", False
    if compound == "privatekey":
        return "private_key", False
    return "key", False


@functools.lru_cache(maxsize=1024)  # a name recurs on every line of dense text (``SECRET_KEY_BASE:``)
def ends_in_secret_word(name: str) -> bool:
    """Whether the name's last word is itself the secret's word (``JWT_SECRET``, ``API_KEY``), not a word before it
    (``SECRET_BACKEND=vault``, ``TOKEN_AUDIENCE=...`` name a setting about a secret)."""
    last = name_words(name)[-1:]
    return bool(last) and (last[0] in ("key", "keys") or name_kind(last[0]) is not None)
