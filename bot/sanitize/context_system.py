"""The second pass's detectors for a system tool's own spelling of a secret (issue #11, accept6's open cases):
a secret's name then a value in triple quotes (grafana.ini, TOML, Python), a bare ``"Key"`` in an object named
for what it signs (``"Jwt": {"Key": ...}``), strongSwan's/Libreswan's ``ipsec.secrets`` (``A B : PSK "secret"``),
Samba's ``-U user%password`` (smbclient, rpcclient, net, smbcacls), a Redis ACL rule's password hash (``user app
on #<sha256>``) and PostgreSQL's SCRAM verifier (``SCRAM-SHA-256$4096:salt$StoredKey:ServerKey``: pg_dumpall's
``ALTER ROLE ... PASSWORD '...'``, pg_authid, pgbouncer's userlist). A literal piped into what reads a password
from its standard input is ``context_handoffs.py``'s.

Each is an automaton of its own behind literals every match holds (text without them costs one substring search,
``automata.Automaton.may_match``); ``context_detectors.CONTEXT`` places them after the services' formats. Every
repetition is bounded for the reason given in ``detectors.py``.
"""

from __future__ import annotations

from bot.sanitize.context_patterns import _FINDER_NAME, _NAME
from bot.sanitize.detectors import Detector

# A secret's name, then a value in triple quotes on its line: grafana.ini's way to keep "#" and ";" in a password
# (``password = """PW"""``), TOML's multi-line basic and literal strings, Python's triple-quoted literal. Read as
# an empty string then text, it showed whatever it held.
_TRIPLE_HEAD = rf"(?:^|[^A-Za-z0-9_.-])[\"']?(?P<name>{_NAME})[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}"
_TRIPLE_FINDER_HEAD = rf"(?:^|[^A-Za-z0-9_.-])[\"']?{_FINDER_NAME}[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}"
# An object named for what its key signs or encrypts (.NET's appsettings ``"Jwt": {"Key": "..."}``, ``"Hmac"``,
# ``"Encryption"``, ``"SigningOptions"``) and its plain ``"Key"`` inside, before any nested object opens or the
# object closes (at most 512 bytes on): the parent's name says what the bare ``Key`` is.
_PURPOSE_OBJECT_HEAD = (
    r"\"[A-Za-z0-9_.-]{0,40}(?:Jwt|JWT|jwt|Hmac|HMAC|hmac|Signing|signing|Encryption|encryption)[A-Za-z0-9_.-]{0,40}\""
    r"[ \t]{0,4}:[ \t]{0,4}\{[^{}]{0,512}?\"(?:Key|key|KEY)\"[ \t]{0,4}:[ \t]{0,4}"
)

SYSTEM_FORMATS: tuple[Detector, ...] = (
    Detector(
        # password = """PW""" (the name's rules on the value: a key's or a token's must look generated)
        "password",
        _TRIPLE_HEAD + r'"""(?P<v>[^\n]{1,256}?)"""',
        check="xml_pair",
        finder=_TRIPLE_FINDER_HEAD + r'"""[^"\n]',
        own_automaton=True,
        literals=(b'"""',),
    ),
    Detector(
        "password",
        _TRIPLE_HEAD + r"'''(?P<v>[^\n]{1,256}?)'''",
        check="xml_pair",
        finder=_TRIPLE_FINDER_HEAD + r"'''[^'\n]",
        own_automaton=True,
        literals=(b"'''",),
    ),
    Detector(
        # "Jwt": {"Issuer": "...", "Key": "<generated>"} (one line or pretty-printed): a generated-looking value
        # only, and no ":" in it (a KMS key's ARN under "Encryption" names a key, it is none)
        "key",
        _PURPOSE_OBJECT_HEAD + r"\"(?P<v>[^\"\n:]{1,256})\"",
        check="generated",
        finder=_PURPOSE_OBJECT_HEAD + r"\"[^\"\n:]",
        own_automaton=True,
        literals=((b'"Key"', b'"key"', b'"KEY"'), (b"jwt", b"Jwt", b"JWT", b"mac", b"MAC", b"igning", b"ncryption")),
    ),
    Detector(
        # ipsec.secrets: "[selectors] : PSK "secret"" (EAP, XAUTH and NTLM secrets alike; strongSwan's 0s/0x
        # base64 and hex forms unquoted). A type word with no such value after it ("auth: PSK (WPA2)") is no match.
        "psk",
        r"(?:^|[ \t]):[ \t]{1,8}(?:PSK|EAP|XAUTH|NTLM)[ \t]{1,8}"
        r"(?P<v>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|0[sx][A-Za-z0-9+/=]{4,256})",
        check="not_placeholder",
        # (a short finder, the value's first characters: the parse reads the rest, see detectors.Detector.search)
        finder=r"(?:^|[ \t]):[ \t]{1,8}(?:PSK|EAP|XAUTH|NTLM)[ \t]{1,8}(?:\"[^\"\n]|'[^'\n]|0[sx][A-Za-z0-9+/=]{4})",
        own_automaton=True,
        literals=(b": ", (b"PSK", b"EAP", b"XAUTH", b"NTLM")),
    ),
    Detector(
        # Samba's user and password in one argument, split at "%": smbclient/rpcclient/smbcacls/net -U 'DOM\user%PW'
        # (also --user=, -U=). Quoted: to the closing quote, blanks included.
        "password",
        r"(?:^|\s)(?:-U|--user(?:name)?)(?:[ \t]{1,4}|=)'(?:[^'%\n]{1,128})%(?P<v>[^'\n]{1,256})'",
        check="not_placeholder",
        own_automaton=True,
        literals=(b"%", b"-U", b"'"),
    ),
    Detector(
        "password",
        r"(?:^|\s)(?:-U|--user(?:name)?)(?:[ \t]{1,4}|=)\"(?:[^\"%\n]{1,128})%(?P<v>[^\"\n]{1,256})\"",
        check="not_placeholder",
        own_automaton=True,
        literals=(b"%", b"-U", b'"'),
    ),
    Detector(
        "password",
        r"(?:^|\s)(?:-U|--user(?:name)?)(?:[ \t]{1,4}|=)[^\s%'\"\x24]{1,128}%(?P<v>[^\s'\"]{1,256})",
        check="not_placeholder",
        finder=r"(?:^|\s)(?:-U|--user(?:name)?)(?:[ \t]{1,4}|=)[^\s%'\"\x24]{1,128}%[^\s'\"]",
        own_automaton=True,
        literals=(b"%", (b"-U", b"--user")),
    ),
    Detector(
        # A Redis ACL rule's password hash (ACL LIST, ACL GETUSER, users.acl): "#<sha256 of the password>", unsalted,
        # so as good as the password against a dictionary; ">PW" is the services' detector's
        "redis_acl_hash",
        r"(?:^|[\s\"])user [^\s\"]{1,64}(?: [^\s\"#]{1,64}){0,8} #(?P<v>[0-9a-fA-F]{64})(?:[\s\"]|$)",
        own_automaton=True,
        literals=(b" #", b"user "),
    ),
    Detector(
        # PostgreSQL's SCRAM verifier wherever it is printed (pg_dumpall's roles, pg_authid, pgbouncer's userlist,
        # a log): its StoredKey and ServerKey let anyone who holds them log in as the role to a server that trusts
        # them, and the salt and iterations before them stay visible
        "scram_verifier",
        r"SCRAM-SHA-(?:1|256)\$[0-9]{1,7}:[A-Za-z0-9+/=]{4,128}\$(?P<v>[A-Za-z0-9+/=]{16,128}:[A-Za-z0-9+/=]{16,128})",
        finder=r"SCRAM-SHA-(?:1|256)\$[0-9]{1,7}:[A-Za-z0-9+/=]{4,128}\$[A-Za-z0-9+/=]{16}",
        own_automaton=True,
        literals=(b"SCRAM-SHA-",),
    ),
)
