"""Ordinary ``kubectl get secrets -A -o yaml`` / ``-o json`` output, generated: what the manifest walk's budget
(``bot/sanitize/structured.py``) must never reach. Opaque Secrets of a few keys, TLS, registry and service-account
token Secrets, and Secrets holding an application's environment (10-40 short keys each, the densest ordinary
case), each with kubectl's metadata; as a List, as documents after ``---``, as a List in JSON, and one object a line
(``kubectl get secrets -o json | jq -c '.items[]'``)."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

SHAPES = ("opaque", "opaque", "opaque", "environment", "tls", "registry", "service account", "basic auth")


def _value(rng: random.Random, size: int) -> str:
    return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(size))).decode()


def secret(rng: random.Random, number: int, shape: str) -> dict[str, Any]:
    """One Secret as the API server returns it (keys sorted when printed)."""
    metadata: dict[str, Any] = {
        "creationTimestamp": f"2026-11-0{number % 9 + 1}T10:00:00Z", "name": f"s{number}-{rng.choice(['db', 'app'])}",
        "namespace": rng.choice(["default", "prod", "kube-system"]), "resourceVersion": str(rng.randint(1000, 99999)),
        "uid": f"{rng.getrandbits(32):08x}-1234-5678-9abc-{rng.getrandbits(48):012x}"}
    kind_of = "Opaque"
    if shape == "opaque":
        names = rng.sample(["username", "password", "host", "port", "url", "key", "token"], rng.randint(1, 4))
        data = {name: _value(rng, rng.randint(4, 24)) for name in names}
    elif shape == "environment":
        data = {f"VAR_{i}": _value(rng, rng.randint(2, 12)) for i in range(rng.randint(10, 40))}
    elif shape == "basic auth":
        data, kind_of = {"username": _value(rng, 5), "password": _value(rng, 10)}, "kubernetes.io/basic-auth"
    elif shape == "tls":
        data, kind_of = {"tls.crt": _value(rng, 900), "tls.key": _value(rng, 1200)}, "kubernetes.io/tls"
    elif shape == "registry":
        data, kind_of = {".dockerconfigjson": _value(rng, 150)}, "kubernetes.io/dockerconfigjson"
    else:
        data = {"ca.crt": _value(rng, 800), "namespace": _value(rng, 7), "token": _value(rng, 700)}
        metadata["annotations"] = {"kubernetes.io/service-account.name": "default"}
        kind_of = "kubernetes.io/service-account-token"
    return {"apiVersion": "v1", "data": data, "kind": "Secret", "metadata": metadata, "type": kind_of}


def _yaml(value: dict[str, Any], indent: int = 0, item: bool = False) -> list[str]:
    """kubectl's YAML for these objects (block style, keys sorted, plain scalars)."""
    lines, pad = [], " " * indent
    for position, (key, inner) in enumerate(sorted(value.items())):
        lead = pad[:-2] + "- " if item and position == 0 else pad
        if isinstance(inner, dict):
            lines += [f"{lead}{key}:", *_yaml(inner, indent + 2)]
        elif isinstance(inner, list):
            lines.append(f"{lead}{key}:")
            for element in inner:
                lines += _yaml(element, indent + 2, item=True)
        else:
            lines.append(f"{lead}{key}: {inner}")
    return lines


def listings(size: int, seed: int = 3, shapes: tuple[str, ...] = SHAPES) -> dict[str, bytes]:
    """Secrets of these shapes, about ``size`` bytes of YAML, printed four ways."""
    rng, items, total = random.Random(seed), [], 0
    while total < size:
        items.append(secret(rng, len(items), rng.choice(shapes)))
        total += sum(len(line) + 1 for line in _yaml(items[-1]))
    listing = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    return {"YAML list": ("\n".join(_yaml(listing)) + "\n").encode(),
            "YAML documents": "".join("---\n" + "\n".join(_yaml(item)) + "\n" for item in items).encode(),
            "JSON list": (json.dumps(listing, indent=4) + "\n").encode(),
            "JSON lines": "".join(json.dumps(item, separators=(",", ":")) + "\n" for item in items).encode()}


def value_count(text: bytes) -> int:
    """How many data values the Secrets in ``text`` hold (as many markers must be in the sanitized text): the
    lines indented deeper than a ``data:`` key (``"data": {`` in JSON), up to the next line that is not."""
    count, data_indent = 0, -1
    for line in text.decode().split("\n"):
        if line.startswith("{") and line.endswith("}"):  # one object a line: its data object's pairs
            count += len(json.loads(line)["data"])
            continue
        indent = len(line) - len(line.lstrip(" -"))
        if data_indent >= 0 and indent > data_indent and line.strip() not in ("}", "},"):
            count += 1
            continue
        data_indent = indent if line.strip() in ("data:", '"data": {') else -1
    return count
