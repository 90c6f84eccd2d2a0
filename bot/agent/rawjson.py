"""Tool inputs as the model wrote them, number literals included.

The SDK parses ``tool_use.input`` into floats, so ``12.50`` would reach the argv as ``12.5`` (and large
integers or ``1e3`` would change too). We therefore request with ``messages.with_raw_response.create`` and
parse the response body ourselves a second time: numbers become :class:`Literal` (the exact source text) and
objects stay ordered pair lists (duplicates kept, so the argument parser sees exactly what the model sent).
Each ``tool_use`` input is then re-serialized compactly with its literals verbatim and handed, as raw JSON
text, to ``Tool.render_argv`` (whose ``parse_arguments`` keeps JSON number literals). Only whitespace differs
from the wire text.
"""

from __future__ import annotations

import json
from typing import Any


class Literal(str):
    """A JSON number's exact source text."""


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its ordered key/value pairs."""


def _dump(value: Any) -> str:
    if isinstance(value, Literal):
        return str(value)
    if isinstance(value, _Pairs):
        return "{" + ",".join(json.dumps(k) + ":" + _dump(v) for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    return json.dumps(value)


def _parse(body: bytes | str) -> Any:
    return json.loads(body, object_pairs_hook=_Pairs, parse_float=Literal, parse_int=Literal)


def raw_tool_inputs(body: bytes | str) -> dict[str, str]:
    """``{tool_use id: input JSON text}`` for every ``tool_use`` block of a Messages API response body."""
    message = dict(_parse(body))
    out: dict[str, str] = {}
    for block in message.get("content") or []:
        fields = dict(block) if isinstance(block, _Pairs) else {}
        if fields.get("type") == "tool_use":
            out[str(fields.get("id"))] = _dump(fields.get("input", _Pairs()))
    return out
