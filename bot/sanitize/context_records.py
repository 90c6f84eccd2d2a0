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

from bot.sanitize.context_patterns import _FINDER_NAME, _NAME
from bot.sanitize.detectors import Detector

# A field's key: JSON's and a Python dict's quoted key, YAML's and HCL's bare one; then ":", "=" or Ruby's "=>".
_FIELD_SEPARATOR = r"[\"']?[ \t]{0,4}(?::|=>?)[ \t]{0,4}"
# The record's name field (``key``, ``name``: as JSON, YAML, a repr and jq's to_entries write it, in their cases;
# ``property``: External Secrets' log of a fetched property; ``field``/``label``: a vault item's field).
_NAME_FIELD = (
    r"(?:^|[\s{(\[,])[\"']?(?:key|Key|KEY|name|Name|NAME|property|Property|field|Field|label|Label)"
    + _FIELD_SEPARATOR
)
# Between the name and the value field: a "," or none (YAML), blanks, and at most one line break with its indentation
# (the same record printed one field a line: jq's to_entries, ``- key: X`` then ``  value: Y``).
_BETWEEN_FIELDS = r"[\"']?[ \t]{0,4},?[ \t]{0,4}(?:\r?\n[ \t]{0,64})?[\"']?(?:value|Value|VALUE)" + _FIELD_SEPARATOR
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
)
