"""Text for Slack: escaping, Markdown -> mrkdwn, and splitting into block-sized chunks.

Everything that came from a tool or the model goes through :func:`escape` (``&``, ``<``, ``>``), so it can
never form a mention (``<!channel>``, ``<@U123>``, ``<!subteam^S1>``) or a link. Markdown links are shown as
``text (<url>)``: the address stays visible, so a model tricked by tool output cannot hide where a link goes.
"""

from __future__ import annotations

import re

SECTION_LIMIT = 3000  # Slack's limit for a section block's text
CHUNK = 2900  # what we put in one section, leaving room for fences and markers


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_block(text: str) -> str:
    """``text`` (already escaped) in a mrkdwn code block; a ``` inside cannot close the block early."""
    return "```\n" + text.replace("```", "`\u200b``") + "\n```"


_FENCE = re.compile(r"^\s*```")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_SAFE_URL = re.compile(r"^(https?://|mailto:)[^\s<>|]+$")
_BOLD_MARK = "\x00B\x00"


def _link(text: str, url: str) -> str:
    # ``text`` and ``url`` are already escaped here; a URL that cannot be shown safely stays plain text
    if _SAFE_URL.match(url.replace("&amp;", "&")):
        return f"{text} (<{url}>)" if text != url else f"<{url}>"
    return f"{text} ({url})"


def _inline(text: str) -> str:
    """Inline Markdown of one line (outside code spans), on escaped text."""
    text = _IMAGE.sub(lambda m: _link(m.group(1) or "image", m.group(2)), text)
    text = _LINK.sub(lambda m: _link(m.group(1), m.group(2)), text)
    text = _BOLD.sub(lambda m: _BOLD_MARK + m.group(2) + _BOLD_MARK, text)
    text = _ITALIC_STAR.sub(lambda m: "_" + m.group(1) + "_", text)
    text = _STRIKE.sub(lambda m: "~" + m.group(1) + "~", text)
    return text.replace(_BOLD_MARK, "*")


def _line(line: str) -> str:
    parts = _CODE_SPAN.split(line)
    return "".join(part if i % 2 else _inline(part) for i, part in enumerate(parts))


def markdown_to_mrkdwn(markdown: str) -> str:
    """Common Markdown (bold, italics, strike, headings, links, lists, code) as escaped Slack mrkdwn."""
    out: list[str] = []
    in_fence = False
    for raw in escape(markdown).splitlines():
        if _FENCE.match(raw):
            out.append("```")  # the language tag is dropped: Slack would show it as code
            in_fence = not in_fence
            continue
        if in_fence:
            out.append(raw.replace("```", "`\u200b``"))
            continue
        heading = _HEADING.match(raw)
        if heading:
            out.append("*" + _line(heading.group(1)).replace("*", "") + "*")
            continue
        if _RULE.match(raw):
            out.append("────────")
            continue
        bullet = _BULLET.match(raw)
        if bullet:
            indent = "    " * (len(bullet.group(1).expandtabs(4)) // 2)
            out.append(f"{indent}• {_line(bullet.group(2))}")
            continue
        out.append(_line(raw))
    if in_fence:
        out.append("```")
    return "\n".join(out)


def hard_split(text: str, size: int) -> list[str]:
    """Cut escaped text into pieces of at most ``size`` characters, never inside an ``&amp;``-style entity."""
    pieces = []
    while len(text) > size:
        cut = size
        amp = text.rfind("&", max(0, cut - 5), cut)
        if amp != -1 and ";" not in text[amp:cut]:
            cut = amp or size
        pieces.append(text[:cut])
        text = text[cut:]
    if text or not pieces:
        pieces.append(text)
    return pieces


def split_mrkdwn(text: str, limit: int = CHUNK) -> list[str]:
    """Split mrkdwn into chunks of at most ``limit`` characters at line boundaries, closing and reopening a
    code block cut in two, and hard-splitting lines that are longer than a chunk."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    in_fence = False
    budget = limit - 8  # room for a closing and a reopening fence

    def flush() -> None:
        nonlocal current, size
        if current:
            body = "\n".join(current)
            chunks.append(body + ("\n```" if in_fence else ""))
            current = ["```"] if in_fence else []
            size = 4 if in_fence else 0

    for line in text.split("\n"):
        pieces = hard_split(line, budget)
        for piece in pieces:
            if size + len(piece) + 1 > budget and current and current != ["```"]:
                flush()
            current.append(piece)
            size += len(piece) + 1
        if line.strip().startswith("```"):
            in_fence = not in_fence
    if current and current != ["```"]:
        in_fence = False
        chunks.append("\n".join(current))
    return chunks or [""]
