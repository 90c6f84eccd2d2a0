"""The second pass's detectors for a secret handed over with no name beside it (issue #11, accept5's open cases): a
program that announces a password or a token on one line and prints it alone on the next (Jenkins' first start,
Elasticsearch's, a service's "your new API key:"), and a secret fed to a command's standard input in a shell trace
(``az devops login ... <<< PAT``, ``echo PW | docker login --password-stdin``).

Each is an automaton of its own behind a literal every match holds (text without it costs one substring search,
``automata.Automaton.may_match``); ``context_detectors.CONTEXT`` places them after the records' detectors. Every
repetition is bounded for the reason given in ``detectors.py``.
"""

from __future__ import annotations

import re

from bot.sanitize import shapes
from bot.sanitize.detectors import Detector

# The characters of a value printed alone on its line: a generated password's or a token's. No ":" (a YAML key, a
# time), no brackets, quotes, "," or ";" (a line of code: ``print(key)``, ``return x;``) and no "$" first.
_ALONE_CHARACTERS = r"[A-Za-z0-9+/=_.~!#%^*@?&-]"
# How far back the announcing line is read (from its ":" to the line's start): a sentence, not a paragraph.
ANNOUNCING_LINE_BYTES = 256
# A word that says what the next line is: a secret's (a word of its own, any case).
_ANNOUNCES = re.compile(
    rb"(?i)(?<![a-z])(?:password|passwd|passphrase|passcode|token|secret|api[ _-]?key|access[ _-]?key"
    rb"|private[ _-]?key|credentials?)(?![a-z])"
)
# ... unless the line says the value is a public or derived one (a certificate's fingerprint, a key's hash).
_PUBLIC = re.compile(rb"(?i)fingerprint|public|checksum|digest|sha-?\d|hash|\bids?\b|name|expir|length|file")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]{32,256}")
# An assignment alone on its line (``token?=963b...``, ``api_key=x``): a name's, judged by the assignment's detectors.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{2,63}[?:+!]?=")
# The symbols a generated password holds, beside the separators an identifier holds ("-", "_", ".").
_SYMBOLS = re.compile(r"[+/=~!#%^*@?&]")

# What a command that takes a secret on its standard input says on its line: ``az devops login``, ``docker login
# --password-stdin``, ``gh auth login --with-token``, ``vault login -``, ``chpasswd``, ``passwd --stdin``, ``gpg
# --passphrase-fd 0``.
# ``login`` as a word of the command (not ``tee login.log``).
_STDIN_SINK = r"(?:[ \t]login(?:[ \t]|\r?(?m:$))|passw|passphrase|stdin|with-token)"
# A literal fed to it: quoted or one word, never a variable's or a command's expansion (a printed script's
# ``<<< "$PAT"``, ``<<< "$(cat /run/secrets/pat)"``: no "$" or "`" first, and none in a bare word).
_FED_VALUE = (  # ("\x24" is "$": a bare "$" in a class would be rewritten for Python's parser, ``automata``)
    r"\"[^\"\x24`\\\n](?:[^\"\\\n]|\\.){3,255}\"|'[^'\x24`\n][^'\n]{3,255}'"
    r"|[^\s\"'|;&<>()\x24`][^\s\"'|;&<>()\x24`]{3,255}"
)
# echo's or printf's words before the value: ``-n``, ``-e``, printf's ``'%s'`` / ``"%s\n"``.
_ECHO = r"\b(?:echo|printf)(?:[ \t]{1,4}-[neE]{1,3})?(?:[ \t]{1,4}(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"))?[ \t]{1,4}"

# A JSON (or a repr's) string value, to its closing quote (an escaped quote read past).
_STRING = r"\"(?:[^\"\\\n]|\\.){1,256}\"|'(?:[^'\\\n]|\\.){1,256}'"
_CONTENT_KEY = r"[\"']content[\"'][ \t]{0,4}:[ \t]{0,4}"
_BASE64_TYPE = r"[\"']content[-_]type[\"'][ \t]{0,4}:[ \t]{0,4}[\"']BASE64[\"']"

HANDOFF_FORMATS: tuple[Detector, ...] = (
    Detector(
        # A line ending in ":" that names a secret (``announced_value``), then, after at most two blank lines, a
        # value alone on its line: Jenkins' "Please use the following password to proceed to installation:" and
        # its 32 hex digits, Elasticsearch's "Password for the elastic user (reset with ...):" and "  PW", its
        # "Copy the following enrollment token ...:". The pattern starts at the ":", so no counter runs along the
        # announcing line; the check reads that line back.
        "secret",
        r":[ \t]{0,8}\r?\n(?:[ \t]{0,16}\r?\n){0,2}[ \t]{0,16}(?P<v>" + _ALONE_CHARACTERS + r"{12,256})[ \t]{0,16}"
        r"\r?(?m:$)",
        check="announced_value",
        own_automaton=True,
        literals=((b":\n", b": \n", b":\r\n"),),
    ),
    Detector(
        # A here-string into such a command, as set -x prints it with the variable expanded: ``+ az devops login
        # --organization URL <<< PAT``, ``docker login -u x --password-stdin reg <<< 'PW'``
        "secret",
        _STDIN_SINK + r"[^\n<]{0,256}<<<[ \t]{0,4}(?P<v>" + _FED_VALUE + ")",
        check="not_placeholder",
        # (the scan stops at the value's first character: no long count at its end, ``Detector.search``)
        search=_STDIN_SINK + r"[^\n<]{0,256}<<<[ \t]{0,4}(?:\"[^\"\x24`\\\n]|'[^'\x24`\n]|[^\s\"'|;&<>()\x24`])",
        own_automaton=True,
        literals=(b"<<<",),
    ),
    Detector(
        # echo (or printf) of a literal piped into such a command: on one line (``echo PW | docker login -u x
        # --password-stdin``), or as set -x prints a pipeline, one command a line (``+ echo PW`` then ``+ docker
        # login ...``)
        "secret",
        _ECHO + r"(?P<v>" + _FED_VALUE + r")[ \t]{0,4}(?:\|[ \t]{0,4}|\r?\n\+{1,8} )[^\n|;&]{0,256}?" + _STDIN_SINK,
        check="not_placeholder",
        own_automaton=True,
        # (gated by the pipe or set -x's "+ " (nested: "++ "): the sink words are common letters, 36 us a text)
        literals=((b"|", b"+ "),),
    ),
    Detector(
        # OCI Vault's secret bundle (``oci secrets secret-bundle get``, the SDKs' secretBundleContent): the secret is
        # its "content", whatever the bundle's name says; the other keys of that object may stand before it
        "secret",
        r"(?:secret-bundle-content|secretBundleContent|secret_bundle_content)[\"']?[ \t]{0,4}:[ \t]{0,4}\{"
        r"(?:[^{}]{0,512}?[\s{,])?[\"']?content[\"']?[ \t]{0,4}:[ \t]{0,4}(?P<v>" + _STRING + ")",
        own_automaton=True,
        # (gated by the type every bundle's content has, as its "content-type" or contentType: a literal with a rare
        # byte, where the key's lower-case spelling cost 23 us per 64 KiB of ordinary output)
        literals=(b"BASE64",),
    ),
    Detector(
        # ... and the content object printed alone (an SDK's repr, ``--query 'data."secret-bundle-content"'``):
        # "content" beside "content-type": "BASE64" (OCI's word for a secret's encoding), in either order
        "secret",
        _CONTENT_KEY + r"(?P<v>" + _STRING + r")[ \t]{0,4},[ \t\r\n]{0,64}" + _BASE64_TYPE,
        own_automaton=True,
        literals=(b"BASE64",),
    ),
    Detector(
        "secret",
        _BASE64_TYPE + r"[ \t]{0,4},[ \t\r\n]{0,64}" + _CONTENT_KEY + r"(?P<v>" + _STRING + ")",
        own_automaton=True,
        literals=(b"BASE64",),
    ),
)


def announced_value(text: bytes, start: int, value: str) -> bool:
    """Whether the value alone on its line, after the line whose ":" is at ``start``, is the secret that line
    announces: the line names a secret (``_ANNOUNCES``) and no public value (``_PUBLIC``), and the value looks
    generated (a word, a date or a version does not)."""
    line_start = text.rfind(b"\n", max(0, start - ANNOUNCING_LINE_BYTES), start) + 1
    if line_start == 0 and start > ANNOUNCING_LINE_BYTES:
        return False  # a line longer than a sentence: not an announcement
    line = text[line_start:start]
    return _ANNOUNCES.search(line) is not None and _PUBLIC.search(line) is None and _random(value)


def _random(value: str) -> bool:
    """Whether a value alone on its line is a generated secret rather than an identifier a service announces
    (``payments-api-v2``, a date, a word) or an assignment: 32 hex digits or more (a UUID's too), or three of
    lower-case letters, capitals, digits and symbols."""
    if _HEX_DIGITS.fullmatch(value.replace("-", "")):
        return True
    if _ASSIGNMENT.match(value):
        return False
    kinds = (value != value.upper()) + (value != value.lower()) + any(c.isdigit() for c in value)
    return kinds + (_SYMBOLS.search(value) is not None) >= 3 and shapes.generated(value)
