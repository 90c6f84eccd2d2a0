"""The Messages API ``tools`` parameter for a set of selected tools, with tool-search deferral.

From the seed: at 10 or more tools offered in total (fisk tools plus built-in or remote ones) every tool is
marked ``defer_loading`` except those tagged ``ai:no_defer``, and the BM25 tool-search server tool is added;
below 10 nothing is deferred and no search tool is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bot.tools.tool import Tool

TOOL_SEARCH_THRESHOLD = 10
TOOL_SEARCH_TOOL: dict[str, Any] = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def should_defer(total_tools: int, tool_search: bool = True) -> bool:
    return tool_search and total_tools >= TOOL_SEARCH_THRESHOLD


def tool_definition(tool: Tool, deferred: bool) -> dict[str, Any]:
    definition: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }
    if deferred and not tool.no_defer:
        definition["defer_loading"] = True
    return definition


def build_tool_params(
    tools: Sequence[Tool], extra_tools: Iterable[dict[str, Any]] = (), tool_search: bool = True
) -> list[dict[str, Any]]:
    """The exact ``tools`` list for ``messages.create``; ``extra_tools`` are built-in or remote definitions."""
    extras = [dict(t) for t in extra_tools]
    defer = should_defer(len(tools) + len(extras), tool_search)
    params = [tool_definition(t, defer) for t in tools]
    if defer:
        for extra in extras:
            if not extra.get("type") or extra.get("type") == "custom":
                extra.setdefault("defer_loading", True)
    params.extend(extras)
    if defer:
        params.append(dict(TOOL_SEARCH_TOOL))
    return params
