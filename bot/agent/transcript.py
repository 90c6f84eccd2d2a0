"""Pure transcript operations: appending user text, cleaning assistant content, capping the size.

The transcript is the Messages API ``messages`` list itself (JSON dicts), so what is stored is exactly what
is sent: server tool blocks (``server_tool_use``, ``tool_search_tool_result``) are kept unchanged.
"""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]


def is_user_turn_start(message: Message) -> bool:
    """A user message without tool_result blocks: cutting before it never orphans a tool_use/tool_result."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content or [])


def append_user_text(transcript: list[Message], text: str) -> None:
    """Add a user message; merge into a trailing user message (left by a turn that ended on an API error or
    a budget) so roles keep alternating. The merged text goes after any tool_result blocks, as required."""
    block = {"type": "text", "text": text or "(empty message)"}
    if transcript and transcript[-1].get("role") == "user":
        last = transcript[-1]
        content = last["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        last["content"] = [*content, block]
        return
    transcript.append({"role": "user", "content": [block]})


def clean_assistant_content(content: list[dict[str, Any]], *, drop_tool_use: bool = False) -> list[dict[str, Any]]:
    """Blocks to store: empty text blocks removed (the API refuses them), ``citations: null`` dropped;
    with ``drop_tool_use`` (a turn cut by max_tokens) tool_use blocks go too, as they will get no result.
    Every other block, server tool blocks included, is kept exactly as received."""
    out = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            if not block.get("text"):
                continue
            if block.get("citations", 0) is None:
                block = {k: v for k, v in block.items() if k != "citations"}
        if drop_tool_use and kind == "tool_use":
            continue
        out.append(block)
    return out


def text_of(content: list[dict[str, Any]]) -> str:
    return "\n\n".join(b["text"] for b in content if b.get("type") == "text" and b.get("text")).strip()


def cap_transcript(transcript: list[Message], max_messages: int, max_bytes: int, keep_from: int) -> int:
    """Drop whole older turns from the front until both caps hold, cutting only before a user-turn start and
    never after ``keep_from`` (the current turn). Returns how many messages were dropped (in place)."""
    def over(messages: list[Message]) -> bool:
        return len(messages) > max_messages or len(json.dumps(messages)) > max_bytes

    cut = 0
    if over(transcript):
        for index in range(1, min(keep_from, len(transcript) - 1) + 1):
            if is_user_turn_start(transcript[index]):
                cut = index
                if not over(transcript[index:]):
                    break
    # if the current turn alone is over the cap it is kept whole: it cannot be split safely
    del transcript[:cut]
    return cut
