"""What a configuration key could have been: the keys valid at a place in the settings tree, and did-you-mean.

A mistyped key (``max_token``) is refused by ``extra="forbid"``; this turns pydantic's "Extra inputs are not
permitted" into a hint naming the closest valid key (difflib), or the valid keys when nothing is close.
"""

from __future__ import annotations

import difflib
import inspect
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel


def _strip(annotation: Any) -> Any:
    """``X | None`` and ``Annotated[X, ...]`` -> ``X`` (the first non-None member of a union)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if not members:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _is_model(annotation: Any) -> bool:
    return inspect.isclass(annotation) and issubclass(annotation, BaseModel)


def keys_at(root: type[BaseModel], path: Sequence[str | int]) -> list[str] | None:
    """The keys valid inside the mapping at ``path`` (a pydantic error location), or None if not a model."""
    annotation: Any = root
    for part in path:
        annotation = _strip(annotation)
        origin = get_origin(annotation) or annotation
        if _is_model(annotation):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
        elif inspect.isclass(origin) and issubclass(origin, Mapping):
            args = get_args(annotation)
            annotation = args[1] if len(args) == 2 else Any
        elif inspect.isclass(origin) and issubclass(origin, Sequence | set | frozenset) and origin is not str:
            args = get_args(annotation)
            annotation = args[0] if args else Any
        else:
            return None
    annotation = _strip(annotation)
    if not _is_model(annotation):
        return None
    return [name for name, field in annotation.model_fields.items() if not field.exclude]


def unknown_key_hint(root: type[BaseModel], loc: Sequence[str | int]) -> str:
    """``did you mean 'max_tokens'?`` for the unknown key at ``loc``, else the valid keys there."""
    if not loc:
        return ""
    valid = keys_at(root, loc[:-1])
    if not valid:
        return ""
    close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "valid keys here: " + ", ".join(sorted(valid))
