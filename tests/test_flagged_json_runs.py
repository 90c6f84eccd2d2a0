"""The JSON walk's runs (commas, brackets, the leaves that open an array), read in one step for speed (issue #11),
hide exactly the leaves the walk hid one token at a time."""

from __future__ import annotations

from bot.sanitize.flagged_json import redact_flagged_values


def _mark(kind: str, secret: bytes) -> bytes:
    return b"<" + kind.encode() + b">"


def test_a_run_of_leaves_under_a_sensitive_value_is_hidden_leaf_by_leaf() -> None:
    text = b'{"sensitive": true, "value": [["a", 1, "b" ], [{"x": "c"}, "d", "e"], "", "f"]}'
    assert redact_flagged_values(text, _mark) == (
        b'{"sensitive": true, "value": [["<sensitive_value>", <sensitive_value>, "<sensitive_value>" ], '
        b'[{"x": "<sensitive_value>"}, "<sensitive_value>", "<sensitive_value>"], "", "<sensitive_value>"]}', 7)


def test_a_run_of_leaves_beside_a_sensitive_value_stays() -> None:
    text = b'{"sensitive": true, "type": ["list", "string"], "value": "PW", "names": ["a", "b"]}'
    assert redact_flagged_values(text, _mark) == (text.replace(b'"PW"', b'"<sensitive_value>"'), 1)
    plain = b'{"sensitive": false, "value": ["a", "b", "c"]}'
    assert redact_flagged_values(plain, _mark) == (plain, 0)


def test_runs_of_commas_and_brackets_keep_the_structure() -> None:
    deep = b"[" * 500 + b'"x", "y"' + b"]" * 500
    text = b'{"a": ' + deep + b',,, ,"sensitive": true, "value": {"k": [[ "PW" ]] }}'
    assert redact_flagged_values(text, _mark) == (text.replace(b'"PW"', b'"<sensitive_value>"'), 1)
    # a "]" closes an open object as a "}" did: the flag's object ends there, its later keys are no value of it
    closed = b'[{"type": "CONCEALED", "value": "PW" ]], "value": "kept"'
    assert redact_flagged_values(closed, _mark) == (closed.replace(b'"PW"', b'"<password>"'), 1)
