"""Kubernetes objects printed one after another with no ``---`` between them (concatenated manifests): each
object's kind decides its own data, never the next object's (a Secret followed by a ConfigMap showed the
Secret's ``username`` on 7ba728e); where the text cannot tell whose data is whose, it fails closed."""

from __future__ import annotations

from bot.sanitize import sanitize_output
from bot.sanitize.structured import redact_secret_manifests

USER = "YWRtaW4="  # "admin": no shape any other detector knows
TOKEN = "c3VwZXItc2VjcmV0LXZhbHVl"


def _marker(kind: str, secret: bytes) -> bytes:
    return f"[REDACTED:{kind}]".encode()


def _shown(text: str) -> str:
    return sanitize_output(text.encode(), output_limit=1 << 30).text


def test_a_secret_followed_by_a_configmap_without_a_separator_keeps_its_data_redacted() -> None:
    text = (f"apiVersion: v1\ndata:\n  password: {TOKEN}\n  username: {USER}\nkind: Secret\nmetadata:\n"
            "  name: db\ntype: Opaque\napiVersion: v1\ndata:\n  color: blue\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    shown = _shown(text)
    assert USER not in shown and TOKEN not in shown
    assert "  color: blue\n" in shown  # the ConfigMap's own data is its own


def test_a_configmap_followed_by_a_secret_without_a_separator_keeps_the_configmap_whole() -> None:
    text = (f"apiVersion: v1\ndata:\n  color: blue\nkind: ConfigMap\napiVersion: v1\ndata:\n  username: {USER}\n"
            "kind: Secret\n")
    out, count = redact_secret_manifests(text.encode(), _marker)
    assert count == 1 and USER.encode() not in out and b"  color: blue\n" in out


def test_a_second_object_without_its_kind_fails_closed_on_base64_values() -> None:
    text = f"apiVersion: v1\ndata:\n  user: {USER}\nkind: Secret\napiVersion: v1\ndata:\n  token: {TOKEN}\n"
    out, _ = redact_secret_manifests(text.encode(), _marker)
    assert TOKEN.encode() not in out and USER.encode() not in out
    plain = text.replace(TOKEN, "blue")  # not base64-telling: an object of no known kind keeps its data
    assert b"  token: blue\n" in redact_secret_manifests(plain.encode(), _marker)[0]


def test_two_kinds_in_one_object_without_apiversion_fail_closed() -> None:
    # data before each kind and no apiVersion to mark where the second object starts: whose data is whose is
    # unknown, so the Secret among them makes both secret
    text = f"data:\n  a: {USER}\nkind: ConfigMap\ndata:\n  b: {TOKEN}\nkind: Secret\n"
    out, _ = redact_secret_manifests(text.encode(), _marker)
    assert USER.encode() not in out and TOKEN.encode() not in out


def test_lists_and_documents_each_judged_alone() -> None:
    yaml_list = (f"apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    username: {USER}\n  kind: Secret\n"
                 "- apiVersion: v1\n  data:\n    color: blue\n  kind: ConfigMap\nkind: List\n")
    json_list = ('{\n  "apiVersion": "v1",\n  "items": [\n    {\n      "apiVersion": "v1",\n      "data": {\n'
                 f'        "username": "{USER}"\n      }},\n      "kind": "Secret"\n    }},\n    {{\n'
                 '      "apiVersion": "v1",\n      "data": {\n        "color": "blue"\n      },\n'
                 '      "kind": "ConfigMap"\n    }\n  ],\n  "kind": "List"\n}\n')
    documents = (f"apiVersion: v1\ndata:\n  username: {USER}\nkind: Secret\n---\napiVersion: v1\nkind: Secret\n"
                 f"stringData:\n  token: plain-{TOKEN}\n")
    for text in (yaml_list, json_list, documents):
        shown = _shown(text)
        assert USER not in shown and TOKEN not in shown, shown
    assert "color: blue" in _shown(yaml_list) and '"color": "blue"' in _shown(json_list)
