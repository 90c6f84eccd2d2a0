"""The second pass's detectors for a secret whose name is a field's value, not a key: a record of a name and its
value side by side (issue #11, accept5's open cases). ``infisical export --format=json`` prints ``{"key":
"RESEND_API_KEY", "value": "re_..."}``, Ansible's loop ``(item={'key': 'SECRET_KEY', 'value': '...'})``, jq's
``to_entries`` and AWS tags ``{"Key": .., "Value": ..}``, a YAML list ``- key: X`` / ``  value: Y``, a repr's
``Param(name='X', value='Y')``: no assignment detector reads them, since the key before the secret is ``value``.

Each is an automaton of its own behind a literal every match holds (text without it costs one substring search,
``automata.Automaton.may_match``); ``context_detectors.CONTEXT`` places them after the container environment's
``name``/``value`` pair, which keeps its own judgement where both start. Every repetition is bounded for the reason
given in ``detectors.py``.
"""

from __future__ import annotations

import re

from bot.sanitize import shapes
from bot.sanitize.context_patterns import _FINDER_NAME, _NAME
from bot.sanitize.detectors import Detector

# A field's key: JSON's and a Python dict's quoted key, YAML's and HCL's bare one; then ":", "=" or Ruby's "=>".
_FIELD_SEPARATOR = r"[\"']?[ \t]{0,4}(?::|=>?)[ \t]{0,4}"
# The record's name field (``key``, ``name``: as JSON, YAML, a repr and jq's to_entries write it, in their cases;
# External Secrets' ``property``, a form's ``field``/``label``, CloudFormation's ``ParameterKey``/``OutputKey``).
_NAME_FIELD = (
    r"(?:^|[\s{(\[,])[\"']?(?:key|Key|KEY|name|Name|NAME|property|Property|field|Field|label|Label|variable|Variable"
    r"|param|parameter|Parameter|ParameterKey|OutputKey)" + _FIELD_SEPARATOR
)
# Between the name and the value field: a "," or none (YAML), blanks, and at most one line break with its indentation
# (the same record printed one field a line: jq's to_entries, ``- key: X`` then ``  value: Y``).
_BETWEEN_FIELDS = (
    r"[\"']?[ \t]{0,4},?[ \t]{0,4}(?:\r?\n[ \t]{0,64})?[\"']?(?:value|Value|VALUE|ParameterValue|OutputValue)"
    + _FIELD_SEPARATOR
)
# The value: a quoted string to its closing quote (an escaped quote read past), or a bare one to its line's end.
_RECORD_VALUE = (
    r"\"(?:[^\"\\\n]|\\.){1,256}\"|'(?:[^'\\\n]|\\.){1,256}'|[^\s\"'#,{}\[\]](?:[^\n]{0,254}[^\s,}\]])?"
)

RECORD_FORMATS: tuple[Detector, ...] = (
    Detector(
        # {"key": "DB_PASSWORD", "value": "PW"} and its spellings (see the module's docstring): the name's rules on
        # the value (a password's name takes any value, a key's or a token's a generated one, so ``"value": "3600"``
        # or ``"enabled"`` under SECRET_KEY_ROTATION or API_KEY stays)
        "password",
        _NAME_FIELD + rf"[\"']?(?P<name>{_NAME})" + _BETWEEN_FIELDS + rf"(?P<v>{_RECORD_VALUE})",
        check="xml_pair",
        finder=_NAME_FIELD + rf"[\"']?{_FINDER_NAME}" + _BETWEEN_FIELDS + r"[^\s#,{}\[\]]",
        own_automaton=True,
        literals=((b"value", b"Value", b"VALUE"),),
    ),
    Detector(
        # A row of a two-column box table without a header, a secret's name in the first cell and its value in the
        # next, padded wider than a psql row's (``aws ssm get-parameters-by-path --query
        # 'Parameters[].[Name,Value]' --output table``: ``|  /app/prod/DATABASE_PASSWORD  |  PW  |``): the name is
        # a path's last segment, a path opening with "/" as SSM's do (``aws kms list-aliases``' ``alias/prod-secrets``
        # names a key, no secret); the name's rules on the value (``/app/prod/LOG_LEVEL  |  info`` stays)
        "password",
        r"(?m:^)[ \t]{0,16}\|{1,2}[ \t]{1,8}(?:(?:/[A-Za-z0-9_.-]{1,64}){1,8}/)?(?P<name>" + _NAME + r")[ \t]{1,256}\|"
        r"[ \t]{1,8}(?P<v>[^\s|](?:[^|\n]{0,254}[^\s|])?)[ \t]{1,256}\|",
        check="xml_pair",
        own_automaton=True,
        literals=(b"  |  ",),
    ),
    Detector(
        # A record printed one field a line, its value under a generic label a few lines after its name: ``drone
        # secret info``'s name alone on its line then ``Data: PW``, ``consul kv get -detailed``'s ``Key
        # app/db_password`` then ``Value  PW``. The check reads the lines above for the name (``record_value``).
        "password",
        r"(?m:^)[ \t]{0,16}(?:Data|Value)(?:[ \t]{0,32}:[ \t]{1,32}|[ \t]{2,32})(?P<v>[^\s](?:[^\n]{0,254}[^\s])?)",
        check="record_value",
        own_automaton=True,
        literals=((b"Data", b"Value"),),
    ),
)

# How far up a record's value line its name is looked for: a record's fields (drone prints four, consul seven).
RECORD_LINES = 8
_RECORD_BYTES = 2048
# A record's name line: the name alone, or after a ``Key``/``Name`` label; a path's last segment is the name.
_NAME_LINE = re.compile(
    rb"[ \t]*(?:(?:Key|Name|KEY|NAME|key|name)[ \t]*[:=]?[ \t]+)?(?:[A-Za-z0-9_.-]{0,64}/){0,8}([A-Za-z0-9_.-]{1,128})"
    rb"[ \t]*\r?"
)


def record_value(text: bytes, start: int, value: str) -> bool:
    """Whether the value line at ``start`` holds a secret by its record's name: the nearest name line above it (at
    most ``RECORD_LINES`` lines up, within the record: no blank line between) names a secret, and the value passes
    that name's rules. A record whose name names none (``Key  app/replicas``) keeps its value."""
    floor = max(0, start - _RECORD_BYTES)
    line_end = start - 1
    for _ in range(RECORD_LINES):
        if line_end < floor:
            return False
        line_start = text.rfind(b"\n", floor, line_end) + 1
        line = text[line_start:line_end]
        if not line.strip():
            return False
        found = _NAME_LINE.fullmatch(line)
        if found is not None:
            name = found.group(1).decode("ascii")
            return shapes.name_kind(name) is not None and shapes.accept_assignment(
                name, "=", value, True, code=False) is not None
        line_end = line_start - 1
    return False
