"""Does this value, beside a secret's name, look like a secret? The precision half of redaction.

Redacting too much costs the on-call the output they need and the model the text it reasons on, so a
context detector's candidate is kept only when both its name and its value say "secret":

- the name must hold a secret (``secret_names.name_kind``: a word that *is* a secret word, no describing last word);
- password-like names accept any value that is not trivial (a boolean, a small number, a placeholder, a path);
  other names (token, secret, key ...) and prose-like positions need a value that looks generated: digits and
  letters, mixed case, or symbols, at least 8 characters;
- an unquoted value that is an expression of source code is no secret (``code_expressions.code_reference``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re

from bot.sanitize.code_expressions import EXPRESSION_HINT, code_reference
from bot.sanitize.rule_values import strong_password
from bot.sanitize.secret_names import ENVIRONMENT_NAME, ends_in_secret_word, name_kind, names_a_rule, word_set

_TRIVIAL_VALUES = word_set(
    "true false null none nil yes no on off empty unset undefined redacted hidden masked required "
    "optional string secret password token value example n/a na"
)
# Algorithms a setting names (password_hash: argon2id, password_encryption = scram-sha-256): no one's secret.
_ALGORITHM_VALUES = word_set(
    "argon2 argon2id argon2i argon2d bcrypt bcrypt_sha256 bcrypt-sha256 scrypt yescrypt pbkdf2 pbkdf2_sha256 "
    "pbkdf2-sha256 pbkdf2_sha512 pbkdf2-sha512 sha256_crypt sha512_crypt md5_crypt scram-sha-256 scram-sha-1 "
    "sha256 sha512 sha384 sha1 md5 hmac-sha256 hmac-sha512 hs256 hs384 hs512 rs256 rs384 rs512 es256 es384 es512 "
    "ps256 eddsa ed25519 aes-256-gcm aes-128-gcm aes256-gcm aes256 chacha20-poly1305 xchacha20-poly1305"
)
# The configuration passes of Windows Setup, as an answer file names them (unattend.xml's <settings pass="...">).
_WINDOWS_SETUP_PASSES = frozenset(
    {"windowsPE", "offlineServicing", "generalize", "specialize", "auditSystem", "auditUser", "oobeSystem"}
)
_NUMBERISH = re.compile(r"[+-]?\d{1,6}(?:\.\d+)?(?:ms|s|m|h|d|w|y|%)?")
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/[\w.@+~-]*)+")
_PATH_FIRST = frozenset("~./")  # how every _PATH match starts (asked first: a value on every line is judged)
# A path's file name with an extension (base64, which may also start with "/", has no "."): for names that are
# not password-like a path is one only when it says so, or has no capital (a key in base64 would).
_FILE_NAME = re.compile(r"/[\w-]+\.[a-z]{1,5}$")
# Kubernetes' generateName: a lowercase name, "-", five characters of its own alphabet (no vowels, no 0 1 3).
_KUBERNETES_GENERATED_NAME = re.compile(r"[a-z][a-z0-9-]{0,200}-[bcdfghjklmnpqrstvwxz2456789]{5}")
# An access log's protocol after a query ending in a word ("GET /?token_type=bearer HTTP/1.1"): no bearer token.
_PROTOCOL_VERSION = re.compile(r"(?i:https?)/[0-9.]{1,4}")
# Possessive: written "(?:[A-Z]?[a-z]+)+", a run of lowercase letters could be split into words in 2**n ways, and
# Python's re tried every split before failing at a character that is no letter ("Bearer " + "w" * 40 + "/X"
# never finished). Taking each run whole loses no match: a word ends only where the next starts with a capital.
_CAMEL_WORDS = re.compile(r"(?:[A-Z]?[a-z]++)++")
_PLACEHOLDER = re.compile(
    r"\[REDACTED|\[[A-Z][A-Z _-]{1,20}\]$|\(|<[^>]*>$|\$\{|\$\(|\{\{|%[sd(]|\$[A-Za-z_][A-Za-z0-9_]*$"
    r"|%[A-Za-z_][A-Za-z0-9_]*%$"  # a Windows, Octopus or Azure DevOps variable (%DB_PASSWORD%), whole
)  # [MASKED], [FILTERED]: what loggers print instead of a value
_PLACEHOLDER_FIRST = frozenset("[(<${%")  # what can start a _PLACEHOLDER match (each branch's first character)
# A variable a shell, a batch file or a CI system expands, written whole (``$DB_PASS``, ``${DB_PASS}``,
# ``%DB_PASS%``): a script's command line names the secret there, it does not hold it. Nothing else may follow or
# precede it: ``$3cr3t!x9``, ``%Pa55%word`` and ``${DB_PASS:-Hunter2}`` (a default) are literals.
_VARIABLE_REFERENCE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|%[A-Za-z_][A-Za-z0-9_]*%")
# Defaults that documentation and charts ship for the operator to replace: public words, not anyone's secret.
_PLACEHOLDER_WORDS = word_set(
    "changeme change-me change_me changeit replaceme replace-me replace_me fixme todo tbd placeholder "
    "pwd passwd passphrase creds credentials apikey api_key api-key omitted data+omitted"
)
# A key's example with its random part written as a run of x (``sk_live_xxxxxxxxxxxxxxxx``, ``ghp_XXXXXXXX``) or of
# "*" (a masked one): a vendor's prefix, a separator, then six or more of them. Nothing random is left to hide: the
# prefix is at most four words of one case (``sk_live``, ``xoxb``, ``sk-proj``) or runs of x themselves, so a real
# key with a run of x glued to it (``XXXX-<key>-XXXX``, ``sk-<key>-xxxxxx``) is no example (found by review, revsan5).
_FILL = r"(?:[xX]{6,}|\*{6,})"
_FILLED_EXAMPLE = re.compile(rf"(?:(?:[a-z]{{1,6}}|[A-Z]{{1,6}}|{_FILL})[_.:/-]){{1,4}}{_FILL}")
# A placeholder written as a phrase that asks to be replaced (``change-me-in-production``, ``replace_this``,
# ``your-secret-key-here``): lower-case letters only, words joined by "-" or "_". A real secret of the same shape
# (``correct-horse-battery-staple``, ``changeme-2024``) has no such opening or holds a digit.
_PLACEHOLDER_PHRASE = re.compile(
    r"(?:change|replace|update|fill)[-_]?(?:me|this|it|in)(?:[-_][a-z]{1,20}){0,8}|your[-_][a-z]{1,20}(?:[-_][a-z]{1,20}){0,8}"
)
_PHRASE_FIRST = frozenset("crufy")  # each branch's first letter
# The values ``rejected_value`` refuses by their lower-case spelling alone (a plain word outside it is no trivial
# value, unless it is a number or one character repeated: ``cheap_rejection``'s quick screen).
REFUSED_WORDS = _TRIVIAL_VALUES | _PLACEHOLDER_WORDS | _ALGORITHM_VALUES
# The longest value ``trivial`` remembers: an output's candidate values are bounded far below (256 characters), but
# a command line's argument is not (a model-proposed argv item of 120,000 characters reached it through
# ``argv.display_command_line``), and 256 of those held in the memo would keep tens of MiB alive (found by review).
_MEMO_VALUE_CHARS = 1024


def trivial(value: str) -> bool:
    """A value no one would call a secret: empty, a boolean, a small number or duration, a placeholder."""
    return _trivial_memo(value) if len(value) <= _MEMO_VALUE_CHARS else _trivial(value)


def _trivial(value: str) -> bool:
    bare = value.strip().strip("\"'").strip()
    if len(bare) < 3:
        return True
    lowered = bare.lower()
    if lowered in _TRIVIAL_VALUES or lowered in _PLACEHOLDER_WORDS:
        return True
    # Each pattern asked only where its first character can start it (dense text judges a value on every line).
    first = bare[0]
    # "\d" of a str pattern is any decimal digit (str.isdecimal: "١٢٣" too), not only ASCII's.
    if (first in "+-" or first.isdecimal()) and _NUMBERISH.fullmatch(bare):
        return True
    if first in _PLACEHOLDER_FIRST and _PLACEHOLDER.match(bare):
        # (but a real value written in angle brackets, ``password=<Xk9#mP2$vL>``: no placeholder's words inside)
        return not (first == "<" and strong_password(bare[1:-1]))
    if bare.count(first) == len(bare):
        return True  # one character repeated
    if (bare[-1] in "xX*" and len(bare) <= 64) and _FILLED_EXAMPLE.fullmatch(bare):
        return True
    return lowered[0] in _PHRASE_FIRST and len(bare) <= 120 and _PLACEHOLDER_PHRASE.fullmatch(lowered) is not None


# asked two or three times of one candidate (cheap refusal, judgement); short values only (``_MEMO_VALUE_CHARS``)
_trivial_memo = functools.lru_cache(maxsize=256)(_trivial)


_ANGLE_PLACEHOLDER = re.compile(r"<[^<>\n]{1,200}>")


def angle_placeholder(value: str) -> bool:
    """Whether the whole value is one ``<...>`` placeholder that documentation writes for the operator to fill
    (``<generate with: openssl rand -hex 32>``, ``<your api key>``): words in angle brackets, no value; not a strong
    password written so (``<Xk9#mP2$vL>``, ``rule_values.strong_password``)."""
    stripped = value.strip()
    return _ANGLE_PLACEHOLDER.fullmatch(stripped) is not None and not strong_password(stripped[1:-1])


def rejected_value(value: str) -> bool:
    """A value ``accept_assignment`` refuses before anything else, under any name and in any context: a trivial
    one, or an algorithm a setting names. Asked alone by ``cheap_rejection`` (no parse, no judgement)."""
    return trivial(value) or value.strip("\"'").lower() in _ALGORITHM_VALUES


def variable_reference(value: str) -> bool:
    """Whether a command's argument (``curl -u "$USER:$PASS"``, ``mysql -p"$DB_PASS"``) is a variable's reference
    alone (``_VARIABLE_REFERENCE``), quotes aside: the script was printed before the shell expanded it."""
    return _VARIABLE_REFERENCE.fullmatch(value.strip("\"'")) is not None


def is_path(value: str) -> bool:
    """A file system path (``/home/ops``, ``~/.pgpass``): what ``PWD=`` holds in sudo's log, not a password."""
    return _PATH.fullmatch(value) is not None


# ``generated``'s character tests on an ASCII value: str.isalpha, and str.isdigit or a symbol other than "-_./"
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_ASCII_DIGIT_OR_SYMBOL = re.compile(r"[^A-Za-z\-_./]")


def generated(value: str) -> bool:
    """Looks machine-generated (a key, a token, a strong password) rather than a word or an identifier."""
    bare = value.strip("\"'")
    if len(bare) < 8 or trivial(bare) or " " in bare or _PROTOCOL_VERSION.fullmatch(bare):
        return False
    if bare.isascii():  # the same questions asked in C (a value on every line of dense text is judged here)
        has_alpha = _ASCII_LETTER.search(bare) is not None
        if has_alpha and _ASCII_DIGIT_OR_SYMBOL.search(bare) is not None:
            return True
        mixed = bare != bare.lower() and bare != bare.upper()  # an upper-case letter and a lower-case one
        return mixed and len(bare) >= 16 and not _CAMEL_WORDS.fullmatch(bare)
    has_alpha = any(c.isalpha() for c in bare)
    # "/" joins words as "-" does (a secret's name: orders/payment-gateway); base64 with "/" has digits or mixed case
    if has_alpha and any(c.isdigit() or not c.isalnum() and c not in "-_./" for c in bare):
        return True
    mixed = any(c.isupper() for c in bare) and any(c.islower() for c in bare)
    return mixed and len(bare) >= 16 and not _CAMEL_WORDS.fullmatch(bare)


def reads_position(name: str, quoted: bool) -> bool:
    """Whether ``accept_assignment``'s verdict on a ``name`` (and a ``quoted`` value or not) may change with its
    ``at_line_start`` and ``sentence`` alone: only a password-like name's ``structured`` rule reads them, and a
    quoted name with a quoted value is structured in either context and never a sentence. Any other name's
    verdict is its value's (a Docker config's ``"auth":"..."`` on every line: a second call with the
    mid-line context was a quarter of its judgement). Kept beside ``accept_assignment``: a rule that reads either
    argument for another name must be written here too (``tests/test_sanitize_shapes_position.py`` asks both)."""
    found = name_kind(name)
    return found is not None and found[1] and not (quoted and name.startswith(("\"", "'")))


# Values that name where a secret is, in the syntax of the tool that reads it (the value is no secret itself):
# nginx's upstream directives (``proxy_pass http://orders_api;``: "pass" is the verb, not a password; a URL, a
# unix socket, a variable, or host:port, ended by the directive's ";"), systemd's ``LoadCredential=ID:PATH``
# (``SetCredential=ID:VALUE`` holds the value and is not one of them), a ``@file`` argument (vault, curl, httpie:
# the value is read from the file; a lower-case relative or absolute path with a "/" or an extension, so
# ``password=@Xk9!q`` or ``password=@abc`` stay passwords that start with "@"), a secret store's path
# (``secret=secret/data/smtp:password``: a lower-case mount/path/name with two "/" or more), Vault's audit HMAC
# (``"client_token":"hmac-sha256:<hex>"``: Vault writes the keyed hash, never the token), and an example's elided
# value (``sk_test_...``: a vendor prefix and "...", no character of a key).
_NGINX_PASS_DIRECTIVES = frozenset({"proxy_pass", "fastcgi_pass", "uwsgi_pass", "scgi_pass", "grpc_pass",
                                    "memcached_pass"})
_NGINX_UPSTREAM = re.compile(r"(?:[a-z][a-z0-9+.-]*://[^\s;'\"]+|unix:/[^\s;'\"]+|\$\w+|[\w.-]+(?::\d{1,5})?);")
_SYSTEMD_LOAD_CREDENTIAL = frozenset({"loadcredential", "loadcredentialencrypted"})
_CREDENTIAL_ID_AND_PATH = re.compile(r"[\w.@-]{1,255}(?::(?:/[\w.@+-]+)+/?)?")
_AT_FILE = re.compile(r"@(?:~|\.{1,2})?/?[a-z0-9_-][a-z0-9_.-]*(?:/[a-z0-9_.-]+)*")
_STORE_PATH = re.compile(r"[a-z][a-z0-9_-]*(?:/[a-z0-9_.-]+){2,}(?::[a-z0-9_.-]+)?")
_AUDIT_HMAC = re.compile(r"hmac-sha(?:256|512):[0-9a-f]{64,128}")
_ELIDED_EXAMPLE = re.compile(r"[A-Za-z]+(?:[_-][A-Za-z]+)*[_-](?:\.\.\.|\u2026)")


def names_a_location(name: str, value: str) -> bool:
    """Whether ``value`` beside ``name`` only says where a secret is read from (or is a tool's hash or an
    example's elision) in the forms listed above, so no detector needs to hide it."""
    lowered = name.strip("\"'").lower()
    if lowered in _NGINX_PASS_DIRECTIVES:
        upstream = _NGINX_UPSTREAM.fullmatch(value)
        return upstream is not None and not generated(value.split(":", 1)[0].rstrip(";"))
    if lowered in _SYSTEMD_LOAD_CREDENTIAL:
        return _CREDENTIAL_ID_AND_PATH.fullmatch(value) is not None
    first = value[:1]
    if first == "@":
        at_file = _AT_FILE.fullmatch(value) is not None
        return at_file and ("/" in value or _FILE_NAME.search("/" + value[1:]) is not None)
    if first == "h":
        return _AUDIT_HMAC.fullmatch(value) is not None
    if _ELIDED_EXAMPLE.fullmatch(value) is not None:
        return True
    return first.islower() and _STORE_PATH.fullmatch(value) is not None


def accept_assignment(
    name: str,
    separator: str,
    value: str,
    at_line_start: bool,
    sentence: bool = False,
    *,
    quoted: bool = False,
    following: str = "",
    code: bool = True,
    spaced: bool = True,
    environment: bool = False,
) -> str | None:
    """The kind of a ``name = value`` candidate when it is a secret, else None.

    A password-like name takes any non-trivial value in ``NAME=value``, a YAML/JSON key or a line's first
    key; after a ``:`` in the middle of a line (prose: "the password: see the vault"), or when more words
    follow the value on its line ("Password: see the team vault"), the value must look generated too.
    An unquoted value that is an expression of code (``code_reference``) is no secret; a quoted one is a literal,
    and a quoted literal of 8 characters or more assigned with ``=`` to a secret's name is one (code, .env, ini:
    ``secret = "a-literal-secret-value"``; ``spaced``: a blank before the ``=``, as code and ini files write
    it, where logfmt and Prometheus labels name a secret with ``secret="db-credentials"``), generated-looking
    or not. ``value`` is without its quotes. ``code`` False: where no expression can stand (an environment
    listing, a .env file), every value is a literal. ``environment``: an environment variable's definition (an
    ``env`` or .env line, docker's ``"NAME=value"``, a container's ``name:``/``value:`` pair, an upper-case
    ``NAME=value`` anywhere, ``NAME: value`` opening its line as compose's ``environment:`` map prints it),
    where a name that ends in its secret's word (``JWT_SECRET``, ``API_KEY``, ``GITHUB_TOKEN``) holds that
    secret whatever it looks like, when it is one word: people pick ``JWT_SECRET=supersecret``, and that weak
    value is exactly the one that must not be shown (words with blanks, ``API_TOKEN=not a token``, still need
    a generated one)."""
    found = name_kind(name)
    if found is None or trivial(value):
        return None
    bare = value.strip("\"'")
    if bare.lower() in _ALGORITHM_VALUES:
        return None
    kind, password_like = found
    if names_a_rule(name):  # (``PASSWORD_STRENGTH``: its setting, unless it is the password itself)
        return kind if strong_password(bare) else None
    if names_a_location(name, bare):
        return None
    if bare[:1] == "=" and _PINNED_VERSION.fullmatch(bare):
        return None  # pip freeze's ``python-secrets==0.1.0``: a package pinned to a version, no assignment
    if not password_like and _not_a_key(name, bare):
        return None
    if bare in _WINDOWS_SETUP_PASSES and name.strip("\"'").lower() == "pass":
        return None  # an answer file's <settings pass="oobeSystem">: the setup pass the settings apply to
    if code and not quoted and EXPRESSION_HINT.search(bare) and code_reference(bare, following, separator == ":"):
        return None
    structured = separator == "=" or at_line_start or name.startswith(("\"", "'"))
    path = bare[:-1] if separator == ":" and bare.endswith(";") else bare  # nginx ends a directive with ";"
    if bare[:1] in _PATH_FIRST and _path_value(path, bare, password_like):
        return None  # a path (PWD=/home/deploy, password_file: /run/secrets/db, client_key: /etc/ssl/c.key)
    if password_like and structured and not (separator == ":" and sentence):
        return kind
    if not password_like and "-" in bare and _KUBERNETES_GENERATED_NAME.fullmatch(bare):
        return None  # a name Kubernetes generated (Mountable secrets: default-token-x2k4p), not a token
    if environment and kind != "auth" and " " not in bare and ends_in_secret_word(name):
        return kind
    if quoted and spaced and separator == "=" and len(bare) >= 8 and not any(c.isspace() for c in bare):
        return kind
    if not code and any(generated(word) for word in bare.split() if "=" not in word):
        return kind  # an environment entry's literal with a generated word in it (API_TOKEN=tok 8d7c6b5a4f3e)
    if kind == "auth" and basic_credentials(bare):
        return kind  # docker's "auth": base64 of user:password, however weak the password (dXNlcjpwYXNz)
    return kind if generated(value) else None


# "==" and a version (``requests==2.31.0``, ``secrets==1.0.0rc1``, ``x==1.2+local``): read with the "=" before it.
_PINNED_VERSION = re.compile(r"==?v?\d{1,6}(?:\.[0-9A-Za-z]{1,20}){0,6}(?:[+-][\w.]{1,40})?")
# A value that says it is a test's or an example's (``'test-key'``, ``fake_token``, ``my-dummy-secret``): lower-case
# letters in two to five words, one of them such a word. ``staging-key``, ``correct-horse-battery`` and anything
# with a digit are still literals.
_TEST_VALUE = re.compile(
    r"(?:[a-z]{1,20}[-_]){0,4}(?:test|testing|dummy|fake|mock|example|sample|demo|placeholder|fixture)"
    r"(?:[-_][a-z]{1,20}){0,4}"
)
# A Helm chart's ``existingSecret:`` (``existingSecretName``): the name of a Secret object made elsewhere, which
# Kubernetes spells in lower case (``oauth2-proxy-creds``); a value of another shape is judged as usual.
_OBJECT_NAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")


def _not_a_key(name: str, bare: str) -> bool:
    """Whether a value beside a name that needs a generated value (a token's, a key's, a secret's: not a password's)
    is a test's placeholder or, beside ``existing...``, an object's name (``_TEST_VALUE``, ``_OBJECT_NAME``)."""
    if "-" in bare or "_" in bare:
        if _TEST_VALUE.fullmatch(bare) is not None:
            return True
        return name.strip("\"'").lower().startswith("existing") and _OBJECT_NAME.fullmatch(bare) is not None
    return False


_BASE64_VALUE = re.compile(r"(?:[A-Za-z0-9+/]{4}){2,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


@functools.lru_cache(maxsize=256)  # asked of one candidate twice (cheap refusal, judgement): a base64 decode
def basic_credentials(value: str) -> bool:
    """Whether ``value`` is base64 of ``user:password`` (printable, a ``:`` with text on both sides): what an
    ``auth`` holds in a Docker config or an HTTP Basic header, a secret whether or not it looks generated."""
    if len(value) > 1024 or not _BASE64_VALUE.fullmatch(value):
        return False
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = text.partition(":")
    return bool(colon and user and password and text.isprintable())


# A path's part that is no word but base64 (``openssl rand -base64`` starts one password in 64 with "/"): upper and
# lower case and digits, two of each at least, in eight characters or more; or "+" or "=" among them.
_BASE64_PART = re.compile(r"(?=(?:[^A-Z]*[A-Z]){2})(?=(?:[^a-z]*[a-z]){2})(?=(?:[^0-9]*[0-9]){2})[A-Za-z0-9]{8,}+"
                          r"|[A-Za-z0-9]*[+=][A-Za-z0-9+=]*")


def _path_value(path: str, bare: str, password_like: bool) -> bool:
    """Whether an assignment's value ``bare`` (``path``: as a path would be read) is a file system path, not a
    secret: a path's shape, and under a password's name no part that is base64 (``/3mW5Zh76sGOm/Io`` is a
    password, ``/home/deploy`` and ``/var/lib/docker/overlay2/3f2a...`` are paths); under another name, a file's
    name with an extension or no capital letter (a key in base64 has capitals)."""
    if _PATH.fullmatch(path) is None:
        return False
    if password_like:
        return not any(_BASE64_PART.fullmatch(part) for part in path.split("/"))
    return _FILE_NAME.search(bare) is not None or not any(c.isupper() for c in bare)


@functools.lru_cache(maxsize=1024)  # a name recurs on every line of dense text
def environment_secret(name: str, kind: str) -> bool:
    """Whether ``accept_assignment`` may take any one-word value of ``name`` (a secret's name of ``kind``) where
    judge passes ``environment``: an environment variable's name ending in its secret's word (``JWT_SECRET``)."""
    return kind != "auth" and ENVIRONMENT_NAME.fullmatch(name.strip("\"'")) is not None and ends_in_secret_word(name)


def refused_everywhere(name: str, value: str, *, spaced_literal: bool, sentence: bool = False) -> bool:
    """Whether ``accept_assignment(name, separator, value, ...)`` refuses ``value`` (without its quotes) whatever
    the position on its line, the words after it and ``following``, with ``code`` True and ``environment`` at most
    what ``judge.judge`` passes (an environment variable's name, ``ENVIRONMENT_NAME``): what judge asks of an
    assignment, so that ``cheap_rejection`` may refuse it without the full judgement. ``spaced_literal``: the value
    is quoted after a spaced "=" (``quoted``, ``spaced``, separator "="); ``sentence``: the value is unquoted after
    a ":" and words follow it on its line, so that judge's last word is ``accept_assignment(..., sentence=True)``
    (no structured acceptance then, and no environment variable's). Only refusals that come before every
    acceptance in ``accept_assignment``, so that True here is its None in each of those contexts; False says
    nothing."""
    found = name_kind(name)
    if found is None or rejected_value(value):
        return True
    kind, password_like = found
    bare = value.strip("\"'")
    if "/" in bare and _path_value(bare, bare, password_like):
        return True
    if password_like and not sentence:
        return False  # taken in a structured context (NAME=value, a line's first key)
    if not password_like and "-" in bare and _KUBERNETES_GENERATED_NAME.fullmatch(bare):
        return True
    if not sentence and " " not in bare and environment_secret(name, kind):
        return False  # an environment variable's secret, whatever it looks like
    if spaced_literal and len(bare) >= 8 and not any(c.isspace() for c in bare):
        return False  # a quoted literal after " = " is taken
    if kind == "auth" and basic_credentials(bare):
        return False  # base64 of user:password
    return not generated(value)


# A YAML alias (``*pw``), or a node's properties with no content after them on its line: an anchor (``&creds``:
# the mapping follows on the next lines) or a standard tag (``!!null``).
# An alias's or an anchor's name as people write one (``*db_pw``, ``&defaults``, ``*pg.main``): a symbol other than
# "_", "-", "." in it (``*8lz!UT``, ``*x#9``) makes it a password that starts with "*" or "&" (a .properties or log
# line's ``password: *8lz!UT`` showed whole).
# Ansible's inline vault (``password: !vault |``): its local tag, the encrypted block scalar on the lines after.
_YAML_NODE_REFERENCE = re.compile(r"(?:\*|&)[A-Za-z0-9_.-]{1,64}|!![^\s,\[\]{}]{1,64}|!vault(?:[ \t]{1,4}[|>][-+]?)?")


def yaml_node_reference(value: str) -> bool:
    """Whether a plain value after a YAML key's ":" is a reference to a node anchored elsewhere (whose own value is
    judged where it is written) or only the properties of a node that holds no value on this line, named as people
    name anchors: a "name" that looks generated (``*Kq8sLp2mZx``) is more likely a password that starts with that
    character, and stays one."""
    return _YAML_NODE_REFERENCE.fullmatch(value) is not None and not generated(value.lstrip("*&!"))


_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# A lower-case name of words and numbers (db-password-v2, orders_db.2): how people name a secret, not a token.
_RESOURCE_NAME = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)+")
# A variable or a field that holds an ACL secret in code (secret_id, self.secret_id, aclToken.SecretID).
_ACL_FIELD = re.compile(
    r"(?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:SecretID|SecretId|secretId|secret_id|wrapping_token|wrappingToken)")


def acl_secret(value: str) -> bool:
    """Whether the value beside an ACL token's secret name (Consul's and Nomad's ``SecretID``, Vault's AppRole
    ``secret_id``, a wrapped response's ``wrapping_token``) is that secret: a UUID (what the three tools issue,
    which the describing "...ID" would otherwise excuse) or a generated-looking token. The same names elsewhere
    name a secret instead of holding one: an AWS ARN or a resource path (Terraform's ``secret_id`` of a Secrets
    Manager or Secret Manager secret), a name (``orders-db-password``, ``db-password-v2``), Consul's ``anonymous``, a
    placeholder (``<hidden>``); and in source code an expression (``secret_id = get_secret_id(role)``,
    ``login(role_id=role_id, secret_id=secret_id)``, ``SecretID: tok.SecretID,``), whose closers and commas are
    code's, not the value's."""
    bare = value.rstrip(",;)]}")
    if bare.startswith("arn:") or "/" in bare:
        return False
    if _UUID.fullmatch(bare):
        return bare.strip("0-") != ""  # the all-zero UUID is no one's token
    if not generated(bare) or _RESOURCE_NAME.fullmatch(bare) is not None:
        return False
    return _ACL_FIELD.fullmatch(bare) is None and not code_reference(bare) and not code_reference(value.rstrip(",;"))


def accept_url_password(value: str) -> bool:
    """A URL's ``host:port/path@x`` is not ``user:password@host``: a port is all digits up to the path (its "/"
    escaped as "\\/" in a JSON string that escapes slashes)."""
    head = re.split(r"[/?#]|\\/", value, maxsplit=1)[0]
    return not head.isdigit() and not trivial(value)
