"""The second pass's detectors for a secret one program prints in its own words, with no secret's name beside the
value, or with the name where no name-based detector reads it (issue #11, accept3's last open cases): ``az
keyvault secret show``'s ``"value"`` (its object's ``id`` says it is a Key Vault secret), Rails' ``ENV.fetch("NAME")
{ "default" }``, a Windows answer file's ``<AdministratorPassword><Value>``, a PHP stack trace's
``PDO->__construct`` arguments (and Perl DBI's ``connect``), the password ``argocd admin initial-password`` prints
above its advice, ``elasticsearch-reset-password``'s ``New value:`` and ``elasticsearch-setup-passwords``' ``PASSWORD
name = PW``.

Each is rare in ordinary output, so each is an automaton of its own behind a literal only that program writes (text
without it costs one substring search per literal, ``automata.Automaton.may_match``). ``context_detectors.CONTEXT``
places them after ``context_services.SERVICE_FORMATS``; every repetition is bounded for the reason given in
``detectors.py``.
"""

from __future__ import annotations

import bisect
import re

from bot.sanitize.context_patterns import _FINDER_NAME, _NAME
from bot.sanitize.detectors import Detector

# A Key Vault secret's id as az prints it in ``secret show``/``secret set`` (a version after the name; ``secret list``
# prints ids without one, and no values): the public cloud's vault domain and the sovereign clouds' (Azure China's,
# the US Government's, Azure Germany's).
KEY_VAULT_SECRET_ID = (rb"https://[A-Za-z0-9-]{3,24}\.vault\.(?:azure\.net|azure\.cn|usgovcloudapi\.net"
                       rb"|microsoftazure\.de)/secrets/[A-Za-z0-9-]{1,127}/[0-9a-f]{32}\"")
# A JSON string value, to its closing quote (one that reaches the bound runs on to it: ``value_spans.extended_end``).
_JSON_STRING = r"\"[^\"\n]{1,256}\"?"
_QUOTED = r"\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'"

# What PHP prints for an argument in a stack trace before the one we want: a string (cut to 15 characters and "..."
# by default: ``zend.exception_string_param_max_len``), NULL, a number, a boolean, an array or an object.
_PHP_ARGUMENT = r"(?:'[^'\n]{0,256}'|NULL|-?[0-9]{1,20}|true|false|Array|Object\([A-Za-z0-9_\\]{1,128}\))"
# The password argument: a string, to the quote that ends the argument list's item (PHP prints a quote inside it raw).
_PHP_PASSWORD = r"(?P<v>'[^\n]{1,256}?')(?:, |\))"

# 1Password's ``op item get --format json``: a field object's other keys between its ``"type": "CONCEALED"`` and its
# ``"value"`` (``purpose``, ``label``; op prints them in that order), each a string, a number, a boolean or a
# one-line object, on their own lines or on one.
_OP_OTHER_KEY = (
    r",[ \t\r\n]{0,64}\"[A-Za-z_]{1,32}\"[ \t]{0,4}:[ \t]{0,4}"
    r"(?:\"(?:[^\"\\\n]|\\.){0,128}\"|[A-Za-z0-9.-]{1,32}|\{[^{}\n]{0,128}\})"
)
_OP_CONCEALED = (
    r"\"type\"[ \t]{0,4}:[ \t]{0,4}\"CONCEALED\"(?:" + _OP_OTHER_KEY + r"){0,5}"
    r",[ \t\r\n]{0,64}\"value\"[ \t]{0,4}:[ \t]{0,4}"
)

PROGRAM_FORMATS: tuple[Detector, ...] = (
    Detector(
        # az keyvault secret show / set: the object's "value" (whatever its name says: it is what the vault keeps
        # secret). The id line comes before it (az sorts the keys), with kid, managed, name and tags between: the
        # check looks back for it (``judge.key_vault_value``) rather than the pattern spanning those keys, which
        # would keep their text from the other detectors.
        "secret",
        r"\"value\"[ \t]{0,4}:[ \t]{0,4}(?P<v>" + _JSON_STRING + ")",
        check="key_vault_value",
        own_automaton=True,
        # (one literal, starting with its rarest byte "z": '"value"' and "/secrets/" hold bytes realistic output
        # is full of, and ``Automaton.may_match`` asks the shortest first; or, a choice, the US Government cloud's
        # domain, whose ids lack it)
        literals=((b"zure.", b"usgovcloudapi"),),
    ),
    Detector(
        # terraform state pull / show -json: a random_password's generated password is its "result" attribute; the
        # check looks back for the resource's "type" (``terraform_random.random_password_result``), as the Key
        # Vault value's does for its id. Gated by the type's name (a search of each text: 0.3 ms per MiB), so
        # ordinary JSON's "result" costs nothing more: in the services group a log with "result" on every line was
        # judged line by line and collapsed into a dense_candidates marker.
        "password",
        r"\"result\"[ \t]{0,4}:[ \t]{0,4}(?P<v>" + _JSON_STRING + ")",
        check="random_password_result",
        own_automaton=True,
        literals=(b"random_password",),
    ),
    Detector(
        # Rails (database.yml's ERB, an initializer): ENV.fetch("DB_PASSWORD") { "default" } or ENV.fetch("X", "d"),
        # the default a literal that is the password wherever the variable is unset
        "password",
        rf"\bENV\.fetch\([ \t]{{0,4}}[\"'](?P<name>{_NAME})[\"'][ \t]{{0,4}}"
        rf"(?:\)[ \t]{{0,4}}\{{[ \t]{{0,4}}|,[ \t]{{0,4}})(?P<v>{_QUOTED})",
        check="xml_pair",  # the name's rules on a quoted literal (``ENV.fetch("PORT") { "3000" }`` stays)
        finder=rf"\bENV\.fetch\([ \t]{{0,4}}[\"']{_FINDER_NAME}[\"'][ \t]{{0,4}}"
        r"(?:\)[ \t]{0,4}\{[ \t]{0,4}|,[ \t]{0,4})[\"']",
        own_automaton=True,
        literals=(b".fetch(",),
    ),
    Detector(
        # A Windows answer file (unattend.xml, autounattend.xml): <AdministratorPassword> (or <Password>) then
        # <Value>PW</Value> on the next line; PlainText false stores base64 of the password and the element's name,
        # no less a secret
        "password",
        rf"<(?P<name>{_NAME})>[ \t\r\n]{{0,64}}<Value>(?P<v>[^<\n]{{1,256}})</Value>",
        check="xml_pair",  # <Value>true</Value> under a password's element is no password, as in <Password>true<
        finder=rf"<{_FINDER_NAME}>[ \t\r\n]{{0,64}}<Value>[^<\n]",
        own_automaton=True,
        literals=(b"<Value>",),
    ),
    Detector(
        # A PHP stack trace's frame: PDO->__construct('mysql:host=db;d...', 'shop', 'PW') (Doctrine's
        # PDOConnection, and mysqli's constructor: host, user, password). PHP 8.2's #[SensitiveParameter] prints
        # Object(SensitiveParameterValue) there instead, which is no match.
        "password",
        r"\b(?:PDO|PDOConnection|mysqli)(?:->|::)__construct\(" + _PHP_ARGUMENT + ", " + _PHP_ARGUMENT + ", "
        + _PHP_PASSWORD,
        own_automaton=True,
        literals=(b"__construct(",),
    ),
    Detector(
        # Perl DBI's error (and DBI->trace): DBI connect('dbname=crm;host=pg','crm','PW',...) failed: the password
        # is the third argument, quoted as Perl prints it (no blank after the commas)
        "password",
        r"\bDBI[ \t]connect\('[^'\n]{0,256}',[ \t]?'[^'\n]{0,256}',[ \t]?(?P<v>'[^\n]{1,256}?')(?:,|\))",
        own_automaton=True,
        literals=(b"connect('",),
    ),
    Detector(
        # argocd admin initial-password: the password alone on its line, a blank line, then Argo CD's advice (as
        # every release since 2.4 words it)
        "password",
        r"(?m:^)(?P<v>[^\s]{1,256})[ \t]{0,16}\r?\n(?:[ \t]{0,16}\r?\n){0,2}[ \t]{0,4}"
        r"This password must be only used for first time login\. We strongly recommend",
        own_automaton=True,
        literals=(b"We strongly recommend",),  # its first byte, "W", rare in logs: a memchr answers most texts
    ),
    Detector(
        # elasticsearch-reset-password: "Password for the [elastic] user successfully reset." then "New value: PW"
        "password",
        r"\] user successfully reset\.[ \t]{0,16}\r?\n(?:[ \t]{0,16}\r?\n){0,2}New value: (?P<v>[^\s]{1,256})",
        search=r"\] user successfully reset\.[ \t]{0,16}\r?\n(?:[ \t]{0,16}\r?\n){0,2}New value: [^\s]",
        own_automaton=True,
        literals=(b"New value: ",),
    ),
    Detector(
        # elasticsearch-setup-passwords auto: "Changed password for user NAME" then "PASSWORD NAME = PW"
        "password",
        r"Changed password for user [^\s]{1,64}[ \t]{0,16}\r?\nPASSWORD [^\s]{1,64} = (?P<v>[^\s]{1,256})",
        search=r"Changed password for user [^\s]{1,64}[ \t]{0,16}\r?\nPASSWORD [^\s]{1,64} = [^\s]",
        own_automaton=True,
        literals=(b"Changed password for user ",),
    ),
    Detector(
        # 1Password's op item get --format json (and op item create's): a CONCEALED field's value, whatever its label
        # says (a password, an API credential's, a custom field's): what the vault keeps concealed
        "password",
        _OP_CONCEALED + r"(?P<v>" + _JSON_STRING + ")",
        search=_OP_CONCEALED + r"\"[^\"\n]",
        own_automaton=True,
        literals=(b"CONCEALED",),
    ),
)


_SECRET_ID = re.compile(KEY_VAULT_SECRET_ID)
# How far back a Key Vault value's id may stand: az prints kid, managed, name and tags between them, and a secret's
# tags are at most 15, each name up to 512 characters and its value up to 256 (about 12 KiB printed). The ids are
# searched for forward, each byte once per text (``_nearest_secret_id``), so the reach costs nothing per value.
KEY_VAULT_LOOKBACK = 16384
# The most "https://" an id's "/secrets/" may follow by (the longest vault host and domain).
_ID_HEAD_BYTES = 64
_JSON_SKIP = re.compile(rb'"(?:[^"\\\n]|\\.)*"|[^"{}]+')
# The last object walk (text, id's end, where it stopped, its depth there): the candidates of one text come in
# order, so the next value under the same id goes on from there, and a text of many values reads each byte once.
_WALKED: list[tuple[bytes, int, int, int]] = [(b"", -1, -1, 0)]


def key_vault_value(text: bytes, start: int) -> bool:
    """Whether the ``"value"`` key at ``start`` is a Key Vault secret's: an id of a secret's version stands before it
    in the same JSON object (after the id, braces balance at every point: a nested object, as tags are, closes
    before the key, and the key is not inside one). Reads at most ``KEY_VAULT_LOOKBACK`` bytes back: the nearest
    ids by a backward byte search, then the object from the id on, once per id (``_WALKED``)."""
    id_end = _nearest_secret_id(text, max(0, start - KEY_VAULT_LOOKBACK), start)
    if id_end < 0:
        return False
    walked_text, walked_id, pos, depth = _WALKED[0]
    if walked_text is not text or walked_id != id_end or pos > start:
        pos, depth = id_end, 0
    while pos < start and depth >= 0:  # (below 0: the id's object closed, for this key and every later one)
        byte = text[pos]
        if byte == 0x7B:  # "{"
            depth, pos = depth + 1, pos + 1
        elif byte == 0x7D:  # "}"
            depth, pos = depth - 1, pos + 1
        else:
            skipped = _JSON_SKIP.match(text, pos, start)
            pos = skipped.end() if skipped is not None and skipped.end() > pos else pos + 1
    _WALKED[0] = (text, id_end, pos, depth)
    return depth == 0


def _nearest_secret_id(text: bytes, floor: int, start: int) -> int:
    """The end of the last Key Vault secret id in ``text[floor:start]``, -1 when none. Each "/secrets/" is found
    once per text by a forward search that goes on from where the last one stopped (``_IDS``), and read as an id
    (its "https://" at most ``_ID_HEAD_BYTES`` before it); a search back from each value, as far as
    ``KEY_VAULT_LOOKBACK``, read 16 KiB per value of a text full of them. The ids' ends are kept in order, so a value
    before where the search stopped (the other cloud's automaton reads the same text) finds its own."""
    searched_text, searched, ends = _IDS[0]
    if searched_text is not text:
        searched, ends = floor, []
    pos = max(searched, floor)
    while (slash := text.find(b"/secrets/", pos, start)) >= 0:
        head = text.rfind(b"https://", max(0, slash - _ID_HEAD_BYTES), slash)
        found = _SECRET_ID.match(text, head, start) if head >= 0 else None
        if found is not None and (not ends or found.end() > ends[-1]):
            ends.append(found.end())
        pos = slash + 1
    _IDS[0] = (text, max(searched, pos, start - len(b"/secrets/")), ends)  # (one ending past ``start``: found again)
    at = bisect.bisect_right(ends, start) - 1
    return ends[at] if at >= 0 and ends[at] >= floor else -1


# The search for ids in the last text asked about (the text, where it stopped, the ends of the ids found before there).
_IDS: list[tuple[bytes, int, list[int]]] = [(b"", 0, [])]
