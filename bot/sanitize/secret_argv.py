"""Does this command line ask for the value of a secret? Then its whole output is that value (issue #11).

``vault kv get -field=password secret/db`` prints ``Sup3r;S3cret`` and a newline: no name stands beside the
value, so no detector that reads only text can find it. The runner knows the argv it ran, though, and a few argv
shapes say "print me one secret's value" as plainly as ``password=`` does in text. ``judge_argv`` recognises them,
once per call, on the argv (never per output byte); the runner then redacts that call's output whole
(``withheld.py``). The argv that runs and its hash are not touched.

The shapes, each chosen so that ordinary commands do not match (``--field=name``, ``-o jsonpath={.metadata.name}``,
``get secrets`` stay as they are):

- **a field option** (``-field``/``--field``/``--fields``) whose value names a secret by the sanitizer's own
  name rules (``secret_names.name_kind``: ``password``, ``db_password``, ``token``, ``tls.key``; not ``name``,
  ``username``, ``secretName``); a list (``--fields username,password``) and 1Password's ``label=password`` /
  ``type=concealed`` count. ``-f`` is not one: most tools mean ``--file``, ``--follow`` or ``--force`` by it;
- **a query option** (``--jsonpath``, ``--template``, ``--go-template``, ``--query``, ``--jq``, ``--format``,
  and ``-o``/``--output`` with ``jsonpath=``, ``go-template=``, ``template=``, ``custom-columns=``) whose
  expression ends a path at a secret's name (``{.data.password}``, ``SecretString``,
  ``Credentials.SecretAccessKey``, ``{{ index .data "tls.key" }}``), or, on a command about a secret (a word
  ``secret``/``secrets``, ``secret/db``), selects its ``data``/``stringData`` or its ``value``/``payload``;
- **a reveal option** that exists to print decrypted values (``--with-decryption``, ``--show-secrets``,
  ``--reveal``; nmcli's ``-s``);
- **command words** of tools that print a secret bare (``secretsmanager get-secret-value``, ``secrets versions
  access``, ``keyvault secret show``, ``op read``, ``pass show``, a fisk application's ``secret get`` ...),
  matched as consecutive words among the program's name and the argv's positional words; a word right after an
  option may be that option's value, so it may sit in between (``aws secretsmanager --region x
  get-secret-value``).

- **a positional name** where a tool prints what its word names, bare: ``printenv DB_PASSWORD``,
  ``terraform output -raw db_password`` (``tofu``, ``terragrunt``), a jq-like filter (``jq -r .db.password``);
  and a filter that picks a secret's value by its name (``env[?(@.name=="DB_PASSWORD")].value``).
Operators may only add shapes (``execution.secret_output`` in the configuration): the built-in ones always apply.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.sanitize.secret_names import holds_secret


def _option_name(text: str) -> str:
    """``--Field`` and ``-field`` are one option to us (Go's flag package takes either)."""
    return text.lstrip("-").lower()


@dataclass(frozen=True)
class SecretArgvShapes:
    """The argv shapes whose output is a secret's value. ``commands`` are word sequences (lower case); the
    option sets hold names without their dashes (``field`` stands for ``-field`` and ``--field``)."""

    commands: frozenset[tuple[str, ...]] = frozenset()
    field_options: frozenset[str] = frozenset()
    query_options: frozenset[str] = frozenset()
    reveal_options: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        commands: Iterable[str] = (),
        field_options: Iterable[str] = (),
        query_options: Iterable[str] = (),
        reveal_options: Iterable[str] = (),
    ) -> SecretArgvShapes:
        """Shapes as people write them: commands as words separated by blanks, options with their dashes."""
        return cls(
            commands=frozenset(tuple(c.lower().split()) for c in commands if c.split()),
            field_options=frozenset(_option_name(o) for o in field_options),
            query_options=frozenset(_option_name(o) for o in query_options),
            reveal_options=frozenset(_option_name(o) for o in reveal_options),
        )

    def plus(self, other: SecretArgvShapes) -> SecretArgvShapes:
        """These shapes and ``other``'s (adding is the only way to change them)."""
        return SecretArgvShapes(
            self.commands | other.commands,
            self.field_options | other.field_options,
            self.query_options | other.query_options,
            self.reveal_options | other.reveal_options,
        )


#: No shapes beyond the built-in ones (what a runner without ``execution.secret_output`` adds).
NO_SHAPES = SecretArgvShapes()

BUILT_IN = SecretArgvShapes.of(
    commands=(
        "secretsmanager get-secret-value",  # aws: SecretString / SecretBinary (with --query ... --output text: bare)
        "secretsmanager batch-get-secret-value",
        "secrets versions access",  # gcloud: the payload, bare
        "keyvault secret show",  # az: "value" (no secret's name) or bare with --query value -o tsv
        "op read",  # 1Password: one field, bare
        "pass show",  # password-store: the password on the first line
        "gopass show",
        "bw get password",  # Bitwarden
        "doppler secrets get",
        "view-secret",  # kubectl plugin: decoded values
        "ecr get-login-password",  # aws: a registry password, bare (base64, no name, no JWT dots)
        "argocd admin initial-password",  # Argo CD's first admin password, bare on its first line
        "secret get",  # a fisk application wrapping a secret store
        "secret read",
        "secret show",
        "secret reveal",
    ),
    field_options=("field", "fields"),
    query_options=("jsonpath", "template", "go-template", "query", "jq", "format"),
    reveal_options=("with-decryption", "show-secrets", "show-secret", "reveal"),
)

# A program's short form of a reveal option: nmcli's -s is its --show-secrets (``nmcli -s -g
# 802-11-wireless-security.psk connection show office`` prints the Wi-Fi password bare); most programs mean something
# else by -s (silent, size, sort), so it is read so only for the programs listed here.
_PROGRAM_REVEAL_FLAGS = {"nmcli": frozenset({"-s"})}

# kubectl's -o/--output forms that carry an expression (jsonpath-file / template-file name a file we can't read)
OUTPUT_EXPRESSIONS = ("jsonpath=", "jsonpath-as-json=", "go-template=", "template=", "custom-columns=")
OUTPUT_OPTIONS = frozenset({"o", "output"})
# What a command about a secret holds its value in (kubectl's data/stringData, az's value, gcloud's payload).
_SECRET_HOLDERS = frozenset({"data", "stringdata", "value", "payload", "plaintext"})
_SECRET_NOUNS = frozenset({"secret", "secrets"})
# 1Password's field selectors: label=password, type=concealed (a password field's type).
_CONCEALED = "concealed"

# A name in a path expression: an identifier (with kubectl's escaped dots, tls\.key) or a quoted key.
_NAME = re.compile(r"""'([^'\n]{1,200})'|"([^"\n]{1,200})"|([A-Za-z_$][\w$-]{0,200}(?:\\\.[\w-]{1,200}){0,10})""")
# After a name: indexes ([0], [*], []) then "." or "[" with a name or key continue the path.
_INDEXES = re.compile(r"""(?:\[[\d*:,\s-]*\]|['"\]\s])*""")
_FILTER_START = "[?"


@dataclass(frozen=True)
class Verdict:
    """Why an argv asks for a secret's value: the rule's kind and the argv part that decided."""

    kind: str  # secret_field, secret_query, secret_reveal, secret_command
    because: str

    def sentence(self) -> str:
        """Why the output is withheld, for the result card, the thread and the model."""
        return (f"the command asks for a secret's value ({self.because}), so every line of its output is"
                " redacted")


def _without_filters(expression: str) -> str:
    """The expression without filter predicates (``[?Name=='db-password']``): what they compare is not what
    they select. Brackets inside a filter are counted, so a nested ``[0]`` does not end it early."""
    if _FILTER_START not in expression:
        return expression
    kept: list[str] = []
    depth = 0
    i = 0
    while i < len(expression):
        if depth == 0 and expression.startswith(_FILTER_START, i):
            depth, i = 1, i + 2
            continue
        char = expression[i]
        if depth:
            depth += {"[": 1, "]": -1}.get(char, 0)
        else:
            kept.append(char)
        i += 1
    return "".join(kept)


def _path_ends(expression: str) -> tuple[list[str], bool]:
    """The names at which the expression's paths end (``.data.password`` ends at ``password``), and whether
    any path goes through ``data``/``stringData``. A name followed by ``(`` is a function, not a field."""
    text = _without_filters(expression)
    ends: list[str] = []
    through_data = False
    for match in _NAME.finditer(text):
        name = (match.group(1) or match.group(2) or match.group(3) or "").replace("\\.", ".")
        after = _INDEXES.match(text, match.end())
        rest = after.end() if after else match.end()  # read in place: a copy of the rest per name was quadratic
        if text.startswith("(", rest):
            continue
        if name.lower() in ("data", "stringdata"):
            through_data = True
        # JMESPath's multiselect (SecretList[].{Name:Name,Changed:LastChangedDate}) goes on into the names it picks
        continues = (text.startswith(".", rest) and (_NAME.match(text, rest + 1) is not None
                                                     or text[rest + 1 : rest + 2] in ("{", "["))
                     or text[rest : rest + 2] in ("['", '["'))
        if not continues:
            ends.append(name)
    return ends, through_data


# Names of a secret that name_kind reads as an identifier ("...ID"): Vault's AppRole secret_id (``vault write
# -field=secret_id -f auth/approle/role/r/secret-id`` is how one is made), Consul's and Nomad's SecretID.
_ACL_SECRET_NAMES = frozenset({"secret_id", "secretid", "secret-id"})


def _names_secret(name: str) -> bool:
    """Whether a field, a path's last name or a variable's name names a secret (the sanitizer's name rules)."""
    return holds_secret(name) or name.lower() in _ACL_SECRET_NAMES


def _secret_field_value(value: str) -> str | None:
    """The first secret's name in a field option's value (``password``, ``username,password``,
    ``label=password``, ``type=concealed``), if any."""
    for item in value.split(","):
        selector, _, selected = item.strip().rpartition("=")
        if selector.lower() == "type" and selected.lower() == _CONCEALED:
            return item.strip()
        if selected and _names_secret(selected):
            return item.strip()
    return None


# A filter's body and the literals it compares with: ``env[?(@.name=="DB_PASSWORD")].value`` selects a
# secret's value by its name, which the path alone (ending at ``value``) does not say.
_FILTER_BODY = re.compile(r"\[\?([^\[\]]{0,400})")
_FILTER_LITERAL = re.compile(r"""['"]([^'"\n]{1,200})['"]|==?[ \t]{0,4}([^'"\s()\]]{1,200})""")


def _filter_names_secret(expression: str) -> bool:
    """Whether a filter of the expression compares with a secret's name (``"DB_PASSWORD"``, ``'/db/password'``)."""
    if _FILTER_START not in expression:
        return False
    return any(_names_secret(literal.rsplit("/", 1)[-1])
               for body in _FILTER_BODY.findall(expression)
               for literal in (quoted or bare for quoted, bare in _FILTER_LITERAL.findall(body)))


# A file's or a field's last word that names a certificate or a public key (kubectl's ``{.data.tls\.crt}``,
# ``{.data.ca\.crt}``, ``id_rsa.pub``): public by design, so a query ending only at such names asks for nothing
# secret, even in a Secret's ``data``. ``.pem`` alone may hold a key: only after a certificate's word (``cert.pem``).
_PUBLIC_LAST_WORDS = frozenset({"crt", "cer", "cert", "certs", "certificate", "certificates", "pub", "cacert"})
_PUBLIC_PEM_WORDS = frozenset({"cert", "ca", "chain", "fullchain", "certificate", "bundle", "cacert"})


def _names_public(name: str) -> bool:
    """Whether a path's last name names a certificate or a public key (``tls.crt``, ``ca.crt``, ``cert.pem``)."""
    words = re.split(r"[._-]+", name.lower())
    return words[-1] in _PUBLIC_LAST_WORDS or words[-1] == "pem" and len(words) > 1 and words[-2] in _PUBLIC_PEM_WORDS


def _query_selects_secret(expression: str, about_secret: bool) -> bool:
    ends, through_data = _path_ends(expression)
    if any(_names_secret(name) for name in ends):
        return True
    if any(name.lower() in _SECRET_HOLDERS for name in ends) and _filter_names_secret(expression):
        return True
    if ends and all(_names_public(name) for name in ends):
        return False  # a Secret's certificate (``{.data.tls\.crt}``): public, whatever holds it
    return about_secret and (through_data or any(name.lower() in _SECRET_HOLDERS for name in ends))


def _about_secret(words: Sequence[tuple[str, bool]]) -> bool:
    """Whether the positional words name a secret resource (kubectl's ``secret``, ``secrets``, ``secret/db``)."""
    return any(word in _SECRET_NOUNS or word.startswith(("secret/", "secrets/")) for word, _ in words)


@functools.lru_cache(maxsize=8)
def _by_first_word(commands: frozenset[tuple[str, ...]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The command sequences by their first word (built once per shape set)."""
    grouped: dict[str, list[tuple[str, ...]]] = {}
    for command in sorted(commands):
        grouped.setdefault(command[0], []).append(command)
    return {first: tuple(group) for first, group in grouped.items()}


def _command_words(words: Sequence[tuple[str, bool]], commands: frozenset[tuple[str, ...]]) -> str | None:
    """The first command sequence found among the words as consecutive words, where a word that may be an
    option's value (``skippable``) may stand between two of them.

    One pass over the words with the partial matches still open, each a (command, words matched) pair: a
    pair is kept once however many starts reach it, so at most one per word of every command is open. (A
    search from every start, each over the words after it, took 2.3 s on 16,000 words and grew with their
    square.)"""
    by_first = _by_first_word(commands)
    open_matches: set[tuple[tuple[str, ...], int]] = set()
    for word, skippable in words:
        starts = by_first.get(word)
        if not open_matches and starts is None:
            continue  # the usual word: no command starts or goes on here
        following: set[tuple[tuple[str, ...], int]] = set()
        for command, matched in open_matches:
            if word == command[matched]:
                if matched + 1 == len(command):
                    return " ".join(command)
                following.add((command, matched + 1))
            elif skippable:
                following.add((command, matched))
        for command in starts or ():
            if len(command) == 1:
                return word
            following.add((command, 1))
        open_matches = following
    return None


# Terraform prints one output's value bare when asked by name (``terraform output -raw admin_password``); a
# sensitive output included (its value is shown, not "(sensitive value)", when named).
_OUTPUT_PROGRAMS = frozenset({"terraform", "tofu", "terragrunt"})


def _named_output(words: Sequence[tuple[str, bool]]) -> str | None:
    """The output's name in ``terraform output [-raw|-json] NAME`` when it names a secret, else None."""
    if not words or words[0][0] not in _OUTPUT_PROGRAMS:
        return None
    names = [word for word, _ in words[1:]]
    if "output" not in names or names.index("output") + 1 >= len(names):
        return None
    name = names[names.index("output") + 1]
    return name if holds_secret(name) else None


# Tools whose positional word names what they print bare: ``printenv DB_PASSWORD``, and a jq-like filter's path
# (``jq -r .db.password config.json``); ``terraform output NAME`` is ``_named_output``'s.
_PRINTS_NAMED_VARIABLE = frozenset({"printenv"})
_FILTERS_FIRST = frozenset({"jq", "gojq", "jaq", "yq"})
# Every program a rule here judges by its name: ``echoed_screen`` clears a line whose program is none of these (and
# has no other sign), so a program-specific rule added here is seen there too.
PROGRAMS_JUDGED = _OUTPUT_PROGRAMS | _PRINTS_NAMED_VARIABLE | _FILTERS_FIRST | frozenset(_PROGRAM_REVEAL_FLAGS)


def _positional_secret(argv: Sequence[str], words: Sequence[tuple[str, bool]]) -> Verdict | None:
    """The positional shapes: a secret's name as the word a tool prints the value of."""
    if not words:
        return None
    program = words[0][0]
    if program in _PRINTS_NAMED_VARIABLE:
        named = next((word for word, _ in words[1:] if _names_secret(word)), None)
        return None if named is None else Verdict("secret_command", f"{program} {named}")
    if program in _FILTERS_FIRST:
        expression = next((item for item in argv[1:] if not item.startswith("-") or item == "-"), None)
        if expression is not None and _query_selects_secret(expression, False):
            return Verdict("secret_query", f"{program} {expression}")
    return None


def judge_argv(argv: Sequence[str], extra: SecretArgvShapes = NO_SHAPES) -> Verdict | None:
    """The reason this argv asks for a secret's value, or None. Built-in shapes always apply; ``extra`` (the
    operator's) only adds. Remembered per argv: a runner runs the same few command lines again and again (a
    command line over ``_REMEMBERED_ARGV_CHARS`` is judged again instead: 256 remembered ones of 64 KiB model-proposed
    arguments would keep tens of MB alive)."""
    items = tuple(argv)
    judge = _judge if sum(map(len, items)) <= _REMEMBERED_ARGV_CHARS else _judge.__wrapped__
    return judge(items, extra)


_REMEMBERED_ARGV_CHARS = 16 << 10


@functools.lru_cache(maxsize=256)
def _judge(argv: tuple[str, ...], extra: SecretArgvShapes) -> Verdict | None:
    shapes = BUILT_IN if extra is NO_SHAPES or extra == NO_SHAPES else BUILT_IN.plus(extra)
    words: list[tuple[str, bool]] = [(os.path.basename(argv[0]).lower(), False)] if argv else []
    queries: list[tuple[str, str]] = []  # (the argv part, its expression): judged once the words are known
    items = argv[1:]
    program_reveal = _PROGRAM_REVEAL_FLAGS.get(words[0][0], frozenset()) if words else frozenset()
    index = 0
    after_option = False
    while index < len(items):
        item = items[index]
        index += 1
        if item == "--" or not item.startswith("-") or len(item) == 1:
            if item != "--":
                words.append((item.lower(), after_option))
            after_option = False
            continue
        if item in program_reveal:
            return Verdict("secret_reveal", item)
        if item.startswith("-o") and not item.startswith("--") and item[2:].lower().startswith(OUTPUT_EXPRESSIONS):
            name, equals, value = "-o", "=", item[2:]  # kubectl's -ojsonpath=...
        else:
            name, equals, value = item.partition("=")
        option = _option_name(name)
        takes_value = option in shapes.field_options or option in shapes.query_options or option in OUTPUT_OPTIONS
        if not equals and takes_value and index < len(items):
            value, shown = items[index], f"{item} {items[index]}"
            index += 1
        else:
            shown = item
        after_option = not equals and not takes_value
        if option in shapes.reveal_options:
            return Verdict("secret_reveal", name)
        if option in shapes.field_options and (field := _secret_field_value(value)) is not None:
            return Verdict("secret_field", f"{name}={field}")
        if option in shapes.query_options:
            queries.append((shown, value))
        elif option in OUTPUT_OPTIONS and value.lower().startswith(OUTPUT_EXPRESSIONS):
            queries.append((shown, value.partition("=")[2]))
    command = _command_words(words, shapes.commands)
    if command is not None:
        return Verdict("secret_command", command)
    output = _named_output(words)
    if output is not None:
        return Verdict("secret_field", f"output {output}")
    if (positional := _positional_secret(argv, words)) is not None:
        return positional
    about_secret = _about_secret(words)
    for shown, expression in queries:
        if _query_selects_secret(expression, about_secret):
            return Verdict("secret_query", shown)
    return None
